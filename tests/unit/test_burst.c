// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CPU burst: quota scaling, the burst allowance, their write order, the budget, the state. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "policy/burst.h"
#include "evidence.h"

#define MAX_UNITS 8
#define MAX_TICKS 10
#define NS	  1000000000ULL

struct world {
	struct pol_input in;
	struct pol_unit units[MAX_UNITS];
};

/* An idle 10-CPU node, at ts 6000 s (a multiple of the 60 s budget period). */
static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	w->in.ts_ns = 6000 * NS;
	w->in.interval_s = 1;
	w->in.cpus = 10;
	w->in.units = w->units;
}

/* Units are added in id order (pol_input is sorted by id); quota at the limit, 100 ms period. */
static struct pol_unit *world_unit(struct world *w, uint64_t id, enum qos_class cls, double limit)
{
	struct pol_unit *u = &w->units[w->in.n_units++];

	u->id = id;
	snprintf(u->path, sizeof(u->path), "u%llu", (unsigned long long)id);
	u->cls = cls;
	u->limit_cpus = limit;
	u->period_us = 100000;
	u->quota_us = limit > 0 ? llround(limit * 100000) : -1;
	u->burst_us = 0;
	return u;
}

static void throttle(struct pol_unit *u, uint64_t periods, uint64_t throttled)
{
	u->nr_periods = periods;
	u->nr_throttled = throttled;
}

static struct burst_config config(enum burst_policy p)
{
	return (struct burst_config){
		.policy = p,
		.burst_percent = 1000,
		.scale_up = 1.2,
		.scale_down = 0.8,
		.max_percent = 300,
		.shared_pool_busy = 0.5,
		.throttled_min = 0,
		.budget_cpu_s = 0,
		.budget_period_s = 60,
	};
}

static bool has_evidence(const struct action *a, const char *name)
{
	for (size_t i = 0; i < a->n_ev; i++)
		if (!strcmp(a->ev[i].name, name))
			return true;
	return false;
}

/* Runs one tick and checks what every tick must hold: only LS units with a limit are touched. */
static void run(const struct world *w, const struct burst_config *cfg, struct burst_state *st,
		struct action_list *out)
{
	action_list_clear(out);
	assert_int_equal(burst_run(&w->in, cfg, st, out), 0);
	for (size_t i = 0; i < out->n; i++) {
		const struct pol_unit *u = pol_input_find(&w->in, out->v[i].id);

		assert_non_null(u);
		assert_true(qos_is_ls(u->cls));
		assert_true(u->limit_cpus > 0);
	}
}

static const struct action *find_kind(const struct action_list *out, enum act_kind k)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].kind == k)
			return &out->v[i];
	return NULL;
}

/* The quota of one LS unit (limit 1 CPU) over ticks, quota policy only. */
struct scale_case {
	const char *name;
	double throttled_min;
	struct {
		double busy;
		uint64_t periods, throttled;
		int64_t quota; /* expected */
		enum rule_id rule;
	} tick[MAX_TICKS];
	int n;
};

/* UP, DOWN: an idle node, throttled or not; BUSY, HOLD: a loaded node, throttled. */
/* clang-format off */
#define UP(q)	   {0.1, 10, 10, q, RULE_BURST_SCALE_UP}
#define DOWN(q)	   {0.1, 10, 0, q, RULE_BURST_SCALE_DOWN}
#define BUSY(b, q) {b, 10, 10, q, RULE_BURST_SCALE_DOWN}
#define HOLD(b, q) {b, 10, 10, q, RULE_BURST_HOLD}
/* clang-format on */

static const struct scale_case scale_cases[] = {
	{"scale up while throttled, capped at 300%",
	 0,
	 {UP(120000), UP(144000), UP(172800), UP(207360), UP(248832), UP(298598), UP(300000),
	  UP(300000)},
	 8},
	{"scale down to the limit, never below",
	 0,
	 {UP(120000), UP(144000), DOWN(115200), DOWN(100000), DOWN(100000)},
	 5},
	{"hold just under the busy threshold",
	 0,
	 {UP(120000), HOLD(0.45, 120000), HOLD(0.499, 120000), UP(144000)},
	 4},
	{"no scale-up when the node is busy",
	 0,
	 {BUSY(0.5, 100000), UP(120000), UP(144000), BUSY(0.7, 115200), BUSY(1.5, 100000)},
	 5},
	{"throttled only above throttled_min",
	 0.2,
	 {{0.1, 10, 2, 100000, RULE_BURST_SCALE_DOWN}, {0.1, 10, 3, 120000, RULE_BURST_SCALE_UP}},
	 2},
	{"no periods is not throttled", 0, {{0.1, 0, 0, 100000, RULE_BURST_SCALE_DOWN}}, 1},
};

static void test_scale(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(scale_cases) / sizeof(scale_cases[0]); c++) {
		const struct scale_case *tc = &scale_cases[c];
		struct burst_config cfg = config(BURST_CFS_QUOTA_ONLY);
		struct burst_state st = {0};
		struct action_list out = {0};
		int64_t prev = 100000;

		print_message("%s\n", tc->name);
		cfg.throttled_min = tc->throttled_min;
		for (int t = 0; t < tc->n; t++) {
			struct world w;
			const struct action *a;

			world_init(&w);
			w.in.node_cpu_used = tc->tick[t].busy * w.in.cpus;
			throttle(world_unit(&w, 10, QOS_LS, 1), tc->tick[t].periods,
				 tc->tick[t].throttled);
			run(&w, &cfg, &st, &out);
			assert_int_equal(out.n, 1);
			a = &out.v[0];
			assert_int_equal(a->kind, ACT_CPU_QUOTA);
			assert_int_equal(a->value, tc->tick[t].quota);
			assert_int_equal(a->rule, tc->tick[t].rule);
			assert_float_equal(evidence(a, "limit_cpus"), 1, 1e-9);
			assert_float_equal(evidence(a, "quota_cpus_before"), prev / 1e5, 1e-9);
			assert_float_equal(evidence(a, "quota_cpus_after"), a->value / 1e5, 1e-9);
			assert_float_equal(evidence(a, "nr_periods"), tc->tick[t].periods, 0);
			assert_float_equal(evidence(a, "nr_throttled"), tc->tick[t].throttled, 0);
			assert_float_equal(evidence(a, "pool_busy_ratio"), tc->tick[t].busy, 1e-9);
			assert_false(has_evidence(a, "budget_used_cpu_s"));
			prev = a->value;
		}
		burst_state_free(&st);
		action_list_free(&out);
	}
}

/*
 * A co-located node: BE soaks up what LS leaves, so the whole node is busy,
 * yet the shared pool without BE is not: a throttled LS unit scales up. A
 * pinned pod's use is on its own CPUs and is not the pool's either.
 */
static void test_be_is_not_busy(void **state)
{
	struct burst_config cfg = config(BURST_CFS_QUOTA_ONLY);
	struct burst_state st = {0};
	struct action_list out = {0};
	struct world w;
	struct pol_unit *ls, *be, *pinned;
	const struct action *a;

	(void)state;
	world_init(&w);
	ls = world_unit(&w, 10, QOS_LS, 1);
	throttle(ls, 10, 10);
	ls->cpu_used = 1;
	pinned = world_unit(&w, 20, QOS_LSE, 0);
	pinned->cpu_used = 2;
	pinned->pinned_cpus = 2;
	be = world_unit(&w, 30, QOS_BE, 0);
	be->cpu_used = 6.5;
	w.in.node_cpu_used = 10;
	run(&w, &cfg, &st, &out);
	assert_int_equal(out.n, 1);
	a = &out.v[0];
	assert_int_equal(a->rule, RULE_BURST_SCALE_UP);
	assert_int_equal(a->value, 120000);
	/* LS 1 CPU and 0.5 CPU of system use on 10 CPUs. */
	assert_float_equal(evidence(a, "pool_busy_ratio"), 0.15, 1e-9);
	burst_state_free(&st);
	action_list_free(&out);
}

/* Each policy emits only its kinds. */
static void test_policies(void **state)
{
	static const struct {
		enum burst_policy policy;
		size_t quotas, bursts;
	} cases[] = {
		{BURST_NONE, 0, 0},
		{BURST_CPU_BURST_ONLY, 0, 1},
		{BURST_CFS_QUOTA_ONLY, 1, 0},
		{BURST_AUTO, 1, 1},
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct burst_config cfg = config(cases[c].policy);
		struct burst_state st = {0};
		struct action_list out = {0};
		struct world w;
		size_t quotas = 0, bursts = 0;

		world_init(&w);
		throttle(world_unit(&w, 10, QOS_LS, 1), 10, 5);
		run(&w, &cfg, &st, &out);
		for (size_t i = 0; i < out.n; i++) {
			quotas += out.v[i].kind == ACT_CPU_QUOTA;
			bursts += out.v[i].kind == ACT_CPU_BURST;
		}
		assert_int_equal(quotas, cases[c].quotas);
		assert_int_equal(bursts, cases[c].bursts);
		assert_int_equal(out.n, quotas + bursts);
		assert_int_equal(st.n, cases[c].policy == BURST_NONE ? 0 : 1);
		burst_state_free(&st);
		action_list_free(&out);
	}
}

/*
 * A kernel that applies the actions in list order and checks burst <= quota
 * at every write, as tg_set_cfs_bandwidth() does (v1 and v2): the quota goes
 * up and down, with a burst as large as the quota (1000%) or smaller (50%).
 */
static void test_burst_order(void **state)
{
	static const struct {
		double busy;
		uint64_t throttled;
		bool down;
	} ticks[] = {{0.1, 10, false}, {0.1, 10, false}, {0.1, 0, true},
		     {0.6, 10, true},  {0.1, 10, false}, {0.46, 10, false}};
	static const double percents[] = {1000, 50};

	(void)state;
	for (size_t p = 0; p < 2; p++) {
		struct burst_config cfg = config(BURST_AUTO);
		struct burst_state st = {0};
		struct action_list out = {0};
		int64_t quota = 100000, burst = 0; /* the fake kernel */

		cfg.burst_percent = percents[p];
		for (size_t t = 0; t < sizeof(ticks) / sizeof(ticks[0]); t++) {
			struct world w;
			struct pol_unit *u;

			world_init(&w);
			w.in.node_cpu_used = ticks[t].busy * w.in.cpus;
			u = world_unit(&w, 10, QOS_LS, 1);
			throttle(u, 10, ticks[t].throttled);
			u->quota_us = quota;
			u->burst_us = burst;
			run(&w, &cfg, &st, &out);
			assert_int_equal(out.n, 2);
			assert_int_equal(out.v[0].kind,
					 ticks[t].down ? ACT_CPU_BURST : ACT_CPU_QUOTA);
			for (size_t i = 0; i < out.n; i++) {
				if (out.v[i].kind == ACT_CPU_QUOTA)
					quota = out.v[i].value;
				else
					burst = out.v[i].value;
				assert_true(burst <= quota);
			}
			assert_int_equal(burst, fmin(quota, 1e5 * percents[p] / 100));
			assert_int_equal(find_kind(&out, ACT_CPU_BURST)->rule,
					 RULE_BURST_CPU_BURST);
		}
		burst_state_free(&st);
		action_list_free(&out);
	}
}

/* Burst only: the quota stays the owner's, and the burst stays within it. */
static void test_burst_only_within_quota(void **state)
{
	static const struct {
		int64_t quota_us;
		double percent;
		int64_t burst; /* expected */
	} cases[] = {
		{100000, 1000, 100000}, /* the owner's quota */
		{100000, 50, 50000},	/* 50% of the limit */
		{250000, 200, 200000},	/* quota above the limit: 200% of the limit fits */
		{-1, 1000, 100000},	/* unlimited: no larger than the limit */
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct burst_config cfg = config(BURST_CPU_BURST_ONLY);
		struct burst_state st = {0};
		struct action_list out = {0};
		struct world w;

		cfg.burst_percent = cases[c].percent;
		world_init(&w);
		world_unit(&w, 10, QOS_LS, 1)->quota_us = cases[c].quota_us;
		run(&w, &cfg, &st, &out);
		assert_int_equal(out.n, 1);
		assert_int_equal(out.v[0].kind, ACT_CPU_BURST);
		assert_int_equal(out.v[0].value, cases[c].burst);
		burst_state_free(&st);
		action_list_free(&out);
	}
}

/*
 * Budget 1 CPU-second per 60 s; the unit uses 1.5 CPUs on a limit of 1, so
 * 0.5 CPU-s a tick: spent on the second tick, back at the next period.
 */
static void test_budget(void **state)
{
	static const struct {
		uint64_t at_s; /* since the period's start */
		int64_t quota;
		enum rule_id rule;
		double used;
	} ticks[] = {
		{0, 120000, RULE_BURST_SCALE_UP, 0.5},
		{1, 100000, RULE_BURST_BUDGET_SPENT, 1.0},
		{2, 100000, RULE_BURST_BUDGET_SPENT, 1.5},
		{59, 100000, RULE_BURST_BUDGET_SPENT, 2.0},
		{60, 120000, RULE_BURST_SCALE_UP, 0.5},
		{61, 100000, RULE_BURST_BUDGET_SPENT, 1.0},
	};
	struct burst_config cfg = config(BURST_CFS_QUOTA_ONLY);
	struct burst_state st = {0};
	struct action_list out = {0};

	(void)state;
	cfg.budget_cpu_s = 1;
	for (size_t t = 0; t < sizeof(ticks) / sizeof(ticks[0]); t++) {
		struct world w;
		struct pol_unit *u;

		world_init(&w);
		w.in.ts_ns += ticks[t].at_s * NS;
		u = world_unit(&w, 10, QOS_LS, 1);
		u->cpu_used = 1.5;
		throttle(u, 10, 10);
		run(&w, &cfg, &st, &out);
		assert_int_equal(out.n, 1);
		assert_int_equal(out.v[0].value, ticks[t].quota);
		assert_int_equal(out.v[0].rule, ticks[t].rule);
		assert_float_equal(evidence(&out.v[0], "budget_used_cpu_s"), ticks[t].used, 1e-9);
	}
	burst_state_free(&st);
	action_list_free(&out);
}

/* Only LS, LSR and LSE units with a limit; never BE, SYSTEM or unmanaged ones. */
static void test_governed_units(void **state)
{
	struct burst_config cfg = config(BURST_AUTO);
	struct burst_state st = {0};
	struct action_list out = {0};
	struct world w;

	(void)state;
	world_init(&w);
	world_unit(&w, 1, QOS_LSE, 2);
	world_unit(&w, 2, QOS_LSR, 1);
	world_unit(&w, 3, QOS_LS, -1); /* no limit */
	world_unit(&w, 4, QOS_LS, 0);
	world_unit(&w, 5, QOS_BE, 1);
	world_unit(&w, 6, QOS_SYSTEM, 1);
	world_unit(&w, 7, QOS_UNMANAGED, 1);
	world_unit(&w, 8, QOS_LS, 0.5);
	run(&w, &cfg, &st, &out);
	assert_int_equal(out.n, 6);
	assert_int_equal(out.v[0].id, 1);
	assert_int_equal(out.v[0].value, 200000); /* LSE's quota at its limit */
	assert_int_equal(out.v[2].id, 2);
	assert_int_equal(out.v[4].id, 8);
	assert_int_equal(out.v[4].value, 50000);
	assert_int_equal(st.n, 3);
	burst_state_free(&st);
	action_list_free(&out);
}

/* A unit that leaves the input (or loses its limit) is forgotten and starts over at its limit. */
static void test_state_dropped(void **state)
{
	static const struct {
		bool a_present;
		double a_limit;
		int64_t a_quota; /* expected; -1 none */
		size_t n_state;
	} ticks[] = {
		{true, 1, 120000, 2}, {true, 1, 144000, 2}, {false, 1, -1, 1},
		{true, 1, 120000, 2}, {true, -1, -1, 1},    {true, 1, 120000, 2},
	};
	struct burst_config cfg = config(BURST_CFS_QUOTA_ONLY);
	struct burst_state st = {0};
	struct action_list out = {0};

	(void)state;
	for (size_t t = 0; t < sizeof(ticks) / sizeof(ticks[0]); t++) {
		struct world w;
		const struct action *a = NULL;

		world_init(&w);
		if (ticks[t].a_present)
			throttle(world_unit(&w, 10, QOS_LS, ticks[t].a_limit), 10, 10);
		throttle(world_unit(&w, 20, QOS_LS, 1), 10, 10);
		run(&w, &cfg, &st, &out);
		for (size_t i = 0; i < out.n; i++)
			if (out.v[i].id == 10)
				a = &out.v[i];
		if (ticks[t].a_quota < 0) {
			assert_null(a);
		} else {
			assert_non_null(a);
			assert_int_equal(a->value, ticks[t].a_quota);
		}
		assert_int_equal(st.n, ticks[t].n_state);
		assert_int_equal(st.v[st.n - 1].id, 20);
	}
	/* Unit 20 was there all along: its quota kept growing up to the cap. */
	assert_int_equal(out.v[out.n - 1].value, 298598);
	cfg.policy = BURST_NONE;
	run(&(struct world){0}, &cfg, &st, &out);
	assert_int_equal(st.n, 0);
	assert_null(st.v);
	action_list_free(&out);
}

/*
 * Fast-path ticks of 0.1 s add up to one 1 s window: one throttled period
 * in ten raises the quota once, at the end, and the ticks before hold.
 */
static void test_short_ticks_make_one_window(void **state)
{
	struct burst_config cfg = config(BURST_CFS_QUOTA_ONLY);
	struct burst_state st = {0};
	struct action_list out = {0};

	(void)state;
	for (int t = 0; t < 10; t++) {
		struct world w;

		world_init(&w);
		w.in.interval_s = 0.1;
		throttle(world_unit(&w, 10, QOS_LS, 1), 1, t == 3);
		run(&w, &cfg, &st, &out);
		assert_int_equal(out.n, 1);
		assert_int_equal(out.v[0].rule, t < 9 ? RULE_BURST_HOLD : RULE_BURST_SCALE_UP);
		assert_int_equal(out.v[0].value, t < 9 ? 100000 : 120000);
	}
	assert_float_equal(evidence(&out.v[0], "window_s"), 1, 1e-9);
	assert_float_equal(evidence(&out.v[0], "nr_periods"), 10, 0);
	assert_float_equal(evidence(&out.v[0], "nr_throttled"), 1, 0);
	burst_state_free(&st);
	action_list_free(&out);
}

/* An unthrottled unit keeps its raised quota while its use would not fit the smaller one. */
static void test_shrink_only_when_use_fits(void **state)
{
	static const struct {
		double used;
		int64_t quota;
		enum rule_id rule;
	} ticks[] = {
		{0.5, 60000, RULE_BURST_SCALE_UP}, /* throttled (limit 0.5) */
		{0.5, 72000, RULE_BURST_SCALE_UP}, /* throttled */
		{0.6, 72000, RULE_BURST_HOLD},	   /* 0.6 > 0.8 x 0.72: would be throttled again */
		{0.5, 57600, RULE_BURST_SCALE_DOWN}, /* 0.5 < 0.576 */
		{0.2, 50000, RULE_BURST_SCALE_DOWN}, /* never below the limit */
	};
	struct burst_config cfg = config(BURST_CFS_QUOTA_ONLY);
	struct burst_state st = {0};
	struct action_list out = {0};

	(void)state;
	for (size_t t = 0; t < sizeof(ticks) / sizeof(ticks[0]); t++) {
		struct world w;
		struct pol_unit *u;

		world_init(&w);
		u = world_unit(&w, 10, QOS_LS, 0.5);
		throttle(u, 10, t < 2 ? 5 : 0);
		u->cpu_used = ticks[t].used;
		run(&w, &cfg, &st, &out);
		assert_int_equal(out.v[0].value, ticks[t].quota);
		assert_int_equal(out.v[0].rule, ticks[t].rule);
		assert_float_equal(evidence(&out.v[0], "cpu_used_cpus"), ticks[t].used, 1e-9);
	}
	burst_state_free(&st);
	action_list_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_be_is_not_busy),
		cmocka_unit_test(test_policies),
		cmocka_unit_test(test_burst_order),
		cmocka_unit_test(test_burst_only_within_quota),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_governed_units),
		cmocka_unit_test(test_state_dropped),
		cmocka_unit_test(test_short_ticks_make_one_window),
		cmocka_unit_test(test_shrink_only_when_use_fits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
