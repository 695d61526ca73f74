/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPU burst for LS units with a CPU limit: a kernel burst allowance (cpu.cfs_burst_us,
 * cpu.max.burst) and a CFS quota scaled up while throttled, never below the limit.
 */
#ifndef QOSLET_POLICY_BURST_H
#define QOSLET_POLICY_BURST_H

#include <stddef.h>
#include <stdint.h>

#include "policy/action.h"
#include "policy/policy_config.h"
#include "policy/model.h"

/* What burst remembers of one unit. */
struct burst_unit_state {
	uint64_t id;
	double quota_cpus;	  /* the quota it asked for last tick, in CPUs */
	uint64_t budget_period;	  /* which budget period (ts_ns / budget_period_s) ... */
	double budget_used_cpu_s; /* ... and the CPU-seconds used above the limit in it */
	/* The window being gathered: ticks shorter than BURST_WINDOW_S add up. */
	double win_s;		/* seconds gathered */
	uint64_t win_periods;	/* CFS periods in it */
	uint64_t win_throttled; /* throttled ones */
	double win_cpu_s;	/* CPU-seconds the unit used */
	double win_busy_s;	/* seconds x the shared pool's busy ratio (BE aside) */
};

/*
 * Scaling judges at least this much time: a fast-path tick of 0.1 s sees a
 * period or two of cpu.stat, and one unthrottled period is no reason to
 * shrink (nor one throttled period to grow).
 */
#define BURST_WINDOW_S 1.0

/* Everything the policy remembers between ticks; all zero is the initial state. */
struct burst_state {
	struct burst_unit_state *v; /* sorted by id: the units burst governed last tick */
	size_t n;
};

/*
 * One tick: appends the actions this policy wants to out. Pure: reads only
 * its arguments. Returns 0 or -ENOMEM.
 */
int burst_run(const struct pol_input *in, const struct burst_config *cfg, struct burst_state *st,
	      struct action_list *out);
void burst_state_free(struct burst_state *st);

#endif
