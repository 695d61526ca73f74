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

struct cpustat_key {
	const char *name;
	size_t off;	/* offset in struct throttle_sample */
	uint64_t scale; /* to the sample's unit (ns for times) */
};

static const struct cpustat_key keys[] = {
	{"nr_periods", offsetof(struct throttle_sample, nr_periods), 1},
	{"nr_throttled", offsetof(struct throttle_sample, nr_throttled), 1},
	{"throttled_time", offsetof(struct throttle_sample, throttled_ns), 1},	  /* v1 */
	{"throttled_usec", offsetof(struct throttle_sample, throttled_ns), 1000}, /* v2 */
	{"nr_bursts", offsetof(struct throttle_sample, nr_bursts), 1},
	{"burst_time", offsetof(struct throttle_sample, burst_ns), 1},	  /* v1 */
	{"burst_usec", offsetof(struct throttle_sample, burst_ns), 1000}, /* v2 */
};

/* Each key through the cgroup layer's one key-value parser (cg_stat_get). */
int cpustat_parse(const char *text, struct throttle_sample *s)
{
	bool have_periods = false;
	uint64_t v;

	s->nr_periods = s->nr_throttled = s->throttled_ns = s->nr_bursts = s->burst_ns = 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (cg_stat_get(text, keys[i].name, &v))
			continue;
		*(uint64_t *)((char *)s + keys[i].off) = v * keys[i].scale;
		have_periods |= i == 0; /* keys[0] is nr_periods */
	}
	return have_periods ? 0 : -EINVAL;
}

bool cpustat_has_quota(enum qoslet_cgroup_mode mode, const char *text)
{
	if (mode == QOSLET_CGROUP_V2)
		return strncmp(text, "max", 3) != 0 && *text >= '0' && *text <= '9';
	return *text >= '0' && *text <= '9';
}

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

/* Reads the file `name` of cgroup `rel`; -errno on failure. */
static int read_cg_file(int root_fd, const char *rel, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "", name);
	return read_file_at(root_fd, path, buf, size);
}

static int add_if_quota(void *ctx, uint64_t id, const char *rel)
{
	struct cpustat_reader *r = ctx;
	const char *file = r->mode == QOSLET_CGROUP_V2 ? "cpu.max" : "cpu.cfs_quota_us";
	char buf[64];

	/* No such file: the root, or a cgroup removed since the walk. */
	if (read_cg_file(r->root_fd, rel, file, buf, sizeof(buf)) ||
	    !cpustat_has_quota(r->mode, buf))
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
		if (read_cg_file(r->root_fd, r->cgs[i].rel, "cpu.stat", buf, sizeof(buf)) ||
		    cpustat_parse(buf, &s))
			continue;
		err = fn(ctx, r->cgs[i].id, &s);
		if (err)
			return err;
	}
	return 0;
}
