// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SLO control: a breach cuts the blamed BE units multiplicatively (cpu.idle
 * first, then BE confined to fewer CPUs where the topology allows, then the
 * quota), slack grows them back additively after the dwell in the reverse
 * order, in between holds, the floor binds and is reported once per dwell,
 * a busy LS unit alone cuts nothing, and a steady plant does not oscillate.
 * An LS unit whose switch-ins take the CPU from BE (displaced) confines BE
 * and nothing more; BE gets a CPU back only while LS's use fits the rest.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpulist.h"
#include "policy/slo.h"
#include "evidence.h"

#define NS	     1000000000ULL
#define LS_ID	     10
#define BE_A	     20
#define BE_B	     30
#define MAX_UNITS    5
#define MAX_BLAME    4
#define PERIOD_US    100000
#define CEILING_CPUS 2.0

/*
 * All of a window's waits in one bucket of the histogram: its p99 is then
 * 0.995 x the bucket's bound (bpf/lat_hist.h). With the 1200 us target of
 * config(): SLACK is under 0.8 x the target, HOLD between, BREACH over.
 */
enum window { NONE = 0, SLACK = 9, HOLD = 10, BREACH = 11 }; /* ~521, ~1043, ~2087 us */

struct world {
	struct pol_input in;
	struct pol_unit units[MAX_UNITS];
	struct pol_blame blame[MAX_BLAME];
};

static struct slo_config config(void)
{
	return (struct slo_config){
		.enabled = true,
		.lse_p99_us = 500,
		.lsr_p99_us = 1000,
		.ls_p99_us = 1200,
		.min_waits = 20,
		.culprit_min_share = 0.2,
		.displaced_share = 0.25,
		.cut_factor = 0.5,
		.grow_cpus = 0.1,
		.slack_ratio = 0.8,
		.dwell_s = 3,
		.floor_cpus = 0.1,
	};
}

static void world_init(struct world *w, double t)
{
	memset(w, 0, sizeof(*w));
	w->in.units = w->units;
	w->in.blame = w->blame;
	w->in.cpus = CEILING_CPUS;
	w->in.interval_s = 1;
	w->in.ts_ns = (uint64_t)(t * NS) + 1000 * NS;
}

/* Units are added in id order (pol_input is sorted by id). */
static struct pol_unit *unit(struct world *w, uint64_t id, enum qos_class cls, double used)
{
	struct pol_unit *u = &w->units[w->in.n_units++];

	u->id = id;
	snprintf(u->path, sizeof(u->path), "kubepods/pod%llu", (unsigned long long)id);
	u->cls = cls;
	u->cpu_used = used;
	u->period_us = PERIOD_US;
	u->quota_us = -1;
	u->idle = -1;
	return u;
}

static void set_window(struct pol_unit *u, enum window win)
{
	u->has_rq = true;
	u->rq.count = win == NONE ? 0 : 100;
	if (win != NONE)
		u->rq.slots[win] = 100;
}

/* Blame pairs of LS_ID, added in culprit order; waits in ms. */
static void wait(struct world *w, uint64_t culprit, uint64_t ms)
{
	w->blame[w->in.n_blame++] = (struct pol_blame){LS_ID, culprit, ms * 1000000, 0};
}

/* Hand-overs of LS_ID to culprit without a wait (wake-ups that took its CPU at once). */
static void hand_over(struct world *w, uint64_t culprit, uint64_t n)
{
	w->blame[w->in.n_blame++] = (struct pol_blame){LS_ID, culprit, 0, n};
}

/* The usual world: LS victim in window win, BE A using a_used, BE B using b_used. */
static void world(struct world *w, double t, enum window win, double a_used, double b_used)
{
	world_init(w, t);
	set_window(unit(w, LS_ID, QOS_LS, 0.5), win);
	unit(w, BE_A, QOS_BE, a_used);
	unit(w, BE_B, QOS_BE, b_used);
}

static const struct action *find(const struct action_list *l, uint64_t id, enum act_kind kind)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].id == id && l->v[i].kind == kind)
			return &l->v[i];
	return NULL;
}

static int64_t quota_of(double cpus)
{
	return llround(cpus * PERIOD_US);
}

static void run(const struct world *w, const struct slo_config *cfg, struct slo_state *st,
		struct action_list *out)
{
	action_list_clear(out);
	assert_int_equal(slo_run(&w->in, cfg, CEILING_CPUS, true, st, out), 0);
	for (size_t i = 0; i < out->n; i++)
		assert_int_equal(out->v[i].cls, QOS_BE);
}

/* Who a breach cuts, by what blame says of the victim's waits. */
static void test_breach_cuts_blamed(void **state)
{
	static const struct {
		const char *name;
		uint64_t waits[3][2]; /* (culprit, ms) sorted by culprit; 0 ms ends */
		uint64_t throttled;   /* of 10 periods */
		bool cut_a, cut_b;
	} cases[] = {
		{"A holds 60%, B 10%", {{LS_ID, 3}, {BE_A, 6}, {BE_B, 1}}, 0, true, false},
		{"A and B both over the share", {{BE_A, 5}, {BE_B, 5}}, 0, true, true},
		{"no blame: every running BE", {{0}}, 0, true, true},
		{"its own tasks: nothing", {{LS_ID, 8}, {BE_A, 2}}, 0, false, false},
		{"its own limit: nothing", {{BE_A, 10}}, 10, false, false},
		{"idle CPUs waking up: nothing",
		 {{POL_CULPRIT_IDLE, 6}, {BE_A, 1}},
		 0,
		 false,
		 false},
		{"own and idle together: nothing",
		 {{POL_CULPRIT_IDLE, 3}, {LS_ID, 3}, {BE_A, 4}},
		 0,
		 false,
		 false},
		/* no BE culprit named, the waits not its own: blame cannot tell, every BE */
		{"outside, unnamed: every running BE",
		 {{POL_CULPRIT_OTHER, 9}, {0}},
		 0,
		 true,
		 true},
		{"B under the share, the rest outside: every BE",
		 {{BE_B, 1}, {POL_CULPRIT_OTHER, 9}},
		 0,
		 true,
		 true},
	};
	struct slo_config cfg = config();

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct slo_state st = {0};
		struct action_list out = {0};
		struct world w;
		const struct action *a, *b;

		world(&w, 0, BREACH, 1.0, 0.6);
		w.units[0].nr_periods = 10;
		w.units[0].nr_throttled = cases[c].throttled;
		/* pairs sorted by culprit, as the collector sorts them */
		for (size_t k = 0; k < 3 && cases[c].waits[k][1]; k++)
			wait(&w, cases[c].waits[k][0], cases[c].waits[k][1]);
		run(&w, &cfg, &st, &out);
		a = find(&out, BE_A, ACT_CPU_QUOTA);
		b = find(&out, BE_B, ACT_CPU_QUOTA);
		if ((a != NULL) != cases[c].cut_a || (b != NULL) != cases[c].cut_b)
			fail_msg("%s: A cut %d, B cut %d", cases[c].name, a != NULL, b != NULL);
		/* multiplicatively, from what it used, with the evidence */
		if (a) {
			assert_int_equal(a->value, quota_of(1.0 * 0.5));
			assert_int_equal(a->rule, RULE_SLO_CUT);
			assert_true(evidence(a, "ls_rq_p99_us") > 1200);
			assert_true(evidence(a, "ls_target_us") == 1200);
			assert_true(evidence(a, "factor") == 0.5);
			assert_int_equal(a->related_id, LS_ID);
		}
		if (!strcmp(cases[c].name, "A holds 60%, B 10%"))
			assert_true(fabs(evidence(a, "culprit_share") - 0.6) < 1e-9);
		if (b)
			assert_int_equal(b->value, quota_of(0.6 * 0.5));
		action_list_free(&out);
		slo_state_free(&st);
	}
}

/* cpu.idle is the first step where the kernel has it; the quota comes with the next breach. */
static void test_idle_first(void **state)
{
	struct slo_config cfg = config();
	struct slo_state st = {0};
	struct action_list out = {0};
	const struct action *a;
	struct world w;

	(void)state;
	world(&w, 0, BREACH, 1.0, 0);
	w.in.has_cpu_idle = true;
	w.units[1].idle = 0;
	wait(&w, BE_A, 5);
	run(&w, &cfg, &st, &out);
	a = find(&out, BE_A, ACT_CPU_IDLE);
	assert_non_null(a);
	assert_int_equal(a->value, 1);
	assert_int_equal(a->rule, RULE_SLO_CUT_IDLE);
	assert_null(find(&out, BE_A, ACT_CPU_QUOTA));

	w.in.ts_ns += NS;
	w.units[1].idle = 1;
	run(&w, &cfg, &st, &out);
	a = find(&out, BE_A, ACT_CPU_QUOTA);
	assert_non_null(a);
	assert_int_equal(a->value, quota_of(0.5));
	assert_non_null(find(&out, BE_A, ACT_CPU_IDLE)); /* still wished: the plan keeps it */
	action_list_free(&out);
	slo_state_free(&st);
}

/* The quota wished for BE A (using used CPUs) after one tick of window win at t; -2 when none. */
static int64_t step_used(struct slo_state *st, const struct slo_config *cfg, double t,
			 enum window win, double used, enum rule_id *rule)
{
	struct action_list out = {0};
	const struct action *a;
	struct world w;
	int64_t q;

	world(&w, t, win, used, 0);
	wait(&w, BE_A, 5);
	run(&w, cfg, st, &out);
	a = find(&out, BE_A, ACT_CPU_QUOTA);
	q = a ? a->value : -2;
	if (rule)
		*rule = a ? a->rule : RULE_NONE;
	action_list_free(&out);
	return q;
}

static int64_t step(struct slo_state *st, const struct slo_config *cfg, double t, enum window win,
		    enum rule_id *rule)
{
	return step_used(st, cfg, t, win, 1.0, rule);
}

/* One tick of a scripted run: at t, window win; BE A's quota wished after it, by rule. */
struct tick {
	double t;
	enum window win;
	double cpus;
	enum rule_id rule;
};

static void play(const struct tick *ticks, size_t n)
{
	struct slo_config cfg = config();
	struct slo_state st = {0};

	for (size_t i = 0; i < n; i++) {
		enum rule_id rule;
		int64_t q = step(&st, &cfg, ticks[i].t, ticks[i].win, &rule);

		if (q != quota_of(ticks[i].cpus) || rule != ticks[i].rule)
			fail_msg("t=%g: quota %lld by %s, want %lld by %s", ticks[i].t,
				 (long long)q, rule_name(rule), (long long)quota_of(ticks[i].cpus),
				 rule_name(ticks[i].rule));
	}
	slo_state_free(&st);
}

/* A second quota cut waits one CFS period (100 ms): fast-path ticks come closer. */
static void test_cut_waits_a_period(void **state)
{
	static const struct tick ticks[] = {
		{0, BREACH, 0.5, RULE_SLO_CUT},	     {0.05, BREACH, 0.5, RULE_SLO_HOLD},
		{0.1, BREACH, 0.25, RULE_SLO_CUT},   {0.15, BREACH, 0.25, RULE_SLO_HOLD},
		{0.25, BREACH, 0.125, RULE_SLO_CUT},
	};

	(void)state;
	play(ticks, sizeof(ticks) / sizeof(ticks[0]));
}

/* Slack grows the allowance by grow_cpus once per dwell; between target x slack and target holds.
 */
static void test_grow_and_hold(void **state)
{
	static const struct tick ticks[] = {
		{0, BREACH, 0.5, RULE_SLO_CUT},
		{1, HOLD, 0.5, RULE_SLO_HOLD},
		{2, SLACK, 0.5, RULE_SLO_HOLD},
		{4, SLACK, 0.5, RULE_SLO_HOLD}, /* slack 2 s < dwell */
		{5, SLACK, 0.6, RULE_SLO_GROW},
		{6, SLACK, 0.6, RULE_SLO_HOLD}, /* one step per dwell */
		{8, SLACK, 0.7, RULE_SLO_GROW},
		{9, HOLD, 0.7, RULE_SLO_HOLD},
		{11, SLACK, 0.7, RULE_SLO_HOLD},
		{12, BREACH, 0.35, RULE_SLO_CUT},
		{13, NONE, 0.35, RULE_SLO_HOLD}, /* too few waits: slack, the dwell starts */
		{16, NONE, 0.45, RULE_SLO_GROW},
	};

	(void)state;
	play(ticks, sizeof(ticks) / sizeof(ticks[0]));
}

/* Grown back to the ceiling, the wish lapses: the plan restores the owner's quota. */
static void test_grow_lapses_at_ceiling(void **state)
{
	struct slo_config cfg = config();
	struct slo_state st = {0};
	double t = 0;

	(void)state;
	cfg.grow_cpus = 1;
	assert_int_equal(step(&st, &cfg, t, BREACH, NULL), quota_of(0.5));
	assert_int_equal(step(&st, &cfg, t += 3, SLACK, NULL), quota_of(0.5));
	assert_int_equal(step(&st, &cfg, t += 3, SLACK, NULL), quota_of(1.5));
	assert_int_equal(step(&st, &cfg, t += 3, SLACK, NULL), -2);
	slo_state_free(&st);
}

/* The floor binds: the allowance stays on it, reported once per dwell. */
static void test_floor_reports_once(void **state)
{
	struct slo_config cfg = config();
	struct slo_state st = {0};
	size_t reports = 0;

	(void)state;
	for (int t = 0; t < 8; t++) {
		struct action_list out = {0};
		const struct action *r;
		struct world w;

		world(&w, t, BREACH, 0.25, 0);
		wait(&w, BE_A, 5);
		run(&w, &cfg, &st, &out);
		/* 0.25 -> 0.125 -> floor 0.1 from the second breach on */
		assert_int_equal(find(&out, BE_A, ACT_CPU_QUOTA)->value, quota_of(t ? 0.1 : 0.125));
		r = find(&out, BE_A, ACT_REPORT);
		if (r) {
			assert_int_equal(r->rule, RULE_SLO_FLOOR);
			assert_true(evidence(r, "floor_cpus") == 0.1);
			assert_true(evidence(r, "ls_target_us") == 1200);
			reports++;
			/* at t = 1 (first binding) and t = 4 (dwell 3 s later) and t = 7 */
			assert_true(t == 1 || t == 4 || t == 7);
		}
		action_list_free(&out);
	}
	assert_int_equal(reports, 3);
	slo_state_free(&st);
}

/* A busy LS unit over its target with no BE to blame cuts nothing, whatever the blame. */
static void test_busy_ls_alone(void **state)
{
	static const struct {
		const char *name;
		double be_used;
		uint64_t culprit; /* 0: no blame */
	} cases[] = {
		{"no BE running, no blame", 0, 0},
		{"no BE running, itself", 0, LS_ID},
		{"BE running, the waits its own", 1.0, LS_ID},
	};
	struct slo_config cfg = config();

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct slo_state st = {0};

		for (int t = 0; t < 10; t++) {
			struct action_list out = {0};
			struct world w;

			world(&w, t, BREACH, cases[c].be_used, 0);
			if (cases[c].culprit)
				wait(&w, cases[c].culprit, 10);
			run(&w, &cfg, &st, &out);
			if (out.n)
				fail_msg("%s: %zu actions at t=%d", cases[c].name, out.n, t);
			action_list_free(&out);
		}
		slo_state_free(&st);
	}
}

/*
 * A steady plant over 200 ticks: BE wants 1.7 CPUs, the LS p99 follows what
 * BE gets (over 0.8 CPUs a breach, over 0.45 a hold, else slack). The
 * controller cuts twice (0.85, 0.425), grows once into the hold band
 * (0.525) and stays there: one change of direction in 200 ticks.
 */
static void test_steady_no_oscillation(void **state)
{
	struct slo_config cfg = config();
	struct slo_state st = {0};
	double be_cpus = 1.7, prev = 1.7;
	int dir = 0, changes = 0, steps = 0;

	(void)state;
	for (int t = 0; t < 200; t++) {
		enum window win = be_cpus > 0.8 ? BREACH : be_cpus > 0.45 ? HOLD : SLACK;
		int64_t q = step_used(&st, &cfg, t, win, be_cpus, NULL);
		double now = q < 0 ? 1.7 : (double)q / PERIOD_US;
		int d = now > prev + 1e-9 ? 1 : now < prev - 1e-9 ? -1 : 0;

		if (d) {
			steps++;
			if (dir && d != dir)
				changes++;
			dir = d;
		}
		prev = now;
		be_cpus = fmin(1.7, now);
	}
	assert_int_equal(changes, 1);
	assert_int_equal(steps, 3);
	assert_true(be_cpus > 0.45 && be_cpus <= 0.8);
	slo_state_free(&st);
}

/*
 * The target: the pod's annotation (never under the floor: its owner wrote
 * it), else the first glob matching, else the class's (the operator's word,
 * which the floor does not bind).
 */
static void test_targets(void **state)
{
	static const struct {
		enum qos_class cls;
		const char *path;
		uint32_t annotation;
		double want;
	} cases[] = {
		{QOS_LS, "kubepods/burstable/pod1", 0, 1200}, {QOS_LSE, "kubepods/pod2", 0, 500},
		{QOS_LSR, "kubepods/pod3", 0, 1000},	      {QOS_LS, "kubepods/web/pod4", 0, 300},
		{QOS_LS, "kubepods/web/pod4", 700, 700},     /* the annotation beats the glob */
		{QOS_LSE, "kubepods/pod5", 2500, 2500},	     /* and the class */
		{QOS_BE, "kubepods/web/pod6", 700, 0},	     /* BE has none */
		{QOS_LSR, "kubepods/api/pod7", 0, 900},	     /* the glob beats the class */
		{QOS_LS, "kubepods/web/pod7", 0, 300},	     /* the first glob that matches */
		{QOS_LS, "kubepods/burstable/pod8", 1, 250}, /* 1 us: the floor */
		{QOS_LSE, "kubepods/pod9", 249, 250},	     /* just under it */
		{QOS_LSR, "kubepods/pod10", 250, 250},	     /* at it */
	};
	struct slo_config cfg = config();

	(void)state;
	cfg.annotation_min_us = 250;
	cfg.n_globs = 2;
	snprintf(cfg.globs[0].glob, sizeof(cfg.globs[0].glob), "kubepods/web/*");
	cfg.globs[0].p99_us = 300;
	snprintf(cfg.globs[1].glob, sizeof(cfg.globs[1].glob), "kubepods/*/pod7");
	cfg.globs[1].p99_us = 900;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct pol_unit u = {.cls = cases[c].cls, .rq_target_us = cases[c].annotation};

		snprintf(u.path, sizeof(u.path), "%s", cases[c].path);
		if (slo_target_us(&u, &cfg) != cases[c].want)
			fail_msg("%s: target %g, want %g", cases[c].path, slo_target_us(&u, &cfg),
				 cases[c].want);
	}
}

/*
 * The abuse the floor stops: an LS pod annotated with a 1 us target whose
 * p99 (~521 us) is under the floor's slack would otherwise breach every
 * tick and cut every BE unit on the node.
 */
static void test_annotation_floor_cuts_nothing(void **state)
{
	struct slo_config cfg = config();
	struct slo_state st = {0};
	struct action_list out = {0};
	struct world w;

	(void)state;
	cfg.annotation_min_us = 1000;
	world(&w, 0, SLACK, 0.5, 0.5);
	w.units[0].rq_target_us = 1;
	run(&w, &cfg, &st, &out);
	assert_int_equal(out.n, 0);
	/* without the floor, the same pod's word cuts them both */
	cfg.annotation_min_us = 0;
	run(&w, &cfg, &st, &out);
	assert_non_null(find(&out, BE_A, ACT_CPU_QUOTA));
	assert_non_null(find(&out, BE_B, ACT_CPU_QUOTA));
	action_list_free(&out);
	slo_state_free(&st);
}

/* Off: nothing, and what it held is forgotten (the plan restores the settings). */
static void test_disabled(void **state)
{
	struct slo_config cfg = config();
	struct slo_state st = {0};

	(void)state;
	assert_int_equal(step(&st, &cfg, 0, BREACH, NULL), quota_of(0.5));
	cfg.enabled = false;
	assert_int_equal(step(&st, &cfg, 1, BREACH, NULL), -2);
	assert_int_equal(st.n, 0);
}

/* A topology of n CPUs, one core each, on one node. */
static void topology(struct world *w, int n)
{
	for (int i = 0; i < n; i++)
		w->in.topo[i] = (struct pol_cpu){.cpu = i, .core = i};
	w->in.n_topo = (size_t)n;
}

/*
 * One tick of the confinement scenario: LS in window win at t, BE A (blamed,
 * idle already) and BE B on 4 CPUs; may says whether BE's CPUs are ours.
 * Checks BE A's and BE B's cpuset wish (NULL: none), BE A's quota (-1:
 * none) and BE A's rule (RULE_NONE: not checked).
 */
static void confine_tick(struct slo_state *st, const struct slo_config *cfg, double t,
			 enum window win, bool may, const char *cpus, double quota,
			 enum rule_id rule)
{
	struct action_list out = {0};
	const struct action *a, *b, *q;
	enum rule_id got_rule;
	struct world w;

	world(&w, t, win, 1.0, 0.5);
	if (win == NONE)
		w.units[0].cpu_used = 0; /* LS idle */
	topology(&w, 4);
	w.in.has_cpu_idle = true;
	w.units[1].idle = 1;
	w.units[2].idle = 1;
	wait(&w, BE_A, 5);
	action_list_clear(&out);
	assert_int_equal(slo_run(&w.in, cfg, CEILING_CPUS, may, st, &out), 0);
	a = find(&out, BE_A, ACT_CPUSET);
	b = find(&out, BE_B, ACT_CPUSET);
	q = find(&out, BE_A, ACT_CPU_QUOTA);
	got_rule = a ? a->rule : q ? q->rule : RULE_NONE;
	if (!cpus != !a || !cpus != !b ||
	    (cpus && (strcmp(a->cpus, cpus) || strcmp(b->cpus, cpus))))
		fail_msg("t=%g: cpusets %s / %s, want %s", t, a ? a->cpus : "none",
			 b ? b->cpus : "none", cpus ? cpus : "none");
	if ((q ? q->value : -2) != (quota < 0 ? -2 : quota_of(quota)))
		fail_msg("t=%g: quota %lld, want %g CPUs", t, q ? (long long)q->value : -2LL,
			 quota);
	if (rule && got_rule != rule)
		fail_msg("t=%g: rule %s, want %s", t, rule_name(got_rule), rule_name(rule));
	/* The step moves BE B too, unblamed: its cpuset says why. */
	if (a && a->rule == RULE_SLO_CONFINE) {
		assert_true(evidence(a, "be_cpuset_cpus") >= 1);
		assert_int_equal(b->rule, RULE_SLO_CONFINE);
	}
	action_list_free(&out);
}

/*
 * After cpu.idle, a breach confines every BE unit to cut_factor of BE's
 * CPUs (one step per 100 ms), down to one CPU, before any quota; slack
 * gives the quota back first, then a CPU per dwell while LS's use fits the
 * CPUs left to it, and lets go at all of them once LS is idle. With BE's
 * CPUs not ours (suppression's cpuset or split) the quota comes right
 * after cpu.idle.
 */
static void test_confine(void **state)
{
	struct slo_config cfg = config();
	struct slo_state st = {0};

	(void)state;
	cfg.grow_cpus = 1;
	confine_tick(&st, &cfg, 0, BREACH, true, "0-1", -1, RULE_SLO_CONFINE);
	confine_tick(&st, &cfg, 0.05, BREACH, true, "0-1", -1, RULE_SLO_HOLD);
	confine_tick(&st, &cfg, 0.2, BREACH, true, "0", -1, RULE_SLO_CONFINE);
	confine_tick(&st, &cfg, 0.4, BREACH, true, "0", 0.5, RULE_SLO_CUT);
	/* Slack from t=1: a growth step per 3 s dwell, the quota first. */
	confine_tick(&st, &cfg, 1, SLACK, true, "0", 0.5, RULE_SLO_HOLD);
	confine_tick(&st, &cfg, 4, SLACK, true, "0", 1.5, RULE_SLO_GROW);
	confine_tick(&st, &cfg, 7, SLACK, true, "0", -1, RULE_SLO_GROW); /* 2.5 >= the ceiling */
	confine_tick(&st, &cfg, 10, SLACK, true, "0-1", -1, RULE_SLO_GROW);
	confine_tick(&st, &cfg, 13, SLACK, true, "0-2", -1, RULE_SLO_GROW);
	/* LS's 0.5 CPUs would have none left */
	confine_tick(&st, &cfg, 16, SLACK, true, "0-2", -1, RULE_SLO_HOLD);
	confine_tick(&st, &cfg, 19, NONE, true, NULL, -1, RULE_NONE); /* LS idle: all 4, let go */
	slo_state_free(&st);

	confine_tick(&st, &cfg, 0, BREACH, false, NULL, 0.5, RULE_SLO_CUT);
	slo_state_free(&st);
}

/*
 * One tick of the displacement scenario on 4 CPUs: LS (window win, using
 * ls_used) handed over n of its 100 switch-ins to BE A without a wait, and
 * m to itself; BE A and BE B not idle. Checks both BE units' cpuset wish
 * (NULL: none) and BE A's rule (RULE_NONE: not checked), that no quota or cpu.idle goes out, and
 * the evidence.
 */
static void displaced_tick(struct slo_state *st, const struct slo_config *cfg, double t,
			   enum window win, double ls_used, uint64_t n, uint64_t m,
			   const char *cpus, enum rule_id rule)
{
	struct action_list out = {0};
	const struct action *a, *b;
	struct world w;

	world(&w, t, win, 1.0, 0.5);
	w.units[0].cpu_used = ls_used;
	topology(&w, 4);
	w.in.has_cpu_idle = true;
	w.units[1].idle = 0;
	w.units[2].idle = 0;
	if (m)
		hand_over(&w, LS_ID, m);
	if (n)
		hand_over(&w, BE_A, n);
	action_list_clear(&out);
	assert_int_equal(slo_run(&w.in, cfg, CEILING_CPUS, true, st, &out), 0);
	a = find(&out, BE_A, ACT_CPUSET);
	b = find(&out, BE_B, ACT_CPUSET);
	if (!cpus != !a || !cpus != !b ||
	    (cpus && (strcmp(a->cpus, cpus) || strcmp(b->cpus, cpus))))
		fail_msg("t=%g: cpusets %s / %s, want %s", t, a ? a->cpus : "none",
			 b ? b->cpus : "none", cpus ? cpus : "none");
	assert_null(find(&out, BE_A, ACT_CPU_QUOTA));
	assert_null(find(&out, BE_A, ACT_CPU_IDLE));
	assert_null(find(&out, BE_B, ACT_CPU_IDLE));
	if (a && rule && a->rule != rule)
		fail_msg("t=%g: rule %s, want %s", t, rule_name(a->rule), rule_name(rule));
	if (a && a->rule == RULE_SLO_CONFINE) {
		assert_true(evidence(a, "ls_displaced_share") == (double)n / 100);
		assert_int_equal(a->related_id, LS_ID);
		assert_int_equal(b->rule, RULE_SLO_CONFINE);
	}
	action_list_free(&out);
}

/*
 * An LS unit with slack whose wake-ups took the CPU from BE at least
 * displaced_share of the time confines BE, a step per 100 ms down to one
 * CPU, and nothing more (no quota, no cpu.idle). Under the share, or with
 * the hand-overs to itself, nothing happens; off (0), nothing either. The
 * CPU goes back only while LS's use fits the CPUs left, at slack_ratio.
 */
static void test_displaced(void **state)
{
	struct slo_config cfg = config();
	struct slo_state st = {0};
	struct world w4, w1; /* 4 CPUs to confine BE on; 1, where there is nothing to confine */

	(void)state;
	world(&w4, 0, SLACK, 1, 0.5);
	topology(&w4, 4);
	world(&w1, 0, SLACK, 1, 0.5);
	topology(&w1, 1);
	displaced_tick(&st, &cfg, 0, SLACK, 1.5, 20, 0, NULL, RULE_NONE);
	displaced_tick(&st, &cfg, 0.5, SLACK, 1.5, 0, 60, NULL, RULE_NONE); /* its own */
	cfg.displaced_share = 0;
	assert_false(slo_displacement_acts(&w4.in, &cfg, &st, true));
	displaced_tick(&st, &cfg, 0.6, SLACK, 1.5, 60, 0, NULL, RULE_NONE);
	cfg.displaced_share = 0.25;
	/* The fast path looks for displacement while a step is left: not once at one CPU. */
	assert_true(slo_displacement_acts(&w4.in, &cfg, &st, true));
	assert_false(slo_displacement_acts(&w4.in, &cfg, &st, false));
	assert_false(slo_displacement_acts(&w1.in, &cfg, &st, true));
	displaced_tick(&st, &cfg, 1, SLACK, 1.5, 60, 0, "0-1", RULE_SLO_CONFINE);
	displaced_tick(&st, &cfg, 1.05, SLACK, 1.5, 60, 0, "0-1", RULE_SLO_HOLD);
	assert_true(slo_displacement_acts(&w4.in, &cfg, &st, true));
	displaced_tick(&st, &cfg, 1.2, SLACK, 1.5, 40, 0, "0", RULE_SLO_CONFINE);
	assert_false(slo_displacement_acts(&w4.in, &cfg, &st, true));
	displaced_tick(&st, &cfg, 1.4, HOLD, 1.5, 40, 0, "0", RULE_NONE);
	/*
	 * Displaced no more from t=2. At 1 CPU of 4 BE gets one back (LS's 1.5
	 * fit 2 x 0.8), not a second (1 x 0.8).
	 */
	displaced_tick(&st, &cfg, 2, SLACK, 1.5, 5, 0, "0", RULE_SLO_HOLD);
	displaced_tick(&st, &cfg, 5, SLACK, 1.5, 5, 0, "0-1", RULE_SLO_GROW);
	assert_true(slo_displacement_acts(&w4.in, &cfg, &st, true)); /* grown back: armed again */
	displaced_tick(&st, &cfg, 8, SLACK, 1.5, 5, 0, "0-1", RULE_SLO_HOLD);
	displaced_tick(&st, &cfg, 11, SLACK, 0.7, 5, 0, "0-2", RULE_SLO_GROW);
	displaced_tick(&st, &cfg, 14, NONE, 0, 0, 0, NULL, RULE_NONE); /* LS idle: let go */
	slo_state_free(&st);
}

/*
 * One tick on 4 CPUs, from a fresh state: LS in window win with count
 * switch-ins in all, n of them handed over to BE A. Returns BE A's cpuset
 * wish (NULL: none), after checking that no quota or cpu.idle went out
 * and, on a confinement, its evidence.
 */
static const char *few_tick(const struct slo_config *cfg, enum window win, uint64_t count,
			    uint64_t n, char *cpus, size_t size)
{
	struct action_list out = {0};
	struct slo_state st = {0};
	const struct action *a;
	struct world w;

	world(&w, 0, win, 1.0, 0.5);
	w.units[0].rq.count = count;
	w.units[0].rq.slots[win] = count;
	topology(&w, 4);
	w.in.has_cpu_idle = true;
	w.units[1].idle = 0;
	w.units[2].idle = 0;
	hand_over(&w, BE_A, n);
	run(&w, cfg, &st, &out);
	assert_null(find(&out, BE_A, ACT_CPU_QUOTA));
	assert_null(find(&out, BE_A, ACT_CPU_IDLE));
	a = find(&out, BE_A, ACT_CPUSET);
	if (a) {
		assert_int_equal(a->rule, RULE_SLO_CONFINE);
		assert_true(evidence(a, "ls_displaced_share") == (double)n / (double)count);
		snprintf(cpus, size, "%s", a->cpus);
	}
	action_list_free(&out);
	slo_state_free(&st);
	return a ? cpus : NULL;
}

/*
 * A displaced share counts from SLO_DISPLACED_MIN switch-ins (the probe's
 * alert count), under min_waits: the tick 10 ms after an alert judges an LS
 * unit that switches in 1,000 times a second. Such a window's p99 says
 * nothing: waits over the target cut nothing (no cpu.idle). A min_waits
 * under SLO_DISPLACED_MIN lowers both.
 */
static void test_displaced_few_switch_ins(void **state)
{
	struct slo_config cfg = config();
	char cpus[sizeof((struct action){0}.cpus)];

	(void)state;
	assert_true(SLO_DISPLACED_MIN < cfg.min_waits);
	assert_string_equal(few_tick(&cfg, BREACH, SLO_DISPLACED_MIN, SLO_DISPLACED_MIN / 2, cpus,
				     sizeof(cpus)),
			    "0-1");
	assert_string_equal(few_tick(&cfg, BREACH, 12, 3, cpus, sizeof(cpus)), "0-1");
	assert_null(few_tick(&cfg, BREACH, 12, 2, cpus, sizeof(cpus))); /* under the share */
	assert_null(few_tick(&cfg, BREACH, SLO_DISPLACED_MIN - 1, SLO_DISPLACED_MIN - 1, cpus,
			     sizeof(cpus)));
	cfg.min_waits = 4;
	assert_string_equal(few_tick(&cfg, SLACK, 4, 4, cpus, sizeof(cpus)), "0-1");
	assert_null(few_tick(&cfg, BREACH, 3, 3, cpus, sizeof(cpus)));
}

/*
 * A breach and a displacement on one tick: cpu.idle for the breach, and
 * the confinement the displacement asks for says slo.confine.
 */
static void test_breach_and_displaced(void **state)
{
	struct slo_config cfg = config();
	struct slo_state st = {0};
	struct action_list out = {0};
	const struct action *idle, *cpus;
	struct world w;

	(void)state;
	world(&w, 0, BREACH, 1.0, 0.5);
	topology(&w, 4);
	w.in.has_cpu_idle = true;
	w.units[1].idle = 0;
	w.units[2].idle = 0;
	w.blame[w.in.n_blame++] = (struct pol_blame){LS_ID, BE_A, 5000000, 60};
	run(&w, &cfg, &st, &out);
	idle = find(&out, BE_A, ACT_CPU_IDLE);
	cpus = find(&out, BE_A, ACT_CPUSET);
	assert_non_null(idle);
	assert_non_null(cpus);
	assert_int_equal(idle->rule, RULE_SLO_CUT_IDLE);
	assert_int_equal(cpus->rule, RULE_SLO_CONFINE);
	assert_string_equal(cpus->cpus, "0-1");
	action_list_free(&out);
	slo_state_free(&st);
}

#define PINNED_ID 40

/*
 * One tick of the pinned scenario on 8 CPUs: a Guaranteed pod pinned to
 * excl (busy there), LS in window win, BE A blamed (idle already), BE B.
 * Returns BE A's cpuset wish ("" none) in cpus; checks that neither BE
 * unit's list names an exclusive CPU.
 */
static void pinned_tick(struct slo_state *st, const struct slo_config *cfg, double t,
			enum window win, const char *excl, char *cpus)
{
	struct action_list out = {0};
	const struct action *a, *b;
	struct world w;
	struct pol_unit *p;
	bool on[POL_CPUS_MAX], ex[POL_CPUS_MAX];

	world(&w, t, win, 1.0, 0.5);
	p = unit(&w, PINNED_ID, QOS_LSR, 2);
	p->pinned_cpus = 2;
	topology(&w, 8);
	snprintf(w.in.exclusive_cpus, sizeof(w.in.exclusive_cpus), "%s", excl);
	w.in.has_cpu_idle = true;
	w.units[1].idle = 1;
	w.units[2].idle = 1;
	wait(&w, BE_A, 5);
	run(&w, cfg, st, &out);
	a = find(&out, BE_A, ACT_CPUSET);
	b = find(&out, BE_B, ACT_CPUSET);
	assert_true(!a == !b);
	snprintf(cpus, POL_CPULIST_MAX, "%s", a ? a->cpus : "");
	assert_int_equal(cpu_list_parse(excl, ex, POL_CPUS_MAX), 0);
	for (int k = 0; a && k < 2; k++) {
		const struct action *x = k ? b : a;

		assert_string_equal(x->cpus, a->cpus);
		assert_int_equal(cpu_list_parse(x->cpus, on, POL_CPUS_MAX), 0);
		for (int c = 0; c < POL_CPUS_MAX; c++)
			if (on[c] && ex[c])
				fail_msg("t=%g: BE on %s, CPU %d is pinned (%s)", t, x->cpus, c,
					 excl);
	}
	action_list_free(&out);
}

/*
 * SLO confinement with a pod pinned to CPUs 2-3 of 8: BE is confined
 * within the other six (cut_factor of six, then one), grows back over them
 * only (the pinned pod's own use is not LS's on the shared CPUs: it does
 * not hold the growth back), and a CPU pinned while BE is confined leaves
 * BE's set at once, another of the pool taking its place.
 */
static void test_confine_pinned(void **state)
{
	static const struct {
		double t;
		enum window win;
		const char *excl, *want;
	} ticks[] =
		{
			{0, BREACH, "2-3", "0-1,4"}, /* 3 of the 6 shared */
			{0.2, BREACH, "2-3", "0"},
			{1, SLACK, "2-3", "0"},
			{4, SLACK, "2-3", "0-1"},
			{7, SLACK, "2-3", "0-1,4"},
			{7.5, SLACK, "1-3", "0,4-5"}, /* CPU 1 pinned meanwhile */
			{10, SLACK, "1-3", "0,4-6"},
			{13, SLACK, "1-3", "0,4-6"}, /* the last one waits for LS to go idle */
		};
	struct slo_config cfg = config();
	struct slo_state st = {0};
	char cpus[POL_CPULIST_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
		pinned_tick(&st, &cfg, ticks[i].t, ticks[i].win, ticks[i].excl, cpus);
		if (strcmp(cpus, ticks[i].want))
			fail_msg("t=%g: BE on \"%s\", want \"%s\"", ticks[i].t, cpus,
				 ticks[i].want);
	}
	slo_state_free(&st);
}

/*
 * A pinned LS unit over its target whose waits blame names no BE unit for
 * (the system's threads on its CPUs): BE cannot run there, so nothing is
 * cut. The same unit unpinned cuts every running BE unit.
 */
static void test_pinned_victim(void **state)
{
	for (int pinned = 0; pinned < 2; pinned++) {
		struct slo_config cfg = config();
		struct slo_state st = {0};
		struct action_list out = {0};
		struct world w;

		(void)state;
		world(&w, 0, BREACH, 1.0, 0.5);
		w.in.has_cpu_idle = true;
		w.units[1].idle = 0;
		w.units[2].idle = 0;
		if (pinned) {
			w.units[0].pinned_cpus = 1;
			snprintf(w.in.exclusive_cpus, sizeof(w.in.exclusive_cpus), "1");
		}
		wait(&w, POL_CULPRIT_OTHER, 5);
		run(&w, &cfg, &st, &out);
		assert_int_equal(find(&out, BE_A, ACT_CPU_IDLE) != NULL, !pinned);
		assert_int_equal(find(&out, BE_B, ACT_CPU_IDLE) != NULL, !pinned);
		action_list_free(&out);
		slo_state_free(&st);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_breach_cuts_blamed),
		cmocka_unit_test(test_idle_first),
		cmocka_unit_test(test_cut_waits_a_period),
		cmocka_unit_test(test_grow_and_hold),
		cmocka_unit_test(test_grow_lapses_at_ceiling),
		cmocka_unit_test(test_floor_reports_once),
		cmocka_unit_test(test_busy_ls_alone),
		cmocka_unit_test(test_steady_no_oscillation),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_annotation_floor_cuts_nothing),
		cmocka_unit_test(test_disabled),
		cmocka_unit_test(test_confine),
		cmocka_unit_test(test_displaced),
		cmocka_unit_test(test_displaced_few_switch_ins),
		cmocka_unit_test(test_breach_and_displaced),
		cmocka_unit_test(test_confine_pinned),
		cmocka_unit_test(test_pinned_victim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
