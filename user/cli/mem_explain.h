/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The memory and I/O stall of every cgroup of an interval, measured and
 * explained by the memory interference policy's own code
 * (mem_stall_explain, policy/mem_interference.h), so that `qoslet memstall`
 * and `qoslet top` say what the agent would: each cgroup with memstall
 * activity is a party of its own, read the way the collector reads a unit
 * (collect_fold_mem: the probe's PSI inputs, reclaim and bios), with its
 * own limit's hits and its refaults since the last interval, and the hits
 * on its ancestors' limits (mem_ancestors_read). The CLI reads these files
 * itself: it is the SRE's tool, and runs without the agent.
 */
#ifndef QOSLET_CLI_MEM_EXPLAIN_H
#define QOSLET_CLI_MEM_EXPLAIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/knob.h"
#include "cli/view.h"
#include "collect/mem_ancestors.h"
#include "policy/mem_interference.h"
#include "snapshot.h"

/* One cgroup's interval, explained. */
struct mem_explain_cg {
	uint64_t id;
	struct mem_stall_explained mem, io;
};

/* A cgroup's counters at the last interval that read them. */
struct mem_explain_prev {
	uint64_t id;
	uint64_t seq; /* the interval that read them */
	uint64_t refaults, hits;
	bool has_refaults, has_hits;
};

/* All zero is the initial state. */
struct mem_explain {
	struct cgroup_ctrls ctrls;
	int ctrls_err; /* 0 found; else why the cgroup files are not read (said once) */
	bool ctrls_tried;
	struct mem_ancestors ancestors;
	struct mem_explain_prev *prev; /* sorted by id */
	size_t n_prev;
	uint64_t seq;	/* intervals explained */
	uint64_t ts_ns; /* the last one's snapshot time: a view drawn anew reads nothing */
	struct mem_explain_cg *v; /* this interval's, sorted by id */
	size_t n, cap;
};

/* Did the cgroup stall, wait for I/O, reclaim, submit bios or lose a task to the OOM killer? */
bool mem_explain_active(const struct cg_sample *cg);

/*
 * This interval (delta, v->interval_ns): every active cgroup's stall and
 * its explanation into x->v. Counters a cgroup lacks (or a node without
 * the memory controller) count nothing; their first interval has no
 * refaults or own hits yet. The same delta again (a view drawn anew) keeps
 * x->v as it is. 0 or -ENOMEM (x->v then empty).
 */
int mem_explain_update(struct mem_explain *x, struct view *v, const struct snapshot *delta);

/* The cgroup's entry of this interval; NULL when it had no activity. */
const struct mem_explain_cg *mem_explain_find(const struct mem_explain *x, uint64_t id);

/*
 * The party that explains e (a stall of cgroup `victim`) for people:
 * "own limit", "itself", "node", else the party's path ("(removed)" once
 * gone); "-" when nothing stalled.
 */
const char *mem_explain_culprit_name(struct view *v, const struct mem_stall_explained *e, char *buf,
				     size_t size);

/*
 * The same as JSON (docs/json-output.md): the party's cgroup (the victim
 * itself for "self" and "own_limit", the root for "node"), with "cause"
 * (interference_cause_name) and "share"; null when nothing stalled.
 */
json_t *mem_explain_culprit_json(struct view *v, uint64_t victim,
				 const struct mem_stall_explained *e);

void mem_explain_free(struct mem_explain *x);

#endif
