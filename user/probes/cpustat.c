// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/cpustat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/knob.h"
#include "readfile.h"

/*
 * The list of cgroups with a quota is rebuilt when the shared name map has
 * walked the tree again (cgroups came or went), and at least this often to
 * see quotas set or lifted on existing cgroups: each rebuild reads one
 * quota file per cgroup.
 */
#define QUOTA_REFRESH_NS (30 * 1000000000ULL)

/* cpu.stat is a few hundred bytes; v2 with PSI-less kernels is the longest. */
#define STAT_BUF 1024

struct quota_cg {
	uint64_t id;
	char *rel;
};

struct cpustat_reader {
	enum qoslet_cgroup_mode mode;
	int root_fd;
	struct cgroup_names *names;
	struct quota_cg *cgs;
	size_t n, cap;
	uint64_t listed_ns;
	uint64_t listed_generation;
	bool listed;
};

struct cpustat_reader *cpustat_reader_new(const struct cgroup_fs *fs, struct cgroup_names *names)
{
	struct cpustat_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->mode = fs->mode;
	r->root_fd = open(fs->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r->names = names;
	if (r->root_fd < 0) {
		int err = errno;

		cpustat_reader_free(r);
		errno = err;
		return NULL;
	}
	return r;
}

static void clear_list(struct cpustat_reader *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->cgs[i].rel);
	r->n = 0;
}

void cpustat_reader_free(struct cpustat_reader *r)
{
	if (!r)
		return;
	clear_list(r);
	free(r->cgs);
	if (r->root_fd >= 0)
		close(r->root_fd);
	free(r);
}

/*
 * Reads the file `name` of cgroup `rel`; -errno on failure. The probe reads
 * relative to its own open root of the hierarchy its cgroup ids come from
 * (cgroup_fs, the one the BPF programs see), not through cgroup_ctrls'
 * per-controller roots: the names and the parsers are the cgroup layer's.
 */
static int read_cg_file(int root_fd, const char *rel, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "", name);
	return read_file_at(root_fd, path, buf, size);
}

static int add_if_quota(void *ctx, uint64_t id, const char *rel)
{
	struct cpustat_reader *r = ctx;
	bool v2 = r->mode == QOSLET_CGROUP_V2;
	uint64_t period_us;
	int64_t quota_us;
	char buf[64];

	/* No such file: the root, or a cgroup removed since the walk. */
	if (read_cg_file(r->root_fd, rel, cg_file_name(CG_KNOB_QUOTA, v2), buf, sizeof(buf)) ||
	    cg_quota_parse(v2, buf, &quota_us, &period_us) || quota_us < 0)
		return 0;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct quota_cg *cgs = realloc(r->cgs, cap * sizeof(*cgs));

		if (!cgs)
			return -ENOMEM;
		r->cgs = cgs;
		r->cap = cap;
	}
	r->cgs[r->n].rel = strdup(rel);
	if (!r->cgs[r->n].rel)
		return -ENOMEM;
	r->cgs[r->n++].id = id;
	return 0;
}

static int relist(struct cpustat_reader *r, uint64_t now_ns)
{
	int err;

	clear_list(r);
	err = cgroup_names_foreach(r->names, add_if_quota, r);
	if (err)
		return err;
	r->listed_ns = now_ns;
	r->listed_generation = cgroup_names_generation(r->names);
	r->listed = true;
	return 0;
}

int cpustat_reader_read(struct cpustat_reader *r, uint64_t now_ns,
			int (*fn)(void *ctx, uint64_t id, const struct throttle_sample *s),
			void *ctx)
{
	if (!r->listed || r->listed_generation != cgroup_names_generation(r->names) ||
	    now_ns - r->listed_ns >= QUOTA_REFRESH_NS) {
		int err = relist(r, now_ns);

		if (err)
			return err;
	}
	for (size_t i = 0; i < r->n; i++) {
		struct throttle_sample s = {0};
		char buf[STAT_BUF];
		int err;

		/* Removed since the listing (or its quota file format is unknown): skip. */
		if (read_cg_file(r->root_fd, r->cgs[i].rel,
				 cg_file_name(CG_FILE_CPU_STAT, r->mode == QOSLET_CGROUP_V2), buf,
				 sizeof(buf)) ||
		    cg_cpu_stat_throttle(buf, &s))
			continue;
		err = fn(ctx, r->cgs[i].id, &s);
		if (err)
			return err;
	}
	return 0;
}
