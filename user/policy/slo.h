/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SLO control (docs/slo-control.md): steers BE units' CPU by the LS units'
 * own run-queue p99 against their targets, after Heracles. A breach cuts
 * the BE units blame names (all running BE when blame has nothing on the
 * victim) at once and multiplicatively, cpu.idle first, then BE confined to
 * fewer CPUs, then its quota; slack on every LS unit for a dwell gives CPU
 * back additively, in the reverse order; in between it holds. A BE unit
 * never goes under a floor, and the floor binding is reported.
 */
#ifndef QOSLET_POLICY_SLO_H
#define QOSLET_POLICY_SLO_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/action.h"
#include "policy/policy_config.h"
#include "policy/cpu_pick.h"
#include "policy/model.h"

/* One BE unit the controller holds back. */
struct slo_be {
	uint64_t id;
	bool idle;	     /* cpu.idle=1 asked (the first, cheapest step) */
	bool has_quota;	     /* a quota asked: allowed_cpus holds */
	double allowed_cpus; /* its CPU allowance */
	uint64_t cut_ns;     /* ts_ns of the last quota cut (while has_quota) */
	uint64_t floor_ns;   /* ts_ns the floor binding was last reported */
	bool floor_reported; /* floor_ns holds */
};

/* Everything the policy remembers between ticks; all zero is the initial state. */
struct slo_state {
	struct slo_be *v; /* one per BE unit of the last input, sorted by id */
	size_t n;
	bool slack; /* every LS unit had slack since slack_ns */
	uint64_t slack_ns;
	bool grown; /* grown_ns holds: the last growth step */
	uint64_t grown_ns;
	/*
	 * Confinement: while be_cpus > 0, every BE unit runs on the CPUs of
	 * be_set (cpu_pick's choice), changed last at confine_ns.
	 */
	size_t be_cpus;
	uint64_t be_set[CPU_SET_WORDS];
	uint64_t confine_ns;
};

/*
 * An LS unit's target in us: its annotation (at least
 * cfg->annotation_min_us), else the first matching glob, else its class's;
 * 0 for a unit that is not LS.
 */
double slo_target_us(const struct pol_unit *u, const struct slo_config *cfg);

/*
 * The fewest switch-ins in an interval whose displaced share counts (when
 * min_waits is larger). A share needs no tail, as a p99 does, and the
 * sched probe's displacement alert comes at this many (the agent arms it so):
 * the tick 10 ms after an alert judges an interval with about as many, and
 * a p99's 20 would leave an LS unit switching in under 2,000 times a second
 * to the first follow-up, 100 ms later.
 */
#define SLO_DISPLACED_MIN 8

/*
 * An LS unit's run-queue p99 over the interval and its target, both in us.
 * false when its window says nothing of a p99: not LS, no run-queue data, or
 * fewer than cfg->min_waits waits (an idle LS unit has slack).
 */
bool slo_unit_p99(const struct pol_unit *u, const struct slo_config *cfg, double *p99_us,
		  double *target_us);

/*
 * One tick: appends the actions this policy wants to out. ceiling_cpus
 * bounds a BE unit's allowance (suppression's allowance when it is on, else
 * the capacity): an allowance grown back to it is let go, and the plan
 * restores the owner's settings. may_confine: whether BE's CPUs are this
 * policy's to choose (not while suppression's cpuset or split policy holds
 * them). Pure: reads only its arguments. 0 or -ENOMEM.
 */
int slo_run(const struct pol_input *in, const struct slo_config *cfg, double ceiling_cpus,
	    bool may_confine, struct slo_state *st, struct action_list *out);
void slo_state_free(struct slo_state *st);

/*
 * Whether an LS unit displaced by BE would make slo_run act on input in:
 * the displacement leg is on, BE's CPUs are its to choose (may_confine, as
 * slo_run takes it) and BE could go on fewer of them than it has (more
 * than one CPU now, or more than one usable when not confined). The
 * agent's fast path looks for displacement only then.
 */
bool slo_displacement_acts(const struct pol_input *in, const struct slo_config *cfg,
			   const struct slo_state *st, bool may_confine);

#endif
