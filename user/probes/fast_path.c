// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/fast_path.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/sched_maps.h"
#include "log.h"
#include "probes/pin_layout.h"
#include "probes/probes.h"

/*
 * A displacement alert: the caller's displaced_min switch-ins after a
 * displacer within DISPLACED_WINDOW_NS. A displaced web server takes the
 * CPU from BE about ten times a millisecond, so the alert comes within a
 * millisecond or two; an LS pod that switches in less often is left to the
 * ticks, whose displaced share judges it anyway. At most one per cgroup a
 * second: the alert is for the onset, the ticks that follow it judge the
 * rest.
 */
#define DISPLACED_WINDOW_NS (10 * 1000000ull)
#define DISPLACED_GAP_NS    (1000 * 1000000ull)

/* A set of cgroups in one of the probe's maps, sorted by cgid. */
struct cgid_set {
	struct fast_path_target *v;
	size_t n;
};

struct fast_path {
	int cfg_fd, watch_fd, displacers_fd, ring_fd;
	struct ring_buffer *rb;
	uint64_t gap_ns;
	uint32_t displaced_min;	    /* switch-ins in the window that make a displacement alert */
	uint64_t min_ns;	    /* the pre-filter now in the config map; 0: off */
	bool armed;		    /* displacement alerts on in the config map */
	struct cgid_set watched;    /* now in the watch map */
	struct cgid_set displacers; /* now in the displacers map */
	struct fast_path_alerts drained;
};

/* A copy of the sched probe's map: the fast path closes its own, the probe set its. */
static int probe_map(const struct probe_set *ps, size_t map)
{
	int fd = probe_set_map_fd(ps, PROBE_SCHED, map);

	return fd < 0 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

void fast_path_decode(struct fast_path_alerts *got, const void *data, size_t size)
{
	const struct rq_alert *a = data;

	if (size < sizeof(*a))
		return; /* a record of another layout: not counted */
	if (a->kind == RQ_ALERT_DISPLACED) {
		log_debug("fast path: cgroup %llu displaced by cgroup %llu",
			  (unsigned long long)a->cgid, (unsigned long long)a->culprit);
		got->displaced++;
	} else {
		log_debug("fast path: cgroup %llu waited %llu us", (unsigned long long)a->cgid,
			  (unsigned long long)a->wait_ns / 1000);
		got->waits++;
	}
}

static int on_alert(void *ctx, void *data, size_t size)
{
	struct fast_path *fp = ctx;

	fast_path_decode(&fp->drained, data, size);
	return 0;
}

static int set_cfg(struct fast_path *fp, uint64_t min_ns, bool armed)
{
	struct rq_alert_cfg cfg = {
		.min_ns = min_ns,
		.gap_ns = fp->gap_ns,
		.displaced_window_ns = DISPLACED_WINDOW_NS,
		.displaced_gap_ns = DISPLACED_GAP_NS,
		.displaced_min = armed ? fp->displaced_min : 0,
	};
	__u32 zero = 0;

	if (bpf_map_update_elem(fp->cfg_fd, &zero, &cfg, BPF_ANY))
		return -errno;
	fp->min_ns = min_ns;
	fp->armed = armed;
	return 0;
}

int fast_path_open(struct fast_path **out, const struct probe_set *ps, uint64_t gap_ns,
		   uint32_t displaced_min)
{
	struct fast_path *fp = calloc(1, sizeof(*fp));
	int err;

	if (!fp)
		return -ENOMEM;
	fp->gap_ns = gap_ns;
	fp->displaced_min = displaced_min;
	fp->cfg_fd = probe_map(ps, PIN_MAP_rq_alert_cfg);
	fp->watch_fd = probe_map(ps, PIN_MAP_rq_alert_watch);
	fp->displacers_fd = probe_map(ps, PIN_MAP_rq_displacers);
	fp->ring_fd = probe_map(ps, PIN_MAP_rq_alerts);
	err = fp->cfg_fd < 0 || fp->watch_fd < 0 || fp->displacers_fd < 0 || fp->ring_fd < 0
		      ? -ENOENT
		      : 0;
	if (!err) {
		fp->rb = ring_buffer__new(fp->ring_fd, on_alert, fp, NULL);
		err = fp->rb ? set_cfg(fp, 0, false) : -errno;
	}
	if (err) {
		fast_path_close(fp);
		return err;
	}
	*out = fp;
	return 0;
}

static int cmp_cgid(const void *a, const void *b)
{
	uint64_t x = ((const struct fast_path_target *)a)->cgid;
	uint64_t y = ((const struct fast_path_target *)b)->cgid;

	return x < y ? -1 : x > y;
}

static void watch_put(int fd, const struct fast_path_target *t)
{
	/* the counters 0: a changed threshold also restarts the cgroup's gaps */
	struct rq_alert_watch w = {.threshold_ns = t->threshold_ns};

	if (bpf_map_update_elem(fd, &t->cgid, &w, BPF_ANY))
		log_warn("fast path: cannot watch cgroup %llu: %s", (unsigned long long)t->cgid,
			 strerror(errno));
}

static void displacer_put(int fd, const struct fast_path_target *t)
{
	__u32 one = 1;

	if (bpf_map_update_elem(fd, &t->cgid, &one, BPF_ANY))
		log_warn("fast path: cannot count cgroup %llu as a displacer: %s",
			 (unsigned long long)t->cgid, strerror(errno));
}

/*
 * Makes map fd hold exactly want (n entries, sorted here by cgid) where it
 * held *have: both lists sorted, one merge pass adds, changes (threshold)
 * and removes, and only what differs is written. Then *have is want.
 */
static int set_sync(int fd, struct cgid_set *have, struct fast_path_target *want, size_t n,
		    void (*put)(int fd, const struct fast_path_target *t))
{
	struct fast_path_target *keep = malloc((n ? n : 1) * sizeof(*keep));

	if (!keep)
		return -ENOMEM;
	qsort(want, n, sizeof(*want), cmp_cgid);
	for (size_t i = 0, j = 0; i < n || j < have->n;) {
		if (j == have->n || (i < n && want[i].cgid < have->v[j].cgid)) {
			put(fd, &want[i++]);
		} else if (i == n || have->v[j].cgid < want[i].cgid) {
			bpf_map_delete_elem(fd, &have->v[j++].cgid);
		} else {
			if (want[i].threshold_ns != have->v[j].threshold_ns)
				put(fd, &want[i]);
			i++;
			j++;
		}
	}
	memcpy(keep, want, n * sizeof(*keep));
	free(have->v);
	have->v = keep;
	have->n = n;
	return 0;
}

int fast_path_watch(struct fast_path *fp, struct fast_path_target *want, size_t n)
{
	uint64_t min_ns = 0;
	int err;

	for (size_t i = 0; i < n; i++)
		if (!min_ns || want[i].threshold_ns < min_ns)
			min_ns = want[i].threshold_ns;
	/*
	 * A lower pre-filter goes in before the entries that need it, a higher
	 * one after the entries it would have let through are gone.
	 */
	if (min_ns && (!fp->min_ns || min_ns < fp->min_ns))
		set_cfg(fp, min_ns, fp->armed);
	err = set_sync(fp->watch_fd, &fp->watched, want, n, watch_put);
	if (min_ns != fp->min_ns)
		set_cfg(fp, min_ns, fp->armed);
	return err;
}

int fast_path_displacers(struct fast_path *fp, struct fast_path_target *want, size_t n)
{
	int err;

	/* Off before the set shrinks to nothing, on once it is there. */
	if (!n && fp->armed)
		set_cfg(fp, fp->min_ns, false);
	err = set_sync(fp->displacers_fd, &fp->displacers, want, n, displacer_put);
	if (!err && n && !fp->armed)
		set_cfg(fp, fp->min_ns, true);
	return err;
}

int fast_path_fd(const struct fast_path *fp)
{
	return ring_buffer__epoll_fd(fp->rb);
}

int fast_path_drain(struct fast_path *fp, struct fast_path_alerts *got)
{
	int err;

	fp->drained = (struct fast_path_alerts){0};
	err = ring_buffer__consume(fp->rb);
	*got = fp->drained;
	return err < 0 ? err : 0;
}

void fast_path_close(struct fast_path *fp)
{
	if (!fp)
		return;
	if (fp->cfg_fd >= 0)
		set_cfg(fp, 0, false);
	for (size_t i = 0; fp->watch_fd >= 0 && i < fp->watched.n; i++)
		bpf_map_delete_elem(fp->watch_fd, &fp->watched.v[i].cgid);
	for (size_t i = 0; fp->displacers_fd >= 0 && i < fp->displacers.n; i++)
		bpf_map_delete_elem(fp->displacers_fd, &fp->displacers.v[i].cgid);
	ring_buffer__free(fp->rb);
	int fds[] = {fp->cfg_fd, fp->watch_fd, fp->displacers_fd, fp->ring_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fp->watched.v);
	free(fp->displacers.v);
	free(fp);
}
