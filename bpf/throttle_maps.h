/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Layouts shared by bpf/throttle.bpf.c and user/probes/throttle.c: the
 * throttled periods the probe saw per cgroup, and its drop counters.
 */
#ifndef QOSLET_BPF_THROTTLE_MAPS_H
#define QOSLET_BPF_THROTTLE_MAPS_H

#ifndef __VMLINUX_H__ /* user space: the BPF side has these from vmlinux.h */
#include <linux/types.h>
#endif

/*
 * One task group's CFS bandwidth throttling, keyed by the cgroup id of the
 * group that ran out of quota (tg->css.cgroup: in the cpu hierarchy on v1).
 */
struct throttle_val {
	/*
	 * The group's period number (cfs_bandwidth.nr_periods) when it was
	 * last seen throttled: a period is counted once however many of the
	 * group's per-CPU run queues were throttled in it, as the kernel's
	 * nr_throttled counts it.
	 */
	__u64 last_period;
	__u64 events; /* periods in which the probe saw the group throttled */
};

/* Per-CPU counters of observations the probe could not record. */
enum throttle_drop {
	THROTTLE_DROP_MAP_FULL = 0, /* no room for a new cgroup in throttle_tg */
	THROTTLE_DROP_DEPTH,	    /* the throttled group was nested too deep to walk to */
	THROTTLE_DROP_NR,
};

/* Levels of task groups the sched_switch path walks up from a task. */
#define THROTTLE_MAX_DEPTH 16

#endif
