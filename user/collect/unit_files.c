// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "collect/unit_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "probes/psi.h"

void unit_files_init(struct unit_files *f)
{
	for (int i = 0; i < UF_NR; i++) {
		f->fd[i] = -1;
		f->absent[i] = false;
	}
}

void unit_files_close(struct unit_files *f)
{
	for (int i = 0; i < UF_NR; i++)
		if (f->fd[i] >= 0)
			close(f->fd[i]);
	unit_files_init(f);
}

void unit_files_retry_absent(struct unit_files *f)
{
	memset(f->absent, 0, sizeof(f->absent));
}

/* Why a file did not open: -ENOENT when the unit's cgroup is gone, else -EAGAIN or -EOPNOTSUPP. */
static int why_missing(struct unit_files *f, const struct cgroup_ctrls *c, enum cg_file file,
		       const char *rel)
{
	enum cg_ctrl ctrl = cg_file_ctrl(file);
	char dir[PATH_MAX];
	struct stat st;

	if (cg_path(c, ctrl, rel, "", dir, sizeof(dir)) || stat(dir, &st))
		/* Only the cpu hierarchy decides that the unit is gone; another may lag. */
		return ctrl == CTRL_CPU ? -ENOENT : -EAGAIN;
	f->absent[file - UF_FIRST] = true;
	return -EOPNOTSUPP;
}

/* The file's text in buf (NUL-terminated), read at offset 0 of the kept descriptor. */
static int read_one(struct unit_files *f, const struct cgroup_ctrls *c, enum cg_file file,
		    const char *rel, char *buf, size_t size)
{
	enum cg_ctrl ctrl = cg_file_ctrl(file);
	const char *name = cg_file_name(file, c->v2[ctrl]);
	int i = file - UF_FIRST;
	char path[PATH_MAX];
	ssize_t n;

	if (f->absent[i])
		return -EOPNOTSUPP;
	if (!name || cg_path(c, ctrl, rel, name, path, sizeof(path))) {
		f->absent[i] = true; /* no such file on this version, or no such hierarchy */
		return -EOPNOTSUPP;
	}
	if (f->fd[i] < 0) {
		f->fd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (f->fd[i] < 0 && errno == EMFILE) {
			static bool warned;

			if (!warned)
				log_warn("collect: out of file descriptors (RLIMIT_NOFILE) at %s: "
					 "units beyond it go unread (counted in "
					 "qoslet_agent_errors_total{kind=\"cgroup_read\"})",
					 path);
			warned = true;
			return -EMFILE;
		}
		if (f->fd[i] < 0)
			return errno == ENOENT ? why_missing(f, c, file, rel) : -errno;
	}
	n = pread(f->fd[i], buf, size - 1, 0);
	if (n < 0) {
		/* A removed cgroup's open files answer ENODEV. */
		int err = errno == ENODEV ? -ENOENT : -errno;

		close(f->fd[i]);
		f->fd[i] = -1;
		return err;
	}
	buf[n] = '\0';
	return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s ? -EINVAL : 0;
}

/* read_one, counting the failures that are not a file or a cgroup being absent. */
static int read_counted(struct unit_files *f, const struct cgroup_ctrls *c, enum cg_file file,
			const char *rel, char *buf, size_t size, struct unit_counters *out)
{
	int err = read_one(f, c, file, rel, buf, size);

	out->errors += err && err != -ENOENT && err != -EOPNOTSUPP && err != -EAGAIN;
	return err;
}

int unit_files_read(struct unit_files *f, const struct cgroup_ctrls *c, const char *rel,
		    unsigned int want, struct unit_counters *out)
{
	bool v2_usage = c->v2[CTRL_CPUACCT];
	char buf[8192];
	int err = 0;

	memset(out, 0, sizeof(*out));
	if ((want & UW_THROTTLE) || v2_usage) {
		err = read_counted(f, c, CG_FILE_CPU_STAT, rel, buf, sizeof(buf), out);
		if (err == -ENOENT)
			return err;
	}
	if (!err && ((want & UW_THROTTLE) || v2_usage)) {
		/* no nr_periods line: the kernel has no CFS bandwidth control */
		out->has_throttle =
			(want & UW_THROTTLE) && !cg_cpu_stat_throttle(buf, &out->throttle);
		out->has_cpu = v2_usage && !cg_cpu_stat_usage_ns(buf, &out->usage_ns);
	}
	if (!v2_usage) {
		err = read_counted(f, c, CG_FILE_CPUACCT_USAGE, rel, buf, sizeof(buf), out);
		if (err == -ENOENT)
			return err;
		out->has_cpu = !err && !parse_u64(buf, &out->usage_ns);
	}
	if ((want & UW_MEM) && !read_counted(f, c, CG_FILE_MEM_USAGE, rel, buf, sizeof(buf), out) &&
	    !parse_u64(buf, &out->mem.usage) &&
	    !read_counted(f, c, CG_FILE_MEM_STAT, rel, buf, sizeof(buf), out))
		out->has_mem = !cg_mem_stat_parse(c, buf, &out->mem);
	if ((want & UW_MEM_EVENTS) &&
	    !read_counted(f, c, CG_FILE_MEM_EVENTS, rel, buf, sizeof(buf), out))
		out->has_mem_events = !cg_mem_events_parse(c, buf, &out->mem_hits);
	for (int r = 0; (want & UW_PSI) && r < PSI_NR; r++)
		if (!read_counted(f, c, CG_FILE_PSI_CPU + r, rel, buf, sizeof(buf), out) &&
		    !psi_parse(buf, &out->psi.some[r], &out->psi.full[r]))
			out->has_psi = true;
	return 0;
}
