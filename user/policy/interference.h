/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Interference detection: finds LS units that suffer (run-queue p99 over
 * its SLO on k of n windows, or CPI outliers in the manner of Google's
 * CPI2), explains each breach by the party that held the largest share of
 * the victim's waits (another unit, a cgroup outside the units, the victim
 * itself, its own CPU limit, or the idle CPU; for CPI, also the correlation
 * of the victim's CPI with each unit's CPU use), reports it, and caps for
 * a while every BE unit that holds a large enough share.
 */
#ifndef QOSLET_POLICY_INTERFERENCE_H
#define QOSLET_POLICY_INTERFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/action.h"
#include "policy/breach.h"
#include "policy/policy_config.h"
#include "policy/model.h"

/* Ranges the config must respect (interference_run() refuses others with -EINVAL). */
#define INTERFERENCE_RQ_N_MAX	      BREACH_N_MAX /* rq_n: the window history is one word */
#define INTERFERENCE_CPI_OUTLIERS_MAX 16	   /* cpi_outliers: outlier times kept per unit */

/* Ticks of CPI and CPU use kept per unit for the correlation. */
#define INTERFERENCE_HISTORY 64

/*
 * One unit of the last input (every class: any unit can be a suspect).
 * About 0.9 KiB each, so the state grows linearly with the units, plus the
 * blame pairs with an LS victim of the last rq_n ticks, plus one small entry
 * per pair reported and per cap within the last cap_s.
 */
struct interference_unit {
	uint64_t id;
	uint64_t first_tick; /* ring slots of older ticks are not this unit's */

	/* (a) run-queue SLO, LS units: over = the window's p99 was over the threshold. */
	struct breach_window rq;
	double rq_p99_ns;	  /* of the last counted window */
	struct lat_hist rq_carry; /* the waits of ticks with too few, toward the next window */

	/* (b) CPI, LS units: Welford's mean and variance of the non-outlier samples. */
	uint64_t cpi_n;
	double cpi_mean, cpi_m2;
	uint64_t outlier_ns[INTERFERENCE_CPI_OUTLIERS_MAX]; /* ring of the last outliers' ts */
	unsigned int n_outliers;			    /* ever seen; ring index = n % max */

	/* Per tick, slot tick % INTERFERENCE_HISTORY; NAN = no usable sample. */
	float cpi_hist[INTERFERENCE_HISTORY]; /* LS units with a usable CPI sample */
	float cpu_hist[INTERFERENCE_HISTORY]; /* every unit's cpu_used */

	/*
	 * A victim whose breach was reported before this tick and whose BE
	 * suspects were all capped already: nothing new came of this tick.
	 */
	bool settled;
};

/* A BE culprit capped until cap_s after guilty_ns, when it last was a suspect of some victim. */
struct interference_cap {
	uint64_t culprit, victim;
	uint64_t guilty_ns;
};

/* Everything the policy remembers between ticks; all zero is the initial state. */
struct interference_state {
	uint64_t tick;			 /* runs so far (the first is 1) */
	struct interference_unit *units; /* one per unit of the last input, sorted by id */
	size_t n_units;
	/*
	 * Per tick, the blame pairs with an LS victim, with the share of a
	 * throttled victim's waits charged to its limit (POL_CULPRIT_QUOTA),
	 * and the outside culprits the input named; the breaches reported.
	 */
	struct breach_state breach;
	struct interference_cap *caps;
	size_t n_caps, cap_caps;
};

/*
 * One tick: appends the actions this policy wants to out. Pure: reads only
 * its arguments. Returns 0, -ENOMEM, or -EINVAL for a config outside the
 * ranges above (rq_n in 1..INTERFERENCE_RQ_N_MAX, rq_k in 1..rq_n,
 * cpi_outliers in 1..INTERFERENCE_CPI_OUTLIERS_MAX).
 */
int interference_run(const struct pol_input *in, const struct interference_config *cfg,
		     struct interference_state *st, struct action_list *out);

/*
 * After a run: true when unit `id` is a victim for whom the run decided
 * nothing new (its breach reported before, its BE suspects capped before).
 * Alerts about it cannot lead to a new decision until something changes;
 * the agent's fast path stops listening to it meanwhile.
 */
bool interference_settled(const struct interference_state *st, uint64_t id);
void interference_state_free(struct interference_state *st);

#endif
