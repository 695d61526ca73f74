// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SLO control. Each tick: (1) one state entry per BE unit of the input,
 * (2) every LS unit's run-queue p99 judged against its target: over it is
 * a breach, under target x slack_ratio is slack, between is a hold; and
 * its displacement: the share of its switch-ins that took the CPU from BE
 * (blame's hand-overs), at displaced_share or more no slack either (a
 * share counts from SLO_DISPLACED_MIN switch-ins, a p99 from min_waits),
 * (3) a breach cuts the BE units its blame names: cpu.idle first, then every
 * BE unit confined to cut_factor of BE's CPUs (down to one), then the
 * unit's allowance x cut_factor; a displacement only confines (3c),
 * (4) slack on every LS unit for dwell_s gives CPU back in the reverse
 * order, one step per dwell_s: each quota grow_cpus, then one more CPU for
 * BE while the LS units' use still fits the CPUs left to them, then
 * cpu.idle, (5) every held unit's wishes go out; an allowance grown back
 * to the ceiling, or a confinement back to every CPU, is let go. Only BE
 * units are ever acted on. SMT siblings stay together by cpu_pick's choice
 * (docs/slo-control.md).
 */
#include "policy/slo.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel refuses a CFS quota under 1 ms. */
#define MIN_QUOTA_US 1000

/*
 * Between two confinement steps: a cpuset acts at once, but a breach seen
 * sooner may predate the last step (fast-path ticks come 50-100 ms apart).
 */
#define CONFINE_WAIT_S 0.1

/*
 * A BE unit using less than this is not running: cutting it cannot help,
 * so a busy LS unit next to idle BE pods cuts nothing.
 */
#define BE_RUNNING_CPUS 0.01

/*
 * A victim whose own tasks, own limit and idle CPUs hold at least this
 * share of its waits waits on itself.
 */
#define OWN_SHARE_MIN 0.5

/*
 * LS units using less than this in all leave no CPU to keep from BE: the
 * last CPU of a confinement goes back only then (grow_confinement).
 */
#define LS_IDLE_CPUS 0.01

/*
 * A pod's own target annotation as the controller takes it: the pod's
 * owner wrote it, so it never goes under the operator's floor (the
 * collector reports an annotation under it, collect_wants.rq_target_floor_us).
 */
static double slo_pod_target_us(uint32_t annotated_us, const struct slo_config *cfg)
{
	return annotated_us < cfg->annotation_min_us ? cfg->annotation_min_us : annotated_us;
}

double slo_target_us(const struct pol_unit *u, const struct slo_config *cfg)
{
	if (!qos_is_ls(u->cls))
		return 0;
	if (u->rq_target_us)
		return slo_pod_target_us(u->rq_target_us, cfg);
	for (size_t i = 0; i < cfg->n_globs; i++)
		if (!fnmatch(cfg->globs[i].glob, u->path, FNM_PATHNAME))
			return cfg->globs[i].p99_us;
	return u->cls == QOS_LSE   ? cfg->lse_p99_us
	       : u->cls == QOS_LSR ? cfg->lsr_p99_us
				   : cfg->ls_p99_us;
}

/* slo_unit_p99 for a window of at least min waits */
static bool ls_window(const struct pol_unit *u, const struct slo_config *cfg, uint64_t min,
		      double *p99_us, double *target_us)
{
	if (!qos_is_ls(u->cls) || !u->has_rq || !u->rq.count || u->rq.count < min)
		return false;
	*target_us = slo_target_us(u, cfg);
	*p99_us = hist_quantile_ns(&u->rq, 0.99) / 1000;
	return true;
}

bool slo_unit_p99(const struct pol_unit *u, const struct slo_config *cfg, double *p99_us,
		  double *target_us)
{
	return ls_window(u, cfg, cfg->min_waits, p99_us, target_us);
}

/*
 * The share of LS unit u's switch-ins that took the CPU from a BE unit:
 * after waiting behind it, or at once from its runnable task (how a
 * wake-up takes the CPU from SCHED_IDLE BE: no wait, but a switch of
 * address space and the cache BE left). 0 without counts (a recording
 * from before they were kept).
 */
static double displaced_of(const struct pol_input *in, const struct pol_unit *u)
{
	uint64_t be = 0;
	size_t lo, end = pol_blame_of(in, u->id, &lo);

	for (size_t k = lo; k < end; k++) {
		const struct pol_unit *c = pol_input_find(in, in->blame[k].culprit);

		if (c && c->cls == QOS_BE)
			be += in->blame[k].count;
	}
	return u->rq.count ? fmin(1, (double)be / (double)u->rq.count) : 0;
}

/* (1) Carries each BE unit's entry over (both lists sorted by id); new ones start free. */
static int sync_units(struct slo_state *st, const struct pol_input *in)
{
	struct slo_be *v = malloc((in->n_units + 1) * sizeof(*v));
	size_t n = 0, j = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_units; i++) {
		uint64_t id = in->units[i].id;

		/* a pod the kubelet pinned holds its CPUs whatever a class rule calls it */
		if (in->units[i].cls != QOS_BE || in->units[i].pinned_cpus)
			continue;
		while (j < st->n && st->v[j].id < id)
			j++;
		if (j < st->n && st->v[j].id == id)
			v[n] = st->v[j];
		else
			v[n] = (struct slo_be){.id = id};
		n++;
	}
	free(st->v);
	st->v = v;
	st->n = n;
	return 0;
}

/*
 * Why a BE unit is cut this tick: the victim whose wait it held the largest
 * share of. Indexed like the input's units.
 */
struct cut {
	const struct pol_unit *victim;
	double p99_us, target_us;
	double share;	  /* of the victim's wait; 0 when blame could not tell */
	double displaced; /* the victim's switch-ins taken from BE (displaced_of) */
};

/* What the LS units said this tick. */
struct verdict {
	bool breach; /* some LS unit over its target */
	bool slack;  /* every counted LS unit under target x slack_ratio, none displaced */
	/* The counted LS unit nearest its target (or over); victim NULL: none. */
	struct cut worst;
	/* The most displaced LS unit, at displaced_share or more; victim NULL: none. */
	struct cut displaced;
};

static double throttled_ratio(const struct pol_unit *u)
{
	return u->nr_periods ? fmin(1, (double)u->nr_throttled / (double)u->nr_periods) : 0;
}

static void mark(struct cut *c, const struct cut *why)
{
	if (!c->victim || why->share > c->share)
		*c = *why;
}

/* Every running BE unit is cut for why (blame could not tell which). */
static void mark_all_be(const struct pol_input *in, const struct cut *why, struct cut *cuts)
{
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];

		if (u->cls == QOS_BE && u->cpu_used >= BE_RUNNING_CPUS)
			mark(&cuts[i], why);
	}
}

/*
 * (3) Who gets cut for a breach of victim v. A victim that waits mostly
 * on itself (its own tasks, its own limit throttling it) or on idle CPUs
 * waking up cuts nothing: no BE unit holds that time. Else the BE units
 * that held at least culprit_min_share of its waits; when none did (or
 * blame has nothing on the victim), blame cannot tell which BE unit to
 * cut, the waits went to others (outside the pods, other LS pods), and
 * every running BE unit is cut: fewer runnable BE tasks shorten every
 * queue the victim may wait in.
 */
static void blame_victim(const struct pol_input *in, const struct slo_config *cfg,
			 const struct cut *why, struct cut *cuts)
{
	const struct pol_unit *v = why->victim;
	size_t lo, end = pol_blame_of(in, v->id, &lo);
	uint64_t total = 0, self = 0, idle = 0;
	bool named = false;
	double own;

	for (size_t k = lo; k < end; k++) {
		total += in->blame[k].wait_ns;
		if (in->blame[k].culprit == v->id)
			self += in->blame[k].wait_ns;
		else if (in->blame[k].culprit == POL_CULPRIT_IDLE)
			idle += in->blame[k].wait_ns;
	}
	if (total) {
		/* The throttled share of the rest waited for its own quota, as interference counts
		 * it. */
		own = (double)self / (double)total;
		own += (1 - own) * throttled_ratio(v);
		if (own + (double)idle / (double)total >= OWN_SHARE_MIN)
			return;
	}
	for (size_t k = lo; k < end; k++) {
		const struct pol_unit *c = pol_input_find(in, in->blame[k].culprit);
		struct cut blamed = *why;

		if (!c || c->cls != QOS_BE || !total)
			continue;
		blamed.share = (double)in->blame[k].wait_ns / (double)total;
		if (blamed.share >= cfg->culprit_min_share) {
			mark(&cuts[c - in->units], &blamed);
			named = true;
		}
	}
	/*
	 * A pinned victim's waits are on CPUs no BE unit may run on (nor does
	 * any confinement name them): when blame names no BE unit, cutting BE
	 * would not shorten them.
	 */
	if (!named && !v->pinned_cpus)
		mark_all_be(in, why, cuts);
}

/* (2) Judges every LS unit; marks the BE units each breach cuts. */
static void judge(const struct pol_input *in, const struct slo_config *cfg, struct cut *cuts,
		  struct verdict *vd)
{
	/* the fewest waits that judge anything: a displaced share's */
	uint64_t min = cfg->min_waits < SLO_DISPLACED_MIN ? cfg->min_waits : SLO_DISPLACED_MIN;
	double worst = -1;

	memset(vd, 0, sizeof(*vd));
	vd->slack = true;
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];
		struct cut why = {.victim = u};

		if (!ls_window(u, cfg, min, &why.p99_us, &why.target_us))
			continue;
		why.displaced = displaced_of(in, u);
		if (cfg->displaced_share > 0 && why.displaced >= cfg->displaced_share) {
			vd->slack = false;
			if (why.displaced > vd->displaced.displaced)
				vd->displaced = why;
		}
		if (u->rq.count < cfg->min_waits)
			continue; /* too few for a p99: only its share counts */
		if (why.p99_us / why.target_us > worst) {
			worst = why.p99_us / why.target_us;
			vd->worst = why;
		}
		if (why.p99_us >= why.target_us * cfg->slack_ratio)
			vd->slack = false;
		if (why.p99_us <= why.target_us)
			continue;
		vd->breach = true;
		blame_victim(in, cfg, &why, cuts);
	}
}

/*
 * The evidence of LS unit ev->victim (none: all 0) and its relation;
 * step: the cut's factor, or the growth's CPUs ("step_cpus"), or 1 while
 * holding.
 */
static void evidence(struct action *a, const struct cut *ev, const char *step_name, double step,
		     const struct slo_be *b)
{
	action_evidence(a, "ls_rq_p99_us", ev->p99_us);
	action_evidence(a, "ls_target_us", ev->target_us);
	action_evidence(a, "culprit_share", ev->share);
	action_evidence(a, "ls_displaced_share", ev->displaced);
	action_evidence(a, step_name, step);
	action_evidence(a, "be_allowed_cpus", b->has_quota ? b->allowed_cpus : -1);
	if (ev->victim) {
		a->related_id = ev->victim->id;
		memcpy(a->related, ev->victim->path, sizeof(a->related));
	}
}

/* The CPUs a confinement may name: the shared pool, never a pinned pod's. */
static size_t usable_cpus(const struct pol_input *in)
{
	bool pool[POL_CPUS_MAX];

	return cpu_pool(in, pool);
}

enum confine_step {
	CONFINE_NONE, /* confined as far as it goes (or not ours): the quota is next */
	CONFINE_HOLD, /* the last step is too recent to judge */
	CONFINE_DONE, /* this tick's step: every BE unit on fewer CPUs */
};

/*
 * (3b) BE's CPUs x cut_factor (at least one), once per tick: a second
 * blamed unit's cut in the same tick is that step.
 */
static enum confine_step confine(const struct pol_input *in, const struct slo_config *cfg,
				 bool may_confine, struct slo_state *st, bool *stepped)
{
	size_t from;

	if (*stepped)
		return CONFINE_DONE;
	if (!may_confine)
		return CONFINE_NONE;
	from = st->be_cpus ? st->be_cpus : usable_cpus(in);
	if (from <= 1)
		return CONFINE_NONE;
	if (st->be_cpus && pol_since_s(in->ts_ns, &st->confine_ns) < CONFINE_WAIT_S)
		return CONFINE_HOLD;
	st->be_cpus = cpu_pick(in, fmax(floor((double)from * cfg->cut_factor), 1), st->be_set);
	st->confine_ns = in->ts_ns;
	*stepped = true;
	return CONFINE_DONE;
}

/*
 * (3) One cut of BE unit u: cpu.idle when it is not idle yet, else BE's
 * confinement, else its allowance x cut_factor.
 */
static int cut_one(const struct pol_input *in, const struct slo_config *cfg, double ceiling,
		   bool may_confine, const struct pol_unit *u, struct slo_state *st,
		   struct slo_be *b, const struct cut *c, bool *confined_now,
		   struct action_list *out, enum rule_id *rule, double *step)
{
	double from;
	struct action *a;

	if (in->has_cpu_idle && u->idle == 0 && !b->idle) {
		b->idle = true;
		*rule = RULE_SLO_CUT_IDLE;
		*step = cfg->cut_factor;
		return 0;
	}
	switch (confine(in, cfg, may_confine, st, confined_now)) {
	case CONFINE_DONE:
		*rule = RULE_SLO_CONFINE;
		*step = cfg->cut_factor;
		return 0;
	case CONFINE_HOLD:
		return 0;
	case CONFINE_NONE:
		break;
	}
	/*
	 * A quota acts over whole CFS periods: until one has passed since the
	 * last cut, a breach may predate it, and cutting again would overshoot
	 * (fast-path ticks come 50-100 ms apart). Hold meanwhile.
	 */
	if (b->has_quota &&
	    pol_since_s(in->ts_ns, &b->cut_ns) * 1e6 < (double)pol_unit_period_us(u))
		return 0;
	/* The first cut starts from what the unit used: halving an unused allowance does nothing.
	 */
	from = b->has_quota ? b->allowed_cpus : fmin(u->cpu_used, ceiling);
	b->allowed_cpus = fmax(from * cfg->cut_factor, cfg->floor_cpus);
	b->has_quota = true;
	b->cut_ns = in->ts_ns;
	*rule = RULE_SLO_CUT;
	*step = cfg->cut_factor;
	if (from * cfg->cut_factor >= cfg->floor_cpus)
		return 0;
	/* The floor binds: said once per dwell, not on every tick it keeps binding. */
	if (b->floor_reported && pol_since_s(in->ts_ns, &b->floor_ns) < cfg->dwell_s)
		return 0;
	a = action_add(out, ACT_REPORT, u, RULE_SLO_FLOOR);
	if (!a)
		return -ENOMEM;
	evidence(a, c, "factor", cfg->cut_factor, b);
	action_evidence(a, "floor_cpus", cfg->floor_cpus);
	b->floor_reported = true;
	b->floor_ns = in->ts_ns;
	return 0;
}

/*
 * (4) One growth step of a unit: the allowance + grow_cpus; grown to the
 * ceiling it is let go. A unit with only cpu.idle gets that back.
 */
static void grow_one(const struct slo_config *cfg, double ceiling, struct slo_be *b)
{
	if (!b->has_quota) {
		b->idle = false; /* idle alone: giving it back is the step */
		return;
	}
	b->allowed_cpus += cfg->grow_cpus;
	if (b->allowed_cpus >= ceiling)
		*b = (struct slo_be){.id = b->id};
}

/*
 * (4b) Once no BE unit has a quota: one more CPU for BE, while the LS
 * units' use fits in the CPUs left to them at slack_ratio (else the CPU
 * given would displace them again, and the confinement would come and go
 * every dwell); back to all of them, let go, only once LS is idle.
 */
static bool grow_confinement(const struct pol_input *in, const struct slo_config *cfg,
			     struct slo_state *st)
{
	size_t n, usable;
	double ls_used = 0;

	if (!st->be_cpus)
		return false;
	for (size_t i = 0; i < st->n; i++)
		if (st->v[i].has_quota)
			return false;
	n = st->be_cpus + 1;
	usable = usable_cpus(in);
	/* A pinned pod's use is on its own CPUs, not on those left to the shared LS units. */
	for (size_t i = 0; i < in->n_units; i++)
		if (qos_is_ls(in->units[i].cls) && !in->units[i].pinned_cpus)
			ls_used += in->units[i].cpu_used;
	if (ls_used >= LS_IDLE_CPUS &&
	    ls_used > (double)(usable > n ? usable - n : 0) * cfg->slack_ratio)
		return false;
	if (n >= usable)
		st->be_cpus = 0;
	else
		st->be_cpus = cpu_pick(in, (double)n, st->be_set);
	if (!st->be_cpus)
		memset(st->be_set, 0, sizeof(st->be_set));
	st->confine_ns = in->ts_ns;
	return true;
}

static bool growth_due(const struct pol_input *in, const struct slo_config *cfg,
		       struct slo_state *st, const struct verdict *vd)
{
	if (vd->breach || !vd->slack) {
		st->slack = false;
		return false;
	}
	if (!st->slack) {
		st->slack = true;
		st->slack_ns = in->ts_ns;
	}
	if (pol_since_s(in->ts_ns, &st->slack_ns) < cfg->dwell_s ||
	    (st->grown && pol_since_s(in->ts_ns, &st->grown_ns) < cfg->dwell_s))
		return false;
	st->grown = true;
	st->grown_ns = in->ts_ns;
	return true;
}

/* A unit's step this tick: its rule, and the evidence naming the step's size. */
struct step {
	enum rule_id rule;
	const char *name; /* "factor" or "step_cpus" */
	double value;
	bool confined; /* this tick confined BE: the cpuset says slo.confine whatever the rule */
};

/*
 * (5) A held unit's wishes, with the evidence of this tick's step (or of
 * the hold); list: the confinement's CPUs ("" when BE is not confined).
 */
static int emit(const struct pol_unit *u, const struct slo_be *b, const char *list, size_t n_cpus,
		const struct step *p, const struct cut *c, const struct verdict *vd,
		struct action_list *out)
{
	enum rule_id rule = p->rule;
	const char *step_name = p->name;
	double step = p->value;
	/* its own cut's victim, else the most displaced LS unit, else the one nearest its target */
	const struct cut *ev = c->victim ? c : vd->displaced.victim ? &vd->displaced : &vd->worst;
	struct action *a;

	if (b->idle) {
		a = action_add(out, ACT_CPU_IDLE, u, rule);
		if (!a)
			return -ENOMEM;
		a->value = 1;
		evidence(a, ev, step_name, step, b);
	}
	if (b->has_quota) {
		int64_t q = llround(b->allowed_cpus * (double)pol_unit_period_us(u));

		a = action_add(out, ACT_CPU_QUOTA, u, rule);
		if (!a)
			return -ENOMEM;
		a->value = q < MIN_QUOTA_US ? MIN_QUOTA_US : q;
		evidence(a, ev, step_name, step, b);
	}
	if (list[0]) {
		a = action_add(out, ACT_CPUSET, u, p->confined ? RULE_SLO_CONFINE : rule);
		if (!a)
			return -ENOMEM;
		snprintf(a->cpus, sizeof(a->cpus), "%s", list);
		evidence(a, ev, step_name, step, b);
		action_evidence(a, "be_cpuset_cpus", (double)n_cpus);
	}
	return 0;
}

int slo_run(const struct pol_input *in, const struct slo_config *cfg, double ceiling_cpus,
	    bool may_confine, struct slo_state *st, struct action_list *out)
{
	char list[POL_CPULIST_MAX] = "";
	struct step *steps;
	struct cut *cuts;
	struct verdict vd;
	bool grow, confined_now = false, widened = false;
	int err = 0;

	if (!cfg->enabled) {
		/* Enabled again later, it starts afresh: the plan restored what it held. */
		slo_state_free(st);
		return 0;
	}
	if (sync_units(st, in))
		return -ENOMEM;
	cuts = calloc(in->n_units + 1, sizeof(*cuts));
	steps = calloc(st->n + 1, sizeof(*steps));
	if (!cuts || !steps) {
		free(cuts);
		free(steps);
		return -ENOMEM;
	}
	judge(in, cfg, cuts, &vd);
	grow = growth_due(in, cfg, st, &vd);
	/* Not ours to choose (any more): the plan gives the owner's cpusets back. */
	if (!may_confine) {
		st->be_cpus = 0;
		memset(st->be_set, 0, sizeof(st->be_set));
	}
	/* Quotas come back before CPUs: the confinement widens once none is left. */
	if (grow)
		widened = grow_confinement(in, cfg, st);
	for (size_t i = 0; !err && i < st->n; i++) {
		struct slo_be *b = &st->v[i];
		const struct pol_unit *u = pol_input_find(in, b->id);
		const struct cut *c = &cuts[u - in->units];
		struct step *p = &steps[i];

		*p = (struct step){.rule = RULE_SLO_HOLD, .name = "factor", .value = 1};
		if (c->victim) {
			err = cut_one(in, cfg, ceiling_cpus, may_confine, u, st, b, c,
				      &confined_now, out, &p->rule, &p->value);
		} else if (widened) {
			*p = (struct step){.rule = RULE_SLO_GROW, .name = "step_cpus", .value = 1};
		} else if (grow && (b->has_quota || (b->idle && !st->be_cpus))) {
			/* cpu.idle only once BE has every CPU back */
			grow_one(cfg, ceiling_cpus, b);
			*p = (struct step){.rule = RULE_SLO_GROW,
					   .name = "step_cpus",
					   .value = cfg->grow_cpus};
		}
	}
	/*
	 * (3c) A displaced LS unit confines BE (a step per CONFINE_WAIT_S, down
	 * to one CPU) and nothing more: a quota or cpu.idle would not keep its
	 * wake-ups off BE's CPUs.
	 */
	if (!err && vd.displaced.victim)
		confine(in, cfg, may_confine, st, &confined_now);
	/*
	 * This tick's confinement moved every BE unit, blamed or not, and one
	 * whose own step was cpu.idle (the displacement confines on that tick
	 * too): say so on each cpuset.
	 */
	for (size_t i = 0; confined_now && i < st->n; i++) {
		if (steps[i].rule == RULE_SLO_HOLD)
			steps[i] = (struct step){.rule = RULE_SLO_CONFINE,
						 .name = "factor",
						 .value = cfg->cut_factor};
		steps[i].confined = true;
	}
	/*
	 * The confinement as this tick left it goes to every BE unit. A list
	 * too long for an action makes no confinement wish this tick (the plan
	 * gives the owner's cpusets back) rather than a failed tick.
	 */
	/*
	 * The pool may have lost CPUs since the last step (a pod pinned to
	 * them): they leave the set now, others of the pool taking their place.
	 */
	if (st->be_cpus && !(st->be_cpus = cpu_pick(in, (double)st->be_cpus, st->be_set)))
		memset(st->be_set, 0, sizeof(st->be_set));
	if (st->be_cpus && cpu_pick_format(st->be_set, list, sizeof(list)))
		list[0] = '\0';
	for (size_t i = 0; !err && i < st->n; i++) {
		const struct pol_unit *u = pol_input_find(in, st->v[i].id);

		err = emit(u, &st->v[i], list, st->be_cpus, &steps[i], &cuts[u - in->units], &vd,
			   out);
	}
	free(steps);
	free(cuts);
	return err;
}

bool slo_displacement_acts(const struct pol_input *in, const struct slo_config *cfg,
			   const struct slo_state *st, bool may_confine)
{
	if (!cfg->enabled || cfg->displaced_share <= 0 || !may_confine)
		return false;
	return st->be_cpus ? st->be_cpus > 1 : usable_cpus(in) > 1;
}

void slo_state_free(struct slo_state *st)
{
	free(st->v);
	memset(st, 0, sizeof(*st));
}
