// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPU burst, after koordlet's model, for LS units that have a CPU limit.
 * Two tools: the kernel's burst allowance (unused quota banked for a later
 * spike, so the long-run average stays within the limit), and a CFS quota
 * scaled up while the unit is throttled and back down when it is not, within
 * [limit, max_percent of the limit], never growing while the node is busy.
 */
#include "policy/burst.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "policy/pool_use.h"

/* What one unit's tick decided. */
struct burst_tick {
	double limit;		    /* CPUs */
	double used;		    /* CPUs the unit used over the window */
	bool judged;		    /* a full window was judged this tick (else the quota holds) */
	double window;		    /* its length, s */
	uint64_t periods;	    /* its CFS periods ... */
	uint64_t throttled_periods; /* ... and the throttled ones */
	uint64_t period;	    /* us */
	double quota_before;	    /* the quota burst asked for last tick, CPUs */
	int64_t quota_us;	    /* the quota the unit has after this tick */
	enum rule_id rule;	    /* the quota's rule */
	double throttled;	    /* throttled periods / periods */
	double busy;		    /* the shared pool's busy ratio (pool_use_busy) */
	bool budget;		    /* the budget is on */
	double budget_used;	    /* CPU-seconds above the limit in this budget period */
};

static bool manages_quota(enum burst_policy p)
{
	return p == BURST_CFS_QUOTA_ONLY || p == BURST_AUTO;
}

static bool manages_burst(enum burst_policy p)
{
	return p == BURST_CPU_BURST_ONLY || p == BURST_AUTO;
}

static bool governed(const struct pol_unit *u)
{
	return qos_is_ls(u->cls) && u->limit_cpus > 0;
}

/* The budget period ts falls in; one endless period when none is configured. */
static uint64_t budget_period(const struct pol_input *in, const struct burst_config *cfg)
{
	uint64_t len_ns = cfg->budget_period_s > 0 ? (uint64_t)(cfg->budget_period_s * 1e9) : 0;

	return len_ns ? in->ts_ns / len_ns : 0;
}

/*
 * Adds this tick (whose shared pool was `busy`) to the unit's window; true
 * when the window is full, with its totals in t (throttled ratio, pool
 * busy, unit use) and the window started over.
 */
static bool gather(const struct pol_input *in, double busy, const struct pol_unit *u,
		   struct burst_unit_state *e, struct burst_tick *t)
{
	e->win_s += in->interval_s;
	e->win_periods += u->nr_periods;
	e->win_throttled += u->nr_throttled;
	e->win_cpu_s += u->cpu_used * in->interval_s;
	e->win_busy_s += busy * in->interval_s;
	if (e->win_s < BURST_WINDOW_S - 1e-6) /* ten 0.1 s ticks add up to 0.99999... */
		return false;
	t->window = e->win_s;
	t->periods = e->win_periods;
	t->throttled_periods = e->win_throttled;
	t->throttled = e->win_periods ? (double)e->win_throttled / (double)e->win_periods : 0;
	t->busy = e->win_busy_s / e->win_s;
	t->used = e->win_cpu_s / e->win_s;
	return true;
}

/*
 * The quota for this window, in e->quota_cpus: shrink when the shared pool
 * is busy (LS elsewhere needs the CPU), hold just under that, else follow
 * throttling. Shrinking an unthrottled unit waits until its use fits the
 * smaller quota: the burst bank hides throttling for a while after a raise,
 * and shrinking on that alone makes the quota swing between two values.
 */
static void scale_quota(const struct pol_input *in, double busy, const struct burst_config *cfg,
			const struct pol_unit *u, struct burst_unit_state *e, struct burst_tick *t)
{
	double factor;
	double ceiling = fmax(t->limit, t->limit * cfg->max_percent / 100);

	t->rule = RULE_BURST_HOLD;
	t->judged = gather(in, busy, u, e, t);
	if (t->judged) {
		bool throttled = t->periods > 0 && t->throttled_periods > 0 &&
				 t->throttled > cfg->throttled_min;

		factor = 1;
		if (t->busy >= cfg->shared_pool_busy) {
			factor = cfg->scale_down;
			t->rule = RULE_BURST_SCALE_DOWN;
		} else if (t->busy >= 0.9 * cfg->shared_pool_busy) {
			/* hold */
		} else if (throttled) {
			factor = cfg->scale_up;
			t->rule = RULE_BURST_SCALE_UP;
		} else if (t->used < e->quota_cpus * cfg->scale_down) {
			factor = cfg->scale_down;
			t->rule = RULE_BURST_SCALE_DOWN;
		}
		e->quota_cpus = fmin(fmax(e->quota_cpus * factor, t->limit), ceiling);
		e->win_s = e->win_cpu_s = e->win_busy_s = 0;
		e->win_periods = e->win_throttled = 0;
	}

	t->budget = cfg->budget_cpu_s > 0;
	if (!t->budget)
		return;
	if (e->budget_period != budget_period(in, cfg)) {
		e->budget_period = budget_period(in, cfg);
		e->budget_used_cpu_s = 0;
	}
	e->budget_used_cpu_s += fmax(u->cpu_used - t->limit, 0) * in->interval_s;
	t->budget_used = e->budget_used_cpu_s;
	if (t->budget_used >= cfg->budget_cpu_s) {
		/* Scaling restarts from the limit when the next period begins. */
		e->quota_cpus = t->limit;
		t->rule = RULE_BURST_BUDGET_SPENT;
	}
}

static int emit_quota(const struct pol_unit *u, const struct burst_tick *t, struct action_list *out)
{
	struct action *a = action_add(out, ACT_CPU_QUOTA, u, t->rule);

	if (!a)
		return -ENOMEM;
	a->value = t->quota_us;
	action_evidence(a, "limit_cpus", t->limit);
	action_evidence(a, "quota_cpus_before", t->quota_before);
	action_evidence(a, "quota_cpus_after", (double)t->quota_us / (double)t->period);
	action_evidence(a, "window_s", t->window);
	action_evidence(a, "nr_periods", (double)t->periods);
	action_evidence(a, "nr_throttled", (double)t->throttled_periods);
	action_evidence(a, "throttled_ratio", t->throttled);
	action_evidence(a, "pool_busy_ratio", t->busy);
	action_evidence(a, "cpu_used_cpus", t->used);
	if (t->budget)
		action_evidence(a, "budget_used_cpu_s", t->budget_used);
	return 0;
}

/* The kernel rejects burst > quota (EINVAL, v1 cpu.cfs_burst_us and v2 cpu.max.burst). */
static int emit_burst(const struct burst_config *cfg, const struct pol_unit *u,
		      const struct burst_tick *t, struct action_list *out)
{
	double want = t->limit * (double)t->period * cfg->burst_percent / 100;
	struct action *a = action_add(out, ACT_CPU_BURST, u, RULE_BURST_CPU_BURST);

	if (!a)
		return -ENOMEM;
	a->value = llround(fmin(want, (double)t->quota_us));
	action_evidence(a, "limit_cpus", t->limit);
	action_evidence(a, "burst_percent", cfg->burst_percent);
	action_evidence(a, "burst_wanted_cpus", want / (double)t->period);
	action_evidence(a, "quota_cpus_after", (double)t->quota_us / (double)t->period);
	return 0;
}

static int run_unit(const struct pol_input *in, double busy, const struct burst_config *cfg,
		    const struct pol_unit *u, struct burst_unit_state *e, struct action_list *out)
{
	struct burst_tick t = {
		.limit = u->limit_cpus,
		.period = pol_unit_period_us(u),
		.quota_before = e->quota_cpus,
	};
	/* The kernel's quota now (unlimited is above any): the writes' order depends on it. */
	int64_t now = u->quota_us >= 0 ? u->quota_us : INT64_MAX;
	bool down;
	int err = 0;

	if (manages_quota(cfg->policy)) {
		scale_quota(in, busy, cfg, u, e, &t);
		t.quota_us = llround(e->quota_cpus * (double)t.period);
		/* Remember what was asked for: next tick's "before" is this "after". */
		e->quota_cpus = (double)t.quota_us / (double)t.period;
	} else {
		t.quota_us = u->quota_us >= 0 ? u->quota_us : llround(t.limit * (double)t.period);
	}

	/*
	 * The actuator writes in list order and the kernel checks burst <=
	 * quota at every write, on v1 (cpu.cfs_burst_us, cpu.cfs_quota_us) and
	 * v2 (cpu.max.burst, cpu.max) alike, so in->cgroup_v2 changes nothing
	 * here: lower the burst before the quota goes down, raise it after the
	 * quota went up.
	 */
	down = t.quota_us < now;
	if (manages_burst(cfg->policy) && down)
		err = emit_burst(cfg, u, &t, out);
	if (!err && manages_quota(cfg->policy))
		err = emit_quota(u, &t, out);
	if (!err && manages_burst(cfg->policy) && !down)
		err = emit_burst(cfg, u, &t, out);
	return err;
}

static const struct burst_unit_state *find(const struct burst_state *st, uint64_t id)
{
	size_t lo = 0, hi = st->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->v[mid].id == id)
			return &st->v[mid];
		if (st->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int burst_run(const struct pol_input *in, const struct burst_config *cfg, struct burst_state *st,
	      struct action_list *out)
{
	struct burst_unit_state *next = NULL;
	size_t n = 0, count = 0;
	struct pool_use use;
	double busy;

	if (cfg->policy == BURST_NONE) {
		burst_state_free(st);
		return 0;
	}
	for (size_t i = 0; i < in->n_units; i++)
		count += governed(&in->units[i]);
	/*
	 * The next state holds exactly this tick's governed units (in id
	 * order, as the input): units gone, or no longer LS with a limit, are
	 * forgotten, and start again from their limit if they come back.
	 */
	if (count && !(next = calloc(count, sizeof(*next))))
		return -ENOMEM;
	/*
	 * Busyness is the shared pool's without BE, as koordlet counts it: BE
	 * soaks up idle CPUs by design, and counting it would hold a co-located
	 * node busy for good, so throttled LS units would only ever shrink.
	 */
	pool_use_measure(in, &use);
	busy = pool_use_busy(&use);
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];
		const struct burst_unit_state *old;
		struct burst_unit_state *e;
		int err;

		if (!governed(u))
			continue;
		e = &next[n++];
		old = find(st, u->id);
		if (old)
			*e = *old;
		else
			*e = (struct burst_unit_state){.id = u->id,
						       .quota_cpus = u->limit_cpus,
						       .budget_period = budget_period(in, cfg)};
		err = run_unit(in, busy, cfg, u, e, out);
		if (err) {
			free(next);
			return err;
		}
	}
	free(st->v);
	st->v = next;
	st->n = n;
	return 0;
}

void burst_state_free(struct burst_state *st)
{
	free(st->v);
	st->v = NULL;
	st->n = 0;
}
