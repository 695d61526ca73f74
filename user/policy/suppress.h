/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * BE suppression: how much CPU best-effort units may use now (what LS, the
 * system and the threshold leave), as a CFS quota per BE unit, a shared
 * cpuset, or whole CPUs split off for BE alone with the LS units kept off
 * them; rate-limited upwards; optionally cpu.idle=1 on BE units.
 */
#ifndef QOSLET_POLICY_SUPPRESS_H
#define QOSLET_POLICY_SUPPRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/action.h"
#include "policy/policy_config.h"
#include "policy/cpu_pick.h"
#include "policy/model.h"

/* Everything the policy remembers between ticks; all zero is the initial state. */
struct suppress_state {
	bool have_allowed;   /* allowed_cpus holds a previous tick's allowance */
	double allowed_cpus; /* BE's allowance after rate limiting, last tick */
	/*
	 * cpuset and split policies: BE's CPUs last tick, bit n = CPU n (empty:
	 * none chosen yet, or split off)
	 */
	uint64_t cpuset[CPU_SET_WORDS];
	/* split policy: the LS units' list last tick ("" when not split) */
	char ls_cpus[POL_CPULIST_MAX];
	/*
	 * split policy: the use of LS and the system (CPU-seconds) over the
	 * ticks since the split's size was last judged, and their seconds;
	 * then what it was judged on (the averaged use, the window).
	 */
	double win_used_cpu_s, win_s;
	double judged_used_cpus, judged_window_s;
	/* split policy with SLO control: an LS unit it confines last missed its target then */
	bool have_short;
	uint64_t short_ns;
	/*
	 * split policy: the use of LS and the system on the last tick without
	 * BE units, raised to what they used while confined since (have_need:
	 * there was such a tick, and no LS unit missed its target since).
	 */
	bool have_need;
	double need_cpus;
	/*
	 * split policy: the split on now is a trial (LS's spread use left no
	 * whole CPU, SPLIT_SPREAD in suppress.c). After a split ended because
	 * LS did not fit, none is tried before trial_after_ns (0: any time);
	 * the wait (trial_backoff_s) doubles after each ending, and is 0 again
	 * once a split holds.
	 */
	bool trial;
	uint64_t trial_after_ns;
	double trial_backoff_s;
};

/*
 * One tick: appends the actions this policy wants to out. Pure: reads only
 * its arguments. slo: SLO control's settings; when enabled, the split also
 * follows the run-queue latency of the LS units it confines (NULL: it does
 * not). Returns 0, -ENOMEM, or -ENOSPC when the chosen CPUs do not fit in a
 * POL_CPULIST_MAX list (no cpuset action is emitted then).
 */
int suppress_run(const struct pol_input *in, const struct suppress_config *cfg,
		 const struct slo_config *slo, struct suppress_state *st, struct action_list *out);
void suppress_state_free(struct suppress_state *st);

#endif
