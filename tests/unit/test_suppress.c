// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * BE suppression: the allowance and its rate limit, the quota split, the
 * cpuset choice, the split of whole CPUs between BE and LS units.
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

#include "policy/suppress.h"
#include "evidence.h"

#define MAX_UNITS 8
#define MAX_TICKS 8

/* One tick's input: units are added in id order (pol_input is sorted by id). */
struct world {
	struct pol_input in;
	struct pol_unit units[MAX_UNITS];
};

static void world_init(struct world *w, double cpus)
{
	memset(w, 0, sizeof(*w));
	w->in.cpus = cpus;
	w->in.units = w->units;
	w->in.interval_s = 1;
}

static struct pol_unit *world_unit(struct world *w, enum qos_class cls, double used, double request)
{
	struct pol_unit *u = &w->units[w->in.n_units++];

	u->id = w->in.n_units * 10;
	snprintf(u->path, sizeof(u->path), "u%llu", (unsigned long long)u->id);
	u->cls = cls;
	u->cpu_used = used;
	u->request_cpus = request;
	u->period_us = 100000;
	u->quota_us = -1;
	u->limit_cpus = -1;
	w->in.node_cpu_used += used;
	return u;
}

static struct suppress_config config(void)
{
	return (struct suppress_config){
		.enabled = true,
		.policy = SUPPRESS_CFS_QUOTA,
		.threshold = 0.65,
		.min_cpus = 2,
		.max_growth = 0.10,
		.min_change = 0.01,
	};
}

/* Runs one tick and checks what every tick must hold: only BE units are touched. */
static int run(const struct world *w, const struct suppress_config *cfg, struct suppress_state *st,
	       struct action_list *out)
{
	int err;

	action_list_clear(out);
	err = suppress_run(&w->in, cfg, NULL, st, out);
	for (size_t i = 0; i < out->n; i++) {
		const struct pol_unit *u = pol_input_find(&w->in, out->v[i].id);

		assert_non_null(u);
		assert_int_equal(u->cls, QOS_BE);
		assert_int_equal(out->v[i].cls, QOS_BE);
	}
	return err;
}

/*
 * The allowance over a few ticks. One unit of every non-BE class, one BE
 * unit (request 1, period 100 ms, so its quota is the allowance x 100000).
 */
struct allow_case {
	const char *name;
	double cpus, min_cpus, min_change; /* 0 min_change: the default */
	struct {
		double ls_used, outside_used; /* outside_used: use outside every unit */
		double raw, allowed;	      /* expected */
	} tick[MAX_TICKS];
	int n;
	bool idle; /* the kernel has cpu.idle and suppress.cpu_idle is on */
};

static const struct allow_case allow_cases[] = {
	{"first tick takes the allowance as is", 10, 2, 0, {{3, 0, 3.5, 3.5}}, 1, false},
	{"growth is capped, relaxing over ticks",
	 10,
	 2,
	 0,
	 {{6, 0, 0.5, 2}, {1, 0, 5.5, 3}, {1, 0, 5.5, 4}, {1, 0, 5.5, 5}, {1, 0, 5.5, 5.5}},
	 5,
	 false},
	{"shrink is immediate",
	 10,
	 2,
	 0,
	 {{1, 0, 5.5, 5.5}, {5, 0, 1.5, 2}, {4, 0, 2.5, 2.5}},
	 3,
	 false},
	{"floor of min_cpus", 10, 2, 0, {{9, 0, -2.5, 2}}, 1, false},
	{"floor above capacity is capacity (BE idle too)",
	 1.5,
	 2,
	 0,
	 {{1.4, 0, 0.975 - 1.4, 1.5}},
	 1,
	 true},
	/*
	 * Without cpu.idle the quota is BE's only brake: a floor of the whole
	 * node would release it (min_cpus 2 on 2 CPUs, the 5.10 fallback).
	 */
	{"no cpu.idle: the floor is at most half the capacity",
	 2,
	 2,
	 0,
	 {{0.6, 0, 0.7, 1}},
	 1,
	 false},
	{"no cpu.idle: half of 1.5 CPUs", 1.5, 2, 0, {{1.4, 0, 0.975 - 1.4, 0.75}}, 1, false},
	{"with cpu.idle the floor is the whole node", 2, 2, 0, {{0.6, 0, 0.7, 2}}, 1, true},
	{"small changes are skipped",
	 10,
	 2,
	 0,
	 {{3, 0, 3.5, 3.5}, {3.05, 0, 3.45, 3.5}, {2.95, 0, 3.55, 3.5}, {3.2, 0, 3.3, 3.3}},
	 4,
	 false},
	/*
	 * 80 CPUs: the 1% skip is 0.8 CPU, more than the last step from 2.7 to
	 * the floor of 2; the floor is exempt, as in the reference agent.
	 */
	{"the drop to the floor is never skipped",
	 80,
	 2,
	 0,
	 {{49.3, 0, 2.7, 2.7}, {51, 0, 1, 2}},
	 2,
	 false},
	{"use outside units is system use", 10, 2, 0, {{3, 1, 2.5, 2.5}}, 1, false},
	{"system use is never negative", 10, 2, 0, {{3, -1, 3.5, 3.5}}, 1, false},
	{"a large min_change holds the allowance",
	 10,
	 0,
	 0.5,
	 {{0, 0, 6.5, 6.5}, {0.4, 0, 6.1, 6.5}},
	 2,
	 false},
};

static void test_allowance(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(allow_cases) / sizeof(allow_cases[0]); c++) {
		const struct allow_case *tc = &allow_cases[c];
		struct suppress_config cfg = config();
		struct suppress_state st = {0};
		struct action_list out = {0};

		print_message("%s\n", tc->name);
		cfg.min_cpus = tc->min_cpus;
		cfg.cpu_idle = tc->idle;
		if (tc->min_change)
			cfg.min_change = tc->min_change;
		for (int t = 0; t < tc->n; t++) {
			struct world w;
			const struct action *a;

			world_init(&w, tc->cpus);
			w.in.has_cpu_idle = tc->idle;
			world_unit(&w, QOS_SYSTEM, 0, 0);
			world_unit(&w, QOS_LSE, 0, 1);
			world_unit(&w, QOS_LSR, 0, 1);
			world_unit(&w, QOS_LS, tc->tick[t].ls_used, 1);
			world_unit(&w, QOS_BE, 0.7, 1);
			world_unit(&w, QOS_UNMANAGED, 0, 0);
			w.in.node_cpu_used += tc->tick[t].outside_used;
			assert_int_equal(run(&w, &cfg, &st, &out), 0);
			/* The quota first, then (BE idle too) cpu.idle. */
			assert_int_equal(out.n, tc->idle ? 2 : 1);
			a = &out.v[0];
			assert_int_equal(a->kind, ACT_CPU_QUOTA);
			assert_int_equal(a->rule, RULE_SUPPRESS_CFS_QUOTA);
			assert_int_equal(a->id, 50);
			assert_float_equal(evidence(a, "be_allowed_raw_cpus"), tc->tick[t].raw,
					   1e-9);
			assert_float_equal(evidence(a, "be_allowed_cpus"), tc->tick[t].allowed,
					   1e-9);
			assert_int_equal(a->value, llround(tc->tick[t].allowed * 100000));
			assert_float_equal(evidence(a, "capacity_cpus"), tc->cpus, 1e-9);
			assert_float_equal(evidence(a, "threshold"), 0.65, 1e-9);
			assert_float_equal(evidence(a, "non_be_used_cpus"), tc->tick[t].ls_used,
					   1e-9);
			assert_float_equal(evidence(a, "system_used_cpus"),
					   fmax(tc->tick[t].outside_used, 0), 1e-9);
			assert_float_equal(evidence(a, "be_used_cpus"), 0.7, 1e-9);
		}
		action_list_free(&out);
	}
}

/* The quota split among BE units (allowance 4 CPUs on an idle 10-CPU node with threshold 0.4). */
struct split_case {
	const char *name;
	double request[3];
	uint64_t period[3];
	int64_t quota[3]; /* expected */
};

static const struct split_case split_cases[] = {
	{"proportional to requests", {1, 3, 0}, {100000, 100000, 100000}, {100000, 300000, 1000}},
	{"equal when no requests", {0, 0, 0}, {100000, 100000, 100000}, {133333, 133333, 133333}},
	{"the unit's own period; 0 is 100 ms",
	 {1, 1, 2},
	 {50000, 0, 100000},
	 {50000, 100000, 200000}},
	{"at least the kernel's 1 ms",
	 {0.0001, 4, 0},
	 {100000, 100000, 100000},
	 {1000, 399990, 1000}},
};

static void test_quota_split(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(split_cases) / sizeof(split_cases[0]); c++) {
		const struct split_case *tc = &split_cases[c];
		struct suppress_config cfg = config();
		struct suppress_state st = {0};
		struct action_list out = {0};
		struct world w;

		print_message("%s\n", tc->name);
		cfg.threshold = 0.4;
		world_init(&w, 10);
		world_unit(&w, QOS_LS, 0, 1);
		for (int i = 0; i < 3; i++)
			world_unit(&w, QOS_BE, 0, tc->request[i])->period_us = tc->period[i];
		assert_int_equal(run(&w, &cfg, &st, &out), 0);
		assert_int_equal(out.n, 3);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(out.v[i].kind, ACT_CPU_QUOTA);
			assert_int_equal(out.v[i].id, w.units[i + 1].id);
			assert_int_equal(out.v[i].value, tc->quota[i]);
		}
		action_list_free(&out);
	}
}

/*
 * Two NUMA nodes, one package each, two cores of two threads each; siblings
 * are numbered apart (as on Intel): node 0 has cores {0,2} {1,3}, node 1
 * {4,6} {5,7}. Core ids repeat across packages and are not siblings.
 */
static void two_node_topo(struct pol_input *in)
{
	for (int cpu = 0; cpu < 8; cpu++)
		in->topo[cpu] = (struct pol_cpu){
			.cpu = cpu, .core = cpu % 2, .package = cpu / 4, .node = cpu / 4};
	in->n_topo = 8;
}

/* cpuset over ticks: allowance = 8 - LS use (threshold 1, no rate limit, no floor). */
struct cpuset_case {
	const char *name;
	const char *prev; /* CPUs of the state before the first tick, "" none */
	struct {
		double ls_used;
		const char *want;
	} tick[MAX_TICKS];
	int n;
};

static const struct cpuset_case cpuset_cases[] = {
	{"siblings together, then the other node",
	 "",
	 {{7, "0"},
	  {6, "0,2"},
	  {5, "0,2,4"},
	  {4, "0,2,4,6"},
	  {3, "0-2,4,6"},
	  {2, "0-4,6"},
	  {0, "0-7"}},
	 7},
	{"shrink keeps siblings and node balance", "", {{0, "0-7"}, {5, "0,2,4"}, {6, "0,2"}}, 3},
	{"a fractional allowance rounds up", "", {{4.5, "0,2,4,6"}, {5.9, "0,2,4"}}, 2},
	{"never empty", "", {{8, "0"}, {20, "0"}}, 2},
	{"the previous set is kept when growing", "1,3", {{4, "1,3-4,6"}, {3, "0-1,3-4,6"}}, 2},
	{"the previous set is kept when shrinking", "1,3,4,6", {{6, "1,3"}, {7, "1"}}, 2},
	{"CPUs gone from the topology leave the set", "0,2,100", {{5, "0,2,4"}}, 1},
};

static void set_cpus(uint64_t *set, const char *list)
{
	for (const char *p = list; *p;) {
		char *end;
		long cpu = strtol(p, &end, 10);

		set[cpu / 64] |= 1ULL << (cpu % 64);
		p = *end ? end + 1 : end;
	}
}

static void test_cpuset(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cpuset_cases) / sizeof(cpuset_cases[0]); c++) {
		const struct cpuset_case *tc = &cpuset_cases[c];
		struct suppress_config cfg = config();
		struct suppress_state st = {0};
		struct action_list out = {0};

		print_message("%s\n", tc->name);
		cfg.policy = SUPPRESS_CPUSET;
		cfg.threshold = 1;
		cfg.min_cpus = 0;
		cfg.max_growth = 1;
		cfg.min_change = 0;
		set_cpus(st.cpuset, tc->prev);
		for (int t = 0; t < tc->n; t++) {
			struct world w;

			world_init(&w, 8);
			two_node_topo(&w.in);
			world_unit(&w, QOS_LS, tc->tick[t].ls_used, 1);
			world_unit(&w, QOS_BE, 0, 1);
			world_unit(&w, QOS_BE, 0, 0);
			assert_int_equal(run(&w, &cfg, &st, &out), 0);
			assert_int_equal(out.n, 2); /* every BE unit, every tick */
			for (size_t i = 0; i < out.n; i++) {
				assert_int_equal(out.v[i].kind, ACT_CPUSET);
				assert_int_equal(out.v[i].rule, RULE_SUPPRESS_CPUSET);
				assert_string_equal(out.v[i].cpus, tc->tick[t].want);
			}
		}
		action_list_free(&out);
	}
}

/* The cpuset follows the rate-limited allowance: ceil of it, growing a CPU at a time here. */
static void test_cpuset_rate_limited(void **state)
{
	static const char *const want[] = {"0,2", "0,2,4", "0,2,4,6", "0-2,4,6"};
	struct suppress_config cfg = config();
	struct suppress_state st = {0};
	struct action_list out = {0};

	(void)state;
	cfg.policy = SUPPRESS_CPUSET;
	for (int t = 0; t < 4; t++) {
		struct world w;

		world_init(&w, 8);
		two_node_topo(&w.in);
		world_unit(&w, QOS_LS, t ? 0 : 5, 1); /* 5.2 - 5 < floor 2, then raw 5.2 */
		world_unit(&w, QOS_BE, 0, 1);
		assert_int_equal(run(&w, &cfg, &st, &out), 0);
		assert_int_equal(out.n, 1);
		assert_string_equal(out.v[0].cpus, want[t]);
		assert_float_equal(evidence(&out.v[0], "be_cpuset_cpus"), 2 + t, 1e-9);
	}
	action_list_free(&out);
}

/* No topology: no CPU list could be trusted, so no cpuset; cpu.idle still goes out. */
static void test_cpuset_without_topology(void **state)
{
	struct suppress_config cfg = config();
	struct suppress_state st = {0};
	struct action_list out = {0};
	struct world w;

	(void)state;
	cfg.policy = SUPPRESS_CPUSET;
	cfg.cpu_idle = true;
	world_init(&w, 8);
	w.in.has_cpu_idle = true;
	world_unit(&w, QOS_BE, 0, 1);
	assert_int_equal(run(&w, &cfg, &st, &out), 0);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.v[0].kind, ACT_CPU_IDLE);
	action_list_free(&out);
}

/* 128 CPUs two apart: "0,2,...,254" does not fit a list; nothing half-written goes out. */
static void test_cpuset_list_too_long(void **state)
{
	struct suppress_config cfg = config();
	struct suppress_state st = {0};
	struct action_list out = {0};
	struct world w;

	(void)state;
	cfg.policy = SUPPRESS_CPUSET;
	cfg.threshold = 1;
	world_init(&w, 128);
	for (int i = 0; i < 128; i++)
		w.in.topo[i] = (struct pol_cpu){.cpu = 2 * i, .core = i};
	w.in.n_topo = 128;
	world_unit(&w, QOS_BE, 0, 1);
	assert_int_equal(run(&w, &cfg, &st, &out), -ENOSPC);
	assert_int_equal(out.n, 0);
	action_list_free(&out);
}

/* cpu.idle=1 on every BE unit only when asked for and the kernel has it. */
static void test_cpu_idle(void **state)
{
	static const struct {
		bool cpu_idle, has;
		size_t idle_actions;
	} cases[] = {{true, true, 2}, {true, false, 0}, {false, true, 0}};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct suppress_config cfg = config();
		struct suppress_state st = {0};
		struct action_list out = {0};
		struct world w;
		size_t idle = 0;

		cfg.cpu_idle = cases[c].cpu_idle;
		world_init(&w, 4);
		w.in.has_cpu_idle = cases[c].has;
		world_unit(&w, QOS_LS, 1, 1);
		world_unit(&w, QOS_BE, 1, 1);
		world_unit(&w, QOS_BE, 1, 1);
		assert_int_equal(run(&w, &cfg, &st, &out), 0);
		for (size_t i = 0; i < out.n; i++) {
			if (out.v[i].kind != ACT_CPU_IDLE)
				continue;
			assert_int_equal(out.v[i].value, 1);
			assert_int_equal(out.v[i].rule, RULE_SUPPRESS_CPU_IDLE);
			idle++;
		}
		assert_int_equal(idle, cases[c].idle_actions);
		assert_int_equal(out.n, 2 + idle);
		action_list_free(&out);
	}
}

/*
 * split over ticks on 8 CPUs (allowance = 8 - LS use: threshold 1; floor 2,
 * which the split ignores; growth margin 0.1 x 8 = 0.8 CPUs). Units: a
 * shared LS unit, an LS unit its owner pinned to CPU 3, an LSR unit on every
 * CPU, a BE unit. Each tick: the BE unit's list ("" no split: its quota in
 * CPUs instead) and the shared LS unit's list. No trial (test_split_trial):
 * this is the margin, the hold and the shrink.
 */
struct split_tick {
	double ls_used;
	const char *be, *ls;
	int be_cpus;
	double be_quota_cpus; /* without a split */
};

static const struct split_tick split_ticks[] = {
	{6.5, "", "", 0, 2},	     /* 1.5 CPUs left, not 1 + 0.8: no split, the quota's floor */
	{5, "0,2", "1,3-7", 2, 0},   /* 3 left: 2 whole CPUs clear the margin */
	{4.5, "0,2", "1,3-7", 2, 0}, /* 3.5 left: 3 does not clear it, held */
	{6.5, "0", "1-7", 1, 0},     /* 1.5 left: shrinks at once */
	{7.5, "", "", 0, 2},	     /* 0.5 left: off */
};

static void test_split(void **state)
{
	struct suppress_config cfg = config();
	struct suppress_state st = {.trial_after_ns = UINT64_MAX};
	struct action_list out = {0};
	const char *ls_now = ""; /* the shared LS unit's cpuset as the kernel has it */

	(void)state;
	cfg.policy = SUPPRESS_SPLIT;
	cfg.threshold = 1;
	cfg.min_change = 0;
	for (size_t t = 0; t < sizeof(split_ticks) / sizeof(split_ticks[0]); t++) {
		const struct split_tick *tc = &split_ticks[t];
		struct world w;
		const char *be = "", *ls = "";
		double quota = 0;

		print_message("tick %zu: LS uses %.1f CPUs\n", t, tc->ls_used);
		world_init(&w, 8);
		two_node_topo(&w.in);
		snprintf(w.in.cpu_list, sizeof(w.in.cpu_list), "0-7");
		snprintf(world_unit(&w, QOS_LS, tc->ls_used, 1)->cpus, POL_CPULIST_MAX, "%s",
			 ls_now);
		snprintf(world_unit(&w, QOS_LS, 0, 1)->cpus, POL_CPULIST_MAX, "3");
		snprintf(world_unit(&w, QOS_LSR, 0, 1)->cpus, POL_CPULIST_MAX, "0-7");
		world_unit(&w, QOS_BE, 0, 1);
		action_list_clear(&out);
		assert_int_equal(suppress_run(&w.in, &cfg, NULL, &st, &out), 0);
		for (size_t i = 0; i < out.n; i++) {
			const struct action *a = &out.v[i];

			if (a->kind == ACT_CPU_QUOTA) {
				assert_int_equal(a->id, 40);
				quota = (double)a->value / 100000;
				continue;
			}
			assert_int_equal(a->kind, ACT_CPUSET);
			if (a->id == 40) {
				assert_int_equal(a->rule, RULE_SUPPRESS_SPLIT_BE);
				assert_float_equal(evidence(a, "be_cpuset_cpus"), tc->be_cpus,
						   1e-9);
				be = a->cpus;
			} else {
				/* never the pinned LS unit (20) nor the LSR unit (30) */
				assert_int_equal(a->id, 10);
				assert_int_equal(a->rule, RULE_SUPPRESS_SPLIT_LS);
				assert_true(
					a->ls_split); /* the actuator's leave to move an LS unit */
				assert_float_equal(evidence(a, "ls_cpuset_cpus"), 8 - tc->be_cpus,
						   1e-9);
				ls = a->cpus;
			}
		}
		assert_string_equal(be, tc->be);
		assert_string_equal(ls, tc->ls);
		assert_float_equal(quota, tc->be_quota_cpus, 1e-9);
		ls_now = tc->ls[0] ? tc->ls : "0-7"; /* the plan gave the owner's list back */
	}
	action_list_free(&out);
}

/* A 2-CPU node (CPUs 0 and 1, one core each) for the split's tests. */
static void world_init_2cpus(struct world *w)
{
	world_init(w, 2);
	for (int cpu = 0; cpu < 2; cpu++)
		w->in.topo[cpu] = (struct pol_cpu){.cpu = cpu, .core = cpu};
	w->in.n_topo = 2;
	snprintf(w->in.cpu_list, sizeof(w->in.cpu_list), "0-1");
}

/*
 * LS keeps a CPU: on 2 idle CPUs BE gets one, not both. No split without BE,
 * nor without the topology (no CPU list could be trusted): the quota then.
 */
static void test_split_keeps_one(void **state)
{
	struct suppress_config cfg = config();
	struct suppress_state st = {0};
	struct action_list out = {0};
	struct world w;

	(void)state;
	cfg.policy = SUPPRESS_SPLIT;
	cfg.threshold = 1;
	world_init_2cpus(&w);
	world_unit(&w, QOS_LS, 0, 1);
	assert_int_equal(suppress_run(&w.in, &cfg, NULL, &st, &out), 0);
	assert_int_equal(out.n, 0);
	world_unit(&w, QOS_BE, 0, 1);
	w.in.n_topo = 0;
	assert_int_equal(suppress_run(&w.in, &cfg, NULL, &st, &out), 0);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.v[0].kind, ACT_CPU_QUOTA);
	w.in.n_topo = 2;
	action_list_clear(&out);
	assert_int_equal(suppress_run(&w.in, &cfg, NULL, &st, &out), 0);
	assert_int_equal(out.n, 2);
	assert_int_equal(out.v[0].id, 20); /* BE first, then the LS unit */
	assert_string_equal(out.v[0].cpus, "0");
	assert_int_equal(out.v[1].id, 10);
	assert_string_equal(out.v[1].cpus, "1");
	action_list_free(&out);
}

/* Without BE units, or disabled, nothing; disabling forgets the allowance. */
/*
 * The split's BE CPUs in out (BE unit 20's cpuset; 0 when none: the split is
 * off), after checking what its size was judged on: the use, and the window
 * unless window_s is negative.
 */
static int split_be_cpus(const struct action_list *out, double used, double window_s)
{
	int be_cpus = 0;

	for (size_t i = 0; i < out->n; i++) {
		const struct action *a = &out->v[i];

		if (a->kind != ACT_CPUSET || a->id != 20)
			continue;
		be_cpus = (int)evidence(a, "be_cpuset_cpus");
		assert_float_equal(evidence(a, "split_used_cpus"), used, 1e-9);
		if (window_s >= 0)
			assert_float_equal(evidence(a, "split_window_s"), window_s, 1e-9);
	}
	return be_cpus;
}

/*
 * Once on, the split is judged on LS's use averaged over at least 0.5 s: a
 * burst on a fast-path tick (0.125 s) does not end it; a need that lasts the
 * window does. 2 CPUs, threshold 1: BE gets one CPU while LS and the system
 * use at most one. Each tick: its length, LS's use, BE's CPUs (0: off, the
 * quota), and what the size was judged on (use, window) while on.
 */
struct window_tick {
	double interval_s, ls_used;
	int be_cpus;
	double judged_used, judged_window_s;
};

static const struct window_tick window_ticks[] = {
	{1, 0.3, 1, 0.3, 1},	     /* on, from the tick itself */
	{0.125, 1.5, 1, 0.3, 1},     /* a burst: held, the last judgement stands */
	{0.125, 1.5, 1, 0.3, 1},     /* still within the window */
	{0.25, 0.2, 1, 0.85, 0.5},   /* 0.5 s averaged: 0.85 CPUs, BE keeps its CPU */
	{0.125, 1.5, 1, 0.85, 0.5},  /* a lasting need: held within the window, */
	{0.125, 1.5, 1, 0.85, 0.5},  /* */
	{0.125, 1.5, 1, 0.85, 0.5},  /* */
	{0.125, 1.5, 0, 0, 0},	     /* then off when the window is whole */
	{0.125, 0.2, 1, 0.2, 0.125}, /* on again at once */
};

static void test_split_window(void **state)
{
	struct suppress_config cfg = config();
	struct suppress_state st = {0};
	struct action_list out = {0};

	(void)state;
	cfg.policy = SUPPRESS_SPLIT;
	cfg.threshold = 1;
	for (size_t t = 0; t < sizeof(window_ticks) / sizeof(window_ticks[0]); t++) {
		const struct window_tick *tc = &window_ticks[t];
		struct world w;

		print_message("tick %zu: %.3f s, LS uses %.1f CPUs\n", t, tc->interval_s,
			      tc->ls_used);
		world_init_2cpus(&w);
		w.in.interval_s = tc->interval_s;
		world_unit(&w, QOS_LS, tc->ls_used, 1);
		world_unit(&w, QOS_BE, 0.5, 1);
		action_list_clear(&out);
		assert_int_equal(suppress_run(&w.in, &cfg, NULL, &st, &out), 0);
		assert_int_equal(split_be_cpus(&out, tc->judged_used, tc->judged_window_s),
				 tc->be_cpus);
	}
	action_list_free(&out);
}

/*
 * While the split is off, what LS used on the last tick without BE decides
 * whether a split fits, not its use next to BE (inflated by the sharing, and
 * BE's tasks count as the system's until they are in its cgroup); what LS
 * uses while confined raises it. 2 CPUs, threshold 0.95: a split needs LS
 * and the system at 0.7 CPUs at most. Each tick: LS's use, the system's,
 * whether BE is there, BE's CPUs (0: off), and the use the size was judged
 * on (when the split is on).
 */
struct need_tick {
	double ls_used, system;
	bool be;
	int be_cpus;
	double judged;
};

static const struct need_tick need_ticks[] = {
	{0.6, 0, false, 0, 0},	  /* no BE: LS's need is 0.6 */
	{0.6, 1.3, true, 1, 0.6}, /* BE starting (outside its cgroup yet): 0.6 decides */
	{1.0, 0, true, 0, 0},	  /* confined, LS uses its whole CPU: the split ends */
	{1.4, 0, true, 0, 0},	  /* sharing again: 1.0 is its need now, no split */
	{0.2, 0, true, 1, 0.2},	  /* LS's load drops: its own use decides */
};

static void test_split_need(void **state)
{
	struct suppress_config cfg = config();
	struct suppress_state st = {0};
	struct action_list out = {0};

	(void)state;
	cfg.policy = SUPPRESS_SPLIT;
	cfg.threshold = 0.95;
	for (size_t t = 0; t < sizeof(need_ticks) / sizeof(need_ticks[0]); t++) {
		const struct need_tick *tc = &need_ticks[t];
		struct world w;

		print_message("tick %zu: LS %.1f, system %.1f CPUs\n", t, tc->ls_used, tc->system);
		world_init_2cpus(&w);
		world_unit(&w, QOS_LS, tc->ls_used, 1);
		if (tc->be)
			world_unit(&w, QOS_BE, 0, 1);
		w.in.node_cpu_used += tc->system;
		action_list_clear(&out);
		assert_int_equal(suppress_run(&w.in, &cfg, NULL, &st, &out), 0);
		assert_int_equal(split_be_cpus(&out, tc->judged, -1), tc->be_cpus);
	}
	action_list_free(&out);
}

/*
 * LS's need measured spread over the node overstates what it needs confined.
 * When it leaves no whole CPU but would at two thirds (SPLIT_SPREAD), the
 * split is tried, and its first window keeps it or ends it; after an ending
 * none is tried for 10 s, then 20 s. 2 CPUs, threshold 0.95. Each tick: its
 * time, LS's use, whether BE is there, BE's CPUs (0: off), whether the split
 * is a trial (evidence split_trial) and what it was judged on.
 */
struct trial_tick {
	double t, ls_used;
	bool be;
	int be_cpus;
	bool trial;
	double judged;
};

static const struct trial_tick trial_ticks[] = {
	{0, 1.0, false, 0, false, 0},	/* no BE: LS needs 1.0, 0.9 left */
	{1, 1.4, true, 1, true, 1.0},	/* 1.9 - 1.0 / 1.5 leaves one: tried */
	{2, 0.6, true, 1, false, 0.6},	/* confined LS uses 0.6: kept */
	{3, 1.3, false, 0, false, 0},	/* BE gone, LS busier: needs 1.3 */
	{4, 1.7, true, 1, true, 1.3},	/* 1.9 - 1.3 / 1.5 = 1.03: tried */
	{5, 0.99, true, 0, false, 0},	/* LS fills its CPU: ended, none for 10 s */
	{6, 1.7, true, 0, false, 0},	/* */
	{14, 1.7, true, 0, false, 0},	/* */
	{15, 1.7, true, 1, true, 1.3},	/* 10 s on: tried again */
	{16, 0.99, true, 0, false, 0},	/* ended again: none for 20 s */
	{35, 1.7, true, 0, false, 0},	/* */
	{36, 1.7, true, 1, true, 1.3},	/* tried again */
	{37, 0.2, true, 1, false, 0.2}, /* LS's load dropped: kept */
};

static void test_split_trial(void **state)
{
	struct suppress_config cfg = config();
	struct suppress_state st = {0};
	struct action_list out = {0};

	(void)state;
	cfg.policy = SUPPRESS_SPLIT;
	cfg.threshold = 0.95;
	for (size_t t = 0; t < sizeof(trial_ticks) / sizeof(trial_ticks[0]); t++) {
		const struct trial_tick *tc = &trial_ticks[t];
		struct world w;
		bool trial = false;

		print_message("t %.0f s: LS %.2f CPUs, BE %s\n", tc->t, tc->ls_used,
			      tc->be ? "there" : "gone");
		world_init_2cpus(&w);
		w.in.ts_ns = (uint64_t)(tc->t * 1e9);
		world_unit(&w, QOS_LS, tc->ls_used, 1);
		if (tc->be)
			world_unit(&w, QOS_BE, 0.5, 1);
		action_list_clear(&out);
		assert_int_equal(suppress_run(&w.in, &cfg, NULL, &st, &out), 0);
		for (size_t i = 0; i < out.n; i++)
			for (size_t e = 0; out.v[i].kind == ACT_CPUSET && e < out.v[i].n_ev; e++)
				trial |= out.v[i].id == 20 &&
					 !strcmp(out.v[i].ev[e].name, "split_trial") &&
					 out.v[i].ev[e].value == 1;
		assert_int_equal(split_be_cpus(&out, tc->judged, -1), tc->be_cpus);
		assert_int_equal(trial, tc->trial);
	}
	action_list_free(&out);
}

/*
 * With SLO control on, an LS unit the split confines that misses its
 * run-queue target gets a CPU back at once (here, on 2 CPUs, the split ends),
 * whatever its use says, with a report saying why; BE waits slo.dwell_s
 * before the split comes back. Without SLO control, or for an LS unit the
 * split does not confine, the latency changes nothing. Each tick: its time,
 * whether the confined LS unit misses its target (its waits 2-4 ms against
 * 2 ms; else under 0.5 ms), BE's CPUs (0: off), and whether a
 * suppress.split_short report comes out.
 */
struct short_tick {
	double t;
	bool late;
	int be_cpus;
	bool report;
};

static const struct short_tick short_ticks[] = {
	{0, false, 1, false},	/* on */
	{1, true, 0, true},	/* misses its target: a CPU back at once, the split ends */
	{2, false, 0, false},	/* on time, and room to spare, but within the 3 s dwell */
	{4.5, false, 1, false}, /* the dwell over: on again */
	{5, false, 1, false},
};

/* One split tick on 2 CPUs: LS unit 10 (using 0.3 CPUs; waits late or not), BE unit 20. */
static void short_tick(struct suppress_state *st, const struct slo_config *slo, double t, bool late,
		       struct action_list *out)
{
	struct suppress_config cfg = config();
	struct world w;
	struct pol_unit *ls;

	cfg.policy = SUPPRESS_SPLIT;
	cfg.threshold = 1;
	world_init_2cpus(&w);
	w.in.ts_ns = (uint64_t)(t * 1e9) + 1000000000000ull;
	ls = world_unit(&w, QOS_LS, 0.3, 1);
	/* where the split put it, or the shared pool */
	snprintf(ls->cpus, sizeof(ls->cpus), "%s", st->ls_cpus[0] ? st->ls_cpus : "0-1");
	ls->has_rq = true;
	ls->rq.count = 100;
	ls->rq.slots[late ? 12 : 9] = 100; /* up to 2^22 ns (4.2 ms), or 2^19 (0.5 ms) */
	world_unit(&w, QOS_BE, 0.5, 1);
	action_list_clear(out);
	assert_int_equal(suppress_run(&w.in, &cfg, slo, st, out), 0);
}

static void test_split_short(void **state)
{
	struct slo_config slo = {
		.enabled = true,
		.ls_p99_us = 2000,
		.lsr_p99_us = 1000,
		.lse_p99_us = 500,
		.min_waits = 20,
		.dwell_s = 3,
	};
	struct suppress_state st = {0};
	struct action_list out = {0};

	(void)state;
	for (size_t k = 0; k < sizeof(short_ticks) / sizeof(short_ticks[0]); k++) {
		const struct short_tick *tc = &short_ticks[k];
		int be_cpus = 0;
		bool report = false;

		print_message("t %.1f s: LS %s\n", tc->t, tc->late ? "late" : "on time");
		short_tick(&st, &slo, tc->t, tc->late, &out);
		for (size_t i = 0; i < out.n; i++) {
			const struct action *a = &out.v[i];

			if (a->kind == ACT_CPUSET && a->id == 20)
				be_cpus = (int)evidence(a, "be_cpuset_cpus");
			if (a->kind != ACT_REPORT)
				continue;
			assert_int_equal(a->rule, RULE_SUPPRESS_SPLIT_SHORT);
			assert_int_equal(a->id, 10);
			assert_true(evidence(a, "ls_rq_p99_us") > 2000);
			assert_float_equal(evidence(a, "ls_target_us"), 2000, 1e-9);
			assert_float_equal(evidence(a, "be_cpuset_cpus"), tc->be_cpus, 1e-9);
			report = true;
		}
		assert_int_equal(be_cpus, tc->be_cpus);
		assert_int_equal(report, tc->report);
	}
	/* Late waits change nothing without SLO control (none given, or off). */
	slo.enabled = false;
	for (int off = 0; off < 2; off++) {
		const struct slo_config *s = off ? &slo : NULL;

		memset(&st, 0, sizeof(st));
		short_tick(&st, s, 0, false, &out);
		short_tick(&st, s, 1, true, &out);
		assert_int_equal(out.n, 2); /* split_be, split_ls: still on */
		assert_int_equal(out.v[0].kind, ACT_CPUSET);
		assert_int_equal(out.v[1].kind, ACT_CPUSET);
	}
	action_list_free(&out);
}

/* Whether a CPU list names any CPU of 0-7 that excl names. */
static bool names_any(const char *list, const char *excl)
{
	uint64_t a[CPU_SET_WORDS] = {0}, b[CPU_SET_WORDS] = {0};

	set_cpus(a, list);
	set_cpus(b, excl);
	return (a[0] & b[0]) != 0;
}

/*
 * A pinned Guaranteed pod holds CPUs 0 and 2 (a whole core of node 0): the
 * cpuset policy chooses from the other six only, on the shared pool's
 * capacity, and the pinned pod's use is not the pool's.
 */
static void test_pinned_cpuset(void **state)
{
	static const struct {
		double ls_used;
		const char *want;
	} ticks[] = {{5.5, "1"},     {5, "1"},	   {4, "1,3"},	 {3, "1,3-4"},
		     {2, "1,3-4,6"}, {1, "1,3-6"}, {0, "1,3-7"}, {7, "1"}};
	struct suppress_config cfg = config();
	struct suppress_state st = {0};
	struct action_list out = {0};

	(void)state;
	cfg.policy = SUPPRESS_CPUSET;
	cfg.threshold = 1;
	cfg.min_cpus = 0;
	cfg.max_growth = 1;
	cfg.min_change = 0;
	for (size_t t = 0; t < sizeof(ticks) / sizeof(ticks[0]); t++) {
		struct world w;
		struct pol_unit *pinned;

		world_init(&w, 8);
		two_node_topo(&w.in);
		snprintf(w.in.exclusive_cpus, sizeof(w.in.exclusive_cpus), "0,2");
		world_unit(&w, QOS_LS, ticks[t].ls_used, 1);
		pinned = world_unit(&w, QOS_LSR, 2, 2); /* busy on its own CPUs */
		pinned->pinned_cpus = 2;
		world_unit(&w, QOS_BE, 0, 1);
		assert_int_equal(run(&w, &cfg, &st, &out), 0);
		assert_int_equal(out.n, 1);
		assert_int_equal(out.v[0].kind, ACT_CPUSET);
		assert_false(names_any(out.v[0].cpus, "0,2"));
		assert_string_equal(out.v[0].cpus, ticks[t].want);
		assert_float_equal(evidence(&out.v[0], "capacity_cpus"), 6, 1e-9);
		assert_float_equal(evidence(&out.v[0], "exclusive_cpus"), 2, 1e-9);
		assert_float_equal(evidence(&out.v[0], "non_be_used_cpus"), ticks[t].ls_used, 1e-9);
	}
	action_list_free(&out);
}

/*
 * The split with a pinned pod on CPUs 0 and 2: BE's CPUs and the LS units'
 * come from the other six; the pinned pod is never moved, even one a label
 * calls LS whose pod cgroup shows every CPU (the kubelet pins containers,
 * not the pod), and a CPU pinned while the split is on leaves both lists.
 */
static void test_pinned_split(void **state)
{
	static const struct {
		double ls_used;
		const char *excl, *be, *ls;
	} ticks[] = {
		{3, "0,2", "1,3", "4-7"},     /* 3 of 6 spare, less the margin: 2 */
		{3, "0,2", "1,3", "4-7"},     /* held */
		{3, "0,2,4", "1,3", "5-7"},   /* CPU 4 pinned meanwhile */
		{2, "0,2,4,7", "1,3", "5-6"}, /* and 7: 2 of 4 spare, held */
		{5.5, "0,2", "", ""},	      /* 0.5 spare: off */
	};
	struct suppress_config cfg = config();
	struct suppress_state st = {.trial_after_ns = UINT64_MAX};
	struct action_list out = {0};
	const char *ls_now = "0-7";

	(void)state;
	cfg.policy = SUPPRESS_SPLIT;
	cfg.threshold = 1;
	cfg.min_change = 0;
	for (size_t t = 0; t < sizeof(ticks) / sizeof(ticks[0]); t++) {
		struct world w;
		struct pol_unit *u;
		const char *be = "", *ls = "";

		print_message("tick %zu: LS uses %.1f CPUs, %s pinned\n", t, ticks[t].ls_used,
			      ticks[t].excl);
		world_init(&w, 8);
		w.in.interval_s = 1; /* a whole window each tick */
		two_node_topo(&w.in);
		snprintf(w.in.cpu_list, sizeof(w.in.cpu_list), "0-7");
		snprintf(w.in.exclusive_cpus, sizeof(w.in.exclusive_cpus), "%s", ticks[t].excl);
		snprintf(world_unit(&w, QOS_LS, ticks[t].ls_used, 1)->cpus, POL_CPULIST_MAX, "%s",
			 ls_now);
		u = world_unit(&w, QOS_LS, 1, 1); /* labelled LS, pinned by the kubelet */
		u->pinned_cpus = 1;
		snprintf(u->cpus, POL_CPULIST_MAX, "0-7");
		u = world_unit(&w, QOS_LSR, 1, 1);
		u->pinned_cpus = 1;
		snprintf(u->cpus, POL_CPULIST_MAX, "0-7");
		world_unit(&w, QOS_BE, 0, 1);
		action_list_clear(&out);
		assert_int_equal(suppress_run(&w.in, &cfg, NULL, &st, &out), 0);
		for (size_t i = 0; i < out.n; i++) {
			const struct action *a = &out.v[i];

			if (a->kind != ACT_CPUSET)
				continue;
			assert_false(names_any(a->cpus, ticks[t].excl));
			if (a->id == 40) {
				be = a->cpus;
				continue;
			}
			assert_int_equal(a->id, 10); /* never 20 nor 30 */
			ls = a->cpus;
		}
		assert_string_equal(be, ticks[t].be);
		assert_string_equal(ls, ticks[t].ls);
		ls_now = ls[0] ? ls : "0-7";
	}
	action_list_free(&out);
}

/*
 * A pinned pod that a class rule calls BE keeps its CPUs: no policy of
 * suppression acts on it, and alone it leaves nothing to share a quota by.
 */
static void test_pinned_be(void **state)
{
	static const enum suppress_policy policies[] = {SUPPRESS_CFS_QUOTA, SUPPRESS_CPUSET,
							SUPPRESS_SPLIT};

	(void)state;
	for (size_t p = 0; p < sizeof(policies) / sizeof(policies[0]); p++) {
		for (int with_shared = 0; with_shared < 2; with_shared++) {
			struct suppress_config cfg = config();
			struct suppress_state st = {0};
			struct action_list out = {0};
			struct world w;

			cfg.policy = policies[p];
			cfg.cpu_idle = true;
			world_init(&w, 8);
			w.in.has_cpu_idle = true;
			two_node_topo(&w.in);
			snprintf(w.in.cpu_list, sizeof(w.in.cpu_list), "0-7");
			snprintf(w.in.exclusive_cpus, sizeof(w.in.exclusive_cpus), "0,2");
			world_unit(&w, QOS_BE, 2, 2)->pinned_cpus = 2;
			if (with_shared)
				world_unit(&w, QOS_BE, 1, 1);
			assert_int_equal(run(&w, &cfg, &st, &out), 0);
			for (size_t i = 0; i < out.n; i++) {
				assert_int_equal(out.v[i].id, 20);
				assert_true(out.v[i].kind != ACT_CPU_QUOTA ||
					    out.v[i].value < 1000000000);
			}
			assert_true(with_shared || out.n == 0);
			action_list_free(&out);
		}
	}
}

static void test_nothing_to_do(void **state)
{
	struct suppress_config cfg = config();
	struct suppress_state st = {0};
	struct action_list out = {0};
	struct world w;

	(void)state;
	cfg.cpu_idle = true;
	world_init(&w, 8);
	w.in.has_cpu_idle = true;
	two_node_topo(&w.in);
	world_unit(&w, QOS_SYSTEM, 1, 0);
	world_unit(&w, QOS_LSE, 1, 1);
	world_unit(&w, QOS_LSR, 1, 1);
	world_unit(&w, QOS_LS, 1, 1);
	world_unit(&w, QOS_UNMANAGED, 1, 0);
	for (int p = SUPPRESS_CFS_QUOTA; p <= SUPPRESS_SPLIT; p++) {
		cfg.policy = p;
		assert_int_equal(run(&w, &cfg, &st, &out), 0);
		assert_int_equal(out.n, 0);
	}

	cfg.policy = SUPPRESS_CPUSET;
	world_unit(&w, QOS_BE, 1, 1);
	assert_int_equal(run(&w, &cfg, &st, &out), 0);
	assert_true(st.have_allowed);
	assert_int_not_equal(st.cpuset[0], 0);
	cfg.enabled = false;
	assert_int_equal(run(&w, &cfg, &st, &out), 0);
	assert_int_equal(out.n, 0);
	assert_false(st.have_allowed);
	assert_int_equal(st.cpuset[0], 0);
	action_list_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowance),
		cmocka_unit_test(test_quota_split),
		cmocka_unit_test(test_cpuset),
		cmocka_unit_test(test_cpuset_rate_limited),
		cmocka_unit_test(test_cpuset_without_topology),
		cmocka_unit_test(test_cpuset_list_too_long),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_keeps_one),
		cmocka_unit_test(test_split_window),
		cmocka_unit_test(test_split_need),
		cmocka_unit_test(test_split_trial),
		cmocka_unit_test(test_split_short),
		cmocka_unit_test(test_cpu_idle),
		cmocka_unit_test(test_nothing_to_do),
		cmocka_unit_test(test_pinned_cpuset),
		cmocka_unit_test(test_pinned_split),
		cmocka_unit_test(test_pinned_be),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
