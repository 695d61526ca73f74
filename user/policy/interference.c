// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Interference detection. Each tick: (1) one state entry per unit, (2) the
 * tick's blame pairs kept for rq_n ticks, a throttled victim's share of
 * them charged to its own limit, (3) every LS unit's run-queue window and
 * CPI sample folded into its history, (4) every LS victim's breach
 * explained by the party holding the largest share of its waits, reported
 * (at most once per cap_s per victim and party), and every BE unit holding
 * at least culprit_min_share of them capped, (5) every cap still due
 * re-emitted. Only BE units are ever acted on: the victim itself, its
 * limit, the idle CPU, LS units and cgroups outside the units are named,
 * never capped.
 */
#include "policy/interference.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

/*
 * Pearson's r over fewer paired ticks is left undefined: over a handful of
 * points it reaches the 0.35 threshold by chance alone.
 */
#define CORR_MIN_POINTS 10

/* The kernel's default CFS period, and the smallest quota it accepts. */
#define DEFAULT_PERIOD_US 100000
#define MIN_QUOTA_US	  1000

static int check_config(const struct interference_config *cfg)
{
	if (cfg->rq_n < 1 || cfg->rq_n > INTERFERENCE_RQ_N_MAX || cfg->rq_k < 1 ||
	    cfg->rq_k > cfg->rq_n || cfg->cpi_outliers < 1 ||
	    cfg->cpi_outliers > INTERFERENCE_CPI_OUTLIERS_MAX)
		return -EINVAL;
	return 0;
}

/* (1) Carries each unit's entry over; new units start empty, their history at this tick. */
static int sync_units(struct interference_state *st, const struct pol_input *in, uint64_t tick)
{
	int err = breach_units_sync((void **)&st->units, &st->n_units, sizeof(*st->units), in);

	for (size_t i = 0; !err && i < st->n_units; i++)
		if (!st->units[i].first_tick)
			st->units[i].first_tick = tick;
	return err;
}

/* The share of its CFS periods in which the unit's own limit throttled it. */
static double throttled_ratio(const struct pol_unit *u)
{
	return u->nr_periods ? fmin(1, (double)u->nr_throttled / (double)u->nr_periods) : 0;
}

static const struct pol_unit *ls_victim(const struct pol_input *in, uint64_t id)
{
	const struct pol_unit *u = pol_input_find(in, id);

	return u && qos_is_ls(u->cls) ? u : NULL;
}

/*
 * (2) Keeps the pairs whose victim is LS (no other unit is ever a victim).
 * A victim its own limit throttled in a share r of the tick's periods
 * waited for its quota r of the time: that share of each of its waits goes
 * to POL_CULPRIT_QUOTA, after its other pairs, and whoever ran meanwhile
 * keeps the rest. The input's outside names are kept with the tick.
 */
static int save_blame(struct interference_state *st, const struct pol_input *in,
		      const struct interference_config *cfg, uint64_t tick)
{
	struct breach_tick *b;
	uint64_t quota = 0;
	size_t n = 0;

	/* each LS pair, and one quota pair per LS victim at most */
	for (size_t i = 0; i < in->n_blame; i++)
		if (ls_victim(in, in->blame[i].victim))
			n += 1 + (!i || in->blame[i - 1].victim != in->blame[i].victim);
	st->breach.tick = tick;
	b = breach_tick_open(&st->breach, cfg->rq_n, n, in->n_outside);
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_blame; i++) {
		const struct pol_blame *p = &in->blame[i];
		const struct pol_unit *u = ls_victim(in, p->victim);
		uint64_t kept;

		if (!u || !p->wait_ns) /* a hand-over without a wait (pol_blame.count) */
			continue;
		kept = (uint64_t)llround((1 - throttled_ratio(u)) * (double)p->wait_ns);
		b->v[b->n++] = (struct pol_blame){p->victim, p->culprit, kept, 0};
		quota += p->wait_ns - kept;
		if ((i + 1 == in->n_blame || in->blame[i + 1].victim != p->victim) && quota) {
			b->v[b->n++] = (struct pol_blame){p->victim, POL_CULPRIT_QUOTA, quota, 0};
			quota = 0;
		}
	}
	if (in->n_outside)
		memcpy(b->out, in->outside, in->n_outside * sizeof(*b->out));
	b->n_out = in->n_outside;
	return 0;
}

/*
 * (3a) A window holds at least rq_min_waits waits (fewer say nothing about
 * a p99): a tick with fewer carries them into the next, so that short ticks
 * add up to a window instead of being lost. The agent's fast path ticks
 * every 50 to 100 ms while an LS unit keeps waiting, and a victim starved
 * to a few waits a tick would otherwise never have a window that counts:
 * the breach it wakes the agent for would never be found. A window in
 * which the unit's own limit throttled it counts like any other: its tasks
 * then waited for their quota, which the blame charges to that limit
 * (save_blame), so the breach is explained rather than ignored.
 */
static void rq_update(struct interference_unit *s, const struct pol_unit *u,
		      const struct interference_config *cfg)
{
	double p99;

	if (!qos_is_ls(u->cls) || !u->has_rq)
		return;
	hist_add(&s->rq_carry, &u->rq);
	if (s->rq_carry.count < cfg->rq_min_waits)
		return;
	p99 = hist_quantile_ns(&s->rq_carry, 0.99);
	memset(&s->rq_carry, 0, sizeof(s->rq_carry));
	breach_window_push(&s->rq, p99 > cfg->rq_p99_us * 1000);
	s->rq_p99_ns = p99;
}

/* (3b) Samples of a nearly idle unit are noise (CPI2 ignores them too). */
static bool cpi_usable(const struct pol_unit *u, const struct interference_config *cfg)
{
	return cfg->cpi_enabled && qos_is_ls(u->cls) && u->has_cpi &&
	       u->cpu_used >= cfg->cpi_min_cpus && isfinite(u->cpi) && u->cpi > 0;
}

static double cpi_limit(const struct interference_unit *s, const struct interference_config *cfg)
{
	double sd = s->cpi_n ? sqrt(s->cpi_m2 / (double)s->cpi_n) : 0;

	return s->cpi_mean + cfg->cpi_sigma * sd;
}

/* Outliers are kept out of the distribution, or an antagonist would teach it to accept them. */
static void cpi_update(struct interference_unit *s, double x, const struct interference_config *cfg,
		       uint64_t now)
{
	double d;

	if (s->cpi_n >= cfg->cpi_min_samples && x > cpi_limit(s, cfg)) {
		s->outlier_ns[s->n_outliers++ % INTERFERENCE_CPI_OUTLIERS_MAX] = now;
		return;
	}
	s->cpi_n++;
	d = x - s->cpi_mean;
	s->cpi_mean += d / (double)s->cpi_n;
	s->cpi_m2 += d * (x - s->cpi_mean);
}

/* Outliers within the last cpi_window_s; the ring holds at least the cpi_outliers newest. */
static unsigned int cpi_recent(struct interference_unit *s, const struct interference_config *cfg,
			       uint64_t now)
{
	unsigned int kept = s->n_outliers < INTERFERENCE_CPI_OUTLIERS_MAX
				    ? s->n_outliers
				    : INTERFERENCE_CPI_OUTLIERS_MAX;
	unsigned int n = 0;

	for (unsigned int i = 0; i < kept; i++)
		n += pol_since_s(now, &s->outlier_ns[i]) <= cfg->cpi_window_s;
	return n;
}

static void unit_update(struct interference_unit *s, const struct pol_unit *u,
			const struct interference_config *cfg, uint64_t tick, uint64_t now)
{
	size_t slot = tick % INTERFERENCE_HISTORY;
	bool cpi = cpi_usable(u, cfg);

	s->settled = false; /* until judge() finds it so */
	rq_update(s, u, cfg);
	if (cpi)
		cpi_update(s, u->cpi, cfg, now);
	s->cpi_hist[slot] = cpi ? (float)u->cpi : NAN;
	s->cpu_hist[slot] = (float)u->cpu_used;
}

/*
 * Pearson's r of the victim's CPI with the suspect's CPU use, over the last
 * INTERFERENCE_HISTORY ticks both units existed and the victim had a
 * usable CPI sample. NAN when undefined (too few points, a flat series).
 */
static double correlation(const struct interference_unit *v, const struct interference_unit *s,
			  uint64_t tick)
{
	double x[INTERFERENCE_HISTORY], y[INTERFERENCE_HISTORY];
	double mx = 0, my = 0, sxx = 0, syy = 0, sxy = 0;
	uint64_t from = tick >= INTERFERENCE_HISTORY ? tick - INTERFERENCE_HISTORY + 1 : 1;
	size_t n = 0;

	from = from > v->first_tick ? from : v->first_tick;
	from = from > s->first_tick ? from : s->first_tick;
	for (uint64_t t = from; t <= tick; t++) {
		size_t slot = t % INTERFERENCE_HISTORY;

		if (isnan(v->cpi_hist[slot]))
			continue;
		x[n] = s->cpu_hist[slot];
		y[n++] = v->cpi_hist[slot];
	}
	if (n < CORR_MIN_POINTS)
		return NAN;
	for (size_t i = 0; i < n; i++) {
		mx += x[i] / (double)n;
		my += y[i] / (double)n;
	}
	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		syy += (y[i] - my) * (y[i] - my);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	if (sxx <= 0 || syy <= 0)
		return NAN;
	return sxy / sqrt(sxx * syy);
}

/* Wait share first (direct evidence), then correlation; ties keep the lower id. */
static bool better(const struct breach_party *a, const struct breach_party *b)
{
	double ca = isnan(a->corr) ? -INFINITY : a->corr, cb = isnan(b->corr) ? -INFINITY : b->corr;

	if (a->share != b->share)
		return a->share > b->share;
	return ca > cb;
}

/*
 * A CPI victim's top suspect among the other units: its share of the
 * victim's wait reaches culprit_min_share, or its CPU use correlates with
 * the victim's CPI. A CPI outlier is about the victim's caches and memory,
 * not its waits: only another unit's work can explain one.
 */
static bool cpi_suspect(const struct pol_input *in, const struct interference_state *st,
			const struct interference_config *cfg, size_t vi,
			const struct breach_waits *w, struct breach_party *best)
{
	bool found = false;

	for (size_t j = 0; j < in->n_units; j++) {
		struct breach_party c = {.id = in->units[j].id, .cause = CAUSE_UNIT};

		if (j == vi)
			continue;
		c.wait_ns = breach_waits_of(w, c.id);
		c.share = w->total ? (double)c.wait_ns / (double)w->total : 0;
		c.corr = correlation(&st->units[vi], &st->units[j], st->tick);
		if (!((c.wait_ns && c.share >= cfg->culprit_min_share) ||
		      (!isnan(c.corr) && c.corr >= cfg->cpi_correlation)))
			continue;
		if (!found || better(&c, best))
			*best = c;
		found = true;
	}
	return found;
}

/* The run-queue or CPI evidence of a report (breach_evidence_fn). */
struct rq_evidence {
	const struct pol_unit *v;
	const struct interference_unit *sv;
	const struct interference_config *cfg;
	uint64_t now;
	bool by_cpi;
};

static void rq_evidence(struct action *a, const void *ctx)
{
	const struct rq_evidence *e = ctx;
	struct interference_unit *sv = (struct interference_unit *)e->sv;

	if (e->by_cpi) {
		action_evidence(a, "cpi", e->v->has_cpi ? e->v->cpi : 0);
		action_evidence(a, "cpi_mean", sv->cpi_mean);
		action_evidence(a, "cpi_limit", cpi_limit(sv, e->cfg));
		action_evidence(a, "cpi_outliers", cpi_recent(sv, e->cfg, e->now));
	} else {
		action_evidence(a, "p99_us", sv->rq_p99_ns / 1000);
		action_evidence(a, "threshold_us", e->cfg->rq_p99_us);
		action_evidence(a, "windows_over", breach_windows_over(&sv->rq, e->cfg->rq_n));
		action_evidence(a, "windows", breach_windows(&sv->rq, e->cfg->rq_n));
	}
}

/* The causes a CPU breach can have: its report gives each one's share. */
#define CPU_CAUSES                                                                                 \
	(1u << CAUSE_UNIT | 1u << CAUSE_OUTSIDE | 1u << CAUSE_SELF | 1u << CAUSE_QUOTA |           \
	 1u << CAUSE_IDLE)

/* Reports victim vi's breach explained by p, unless that was reported within cap_s. */
static int report(const struct pol_input *in, struct interference_state *st,
		  const struct interference_config *cfg, size_t vi, const struct breach_party *p,
		  const double share[CAUSE_NR], bool by_cpi, struct action_list *out)
{
	struct rq_evidence e = {&in->units[vi], &st->units[vi], cfg, in->ts_ns, by_cpi};

	return breach_report(in, &st->breach, cfg->rq_n, &in->units[vi], p, share, CPU_CAUSES,
			     by_cpi ? RULE_INTERFERENCE_CPI : RULE_INTERFERENCE_RUNQ_SLO,
			     rq_evidence, &e, out);
}

/* A BE suspect is (again) guilty now: its cap runs cap_s from here. *fresh: it was not capped. */
static int cap_guilty(struct interference_state *st, uint64_t culprit, uint64_t victim,
		      uint64_t now, bool *fresh)
{
	for (size_t i = 0; i < st->n_caps; i++)
		if (st->caps[i].culprit == culprit) {
			st->caps[i].victim = victim;
			st->caps[i].guilty_ns = now;
			return 0;
		}
	if (array_grow((void **)&st->caps, &st->cap_caps, st->n_caps, sizeof(*st->caps)))
		return -ENOMEM;
	st->caps[st->n_caps++] = (struct interference_cap){culprit, victim, now};
	*fresh = true;
	return 0;
}

/*
 * Every BE unit holding at least culprit_min_share of the victim's waits
 * is guilty, whatever explains the breach best: two antagonists are two
 * caps. So is a CPI victim's top suspect by correlation (top, else NULL).
 */
static int cap_suspects(const struct pol_input *in, struct interference_state *st,
			const struct interference_config *cfg, uint64_t victim,
			const struct breach_waits *w, const struct breach_party *top, bool *fresh)
{
	int err = 0;

	for (size_t i = 0; !err && i < w->n; i++) {
		const struct pol_unit *u = pol_input_find(in, w->v[i].culprit);

		if (u && u->cls == QOS_BE && w->v[i].wait_ns &&
		    (double)w->v[i].wait_ns / (double)w->total >= cfg->culprit_min_share)
			err = cap_guilty(st, u->id, victim, in->ts_ns, fresh);
	}
	if (!err && top && pol_input_find(in, top->id)->cls == QOS_BE)
		err = cap_guilty(st, top->id, victim, in->ts_ns, fresh);
	return err;
}

/* (4) One LS unit: is it a victim, and what explains it? */
static int judge(const struct pol_input *in, struct interference_state *st,
		 const struct interference_config *cfg, size_t vi, struct action_list *out)
{
	struct interference_unit *sv = &st->units[vi];
	uint64_t victim = in->units[vi].id;
	bool rq_victim = breach_windows_over(&sv->rq, cfg->rq_n) >= cfg->rq_k;
	bool cpi_victim = cfg->cpi_enabled && cpi_recent(sv, cfg, in->ts_ns) >= cfg->cpi_outliers;
	bool found = false, by_cpi = false, fresh = false, known;
	double share[CAUSE_NR];
	struct breach_party p;
	struct breach_waits w;
	int err;

	if (!rq_victim && !cpi_victim)
		return 0;
	err = breach_waits_collect(&st->breach, cfg->rq_n, victim, &w);
	if (err)
		return err;
	found = breach_explain(in, &st->breach, victim, &w, &p, share) && rq_victim;
	if (!found && cpi_victim)
		found = by_cpi = cpi_suspect(in, st, cfg, vi, &w, &p);
	if (found) {
		known = breach_pair_find(&st->breach, victim, p.id) != NULL;
		err = report(in, st, cfg, vi, &p, share, by_cpi, out);
		if (!err)
			err = cap_suspects(in, st, cfg, victim, &w, by_cpi ? &p : NULL, &fresh);
		sv->settled = known && !fresh;
	}
	free(w.v);
	return err;
}

/* (5) The caps still due, as desired quotas; expired caps and vanished units are dropped. */
static int caps_emit(const struct pol_input *in, struct interference_state *st,
		     const struct interference_config *cfg, struct action_list *out)
{
	size_t k = 0;
	int err = 0;

	for (size_t i = 0; i < st->n_caps; i++) {
		struct interference_cap *c = &st->caps[i];
		const struct pol_unit *u = pol_input_find(in, c->culprit), *v;
		double since = pol_since_s(in->ts_ns, &c->guilty_ns), period;
		struct action *a;

		if (!u || u->cls != QOS_BE || since >= cfg->cap_s)
			continue;
		st->caps[k++] = *c;
		if (err)
			continue;
		a = action_add(out, ACT_CPU_QUOTA, u, RULE_INTERFERENCE_CAP);
		if (!a) {
			err = -ENOMEM;
			continue;
		}
		period = u->period_us ? (double)u->period_us : DEFAULT_PERIOD_US;
		a->value = llround(fmax(cfg->cap_cpus * period, MIN_QUOTA_US));
		a->related_id = c->victim;
		v = pol_input_find(in, c->victim);
		snprintf(a->related, sizeof(a->related), "%s", v ? v->path : "");
		action_evidence(a, "cap_cpus", cfg->cap_cpus);
		action_evidence(a, "period_us", period);
		action_evidence(a, "cap_s", cfg->cap_s);
		action_evidence(a, "since_guilty_s", since);
	}
	st->n_caps = k;
	return err;
}

int interference_run(const struct pol_input *in, const struct interference_config *cfg,
		     struct interference_state *st, struct action_list *out)
{
	uint64_t tick = st->tick + 1;
	int err;

	if (!cfg->enabled) {
		interference_state_free(st);
		return 0;
	}
	err = check_config(cfg);
	if (!err)
		err = sync_units(st, in, tick);
	if (!err)
		err = save_blame(st, in, cfg, tick);
	if (err)
		return err;
	st->tick = tick;
	for (size_t i = 0; i < in->n_units; i++)
		unit_update(&st->units[i], &in->units[i], cfg, tick, in->ts_ns);
	breach_pairs_expire(&st->breach, in, cfg->cap_s);
	for (size_t i = 0; !err && i < in->n_units; i++)
		if (qos_is_ls(in->units[i].cls))
			err = judge(in, st, cfg, i, out);
	return err ? err : caps_emit(in, st, cfg, out);
}

void interference_state_free(struct interference_state *st)
{
	free(st->units);
	breach_state_free(&st->breach);
	free(st->caps);
	memset(st, 0, sizeof(*st));
}

bool interference_settled(const struct interference_state *st, uint64_t id)
{
	size_t i = pol_lower_bound(st->units, st->n_units, sizeof(*st->units),
				   offsetof(struct interference_unit, id), id);

	return i < st->n_units && st->units[i].id == id && st->units[i].settled;
}
