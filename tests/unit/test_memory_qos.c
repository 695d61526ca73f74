// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The memory QoS policy: per-class protection from requests, capped below
 * the limit (with the cap in the evidence), BE memory.high from the limit
 * or from the node's free memory (kept while it moves little), nothing
 * where the unit has no v2 memory files or memory QoS is off.
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

#include "policy/memory_qos.h"
#include "evidence.h"

#define MIB  (1024ll * 1024)
#define GIB  (1024 * MIB)
#define NONE (-2) /* expected: no wish of that kind */

static struct memory_qos_config config(void)
{
	return (struct memory_qos_config){
		.enabled = true,
		.lse = {.min_share = 1.0},
		.lsr = {.min_share = 1.0},
		.ls = {.low_share = 1.0},
		.limit_cap = 0.9,
		.throttling = 0.9,
		.free_share = 0.5,
		.min_change = 0.01,
	};
}

/* The value a wish of kind sets on unit id, or NONE. */
static int64_t wished(const struct action_list *l, uint64_t id, enum act_kind kind,
		      const struct action **a)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].id == id && l->v[i].kind == kind) {
			*a = &l->v[i];
			return l->v[i].value;
		}
	return NONE;
}

/* One unit on a node of 16 GiB with 8 GiB used, and what the policy must wish for it. */
struct row {
	const char *name;
	enum qos_class cls;
	int64_t request, limit, used, high_now; /* limit, high_now: -1 none / "max" */
	int64_t min, low, high;			/* expected, NONE for no wish */
	bool capped;
};

static const struct row rows[] = {
	{"LSE, no limit: min = request", QOS_LSE, GIB, -1, 0, -1, GIB, NONE, NONE, false},
	{"LSR, request = limit: min capped at 90% of it, page-aligned", QOS_LSR, GIB, GIB, 0, -1,
	 966365184, NONE, NONE, true},
	{"LS: low = request, under the limit", QOS_LS, GIB, 2 * GIB, 0, -1, NONE, GIB, NONE, false},
	{"LS without a request: nothing", QOS_LS, 0, 2 * GIB, 0, -1, NONE, NONE, NONE, false},
	{"LS, odd request: aligned down", QOS_LS, GIB + 100, -1, 0, -1, NONE, GIB, NONE, false},
	{"BE, limit 2 GiB: high = 90% of it", QOS_BE, 0, 2 * GIB, 0, -1, NONE, NONE, 1932734464,
	 false},
	{"BE, request 1 GiB of 2: high = 1 + 0.9 x 1 GiB", QOS_BE, GIB, 2 * GIB, 0, -1, NONE, NONE,
	 2040107008, false},
	{"BE, request = limit: high would be the limit, no wish", QOS_BE, GIB, GIB, 0, -1, NONE,
	 NONE, NONE, false},
	{"BE, no limit: used + 50% of 8 GiB free / 2 unlimited BE", QOS_BE, 0, -1, GIB, -1, NONE,
	 NONE, 3 * GIB, false},
	{"BE, no limit, request above that: the request", QOS_BE, 4 * GIB, -1, GIB, -1, NONE, NONE,
	 4 * GIB, false},
	{"BE, no limit, high in place within 1% of 16 GiB: kept", QOS_BE, 0, -1, GIB,
	 3 * GIB + 100 * MIB, NONE, NONE, 3 * GIB + 100 * MIB, false},
	{"BE, no limit, high in place 1 GiB off: moved", QOS_BE, 0, -1, GIB, 2 * GIB, NONE, NONE,
	 3 * GIB, false},
	{"SYSTEM: nothing", QOS_SYSTEM, GIB, -1, 0, -1, NONE, NONE, NONE, false},
};

static void run_row(const struct row *r, struct memory_qos_config cfg, bool v2,
		    struct action_list *out)
{
	/* the row's unit, and a second unlimited BE unit that shares the free memory */
	struct pol_unit u[2] = {
		{.id = 1,
		 .cls = r->cls,
		 .request_mem = (uint64_t)r->request,
		 .mem_max = r->limit,
		 .mem_used = (uint64_t)r->used,
		 .mem_high = r->high_now,
		 .has_mem_qos = v2},
		{.id = 2, .cls = QOS_BE, .mem_max = -1, .mem_high = -1, .has_mem_qos = true},
	};
	struct pol_input in = {.units = u,
			       .n_units = 2,
			       .mem_capacity = (uint64_t)(16 * GIB),
			       .mem_used = (uint64_t)(8 * GIB)};

	action_list_clear(out);
	assert_int_equal(memory_qos_run(&in, &cfg, out), 0);
}

static void test_table(void **state)
{
	struct action_list out = {0};
	const struct action *a = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];

		print_message("  %s\n", r->name);
		run_row(r, config(), true, &out);
		assert_int_equal(wished(&out, 1, ACT_MEM_MIN, &a), r->min);
		if (r->min != NONE) {
			assert_int_equal(a->rule, RULE_MEMORY_QOS_MIN);
			assert_true(evidence(a, "request_bytes") == (double)r->request);
			assert_true(evidence(a, "limit_bytes") == (double)r->limit);
			assert_true(evidence(a, "capped") == r->capped);
			assert_true(evidence(a, "value_bytes") == (double)r->min);
			assert_true(a->value < r->limit || r->limit < 0); /* never at the limit */
		}
		assert_int_equal(wished(&out, 1, ACT_MEM_LOW, &a), r->low);
		if (r->low != NONE)
			assert_true(evidence(a, "share") == 1.0);
		assert_int_equal(wished(&out, 1, ACT_MEM_HIGH, &a), r->high);
		if (r->high != NONE && r->limit > 0)
			assert_true(evidence(a, "throttling") == 0.9);
		if (r->high != NONE && r->limit < 0) {
			assert_true(evidence(a, "node_free_bytes") == 8.0 * GIB);
			assert_true(evidence(a, "unlimited_be_units") == 2);
			assert_true(evidence(a, "kept") == (r->high == r->high_now));
		}
		/* no v2 memory files (v1, or not read): no wish at all for the unit */
		run_row(r, config(), false, &out);
		assert_int_equal(wished(&out, 1, ACT_MEM_MIN, &a), NONE);
		assert_int_equal(wished(&out, 1, ACT_MEM_LOW, &a), NONE);
		assert_int_equal(wished(&out, 1, ACT_MEM_HIGH, &a), NONE);
	}
	action_list_free(&out);
}

/* Per-class settings: both files for one class, none for another; off is off. */
static void test_classes_and_off(void **state)
{
	struct memory_qos_config cfg = config();
	struct action_list out = {0};
	const struct action *a = NULL;

	(void)state;
	cfg.lse = (struct memory_qos_class){.min_share = 0.5, .low_share = 1.0};
	run_row(&rows[0], cfg, true, &out);
	assert_int_equal(wished(&out, 1, ACT_MEM_MIN, &a), GIB / 2);
	assert_true(evidence(a, "share") == 0.5);
	assert_int_equal(wished(&out, 1, ACT_MEM_LOW, &a), GIB);
	cfg.enabled = false;
	run_row(&rows[0], cfg, true, &out);
	assert_int_equal(out.n, 0);
	action_list_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_classes_and_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
