// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Decision outcomes and the decision log's counters (user/decision/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "decision/decision.h"

/* The names are output (records, metrics labels, docs): byte for byte these. */
static void test_outcome_names(void **state)
{
	static const char *const want[OUT_NR] = {
		"adopted", "applied",  "contested", "dry_run",	  "evicted",
		"failed",  "gone",     "pending",   "reasserted", "refused",
		"replay",  "reported", "requested", "retry",	  "unchanged",
	};

	(void)state;
	for (int o = 0; o < OUT_NR; o++)
		assert_string_equal(decision_outcome_name(o), want[o]);
	assert_string_equal(decision_outcome_name(OUT_NR), "?");
	assert_string_equal(decision_outcome_name((enum decision_outcome) - 1), "?");
}

/* /metrics orders outcomes by value and means the order of their names. */
static void test_outcomes_in_name_order(void **state)
{
	(void)state;
	for (int o = 1; o < OUT_NR; o++)
		assert_true(strcmp(decision_outcome_name(o - 1), decision_outcome_name(o)) < 0);
}

/* One counter per kind, rule and outcome; the record carries the outcome's name. */
static void test_log_counts_by_outcome(void **state)
{
	struct decision d[] = {
		{.act = {.kind = ACT_CPU_QUOTA, .rule = RULE_SUPPRESS_CFS_QUOTA},
		 .outcome = OUT_APPLIED},
		{.act = {.kind = ACT_CPU_QUOTA, .rule = RULE_SUPPRESS_CFS_QUOTA},
		 .outcome = OUT_DRY_RUN},
		{.act = {.kind = ACT_CPU_QUOTA, .rule = RULE_SUPPRESS_CFS_QUOTA},
		 .outcome = OUT_APPLIED},
	};
	struct decision_log l;

	(void)state;
	assert_int_equal(decision_log_init(&l, 2, NULL), 0);
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		assert_int_equal(decision_log_add(&l, &d[i]), 0);
	assert_int_equal(l.n_counts, 2);
	assert_int_equal(l.counts[0].outcome, OUT_APPLIED);
	assert_int_equal(l.counts[0].n, 2);
	assert_int_equal(l.counts[1].outcome, OUT_DRY_RUN);
	assert_int_equal(l.counts[1].n, 1);
	assert_non_null(strstr(decision_log_recent(&l, 1), "\"outcome\":\"dry_run\""));
	decision_log_free(&l);
}

/* A capacity record names the node's resource, not a cgroup, and carries its value and reason. */
static void test_capacity_record(void **state)
{
	struct decision d = {
		.ts_ns = 1700000000000000000ull,
		.act = {.kind = ACT_CAPACITY,
			.rule = RULE_CAPACITY_CPU,
			.resource = "kubernetes.io/batch-cpu",
			.value = 0,
			.cause = {.kind = ACT_CAUSE_HELD, .held = "cgroup reads failed"}},
		.outcome = OUT_REPORTED,
		.before = "1900m",
		.after = "0m: held at 0: cgroup reads failed",
	};
	json_t *o;
	char *s;

	(void)state;
	action_evidence(&d.act, "batch", 0);
	o = decision_to_json(&d);
	assert_non_null(o);
	s = json_dumps(json_object_get(o, "target"), JSON_COMPACT);
	assert_string_equal(s, "{\"resource\":\"kubernetes.io/batch-cpu\"}");
	free(s);
	assert_null(json_object_get(o, "class"));
	assert_string_equal(json_string_value(json_object_get(o, "kind")), "capacity");
	assert_int_equal(json_integer_value(json_object_get(o, "value")), 0);
	assert_string_equal(json_string_value(json_object_get(o, "cause")), "cgroup reads failed");
	assert_string_equal(json_string_value(json_object_get(o, "before")), "1900m");
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outcome_names),
		cmocka_unit_test(test_outcomes_in_name_order),
		cmocka_unit_test(test_log_counts_by_outcome),
		cmocka_unit_test(test_capacity_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
