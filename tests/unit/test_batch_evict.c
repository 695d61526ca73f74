// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Eviction on batch overcommit: when, whom, how many, and never on a capacity held at 0. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "policy/batch_evict.h"
#include "evidence.h"

#define S  1000000000ull
#define MI (1ull << 20)

static const struct batch_resources_config cfg = {
	.enabled = true, .evict = true, .evict_after_s = 10, .evict_cooldown_s = 5};

/*
 * Units (by id): 1 BE prio 0, 1000m / 1 GiB; 2 BE prio 0, 3000m; 3 BE prio
 * -5, 500m; 4 BE without batch requests, prio -10; 5 LS with a request.
 */
static struct pol_unit units[5];
static struct pol_input in = {.units = units, .n_units = 5};
static struct capacity_result cap;
/* The shipped order: kube-system pods passed over. */
static const struct evict_order_config order = {.kube_system = false};

static void reset(void)
{
	static const struct {
		enum qos_class cls;
		int32_t prio;
		uint64_t cpu, mem;
	} rows[] = {
		{QOS_BE, 0, 1000, 1024 * MI}, {QOS_BE, 0, 3000, 0},   {QOS_BE, -5, 500, 0},
		{QOS_BE, -10, 0, 0},	      {QOS_LS, -20, 4000, 0},
	};

	memset(units, 0, sizeof(units));
	for (int i = 0; i < 5; i++) {
		units[i].id = (uint64_t)i + 1;
		units[i].cls = rows[i].cls;
		units[i].priority = rows[i].prio;
		units[i].batch.cpu_request = rows[i].cpu;
		units[i].batch.mem_request = rows[i].mem;
		snprintf(units[i].path, sizeof(units[i].path), "kubepods/pod%d", i + 1);
	}
	memset(&cap, 0, sizeof(cap));
	cap.r[CAP_CPU].batch = 10;	    /* CPUs: plenty */
	cap.r[CAP_MEM].batch = 8192.0 * MI; /* plenty */
	in.ts_ns = 100 * S;
}

static void tick(struct batch_evict_state *st, uint64_t t_s, struct action_list *out)
{
	in.ts_ns = t_s * S;
	action_list_clear(out);
	assert_int_equal(batch_evict_run(&in, &cap, &cfg, &order, st, out), 0);
}

static void test_requested_counts_be_only(void **state)
{
	(void)state;
	reset();
	assert_true(batch_requested(&in, CAP_CPU) == 4.5); /* 1 + 3 + 0.5: not the LS pod's 4 */
	assert_true(batch_requested(&in, CAP_MEM) == 1024.0 * MI);
}

static void test_evicts_after_the_wait_in_order(void **state)
{
	struct batch_evict_state st = {0};
	struct action_list out = {0};

	(void)state;
	reset();
	tick(&st, 100, &out);
	assert_int_equal(out.n, 0); /* fits */
	cap.r[CAP_CPU].batch = 3.0; /* 4.5 requested: 1.5 over */
	tick(&st, 101, &out);
	assert_int_equal(out.n, 0); /* over for 0 s */
	tick(&st, 110, &out);
	assert_int_equal(out.n, 0); /* 9 s */
	tick(&st, 111, &out);
	/*
	 * 10 s: the lowest priority that requests CPU first (pod 3: 0.5, not pod 4
	 * which requests none, never the LS pod 5), then the larger request of
	 * the priority-0 pods (pod 2: 3): 3.5 >= 1.5.
	 */
	assert_int_equal(out.n, 2);
	assert_int_equal(out.v[0].id, 3);
	assert_int_equal(out.v[1].id, 2);
	assert_int_equal(out.v[0].rule, RULE_BATCH_OVERCOMMIT_CPU);
	assert_int_equal(out.v[0].kind, ACT_EVICT);
	assert_true(evidence(&out.v[0], "batch_requested") == 4.5);
	assert_true(evidence(&out.v[0], "batch_allocatable") == 3.0);
	assert_true(evidence(&out.v[0], "need") == 1.5);
	assert_true(evidence(&out.v[1], "victim_request") == 3.0);
	/* the victims still run (their eviction takes time): pending, nothing more */
	tick(&st, 120, &out);
	assert_int_equal(out.n, 0);
	batch_evict_state_free(&st);
	action_list_free(&out);
}

static void test_fitting_again_restarts_the_wait(void **state)
{
	struct batch_evict_state st = {0};
	struct action_list out = {0};

	(void)state;
	reset();
	cap.r[CAP_MEM].batch = 512.0 * MI; /* pod 1's 1 GiB is over */
	tick(&st, 100, &out);
	tick(&st, 109, &out);
	assert_int_equal(out.n, 0);
	cap.r[CAP_MEM].batch = 2048.0 * MI; /* a tick where it fits */
	tick(&st, 110, &out);
	cap.r[CAP_MEM].batch = 512.0 * MI;
	tick(&st, 111, &out);
	tick(&st, 120, &out);
	assert_int_equal(out.n, 0); /* 9 s since it is over again */
	tick(&st, 121, &out);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.v[0].id, 1);
	assert_int_equal(out.v[0].rule, RULE_BATCH_OVERCOMMIT_MEMORY);
	batch_evict_state_free(&st);
	action_list_free(&out);
}

static void test_never_on_held_capacity_or_when_off(void **state)
{
	struct batch_evict_state st = {0};
	struct action_list out = {0};
	struct batch_resources_config off = cfg;

	(void)state;
	reset();
	cap.r[CAP_CPU].batch = 0;
	cap.held = "warming up";
	for (uint64_t t = 100; t < 200; t += 10) {
		tick(&st, t, &out);
		assert_int_equal(out.n, 0);
	}
	/* believed again: the wait starts then */
	cap.held = NULL;
	tick(&st, 200, &out);
	assert_int_equal(out.n, 0);
	off.evict = false;
	in.ts_ns = 300 * S;
	assert_int_equal(batch_evict_run(&in, &cap, &off, &order, &st, &out), 0);
	assert_int_equal(out.n, 0);
	batch_evict_state_free(&st);
	action_list_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requested_counts_be_only),
		cmocka_unit_test(test_evicts_after_the_wait_in_order),
		cmocka_unit_test(test_fitting_again_restarts_the_wait),
		cmocka_unit_test(test_never_on_held_capacity_or_when_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
