/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's fast path: the sched probe's switch step alerts through a ring
 * buffer when a watched cgroup's task waited over its threshold
 * (bpf/sched.h: rq_alert_*), and the agent runs a tick at once instead of at
 * the next interval. The agent keeps the watched set equal to the cgroups
 * of its latency-sensitive units, each at its own unit's threshold. The
 * probe also alerts when a watched cgroup is displaced by a displacer's
 * tasks (a BE unit's): it takes the CPU from them, or waits behind them,
 * many times within milliseconds (bpf/sched.h); the agent names the
 * displacers only while a displacement could still make it act. The
 * thresholds are the policies' (policy/alert_threshold.h).
 */
#ifndef QOSLET_PROBES_FAST_PATH_H
#define QOSLET_PROBES_FAST_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/probes.h"

struct fast_path;

/*
 * Takes the sched probe's alert maps from the probe set ps, alerts off until
 * something is watched, at most one per cgroup per gap_ns; a displacement
 * alert at displaced_min switch-ins after displacers within 10 ms (the
 * policy's number: the tick that follows must be able to judge it).
 * -errno when the maps are not there (the probe is off).
 */
int fast_path_open(struct fast_path **out, const struct probe_set *ps, uint64_t gap_ns,
		   uint32_t displaced_min);

/* A cgroup to watch and the wait over which it alerts. */
struct fast_path_target {
	uint64_t cgid;
	uint64_t threshold_ns;
};

/*
 * Watches exactly the cgroups of want (n of them; sorted here by cgid), each
 * at its threshold, and sets the probe's pre-filter to their smallest (alerts
 * off when there are none). Only what differs from the last call is written:
 * a cgroup that leaves the watch map costs the switch step nothing, so muting
 * a settled unit is leaving it out of want. 0 or -ENOMEM.
 */
int fast_path_watch(struct fast_path *fp, struct fast_path_target *want, size_t n);

/*
 * Counts switch-ins of watched cgroups after tasks of exactly want's
 * cgroups (n of them, sorted here by cgid; thresholds unused) toward a
 * displacement alert: on while want has any, off when n is 0. Only what
 * differs from the last call is written. 0 or -ENOMEM.
 */
int fast_path_displacers(struct fast_path *fp, struct fast_path_target *want, size_t n);

/* A descriptor that polls readable when alerts are waiting. */
int fast_path_fd(const struct fast_path *fp);

/* The alerts one drain consumed, by kind. */
struct fast_path_alerts {
	uint64_t waits;	    /* a wait over its cgroup's threshold */
	uint64_t displaced; /* a cgroup displaced by displacers' tasks */
};

/*
 * Counts one record of the probe's alert ring (struct rq_alert) into *got
 * by kind; a record shorter than the layout is not counted.
 */
void fast_path_decode(struct fast_path_alerts *got, const void *data, size_t size);

/* Consumes the waiting alerts into *got; 0 or -errno. */
int fast_path_drain(struct fast_path *fp, struct fast_path_alerts *got);

/* Turns alerts off, unwatches everything and closes. */
void fast_path_close(struct fast_path *fp);

#endif
