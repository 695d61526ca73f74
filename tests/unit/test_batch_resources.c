// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Batch requests into BE cgroups: the formulas, the wishes per pod, and how
 * the plan merges the batch quota with suppression's (the lower wins, and a
 * lapse falls back to the batch value).
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "batch_plan.h"
#include "evidence.h"

static const struct batch_resources_config on = {
	.enabled = true, .cpu_quota = true, .memory_limit = true};

static void test_formulas(void **state)
{
	static const struct {
		uint64_t milli;
		int64_t shares, weight;
	} shares[] = {
		{0, 2, 1},	  /* the kernel's floor */
		{1, 2, 1},	  /* 1.024 rounds down, below the floor */
		{500, 512, 20},	  /* 1 + 510 x 9999 / 262142 = 20.45 */
		{1000, 1024, 39}, /* the kubelet's weight for 1 CPU */
		{2000, 2048, 79},
		{256000, 262144, 10000}, /* the ceiling */
		{1000000, 262144, 10000},
	};
	static const struct {
		uint64_t milli, period;
		int64_t quota;
	} quotas[] = {
		{1000, 100000, 100000},
		{500, 100000, 50000},
		{1500, 50000, 75000},
		{5, 100000, 1000}, /* 500 us: raised to the kernel's 1 ms */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++) {
		assert_int_equal(batch_shares(shares[i].milli), shares[i].shares);
		assert_int_equal(batch_shares_to_weight(shares[i].shares), shares[i].weight);
	}
	for (size_t i = 0; i < sizeof(quotas) / sizeof(quotas[0]); i++)
		assert_int_equal(batch_quota_us(quotas[i].milli, quotas[i].period),
				 quotas[i].quota);
}

static struct pol_unit units[3];
static struct pol_input in = {.units = units, .n_units = 3};

/* Unit 0: a BE pod asking 500m / 1000m CPU, 256 / 512 MiB; 1: BE without any; 2: LS with some. */
static void reset(void)
{
	memset(units, 0, sizeof(units));
	for (int i = 0; i < 3; i++) {
		units[i].id = 10 + i;
		units[i].cls = i == 2 ? QOS_LS : QOS_BE;
		units[i].quota_us = -1;
		units[i].period_us = 100000;
		units[i].weight = 2;
		units[i].mem_max = -1;
		snprintf(units[i].path, sizeof(units[i].path), "kubepods/pod%d", i);
	}
	units[0].batch = (struct pol_batch){500, 1000, 256 << 20, 512 << 20};
	units[2].batch = units[0].batch;
	in.cgroup_v2 = false;
}

static const struct action *find(const struct action_list *l, enum act_kind k)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == k)
			return &l->v[i];
	return NULL;
}

static void test_wishes_v1_and_v2(void **state)
{
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	reset();
	for (int v2 = 0; v2 < 2; v2++) {
		in.cgroup_v2 = v2;
		action_list_clear(&out);
		assert_int_equal(batch_resources_run(&in, &on, &out), 0);
		/* only the BE pod that asks: three wishes on unit 0 */
		assert_int_equal(out.n, 3);
		for (size_t i = 0; i < out.n; i++)
			assert_int_equal(out.v[i].id, 10);
		a = find(&out, ACT_CPU_WEIGHT);
		assert_non_null(a);
		assert_int_equal(a->value, v2 ? 20 : 512);
		assert_int_equal(a->rule, RULE_BATCH_CPU_WEIGHT);
		assert_true(evidence(a, "batch_cpu_request_milli") == 500);
		a = find(&out, ACT_CPU_QUOTA);
		assert_non_null(a);
		assert_int_equal(a->value, 100000);
		assert_true(evidence(a, "batch_cpu_limit_milli") == 1000);
		a = find(&out, ACT_MEM_LIMIT);
		assert_non_null(a);
		assert_int_equal(a->value, 512 << 20);
		assert_true(evidence(a, "batch_memory_request_bytes") == 256 << 20);
	}
	action_list_free(&out);
}

static void test_switches_idle_and_unlimited(void **state)
{
	static const struct {
		const char *name;
		struct batch_resources_config cfg;
		int idle;
		uint64_t cpu_limit, mem_limit;
		bool weight, quota, mem;
	} rows[] = {
		{"all", {true, true, true, false, 0, 0}, 0, 1000, 1 << 20, true, true, true},
		{"disabled",
		 {false, true, true, false, 0, 0},
		 0,
		 1000,
		 1 << 20,
		 false,
		 false,
		 false},
		{"no quota", {true, false, true, false, 0, 0}, 0, 1000, 1 << 20, true, false, true},
		{"no memory",
		 {true, true, false, false, 0, 0},
		 0,
		 1000,
		 1 << 20,
		 true,
		 true,
		 false},
		/* cpu.idle=1 holds the weight at the kernel's idle one */
		{"idle", {true, true, true, false, 0, 0}, 1, 1000, 1 << 20, false, true, true},
		/* a container without a limit: the pod's is 0, unlimited: no wish */
		{"unlimited", {true, true, true, false, 0, 0}, 0, 0, 0, true, false, false},
	};
	struct action_list out = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		reset();
		units[0].idle = rows[i].idle;
		units[0].batch.cpu_limit = rows[i].cpu_limit;
		units[0].batch.mem_limit = rows[i].mem_limit;
		action_list_clear(&out);
		assert_int_equal(batch_resources_run(&in, &rows[i].cfg, &out), 0);
		print_message("%s\n", rows[i].name);
		assert_int_equal(find(&out, ACT_CPU_WEIGHT) != NULL, rows[i].weight);
		assert_int_equal(find(&out, ACT_CPU_QUOTA) != NULL, rows[i].quota);
		assert_int_equal(find(&out, ACT_MEM_LIMIT) != NULL, rows[i].mem);
	}
	action_list_free(&out);
}

/* The plan's view: batch first, then suppression's quota on the same pod. */
static void tick(struct plan_state *st, int64_t suppress_quota, struct action_list *out)
{
	batch_plan_tick(st, &in, &on, &units[0], suppress_quota, out);
	/* the writes land: the next tick reads them */
	for (size_t i = 0; i < out->n; i++) {
		if (out->v[i].kind == ACT_CPU_QUOTA)
			units[0].quota_us = out->v[i].value;
		if (out->v[i].kind == ACT_CPU_WEIGHT)
			units[0].weight = out->v[i].value;
		if (out->v[i].kind == ACT_MEM_LIMIT)
			units[0].mem_max = out->v[i].value;
	}
}

static void test_plan_tighter_quota_wins_and_lapse_falls_back(void **state)
{
	struct plan_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	reset();
	tick(&st, 0, &out);
	assert_int_equal(out.n, 3);
	assert_int_equal(units[0].quota_us, 100000);
	/* suppression asks for less: it wins */
	tick(&st, 30000, &out);
	a = find(&out, ACT_CPU_QUOTA);
	assert_non_null(a);
	assert_int_equal(a->value, 30000);
	assert_int_equal(a->rule, RULE_SUPPRESS_CFS_QUOTA);
	/* suppression asks for more than the batch limit: the batch limit stands */
	tick(&st, 400000, &out);
	a = find(&out, ACT_CPU_QUOTA);
	assert_non_null(a);
	assert_int_equal(a->value, 100000);
	assert_int_equal(a->rule, RULE_BATCH_CPU_QUOTA);
	tick(&st, 30000, &out);
	/* suppression lapses: back to the batch value, not to the owner's unlimited */
	tick(&st, 0, &out);
	a = find(&out, ACT_CPU_QUOTA);
	assert_non_null(a);
	assert_false(a->restore);
	assert_int_equal(a->value, 100000);
	/* steady: nothing more to ask */
	tick(&st, 0, &out);
	assert_int_equal(out.n, 0);
	/* the pod's batch resources gone (a new pod list): the owner's values come back */
	units[0].batch = (struct pol_batch){0};
	tick(&st, 0, &out);
	assert_int_equal(out.n, 3);
	for (size_t i = 0; i < out.n; i++) {
		assert_true(out.v[i].restore);
		assert_int_equal(out.v[i].rule, RULE_PLAN_RELEASE);
	}
	plan_state_free(&st);
	action_list_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formulas),
		cmocka_unit_test(test_wishes_v1_and_v2),
		cmocka_unit_test(test_switches_idle_and_unlimited),
		cmocka_unit_test(test_plan_tighter_quota_wins_and_lapse_falls_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
