// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPU-satisfaction eviction: satisfaction = what BE units are granted /
 * what they request, in CPUs. Evicting a unit takes its request out of the
 * denominator (its grant is assumed to go to the others), so a round evicts
 * until granted / (requested - released) >= satisfaction_upper, that is
 * until the released requests reach requested - granted / upper.
 */
#include "policy/evict_cpu.h"

#include <errno.h>
#include <stdbool.h>

#include "cpulist.h"

/* CPUs a cpuset list may name: the kernel's NR_CPUS ceiling on x86_64 and arm64. */

/* The kernel's default CFS period, for a quota read without one. */
#define DEFAULT_PERIOD_US 100000

/* BE totals of one tick, in CPUs. */
struct be_sums {
	double granted, requested, used;
};

/* What the unit may use: its quota, else its cpuset, else the whole capacity. */
static double granted_cpus(const struct pol_input *in, const struct pol_unit *u)
{
	int n;

	if (u->quota_us >= 0)
		return (double)u->quota_us / (u->period_us ? u->period_us : DEFAULT_PERIOD_US);
	/* An unreadable list says nothing about a limit: fall back to the capacity. */
	if (u->cpus[0] && (n = cpu_list_count(u->cpus)) > 0)
		return n;
	return in->cpus;
}

static void be_sum(const struct pol_input *in, struct be_sums *s)
{
	*s = (struct be_sums){0};
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];

		if (u->cls != QOS_BE)
			continue;
		s->granted += granted_cpus(in, u);
		s->requested += u->request_cpus;
		s->used += u->cpu_used;
	}
}

/* Granted below the lower bound of the request while nearly all of it is used. */
static bool starved(const struct be_sums *s, const struct evict_cpu_config *cfg)
{
	return s->requested > 0 && s->granted > 0 &&
	       s->granted / s->requested < cfg->satisfaction_lower &&
	       s->used / s->granted >= cfg->be_usage_min;
}

static double cpu_key(const struct pol_unit *u)
{
	return u->cpu_used;
}

static double cpu_amount(const struct pol_unit *u)
{
	return u->request_cpus;
}

static const struct evict_measure measure = {cpu_key, cpu_amount};

int evict_cpu_run(const struct pol_input *in, const struct evict_cpu_config *cfg,
		  const struct evict_order_config *order, struct evict_cpu_state *st,
		  struct action_list *out)
{
	struct evict_victims v;
	struct be_sums s;
	double held;
	int err = 0;

	if (!cfg->enabled)
		return 0;
	be_sum(in, &s);
	if (!starved(&s, cfg)) {
		st->holding = false;
		return 0;
	}
	if (!st->holding) {
		st->holding = true;
		st->since_ns = in->ts_ns;
	}
	held = pol_since_s(in->ts_ns, &st->since_ns);
	if (held < cfg->window_s)
		return 0;
	err = evict_round_select(&st->round, in, order, cfg->cooldown_s,
				 s.requested - s.granted / cfg->satisfaction_upper, &measure, &v);
	for (size_t i = 0; !err && i < v.n; i++) {
		const struct pol_unit *u = v.v[i];
		struct action *a = action_add(out, ACT_EVICT, u, RULE_EVICT_CPU_SATISFACTION);

		if (!a) {
			err = -ENOMEM;
			break;
		}
		action_evidence(a, "granted_cpus", s.granted);
		action_evidence(a, "requested_cpus", s.requested);
		action_evidence(a, "satisfaction", s.granted / s.requested);
		action_evidence(a, "be_used_cpus", s.used);
		action_evidence(a, "usage_ratio", s.used / s.granted);
		action_evidence(a, "window_s", cfg->window_s);
		action_evidence(a, "held_s", held);
		action_evidence(a, "pending_request_cpus", v.pending);
		action_evidence(a, "victim_request_cpus", cpu_amount(u));
		action_evidence(a, "skipped_units", (double)v.n_skipped);
		evict_order_evidence(a, u, in);
	}
	if (!err)
		err = evict_round_report_skipped(&v, in, &measure, RULE_EVICT_CPU_SATISFACTION,
						 out);
	if (!err)
		err = evict_round_commit(&st->round, &v, in->ts_ns);
	evict_victims_free(&v);
	return err;
}

void evict_cpu_state_free(struct evict_cpu_state *st)
{
	evict_round_free(&st->round);
	st->holding = false;
}
