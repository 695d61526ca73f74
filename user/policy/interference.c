// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Interference detection. Each tick: (1) one state entry per unit, (2) the
 * tick's blame pairs kept for rq_n ticks, (3) every LS unit's run-queue
 * window and CPI sample folded into its history, (4) every LS victim's top
 * suspect reported (at most once per cap_s per pair) and, when BE, capped,
 * (5) every cap still due re-emitted. A victim without a suspect yields
 * nothing: an LS unit delayed by itself, the idle CPU (wake-up latency) or
 * tasks outside every unit has no antagonist to name or cap.
 */
#include "interference.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../grow.h"

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

/* (1) Carries each unit's entry over (both lists are sorted by id); new units start empty. */
static int sync_units(struct interference_state *st, const struct pol_input *in, uint64_t tick)
{
	struct interference_unit *v = malloc((in->n_units + 1) * sizeof(*v));
	size_t j = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_units; i++) {
		uint64_t id = in->units[i].id;

		while (j < st->n_units && st->units[j].id < id)
			j++;
		if (j < st->n_units && st->units[j].id == id) {
			v[i] = st->units[j];
			continue;
		}
		memset(&v[i], 0, sizeof(v[i]));
		v[i].id = id;
		v[i].first_tick = tick;
	}
	free(st->units);
	st->units = v;
	st->n_units = in->n_units;
	return 0;
}

/* (2) Keeps the pairs whose victim is LS (no other unit is ever a victim). */
static int save_blame(struct interference_state *st, const struct pol_input *in,
		      const struct interference_config *cfg, uint64_t tick)
{
	struct interference_blame *b = &st->blame[tick % cfg->rq_n];
	size_t n = 0;

	for (size_t i = 0; i < in->n_blame; i++) {
		const struct pol_unit *u = pol_input_find(in, in->blame[i].victim);

		n += u && qos_is_ls(u->cls);
	}
	if (n > b->cap) {
		struct pol_blame *v = realloc(b->v, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = n;
	}
	b->n = 0;
	for (size_t i = 0; i < in->n_blame; i++) {
		const struct pol_unit *u = pol_input_find(in, in->blame[i].victim);

		if (u && qos_is_ls(u->cls))
			b->v[b->n++] = in->blame[i];
	}
	b->tick = tick;
	return 0;
}

/*
 * (3a) A window with too few waits says nothing about the p99: it does not
 * count. Nor does one in which the unit's own CPU limit throttled it: its
 * tasks then wait for their quota, not for an antagonist, and whoever ran
 * meanwhile would be blamed for it.
 */
static void rq_update(struct interference_unit *s, const struct pol_unit *u,
		      const struct interference_config *cfg)
{
	double p99;

	if (!qos_is_ls(u->cls) || !u->has_rq || u->rq.count < cfg->rq_min_waits || u->nr_throttled)
		return;
	p99 = hist_quantile_ns(&u->rq, 0.99);
	s->rq_over = s->rq_over << 1 | (p99 > cfg->rq_p99_us * 1000);
	s->rq_p99_ns = p99;
	if (s->rq_windows < INTERFERENCE_RQ_N_MAX)
		s->rq_windows++;
}

static unsigned int rq_windows(const struct interference_unit *s,
			       const struct interference_config *cfg)
{
	return s->rq_windows < cfg->rq_n ? s->rq_windows : cfg->rq_n;
}

static unsigned int rq_windows_over(const struct interference_unit *s,
				    const struct interference_config *cfg)
{
	uint64_t mask = cfg->rq_n == 64 ? UINT64_MAX : (UINT64_C(1) << cfg->rq_n) - 1;

	return (unsigned int)__builtin_popcountll(s->rq_over & mask);
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

/* One victim's waits over the last rq_n ticks, per culprit (sorted by culprit). */
struct waits {
	struct pol_blame *v;
	size_t n;
	uint64_t total; /* every culprit's, self, idle and other included */
};

static size_t first_of(const struct interference_blame *b, uint64_t victim)
{
	size_t lo = 0, hi = b->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->v[mid].victim < victim)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int culprit_cmp(const void *a, const void *b)
{
	const struct pol_blame *x = a, *y = b;

	return x->culprit < y->culprit ? -1 : x->culprit > y->culprit;
}

static int waits_collect(const struct interference_state *st, const struct interference_config *cfg,
			 uint64_t victim, uint64_t tick, struct waits *w)
{
	size_t n = 0, k = 0;

	memset(w, 0, sizeof(*w));
	/* Pass 0 counts the victim's pairs in the kept ticks, pass 1 copies them. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t t = tick; t >= 1 && t + cfg->rq_n > tick; t--) {
			const struct interference_blame *b = &st->blame[t % cfg->rq_n];

			if (b->tick != t)
				continue;
			for (size_t i = first_of(b, victim); i < b->n && b->v[i].victim == victim;
			     i++) {
				if (pass)
					w->v[k++] = b->v[i];
				else
					n++;
			}
		}
		if (!pass && !(w->v = malloc((n + 1) * sizeof(*w->v))))
			return -ENOMEM;
	}
	qsort(w->v, n, sizeof(*w->v), culprit_cmp);
	for (size_t i = 0; i < n; i++) {
		w->total += w->v[i].wait_ns;
		if (w->n && w->v[w->n - 1].culprit == w->v[i].culprit)
			w->v[w->n - 1].wait_ns += w->v[i].wait_ns;
		else
			w->v[w->n++] = w->v[i];
	}
	return 0;
}

static uint64_t waits_of(const struct waits *w, uint64_t culprit)
{
	struct pol_blame key = {.culprit = culprit};
	const struct pol_blame *p = bsearch(&key, w->v, w->n, sizeof(key), culprit_cmp);

	return p ? p->wait_ns : 0;
}

struct suspect {
	size_t idx; /* in the input's units */
	uint64_t wait_ns;
	double share; /* of the victim's total wait */
	double corr;  /* NAN: not computed or undefined */
};

/* Wait share first (direct evidence), then correlation; ties keep the lower id. */
static bool better(const struct suspect *a, const struct suspect *b)
{
	double ca = isnan(a->corr) ? -INFINITY : a->corr, cb = isnan(b->corr) ? -INFINITY : b->corr;

	if (a->share != b->share)
		return a->share > b->share;
	return ca > cb;
}

/*
 * The top suspect of victim vi among the other units: its share of the
 * victim's wait reaches culprit_min_share or, with by_corr, its CPU use
 * correlates with the victim's CPI. Culprits that are no unit (idle CPU,
 * other tasks, cgroups outside the units) only weigh in the total.
 */
static bool find_suspect(const struct pol_input *in, const struct interference_state *st,
			 const struct interference_config *cfg, size_t vi, const struct waits *w,
			 bool by_corr, struct suspect *best)
{
	bool found = false;

	for (size_t j = 0; j < in->n_units; j++) {
		struct suspect c = {.idx = j, .corr = NAN};

		if (j == vi)
			continue;
		c.wait_ns = waits_of(w, in->units[j].id);
		c.share = w->total ? (double)c.wait_ns / (double)w->total : 0;
		if (by_corr)
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

static struct interference_pair *pair_find(struct interference_state *st, uint64_t victim,
					   uint64_t culprit)
{
	for (size_t i = 0; i < st->n_pairs; i++)
		if (st->pairs[i].victim == victim && st->pairs[i].culprit == culprit)
			return &st->pairs[i];
	return NULL;
}

/* Forgets the pairs reported cap_s ago or more, and those of vanished units. */
static void pairs_expire(struct interference_state *st, const struct pol_input *in,
			 const struct interference_config *cfg)
{
	size_t k = 0;

	for (size_t i = 0; i < st->n_pairs; i++) {
		struct interference_pair *p = &st->pairs[i];

		if (pol_since_s(in->ts_ns, &p->reported_ns) < cfg->cap_s &&
		    pol_input_find(in, p->victim) && pol_input_find(in, p->culprit))
			st->pairs[k++] = *p;
	}
	st->n_pairs = k;
}

static int report(const struct pol_input *in, struct interference_state *st,
		  const struct interference_config *cfg, size_t vi, const struct suspect *s,
		  bool by_cpi, struct action_list *out)
{
	const struct pol_unit *v = &in->units[vi], *c = &in->units[s->idx];
	struct interference_unit *sv = &st->units[vi];
	struct action *a;

	if (pair_find(st, v->id, c->id))
		return 0;
	if (array_grow((void **)&st->pairs, &st->cap_pairs, st->n_pairs, sizeof(*st->pairs)))
		return -ENOMEM;
	a = action_add(out, ACT_REPORT, v, by_cpi ? "interference.cpi" : "interference.runq_slo");
	if (!a)
		return -ENOMEM;
	st->pairs[st->n_pairs++] = (struct interference_pair){v->id, c->id, in->ts_ns};
	a->related_id = c->id;
	snprintf(a->related, sizeof(a->related), "%s", c->path);
	if (by_cpi) {
		action_evidence(a, "cpi", v->has_cpi ? v->cpi : 0);
		action_evidence(a, "cpi_mean", sv->cpi_mean);
		action_evidence(a, "cpi_limit", cpi_limit(sv, cfg));
		action_evidence(a, "cpi_outliers", cpi_recent(sv, cfg, in->ts_ns));
	} else {
		action_evidence(a, "p99_us", sv->rq_p99_ns / 1000);
		action_evidence(a, "threshold_us", cfg->rq_p99_us);
		action_evidence(a, "windows_over", rq_windows_over(sv, cfg));
		action_evidence(a, "windows", rq_windows(sv, cfg));
	}
	action_evidence(a, "culprit_wait_share", s->share);
	action_evidence(a, "culprit_wait_ns", (double)s->wait_ns);
	if (!isnan(s->corr))
		action_evidence(a, "correlation", s->corr);
	action_evidence(a, "culprit_class", c->cls);
	return 0;
}

/* A BE top suspect is (again) guilty now: its cap runs cap_s from here. */
static int cap_guilty(struct interference_state *st, uint64_t culprit, uint64_t victim,
		      uint64_t now)
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
	return 0;
}

/* (4) One LS unit: is it a victim, and of whom? */
static int judge(const struct pol_input *in, struct interference_state *st,
		 const struct interference_config *cfg, size_t vi, struct action_list *out)
{
	struct interference_unit *sv = &st->units[vi];
	bool rq_victim = rq_windows_over(sv, cfg) >= cfg->rq_k;
	bool cpi_victim = cfg->cpi_enabled && cpi_recent(sv, cfg, in->ts_ns) >= cfg->cpi_outliers;
	struct suspect s;
	struct waits w;
	bool found = false, by_cpi = false;
	int err;

	if (!rq_victim && !cpi_victim)
		return 0;
	err = waits_collect(st, cfg, in->units[vi].id, st->tick, &w);
	if (err)
		return err;
	if (rq_victim)
		found = find_suspect(in, st, cfg, vi, &w, false, &s);
	if (!found && cpi_victim)
		found = by_cpi = find_suspect(in, st, cfg, vi, &w, true, &s);
	free(w.v);
	if (!found)
		return 0;
	err = report(in, st, cfg, vi, &s, by_cpi, out);
	if (!err && in->units[s.idx].cls == QOS_BE)
		err = cap_guilty(st, in->units[s.idx].id, in->units[vi].id, in->ts_ns);
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
		a = action_add(out, ACT_CPU_QUOTA, u, "interference.cap");
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
	pairs_expire(st, in, cfg);
	for (size_t i = 0; !err && i < in->n_units; i++)
		if (qos_is_ls(in->units[i].cls))
			err = judge(in, st, cfg, i, out);
	return err ? err : caps_emit(in, st, cfg, out);
}

void interference_state_free(struct interference_state *st)
{
	free(st->units);
	for (size_t i = 0; i < INTERFERENCE_RQ_N_MAX; i++)
		free(st->blame[i].v);
	free(st->pairs);
	free(st->caps);
	memset(st, 0, sizeof(*st));
}
