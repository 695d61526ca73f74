/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Batch capacity: how much of the node BE pods may be given, per resource
 * (CPU, memory), for the scheduler (kubernetes.io/batch-cpu, batch-memory):
 *
 *   batch = capacity x threshold - used - reserve, never below 0
 *   used  = max(LS + system now, its percentile over the window)
 *
 * LS counts every unit that is not BE: LSE and LSR units their request or
 * their usage, whichever is larger (their request is theirs to use at any
 * moment), the others their usage. System = node usage - all units' usage.
 * Taking the larger of now and the percentile makes a rise count at once and
 * a drop only once the window no longer holds enough high samples: a lull
 * does not invite BE. The window must have spanned window_s before any
 * value but 0 is believed (after a start, or a gap of stale_s without a
 * reading), and a tick whose reading is not whole does not count: when
 * that lasts stale_s, batch goes to 0 with the reason. docs/capacity.md.
 *
 * That figure follows the load; the scheduler gets a steadier one, the
 * published figure, which is what the Node's status says:
 *
 *   floor  = capacity x threshold - peak - reserve
 *   peak   = the highest `used` over the last hold_s
 *   published: first (and from 0) floor x (1 - step); then
 *     - when floor falls below it (a new peak): floor x (1 - step), at once;
 *     - when floor x (1 - step) exceeds it by more than step of it (the
 *       peak aged out of the hold): that;
 *     - else unchanged.
 * A load that swings within the hold publishes once and stays; a rise
 * shrinks it at once, with a step's margin, so that the next few peaks
 * a little higher do not move it again; a lull lets it grow back once, a
 * hold after the peak. Real-time protection is BE suppression's, not the
 * scheduler's: this figure is a floor the node can keep, not an estimate.
 */
#ifndef QOSLET_POLICY_CAPACITY_H
#define QOSLET_POLICY_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/action.h"
#include "policy/policy_config.h"
#include "policy/model.h"

enum capacity_resource { CAP_CPU = 0, CAP_MEM, CAP_NR };

/* "kubernetes.io/batch-cpu", "kubernetes.io/batch-memory". */
const char *capacity_resource_name(enum capacity_resource r);

/* The terms of the formula for one resource: CPUs or bytes. */
struct capacity_terms {
	double capacity;
	double threshold; /* share */
	double ls;	  /* this tick's LS usage (LSE/LSR: max(request, usage)) */
	double system;	  /* this tick's node usage outside every unit */
	double pctl;	  /* the percentile of LS + system over the window */
	double used;	  /* max(ls + system, pctl): what the formula takes */
	double peak;	  /* the highest `used` over hold_s */
	double reserve;
	double batch;	  /* the result; 0 while stale or warming up */
	double published; /* the scheduler's figure (CPUs or bytes); 0 while held */
};

struct capacity_result {
	struct capacity_terms r[CAP_NR];
	/* Why batch is 0 whatever the terms say (static text), or NULL. */
	const char *held;
	double window_covered_s; /* how far back the window reaches: window_s once warm */
	size_t samples;		 /* in the window */
};

struct capacity_sample {
	uint64_t ts_ns;
	double used[CAP_NR]; /* LS + system */
};

/* The peak's hold: the highest `used` of each 60th of hold_s, by bucket number. */
#define CAPACITY_HOLD_BUCKETS 60

struct capacity_hold_bucket {
	uint64_t id; /* ts_ns / the bucket width */
	bool used;
	double max[CAP_NR];
};

struct capacity_state {
	struct capacity_sample *v; /* a ring, oldest at head */
	size_t head, n, cap;
	double *scratch; /* for the percentile */
	size_t cap_scratch;
	uint64_t start_ns;   /* first sample of this window; 0: none yet */
	uint64_t bad_since;  /* first tick of an unbroken run of unwhole readings; 0 none */
	const char *bad_why; /* what the last unwhole reading lacked */
	bool have_last;	     /* a result was decided before */
	struct capacity_result last;
	uint64_t decided[CAP_NR]; /* the values of the last decision records */
	const char *decided_held;
	struct capacity_hold_bucket hold[CAPACITY_HOLD_BUCKETS];
	uint64_t hold_width_ns;	    /* the buckets' width: hold_s / CAPACITY_HOLD_BUCKETS */
	uint64_t published[CAP_NR]; /* API values (capacity_api_value) */
	uint64_t decided_published[CAP_NR];
};

/*
 * One tick. `bad` is NULL when the reading is whole, else why not
 * ("cgroup reads failed", ...): that tick adds no sample. Fills *out and
 * appends one ACT_CAPACITY action per resource whose value moved by more
 * than cfg->min_change of its capacity since the last one (and whenever
 * it reaches or leaves 0, the reason it is held changes or its published
 * figure changes), with the terms as evidence. st->published is then what
 * the Node's status should say. Returns 0 or -ENOMEM.
 */
int capacity_tick(const struct pol_input *in, const char *bad, const struct capacity_config *cfg,
		  struct capacity_state *st, struct capacity_result *out, struct action_list *acts);

void capacity_state_free(struct capacity_state *st);

/* A record's value as the API takes it: milli-CPUs, or bytes. */
uint64_t capacity_api_value(enum capacity_resource r, double batch);

#endif
