// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The rule table (policy/rule.c), causes as printed, and the Event each decision makes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/report.h"
#include "policy/cause.h"
#include "policy/rule.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Every rule has a name, ids are in the order of their names (the metrics
 * sort by id and mean the order of the label text), and a rule's family is
 * the part of its name before the dot.
 */
static void test_table(void **state)
{
	static const char *const families[] = {
		[RULE_FAMILY_NONE] = "",
		[RULE_FAMILY_BATCH] = "batch",
		[RULE_FAMILY_BURST] = "burst",
		[RULE_FAMILY_CAPACITY] = "capacity",
		[RULE_FAMILY_EVICT] = "evict",
		[RULE_FAMILY_INTERFERENCE] = "interference",
		[RULE_FAMILY_IO_SUPPRESS] = "io_suppress",
		[RULE_FAMILY_MEMORY_QOS] = "memory_qos",
		[RULE_FAMILY_MEM_SUPPRESS] = "mem_suppress",
		[RULE_FAMILY_PLAN] = "plan",
		[RULE_FAMILY_SLO] = "slo",
		[RULE_FAMILY_SUPPRESS] = "suppress",
	};

	(void)state;
	assert_string_equal(rule_name(RULE_NONE), "");
	for (int r = 1; r < RULE_NR; r++) {
		const struct rule_info *i = rule_info(r);
		const char *dot = strchr(i->name, '.');

		assert_non_null(dot);
		assert_true(strcmp(rule_name(r - 1), i->name) < 0);
		assert_int_equal((size_t)(dot - i->name), strlen(families[i->family]));
		assert_memory_equal(i->name, families[i->family], (size_t)(dot - i->name));
		if (i->event.reason) {
			assert_true(!strcmp(i->event.type, "Normal") ||
				    !strcmp(i->event.type, "Warning"));
			assert_non_null(i->event.action);
		}
	}
	assert_ptr_equal(rule_info(RULE_NR), rule_info(RULE_NONE));
	assert_ptr_equal(rule_info((enum rule_id) - 1), rule_info(RULE_NONE));
}

/* Each kind of cause prints as decision records always said it. */
static void test_cause_names(void **state)
{
	static const struct {
		struct act_cause c;
		const char *want;
	} cases[] = {
		{{.kind = ACT_CAUSE_NONE}, NULL},
		{{.kind = ACT_CAUSE_INTERFERENCE, .interference = CAUSE_UNIT}, "unit"},
		{{.kind = ACT_CAUSE_INTERFERENCE, .interference = CAUSE_OUTSIDE}, "outside"},
		{{.kind = ACT_CAUSE_INTERFERENCE, .interference = CAUSE_SELF}, "self"},
		{{.kind = ACT_CAUSE_INTERFERENCE, .interference = CAUSE_QUOTA}, "quota"},
		{{.kind = ACT_CAUSE_INTERFERENCE, .interference = CAUSE_IDLE}, "idle"},
		{{.kind = ACT_CAUSE_GUARD, .guard = EVICT_GUARD_DAEMONSET}, "daemonset"},
		{{.kind = ACT_CAUSE_REFUSED_RULE, .rule = RULE_SUPPRESS_CPUSET}, "suppress.cpuset"},
		{{.kind = ACT_CAUSE_HELD, .held = "cgroup reads failed"}, "cgroup reads failed"},
		{{.kind = ACT_CAUSE_OUTSIDE_WRITE}, "outside_write"},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const char *got = act_cause_name(&cases[i].c);

		if (!cases[i].want)
			assert_null(got);
		else
			assert_string_equal(got, cases[i].want);
	}
	assert_null(interference_cause_name(CAUSE_NR));
}

/* The Event (reason; NULL none) of a decision of kind, rule and outcome, restore or not. */
static void test_events(void **state)
{
	static const struct {
		enum act_kind kind;
		enum rule_id rule;
		enum decision_outcome out;
		bool restore;
		const char *type, *reason;
	} cases[] = {
		{ACT_REPORT, RULE_INTERFERENCE_RUNQ_SLO, OUT_REPORTED, false, "Warning",
		 "Interference"},
		{ACT_REPORT, RULE_INTERFERENCE_CPI, OUT_REPORTED, false, "Warning", "Interference"},
		{ACT_CPU_QUOTA, RULE_INTERFERENCE_CAP, OUT_APPLIED, false, "Warning",
		 "InterferenceCapped"},
		/* a hand-back, a dry run, a failure: nothing happened worth an Event */
		{ACT_CPU_QUOTA, RULE_INTERFERENCE_CAP, OUT_APPLIED, true, NULL, NULL},
		{ACT_CPU_QUOTA, RULE_SUPPRESS_CFS_QUOTA, OUT_DRY_RUN, false, NULL, NULL},
		{ACT_CPUSET, RULE_SUPPRESS_CPUSET, OUT_FAILED, false, NULL, NULL},
		{ACT_CPU_QUOTA, RULE_SUPPRESS_CFS_QUOTA, OUT_APPLIED, false, "Normal",
		 "Suppressed"},
		{ACT_CPUSET, RULE_SUPPRESS_SPLIT_BE, OUT_APPLIED, false, "Normal", "Suppressed"},
		{ACT_CPU_IDLE, RULE_SUPPRESS_CPU_IDLE, OUT_APPLIED, false, "Normal", "Suppressed"},
		{ACT_REPORT, RULE_SUPPRESS_SPLIT_SHORT, OUT_REPORTED, false, NULL, NULL},
		{ACT_CPU_IDLE, RULE_SLO_CUT_IDLE, OUT_APPLIED, false, "Normal", "SLOThrottled"},
		{ACT_CPU_QUOTA, RULE_SLO_CUT, OUT_APPLIED, false, "Normal", "SLOThrottled"},
		{ACT_CPUSET, RULE_SLO_CONFINE, OUT_APPLIED, false, "Normal", "SLOThrottled"},
		{ACT_CPUSET, RULE_SLO_GROW, OUT_APPLIED, false, NULL, NULL},
		{ACT_REPORT, RULE_SLO_FLOOR, OUT_REPORTED, false, "Normal", "SLOFloor"},
		{ACT_CPU_QUOTA, RULE_BURST_SCALE_UP, OUT_APPLIED, false, NULL, NULL},
		{ACT_CPU_WEIGHT, RULE_BATCH_CPU_WEIGHT, OUT_APPLIED, false, NULL, NULL},
		{ACT_MEM_MIN, RULE_MEMORY_QOS_MIN, OUT_APPLIED, false, NULL, NULL},
		{ACT_CAPACITY, RULE_CAPACITY_CPU, OUT_REPORTED, false, NULL, NULL},
		/* every eviction round's skipped pods, batch overcommit's too */
		{ACT_REPORT, RULE_EVICT_MEMORY, OUT_REPORTED, false, "Normal", "EvictionSkipped"},
		{ACT_REPORT, RULE_BATCH_OVERCOMMIT_CPU, OUT_REPORTED, false, "Normal",
		 "EvictionSkipped"},
		{ACT_EVICT, RULE_EVICT_MEMORY, OUT_REQUESTED, false, "Warning", "Evicting"},
		{ACT_EVICT, RULE_BATCH_OVERCOMMIT_CPU, OUT_APPLIED, false, "Warning", "Killed"},
		{ACT_EVICT, RULE_EVICT_CPU_SATISFACTION, OUT_REPORTED, false, "Normal",
		 "EvictionAdvised"},
		{ACT_EVICT, RULE_EVICT_MEMORY, OUT_FAILED, false, "Warning", "EvictionFailed"},
		{ACT_EVICT, RULE_EVICT_MEMORY, OUT_PENDING, false, NULL, NULL},
		{ACT_CPU_QUOTA, RULE_BURST_SCALE_UP, OUT_CONTESTED, false, "Warning",
		 "SettingContested"},
		{ACT_CPU_QUOTA, RULE_NONE, OUT_REASSERTED, false, NULL, NULL},
		/* the plan's guard records which wish it refused; no Event */
		{ACT_REPORT, RULE_PLAN_EXCLUSIVE_CPUS, OUT_REPORTED, false, NULL, NULL},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct decision d = {.outcome = cases[i].out};
		struct rule_event e;

		d.act.kind = cases[i].kind;
		d.act.rule = cases[i].rule;
		d.act.restore = cases[i].restore;
		e = kube_report_event(&d);
		if (!cases[i].reason) {
			if (e.reason)
				fail_msg("case %zu (%s): Event %s, want none", i,
					 rule_name(cases[i].rule), e.reason);
			continue;
		}
		if (!e.reason || strcmp(e.reason, cases[i].reason) || strcmp(e.type, cases[i].type))
			fail_msg("case %zu (%s): Event %s %s, want %s %s", i,
				 rule_name(cases[i].rule), e.type ? e.type : "-",
				 e.reason ? e.reason : "none", cases[i].type, cases[i].reason);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_cause_names),
		cmocka_unit_test(test_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
