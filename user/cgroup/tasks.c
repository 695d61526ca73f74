// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The tasks of a cgroup subtree: listing the cgroups, counting and killing the tasks. */
#include "cgroup/knob.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

/* cgroup.procs holds decimal pids, one a line: at most 7 digits (PID_MAX_LIMIT 2^22) + '\n'. */
#define PID_TEXT_MAX 12

/* The longest a kill keeps looking for tasks that escaped (forked) while it signalled. */
#define KILL_TIMEOUT_NS 1000000000ULL
#define KILL_RETRY_NS	10000000L

int cg_read_procs(const struct cgroup_ctrls *c, const char *rel, int *pids, size_t max, size_t *n)
{
	size_t size = (max + 1) * PID_TEXT_MAX + 1;
	char *buf = malloc(size), *p, *end;
	int err;

	*n = 0;
	if (!buf)
		return -ENOMEM;
	err = cg_read_file(c, CTRL_CPU, rel, "cgroup.procs", buf, size);
	/* Room for max + 1 pids: a full buffer means more than max (-E2BIG below). */
	if (err == -EOVERFLOW)
		err = 0;
	for (p = buf; !err && *p; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p || pid <= 0) {
			err = -EINVAL;
			break;
		}
		if (*n == max)
			err = -E2BIG;
		else
			pids[(*n)++] = (int)pid;
		end += strspn(end, "\n");
	}
	free(buf);
	return err;
}

static int list_add(struct cg_list *l, const char *rel)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = strdup(rel);
	if (!l->v[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

void cg_list_free(struct cg_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Pre-order walk of the directories under fd_dir (closed here); vanished ones are skipped. */
static int walk_dirs(int fd_dir, const char *rel, struct cg_list *out)
{
	DIR *dir = fdopendir(fd_dir);
	struct dirent *de;
	int err = list_add(out, rel);

	if (!dir) {
		close(fd_dir);
		return err;
	}
	while (!err && (de = readdir(dir))) {
		char child[PATH_MAX];
		struct stat st;
		int fd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type != DT_DIR &&
		    (de->d_type != DT_UNKNOWN ||
		     fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		     !S_ISDIR(st.st_mode)))
			continue;
		if (snprintf(child, sizeof(child), "%s%s%s", rel, *rel ? "/" : "", de->d_name) >=
		    (int)sizeof(child)) {
			err = -ENAMETOOLONG;
			break;
		}
		fd = openat(dirfd(dir), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			err = walk_dirs(fd, child, out);
	}
	closedir(dir);
	return err;
}

int cg_subtree(const struct cgroup_ctrls *c, enum cg_ctrl ctrl, const char *rel,
	       struct cg_list *out)
{
	char path[PATH_MAX];
	int fd, err = cg_path(c, ctrl, rel, "", path, sizeof(path));

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = walk_dirs(fd, rel, out);
	if (err)
		cg_list_free(out);
	return err;
}

/* Pids of one cgroup, however many: *pids is malloc()ed. */
static int read_all_procs(const struct cgroup_ctrls *c, const char *rel, int **pids, size_t *n)
{
	size_t max = 64;
	int err;

	*pids = NULL;
	do {
		int *v;

		max *= 4;
		v = realloc(*pids, max * sizeof(*v));
		if (!v) {
			free(*pids);
			*pids = NULL;
			return -ENOMEM;
		}
		*pids = v;
		err = cg_read_procs(c, rel, *pids, max, n);
	} while (err == -E2BIG);
	return err;
}

/*
 * Calls fn for every pid of every cgroup of the subtree (cpu hierarchy).
 * Cgroups that vanish meanwhile are skipped. Returns the sum of fn's
 * non-negative values, or -errno.
 */
static int foreach_subtree_pid(const struct cgroup_ctrls *c, const char *rel,
			       int (*fn)(void *ctx, int pid), void *ctx)
{
	struct cg_list l;
	int total = 0, err = cg_subtree(c, CTRL_CPU, rel, &l);

	for (size_t i = 0; !err && i < l.n; i++) {
		int *pids;
		size_t n;

		err = read_all_procs(c, l.v[i], &pids, &n);
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		for (size_t j = 0; !err && j < n; j++)
			total += fn(ctx, pids[j]);
		free(pids);
	}
	cg_list_free(&l);
	return err ? err : total;
}

static int count_one(void *ctx, int pid)
{
	(void)ctx;
	(void)pid;
	return 1;
}

int cg_count_subtree_procs(const struct cgroup_ctrls *c, const char *rel)
{
	return foreach_subtree_pid(c, rel, count_one, NULL);
}

/* Distinct pids signalled, so a task slow to exit is counted once. */
struct kill_state {
	int *v;
	size_t n, cap;
	int err;
};

static int kill_one(void *ctx, int pid)
{
	struct kill_state *k = ctx;
	size_t i;

	/* A subtree holding qoslet itself is a misconfiguration: never kill ourselves. */
	if (pid == getpid()) {
		log_warn("cgroup kill: skipping qoslet's own pid %d", pid);
		return 0;
	}
	/* SIGKILL cannot be caught; one already dying just gets it again. */
	if (kill(pid, SIGKILL)) {
		if (errno != ESRCH && !k->err)
			k->err = -errno;
		return 0;
	}
	for (i = 0; i < k->n && k->v[i] != pid; i++)
		;
	if (i == k->n) {
		if (k->n == k->cap) {
			size_t cap = k->cap ? 2 * k->cap : 64;
			int *v = realloc(k->v, cap * sizeof(*v));

			if (!v) {
				k->err = -ENOMEM;
				return 1;
			}
			k->v = v;
			k->cap = cap;
		}
		k->v[k->n++] = pid;
	}
	return 1;
}

/* v1 freezer.state or v2 cgroup.freeze; both act on the whole subtree. */
static int freeze(const struct cgroup_ctrls *c, const char *rel, bool on)
{
	if (c->v2[CTRL_FREEZER])
		return cg_write_file(c, CTRL_FREEZER, rel, "cgroup.freeze", on ? "1" : "0");
	return cg_write_file(c, CTRL_FREEZER, rel, "freezer.state", on ? "FROZEN" : "THAWED");
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Frozen tasks cannot fork, so a pass under the freezer finds them all; the
 * kill lands once they thaw. Without a freezer, the passes repeat to catch
 * children forked while we signalled their parents.
 */
static int freeze_and_kill(const struct cgroup_ctrls *c, const char *rel)
{
	struct kill_state k = {0};
	uint64_t start = mono_ns();
	int found;

	for (;;) {
		bool frozen = !freeze(c, rel, true);

		found = foreach_subtree_pid(c, rel, kill_one, &k);
		if (frozen)
			freeze(c, rel, false);
		if (found <= 0 || k.err || mono_ns() - start >= KILL_TIMEOUT_NS)
			break;
		nanosleep(&(struct timespec){.tv_nsec = KILL_RETRY_NS}, NULL);
	}
	if (found > 0 && !k.err)
		log_warn("cgroup kill: %s still holds %d tasks after 1 s", rel, found);
	free(k.v);
	if (found < 0)
		return found;
	return k.err ? k.err : (int)k.n;
}

int cg_kill_subtree(const struct cgroup_ctrls *c, const char *rel)
{
	int n, err;

	if (c->v2[CTRL_FREEZER]) {
		n = cg_count_subtree_procs(c, rel);
		if (n < 0)
			return n;
		err = cg_write_file(c, CTRL_FREEZER, rel, "cgroup.kill", "1");
		if (err != -EOPNOTSUPP) /* cgroup.kill came in 5.14 */
			return err ? err : n;
	}
	return freeze_and_kill(c, rel);
}
