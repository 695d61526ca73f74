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
#include "../probes/pin_layout.h"

struct fast_path {
	int cfg_fd, watch_fd, ring_fd;
	struct ring_buffer *rb;
	uint64_t threshold_ns;
	uint64_t *watched; /* sorted cgroup ids now in the watch map */
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

int fast_path_open(struct fast_path **out, const char *pin_dir, uint64_t threshold_ns,
		   uint64_t gap_ns)
{
	struct fast_path *fp = calloc(1, sizeof(*fp));
	int err;

	if (!fp)
		return -ENOMEM;
	fp->threshold_ns = threshold_ns;
	fp->cfg_fd = pinned(pin_dir, pin_map_name(PIN_MAP_rq_alert_cfg));
	fp->watch_fd = pinned(pin_dir, pin_map_name(PIN_MAP_rq_alert_watch));
	fp->ring_fd = pinned(pin_dir, pin_map_name(PIN_MAP_rq_alerts));
	err = fp->cfg_fd < 0 || fp->watch_fd < 0 || fp->ring_fd < 0 ? -ENOENT : 0;
	if (!err) {
		fp->rb = ring_buffer__new(fp->ring_fd, on_alert, fp, NULL);
		err = fp->rb ? set_cfg(fp, threshold_ns, gap_ns) : -errno;
	}
	if (err) {
		fast_path_close(fp);
		return err;
	}
	*out = fp;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int fast_path_watch(struct fast_path *fp, const struct collect_member *m, size_t n,
		    const uint64_t *muted, size_t n_muted)
{
	uint64_t *want = malloc((n ? n : 1) * sizeof(*want));
	struct rq_alert_watch w = {.threshold_ns = fp->threshold_ns};
	size_t n_want = 0;

	if (!want)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (qos_is_ls(m[i].cls) &&
		    !(n_muted && bsearch(&m[i].unit, muted, n_muted, sizeof(*muted), cmp_u64)))
			want[n_want++] = m[i].cgid;
	qsort(want, n_want, sizeof(*want), cmp_u64);
	/* Both lists are sorted: one merge pass adds the new and removes the gone. */
	for (size_t i = 0, j = 0; i < n_want || j < fp->n_watched;) {
		if (j == fp->n_watched || (i < n_want && want[i] < fp->watched[j])) {
			if (bpf_map_update_elem(fp->watch_fd, &want[i], &w, BPF_NOEXIST) &&
			    errno != EEXIST)
				log_warn("fast path: cannot watch cgroup %llu: %s",
					 (unsigned long long)want[i], strerror(errno));
			i++;
		} else if (i == n_want || fp->watched[j] < want[i]) {
			bpf_map_delete_elem(fp->watch_fd, &fp->watched[j]);
			j++;
		} else {
			i++;
			j++;
		}
	}
	free(fp->watched);
	fp->watched = want;
	fp->n_watched = n_want;
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
		bpf_map_delete_elem(fp->watch_fd, &fp->watched[i]);
	ring_buffer__free(fp->rb);
	int fds[] = {fp->cfg_fd, fp->watch_fd, fp->ring_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fp->watched);
	free(fp);
}

double fast_path_threshold_us(const struct policy_config *p)
{
	double us = p->interference.rq_p99_us;

	if (!p->slo.enabled)
		return us;
	us = fmin(us, fmin(p->slo.lse_p99_us, fmin(p->slo.lsr_p99_us, p->slo.ls_p99_us)));
	for (size_t i = 0; i < p->slo.n_globs; i++)
		us = fmin(us, p->slo.globs[i].p99_us);
	return us;
}

bool fast_path_may_mute(const struct policy_config *p)
{
	return !p->slo.enabled;
}
