/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Pure arithmetic on run-queue latency histograms (layout in bpf/sched.h). */
#ifndef QOSLET_HIST_H
#define QOSLET_HIST_H

#include <linux/types.h>
#include <stdint.h>

#include "bpf/lat_hist.h"

/* Inclusive upper bound of a bucket in ns; UINT64_MAX for the last (+Inf). */
uint64_t hist_slot_le_ns(int slot);

/* dst += src, bucket by bucket (used to fold per-CPU values). */
void hist_add(struct lat_hist *dst, const struct lat_hist *src);

/*
 * out = now - before. Counters only grow, so a bucket that went down means
 * the map entry was recreated (cgroup gone, id reused, maps re-pinned): then
 * out is `now` itself, the count since the entry was created.
 */
void hist_delta(struct lat_hist *out, const struct lat_hist *now, const struct lat_hist *before);

/*
 * The q-quantile (0 < q <= 1) in ns, interpolated linearly inside the bucket
 * that holds it, exactly as Prometheus' histogram_quantile() does on the
 * same buckets, so CLI and dashboards agree. A quantile that falls in the
 * +Inf bucket reports the last finite bound. 0 for an empty histogram.
 */
double hist_quantile_ns(const struct lat_hist *h, double q);

#endif
