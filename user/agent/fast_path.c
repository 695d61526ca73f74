// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "fast_path.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../bpf/sched.h"
#include "../log.h"
#include "../policy/slo.h"
#include "../probes/pin_layout.h"

struct fast_path {
	int cfg_fd, watch_fd, ring_fd;
	struct ring_buffer *rb;
	uint64_t gap_ns;
	uint64_t min_ns;		  /* the pre-filter now in the config map; 0: off */
	struct fast_path_target *watched; /* sorted by cgid: now in the watch map */
	size_t n_watched;
	size_t drained;
};

static int pinned(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

static int on_alert(void *ctx, void *data, size_t size)
{
	struct fast_path *fp = ctx;
	const struct rq_alert *a = data;

	if (size >= sizeof(*a))
		log_debug("fast path: cgroup %llu waited %llu us", (unsigned long long)a->cgid,
			  (unsigned long long)a->wait_ns / 1000);
	fp->drained++;
	return 0;
}

static int set_cfg(struct fast_path *fp, uint64_t min_ns, uint64_t gap_ns)
{
	struct rq_alert_cfg cfg = {.min_ns = min_ns, .gap_ns = gap_ns};
	__u32 zero = 0;

	return bpf_map_update_elem(fp->cfg_fd, &zero, &cfg, BPF_ANY) ? -errno : 0;
}

int fast_path_open(struct fast_path **out, const char *pin_dir, uint64_t gap_ns)
{
	struct fast_path *fp = calloc(1, sizeof(*fp));
	int err;

	if (!fp)
		return -ENOMEM;
	fp->gap_ns = gap_ns;
	fp->cfg_fd = pinned(pin_dir, pin_map_name(PIN_MAP_rq_alert_cfg));
	fp->watch_fd = pinned(pin_dir, pin_map_name(PIN_MAP_rq_alert_watch));
	fp->ring_fd = pinned(pin_dir, pin_map_name(PIN_MAP_rq_alerts));
	err = fp->cfg_fd < 0 || fp->watch_fd < 0 || fp->ring_fd < 0 ? -ENOENT : 0;
	if (!err) {
		fp->rb = ring_buffer__new(fp->ring_fd, on_alert, fp, NULL);
		err = fp->rb ? set_cfg(fp, 0, gap_ns) : -errno;
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

static void watch_put(struct fast_path *fp, const struct fast_path_target *t)
{
	/* last_ns 0: a changed threshold also restarts the cgroup's gap */
	struct rq_alert_watch w = {.threshold_ns = t->threshold_ns};

	if (bpf_map_update_elem(fp->watch_fd, &t->cgid, &w, BPF_ANY))
		log_warn("fast path: cannot watch cgroup %llu: %s", (unsigned long long)t->cgid,
			 strerror(errno));
}

int fast_path_watch(struct fast_path *fp, struct fast_path_target *want, size_t n)
{
	struct fast_path_target *keep = malloc((n ? n : 1) * sizeof(*keep));
	uint64_t min_ns = 0;

	if (!keep)
		return -ENOMEM;
	qsort(want, n, sizeof(*want), cmp_cgid);
	for (size_t i = 0; i < n; i++)
		if (!min_ns || want[i].threshold_ns < min_ns)
			min_ns = want[i].threshold_ns;
	/*
	 * A lower pre-filter goes in before the entries that need it, a higher
	 * one after the entries it would have let through are gone.
	 */
	if (min_ns && (!fp->min_ns || min_ns < fp->min_ns) && !set_cfg(fp, min_ns, fp->gap_ns))
		fp->min_ns = min_ns;
	/* Both lists are sorted: one merge pass adds, changes and removes. */
	for (size_t i = 0, j = 0; i < n || j < fp->n_watched;) {
		if (j == fp->n_watched || (i < n && want[i].cgid < fp->watched[j].cgid)) {
			watch_put(fp, &want[i++]);
		} else if (i == n || fp->watched[j].cgid < want[i].cgid) {
			bpf_map_delete_elem(fp->watch_fd, &fp->watched[j++].cgid);
		} else {
			if (want[i].threshold_ns != fp->watched[j].threshold_ns)
				watch_put(fp, &want[i]);
			i++;
			j++;
		}
	}
	if (min_ns != fp->min_ns && !set_cfg(fp, min_ns, fp->gap_ns))
		fp->min_ns = min_ns;
	memcpy(keep, want, n * sizeof(*keep));
	free(fp->watched);
	fp->watched = keep;
	fp->n_watched = n;
	return 0;
}

int fast_path_fd(const struct fast_path *fp)
{
	return ring_buffer__epoll_fd(fp->rb);
}

int fast_path_drain(struct fast_path *fp)
{
	int err;

	fp->drained = 0;
	err = ring_buffer__consume(fp->rb);
	return err < 0 ? err : (int)fp->drained;
}

void fast_path_close(struct fast_path *fp)
{
	if (!fp)
		return;
	if (fp->cfg_fd >= 0)
		set_cfg(fp, 0, 0);
	for (size_t i = 0; fp->watch_fd >= 0 && i < fp->n_watched; i++)
		bpf_map_delete_elem(fp->watch_fd, &fp->watched[i].cgid);
	ring_buffer__free(fp->rb);
	int fds[] = {fp->cfg_fd, fp->watch_fd, fp->ring_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fp->watched);
	free(fp);
}

double fast_path_threshold_us(const struct policy_config *p, const struct pol_unit *u)
{
	double us = p->interference.rq_p99_us;

	if (!p->slo.enabled)
		return us;
	if (u) {
		double target = slo_target_us(u, &p->slo); /* 0: not an LS unit */

		return target > 0 ? fmin(us, target) : us;
	}
	us = fmin(us, fmin(p->slo.lse_p99_us, fmin(p->slo.lsr_p99_us, p->slo.ls_p99_us)));
	for (size_t i = 0; i < p->slo.n_globs; i++)
		us = fmin(us, p->slo.globs[i].p99_us);
	return us;
}

bool fast_path_may_mute(const struct policy_config *p)
{
	return !p->slo.enabled;
}
