/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's fast path: the sched probe's switch step alerts through a ring
 * buffer when a watched cgroup's task waited over its threshold
 * (bpf/sched.h: rq_alert_*), and the agent runs a tick at once instead of at
 * the next interval. The agent keeps the watched set equal to the cgroups
 * of its latency-sensitive units.
 */
#ifndef QOSLET_AGENT_FAST_PATH_H
#define QOSLET_AGENT_FAST_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../collect/collect.h"
#include "../policy/config.h"

struct fast_path;

/*
 * The wait that raises an alert, us: interference's run-queue threshold,
 * or, with SLO control on, the smallest target of its config (classes and
 * globs; a pod annotated lower still waits for the regular tick) when that
 * is smaller, so that a wait over an SLO target wakes the loop.
 */
double fast_path_threshold_us(const struct policy_config *p);

/*
 * Whether settled interference breaches may mute their LS units: not with
 * SLO control on, which may still cut on any of their alerts.
 */
bool fast_path_may_mute(const struct policy_config *p);

/*
 * Opens the pinned alert maps under pin_dir and turns alerts on for waits
 * over threshold_ns, at most one per cgroup per gap_ns. -errno when the sched
 * probe's maps are not there (the probe is off).
 */
int fast_path_open(struct fast_path **out, const char *pin_dir, uint64_t threshold_ns,
		   uint64_t gap_ns);

/*
 * Watches exactly the members of latency-sensitive units, except those of
 * the units in muted (ids, sorted): their alerts could lead to nothing new
 * (interference_settled()). A muted cgroup leaves the watch map, so the
 * switch step finds no entry, as for any unwatched cgroup: muting costs
 * the hot path nothing. 0 or -errno.
 */
int fast_path_watch(struct fast_path *fp, const struct collect_member *m, size_t n,
		    const uint64_t *muted, size_t n_muted);

/* A descriptor that polls readable when alerts are waiting. */
int fast_path_fd(const struct fast_path *fp);

/* Consumes the waiting alerts; returns how many (0 when none) or -errno. */
int fast_path_drain(struct fast_path *fp);

/* Turns alerts off, unwatches everything and closes. */
void fast_path_close(struct fast_path *fp);

#endif
