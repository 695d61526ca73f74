/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's state as Prometheus text exposition (format 0.0.4): a pure
 * renderer, so the agent loop builds the text once per tick and the HTTP
 * thread only ever serves copies of it. Every metric is described in
 * docs/metrics/agent.md.
 */
#ifndef QOSLET_REPORT_METRICS_H
#define QOSLET_REPORT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../agent/decision.h"
#include "../snapshot.h"

/* A cgroup of the snapshot with the labels it is published under. */
struct metrics_cgroup {
	const struct cg_sample *s; /* cumulative: the probes' counters since they started */
	const char *path;	   /* relative to the cgroup root ("" is the root) */
	const char *pod_uid;	   /* NULL or "" when the cgroup belongs to no pod */
	const char *qos;	   /* the unit's class name; NULL when it belongs to no unit */
};

struct metrics_probe {
	const char *name; /* "sched", "cpi", ... */
	bool on;
	const char *path; /* where its maps are pinned when on; NULL otherwise */
};

struct metrics_input {
	const struct metrics_cgroup *cgroups; /* any order; only those with CG_RQ are shown */
	size_t n_cgroups;
	const struct decision_log *log; /* NULL: no decision counters */
	uint64_t ticks, fast_ticks;
	uint64_t loop_ns; /* how long the last tick took */
	const struct metrics_probe *probes;
	size_t n_probes;
};

/*
 * Renders the text into *text (malloc'd, NUL-terminated, length in *len).
 * Two cgroups with one path (an id the name cache has not yet seen removed)
 * would be two series with one label set: the newer id (the larger) wins.
 * Returns 0 or -ENOMEM.
 */
int metrics_render(const struct metrics_input *in, char **text, size_t *len);

#endif
