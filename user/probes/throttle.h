/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The throttle probe: CFS bandwidth throttling per cgroup. cpu.stat of every
 * cgroup with a quota is always read (the kernel's own counters); throttle
 * events are counted by the best path the kernel allows, in this order:
 * fentry on throttle_cfs_rq/unthrottle_cfs_rq, sched_switch (tp_btf, else
 * raw_tp), or none (cpu.stat polling alone). See docs/metrics/throttle.md.
 */
#ifndef QOSLET_PROBES_THROTTLE_H
#define QOSLET_PROBES_THROTTLE_H

#include "probes/probes.h"

extern const struct probe_ops throttle_probe_ops;

/* Loads one event source; 0 or -errno. */
typedef int (*throttle_try_fn)(void *ctx, enum throttle_source src);

/*
 * Chooses the event source: `want` alone when forced, else each source in
 * order of preference (fentry, tp_btf, cpustat) until one loads. Sets
 * *chosen and returns 0, or returns the error of the last source tried.
 */
int throttle_select(enum throttle_source want, throttle_try_fn try_load, void *ctx,
		    enum throttle_source *chosen);

#endif
