// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which decisions become Events (kube/report.c): transitions only (a hold
 * or a finding starts or ends, an eviction), and tenant privacy (a pod of
 * another namespace named only in the victim's Event, with name_culprits).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kube/report.h"

#define SEC	  1000000000ull
#define UID_LS	  "11111111-1111-1111-1111-111111111111" /* web/frontend-0 */
#define UID_BE	  "22222222-2222-2222-2222-222222222222" /* batch/crunch-0 */
#define UID_BE2	  "33333333-3333-3333-3333-333333333333" /* web/indexer-0 */
#define PATH(uid) "kubepods/besteffort/pod" uid

static struct kube_event_req got[64];
static size_t n_got;
static bool cond_on;
static char cond_msg[600];

static void on_event(void *ctx, const struct kube_event_req *ev)
{
	(void)ctx;
	assert_true(n_got < 64);
	got[n_got++] = *ev;
}

static void on_condition(void *ctx, bool on, const char *msg)
{
	(void)ctx;
	cond_on = on;
	snprintf(cond_msg, sizeof(cond_msg), "%s", msg);
}

static struct kube_pod pods_v[3];
static struct kube_pod_list pods = {.pods = pods_v, .n = 3};
static struct kube_report_seen seen;

static struct kube_report_view view(uint64_t now, bool name_culprits)
{
	return (struct kube_report_view){.sink = {on_event, on_condition, NULL},
					 .pods = &pods,
					 .condition_hold_s = 60,
					 .name_culprits = name_culprits,
					 .now_ns = now,
					 .seen = &seen};
}

static void pod(struct kube_pod *p, const char *uid, const char *ns, const char *name)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->uid, sizeof(p->uid), "%s", uid);
	snprintf(p->ns, sizeof(p->ns), "%s", ns);
	snprintf(p->name, sizeof(p->name), "%s", name);
}

static int setup(void **state)
{
	(void)state;
	pod(&pods_v[0], UID_LS, "web", "frontend-0");
	pod(&pods_v[1], UID_BE, "batch", "crunch-0");
	pod(&pods_v[2], UID_BE2, "web", "indexer-0");
	n_got = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	kube_report_free(&seen);
	return 0;
}

/* A decision of rule on the pod uid (unit id), applied or reported. */
static struct decision decision(enum act_kind kind, enum rule_id rule, const char *uid,
				uint64_t unit, const char *related)
{
	struct decision d = {.outcome = kind == ACT_REPORT ? OUT_REPORTED : OUT_APPLIED};

	d.act.kind = kind;
	d.act.rule = rule;
	d.act.id = unit;
	snprintf(d.pod_uid, sizeof(d.pod_uid), "%s", uid);
	snprintf(d.act.related, sizeof(d.act.related), "%s", related ? related : "");
	if (kind == ACT_REPORT) {
		d.act.cause.kind = ACT_CAUSE_INTERFERENCE;
		d.act.cause.interference = CAUSE_UNIT;
	}
	action_evidence(&d.act, "ls_p99_us", 4321);
	return d;
}

static struct decision release(const struct decision *held)
{
	struct decision d = *held;

	d.act.rule = RULE_PLAN_RELEASE;
	d.act.restore = true;
	return d;
}

/* A suppression following the load: one Event at its start, one at its end, none per step. */
static void test_suppression_transitions(void **state)
{
	struct kube_report_view v = view(SEC, false);
	struct decision q = decision(ACT_CPU_QUOTA, RULE_SUPPRESS_CFS_QUOTA, UID_BE, 7, NULL);
	struct decision cs = decision(ACT_CPUSET, RULE_SUPPRESS_CPUSET, UID_BE, 7, NULL);

	(void)state;
	for (int i = 0; i < 100; i++) {
		snprintf(q.after, sizeof(q.after), "%d", 10000 + 100 * i);
		kube_report(&v, &q);
	}
	kube_report(&v, &cs);
	assert_int_equal(n_got, 1);
	assert_string_equal(got[0].reason, "Suppressed");
	assert_string_equal(got[0].ns, "batch");
	/* the quota handed back, the cpuset still held: not over yet */
	kube_report(&v, &(struct decision){0}); /* a decision of nothing: no Event */
	q = release(&q);
	kube_report(&v, &q);
	assert_int_equal(n_got, 1);
	cs = release(&cs);
	kube_report(&v, &cs);
	assert_int_equal(n_got, 2);
	assert_string_equal(got[1].reason, "SuppressionEnded");
	assert_string_equal(got[1].type, "Normal");
	assert_string_equal(got[1].action, "Release");
	/* a dry run changes nothing: no Event */
	q = decision(ACT_CPU_QUOTA, RULE_SUPPRESS_CFS_QUOTA, UID_BE, 7, NULL);
	q.outcome = OUT_DRY_RUN;
	kube_report(&v, &q);
	assert_int_equal(n_got, 2);
}

/* The agent's stop hands every setting back: one end Event a pod and reason, then none. */
static void test_stop_ends_holds(void **state)
{
	struct kube_report_view v = view(SEC, false);
	struct decision q = decision(ACT_CPU_QUOTA, RULE_SUPPRESS_CFS_QUOTA, UID_BE, 7, NULL);
	struct decision cs = decision(ACT_CPUSET, RULE_SUPPRESS_CPUSET, UID_BE, 7, NULL);
	struct decision q2 = decision(ACT_CPU_QUOTA, RULE_SUPPRESS_CFS_QUOTA, UID_BE2, 8, NULL);

	(void)state;
	kube_report(&v, &q);
	kube_report(&v, &cs);
	kube_report(&v, &q2);
	assert_int_equal(n_got, 2);
	kube_report_stop(&v);
	assert_int_equal(n_got, 4);
	assert_string_equal(got[2].reason, "SuppressionEnded");
	assert_string_equal(got[3].reason, "SuppressionEnded");
	assert_string_not_equal(got[2].uid, got[3].uid);
	assert_non_null(strstr(got[3].note, "stop"));
	kube_report_stop(&v);
	assert_int_equal(n_got, 4);
}

/* A setting that changes hands: one hold ends as another starts. */
static void test_hold_changes_hands(void **state)
{
	struct kube_report_view v = view(SEC, false);
	struct decision q = decision(ACT_CPU_QUOTA, RULE_SUPPRESS_CFS_QUOTA, UID_BE, 7, NULL);
	struct decision slo = decision(ACT_CPU_QUOTA, RULE_SLO_CUT, UID_BE, 7, NULL);

	(void)state;
	kube_report(&v, &q);
	kube_report(&v, &slo);
	kube_report(&v, &slo);
	assert_int_equal(n_got, 3);
	assert_string_equal(got[0].reason, "Suppressed");
	assert_string_equal(got[1].reason, "SuppressionEnded");
	assert_string_equal(got[2].reason, "SLOThrottled");
	/* the pod is gone: its holds go without an Event */
	pods.n = 1;
	kube_report_condition(&v);
	pods.n = 3;
	assert_int_equal(seen.n_holds, 0);
	assert_int_equal(n_got, 3);
}

/* A breach found every tick: one Event; unseen for hold_s: its end; found again: a new one. */
static void test_breach_transitions(void **state)
{
	struct decision r = decision(ACT_REPORT, RULE_INTERFERENCE_RUNQ_SLO, UID_LS, 3, NULL);
	struct kube_report_view v;

	(void)state;
	for (uint64_t t = 1; t <= 100; t++) {
		v = view(t * SEC, false);
		kube_report(&v, &r);
		kube_report_condition(&v);
	}
	assert_int_equal(n_got, 1);
	assert_string_equal(got[0].reason, "Interference");
	assert_true(cond_on);
	v = view(159 * SEC, false);
	kube_report_condition(&v);
	assert_int_equal(n_got, 1);
	v = view(160 * SEC, false);
	kube_report_condition(&v);
	assert_false(cond_on);
	assert_int_equal(n_got, 2);
	assert_string_equal(got[1].reason, "InterferenceEnded");
	assert_string_equal(got[1].ns, "web");
	kube_report(&v, &r);
	assert_int_equal(n_got, 3);
	assert_string_equal(got[2].reason, "Interference");
}

/* Evictions and contested settings: each one is news. */
static void test_evictions_each(void **state)
{
	struct kube_report_view v = view(SEC, false);
	struct decision e = decision(ACT_EVICT, RULE_EVICT_MEMORY, UID_BE, 7, NULL);

	(void)state;
	e.outcome = OUT_REQUESTED;
	kube_report(&v, &e);
	e.outcome = OUT_FAILED;
	kube_report(&v, &e);
	assert_int_equal(n_got, 2);
	assert_string_equal(got[0].reason, "Evicting");
	assert_string_equal(got[1].reason, "EvictionFailed");
}

/*
 * The victim's Event names a culprit of another namespace only with
 * name_culprits; the culprit's Event never names the victim of another
 * namespace, nor shows its figures. The same namespace: named. The node
 * condition (cluster-scoped): named.
 */
static void test_privacy(void **state)
{
	struct decision victim =
		decision(ACT_REPORT, RULE_INTERFERENCE_RUNQ_SLO, UID_LS, 3, PATH(UID_BE));
	struct decision cap =
		decision(ACT_CPU_QUOTA, RULE_INTERFERENCE_CAP, UID_BE, 7, PATH(UID_LS));
	struct decision same =
		decision(ACT_CPU_QUOTA, RULE_INTERFERENCE_CAP, UID_BE2, 9, PATH(UID_LS));
	struct kube_report_view off = view(SEC, false), on = view(SEC, true);

	(void)state;
	kube_report(&off, &victim);
	assert_int_equal(n_got, 1);
	assert_string_equal(got[0].ns, "web");
	assert_null(strstr(got[0].note, "crunch-0"));
	assert_null(strstr(got[0].note, "batch"));
	assert_non_null(strstr(got[0].note, "a pod in another namespace"));
	assert_non_null(strstr(got[0].note, "ls_p99_us=4321")); /* its own figures */
	assert_non_null(strstr(seen.interference, "pod batch/crunch-0"));

	kube_report_free(&seen);
	kube_report(&on, &victim);
	assert_int_equal(n_got, 2);
	assert_non_null(strstr(got[1].note, "delayed by pod batch/crunch-0"));

	kube_report(&on, &cap);
	assert_int_equal(n_got, 3);
	assert_string_equal(got[2].ns, "batch");
	assert_null(strstr(got[2].note, "frontend-0"));
	assert_null(strstr(got[2].note, "web"));
	assert_null(strstr(got[2].note, "4321"));
	assert_non_null(strstr(got[2].note, "figures withheld"));

	kube_report(&off, &same);
	assert_int_equal(n_got, 4);
	assert_string_equal(got[3].ns, "web");
	assert_non_null(strstr(got[3].note, "for pod web/frontend-0"));
	assert_non_null(strstr(got[3].note, "ls_p99_us=4321"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_suppression_transitions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_ends_holds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold_changes_hands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_breach_transitions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evictions_each, setup, teardown),
		cmocka_unit_test_setup_teardown(test_privacy, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
