// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/psi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "readfile.h"

static const char *const resource_files[PSI_NR] = {
	[PSI_CPU] = "cpu.pressure",
	[PSI_MEMORY] = "memory.pressure",
	[PSI_IO] = "io.pressure",
};

/*
 * The kernel recomputes the averages every 2 s (PSI_FREQ): reading a
 * cgroup's files more often returns the same numbers at the cost of three
 * opens. A reading younger than this is served from the cache.
 */
#define PSI_REFRESH_NS 2000000000ULL
/* Whether a cgroup has pressure files (hybrid nodes: v1-only cgroups do not) rarely changes. */
#define PSI_ABSENT_REFRESH_NS 60000000000ULL

struct psi_cached {
	uint64_t id;
	uint64_t read_ns;
	bool present; /* false: the cgroup has no pressure files (v1 only) */
	struct psi_sample psi;
};

struct psi_probe {
	const struct cgroup_fs *fs;
	struct cgroup_names *names; /* shared: the probe set owns it */
	struct psi_cached *cache;   /* sorted by id: this reading's cgroups */
	size_t n_cache;
};

static int parse_line(const char *line, const char *kind, struct psi_line *out)
{
	unsigned long long total;
	char fmt[96];

	snprintf(fmt, sizeof(fmt), "%s avg10=%%lf avg60=%%lf avg300=%%lf total=%%llu", kind);
	if (sscanf(line, fmt, &out->avg10, &out->avg60, &out->avg300, &total) != 4)
		return -EINVAL;
	out->total_us = total;
	return 0;
}

int psi_parse(const char *text, struct psi_line *some, struct psi_line *full)
{
	const char *full_line = strstr(text, "\nfull ");

	memset(full, 0, sizeof(*full));
	if (parse_line(text, "some", some))
		return -EINVAL;
	if (full_line && parse_line(full_line + 1, "full", full))
		return -EINVAL;
	return 0;
}

static int psi_load(void **state, const struct probe_env *env, char *why, size_t whylen)
{
	struct psi_probe *p;
	char buf[256];
	int err;

	if (!env->fs->v2_root[0]) {
		snprintf(why, whylen, "no cgroup2 mount: per-cgroup PSI lives in cgroup v2 files");
		return -EOPNOTSUPP;
	}
	/* Tells "kernel without PSI" from "PSI disabled at boot" from "works". */
	err = read_file_at(AT_FDCWD, "/proc/pressure/cpu", buf, sizeof(buf));
	if (err == -ENOENT) {
		snprintf(why, whylen, "the kernel has no PSI (CONFIG_PSI)");
		return -EOPNOTSUPP;
	}
	if (err) {
		snprintf(why, whylen, "PSI is disabled (%s): boot with psi=1", strerror(-err));
		return -EOPNOTSUPP;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->fs = env->fs;
	p->names = env->names;
	*state = p;
	return 0;
}

static int psi_attach(void *state)
{
	(void)state; /* nothing to attach: the kernel keeps PSI itself */
	return 0;
}

/* Reads the three files of one cgroup; false when it has none (not in cgroup2). */
static bool read_cgroup(const struct psi_probe *p, const char *rel, struct psi_sample *out)
{
	bool any = false;

	for (int r = 0; r < PSI_NR; r++) {
		char path[PATH_MAX * 2], buf[256];

		if (*rel)
			snprintf(path, sizeof(path), "%s/%s/%s", p->fs->v2_root, rel,
				 resource_files[r]);
		else /* the root cgroup has no files: the system-wide ones stand in */
			snprintf(path, sizeof(path), "/proc/pressure/%.*s",
				 (int)strcspn(resource_files[r], "."), resource_files[r]);
		if (read_file_at(AT_FDCWD, path, buf, sizeof(buf)) ||
		    psi_parse(buf, &out->some[r], &out->full[r]))
			continue;
		any = true;
	}
	return any;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const struct psi_cached *cache_find(const struct psi_probe *p, uint64_t id)
{
	size_t lo = 0, hi = p->n_cache;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->cache[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->n_cache && p->cache[lo].id == id ? &p->cache[lo] : NULL;
}

/*
 * The cgroups this reading covers, each from the cache when fresh enough,
 * else from its files; `ids` sorted, so `out` comes out sorted too.
 */
static size_t refresh(const struct psi_probe *p, const uint64_t *ids, size_t n, uint64_t now_ns,
		      struct psi_cached *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		const struct psi_cached *old;
		const char *rel;

		if (i && ids[i] == ids[i - 1])
			continue;
		old = cache_find(p, ids[i]);
		if (old && now_ns - old->read_ns <
				   (old->present ? PSI_REFRESH_NS : PSI_ABSENT_REFRESH_NS)) {
			out[m++] = *old;
			continue;
		}
		rel = cgroup_names_lookup(p->names, ids[i], now_ns);
		if (!rel)
			continue;
		out[m] = (struct psi_cached){.id = ids[i], .read_ns = now_ns};
		out[m].present = read_cgroup(p, rel, &out[m].psi);
		m++;
	}
	return m;
}

static int psi_read(void *state, struct snapshot *s)
{
	struct psi_probe *p = state;
	size_t n = s->n_cgroups, m;
	struct psi_cached *fresh;
	struct timespec now;
	uint64_t *ids;

	ids = malloc((n + 1) * sizeof(*ids));
	fresh = malloc((n + 1) * sizeof(*fresh));
	if (!ids || !fresh) {
		free(ids);
		free(fresh);
		return -ENOMEM;
	}
	/* Records may repeat an id until snapshot_finish(): read each cgroup once. */
	for (size_t i = 0; i < n; i++)
		ids[i] = s->cgroups[i].id;
	qsort(ids, n, sizeof(*ids), cmp_id);
	clock_gettime(CLOCK_MONOTONIC, &now);
	m = refresh(p, ids, n, (uint64_t)now.tv_sec * 1000000000ULL + now.tv_nsec, fresh);
	free(ids);
	/* The cache keeps exactly this reading's cgroups: gone ones drop out. */
	free(p->cache);
	p->cache = fresh;
	p->n_cache = m;
	for (size_t i = 0; i < m; i++) {
		struct cg_sample *cg;

		if (!fresh[i].present)
			continue;
		cg = snapshot_add(s, fresh[i].id);
		if (!cg)
			return -ENOMEM;
		cg->parts |= CG_PSI;
		cg->psi = fresh[i].psi;
	}
	return 0;
}

static const char *psi_path(const void *state)
{
	(void)state;
	return "cgroup2 pressure files";
}

static void psi_destroy(void *state)
{
	struct psi_probe *p = state;

	free(p->cache);
	free(p);
}

const struct probe_ops psi_probe_ops = {
	.name = "psi",
	.load = psi_load,
	.attach = psi_attach,
	.read = psi_read,
	.path = psi_path,
	.destroy = psi_destroy,
};
