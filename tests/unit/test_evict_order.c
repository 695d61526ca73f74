// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Eviction order and safety (evict_round.h): the order's five keys, the
 * guarded units that are never chosen however large, kube-system only with
 * evict.kube_system, and the reports that name whom a round passed by.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "policy/evict_cpu.h"
#include "policy/evict_memory.h"
#include "evidence.h"

#define MB 1000000ULL
#define NS 1000000000ULL
#define T0 (1000000 * NS) /* the tick's time */

/* One BE unit; mem in MB (key and amount alike); start in seconds before T0, 0 unknown. */
struct spec {
	uint64_t id;
	int32_t prio, evict_prio;
	uint64_t mem_mb;
	uint64_t age_s;
	enum evict_guard guard;
	enum qos_class cls; /* 0: BE */
};

static void build(const struct spec *s, size_t n, struct pol_input *in, struct pol_unit *u)
{
	memset(in, 0, sizeof(*in));
	in->ts_ns = T0;
	for (size_t i = 0; i < n; i++) {
		memset(&u[i], 0, sizeof(u[i]));
		u[i].id = s[i].id;
		snprintf(u[i].path, sizeof(u[i].path), "kubepods/pod%llu",
			 (unsigned long long)s[i].id);
		u[i].cls = s[i].cls ? s[i].cls : QOS_BE;
		u[i].priority = s[i].prio;
		u[i].evict_priority = s[i].evict_prio;
		u[i].mem_used = u[i].mem_anon_unevict = s[i].mem_mb * MB;
		u[i].start_ns = s[i].age_s ? T0 - s[i].age_s * NS : 0;
		u[i].evict_guard = s[i].guard;
	}
	in->units = u;
	in->n_units = n;
}

static double mem_key(const struct pol_unit *u)
{
	return (double)u->mem_anon_unevict;
}

static const struct evict_measure by_mem = {mem_key, mem_key};

/*
 * The ids a round chooses to release need_mb (0-terminated want), and the
 * ids it passes by (0-terminated skip).
 */
static void expect(const struct spec *s, size_t n, const struct evict_order_config *order,
		   uint64_t need_mb, const uint64_t *want, const uint64_t *skip)
{
	struct pol_unit units[16];
	struct evict_round r = {0};
	struct evict_victims v;
	struct pol_input in;
	size_t k = 0;

	build(s, n, &in, units);
	assert_int_equal(evict_round_select(&r, &in, order, 0, (double)(need_mb * MB), &by_mem, &v),
			 0);
	for (; want[k]; k++) {
		if (k >= v.n)
			fail_msg("%zu victims, want more (next %llu)", v.n,
				 (unsigned long long)want[k]);
		if (v.v[k]->id != want[k])
			fail_msg("victim %zu is %llu, want %llu", k, (unsigned long long)v.v[k]->id,
				 (unsigned long long)want[k]);
	}
	assert_int_equal(v.n, k);
	for (k = 0; skip[k]; k++) {
		if (k >= v.n_skipped)
			fail_msg("%zu skipped, want more", v.n_skipped);
		assert_int_equal(v.skipped[k]->id, skip[k]);
	}
	assert_int_equal(v.n_skipped, k);
	evict_victims_free(&v);
	evict_round_free(&r);
}

static const struct evict_order_config strict = {.kube_system = false};
static const struct evict_order_config kube_system_ok = {.kube_system = true};

/* Pod priority, then the annotation's priority, then usage, then run time, then id. */
static void test_order(void **state)
{
	static const struct spec s[] = {
		{.id = 1, .prio = 10, .mem_mb = 900},	   /* high pod priority: last */
		{.id = 2, .evict_prio = 5, .mem_mb = 800}, /* annotated later */
		{.id = 3, .mem_mb = 10, .age_s = 100},	   /* small: after the big */
		{.id = 4, .mem_mb = 50, .age_s = 100},	   /* the biggest of priority 0/0 */
		{.id = 5, .mem_mb = 10, .age_s = 5},	   /* same size as 3, younger */
		{.id = 6, .mem_mb = 10},		   /* start unknown: as the oldest */
		{.id = 7, .evict_prio = -3, .mem_mb = 1},  /* annotated first */
		{.id = 8, .prio = -1, .evict_prio = 9, .mem_mb = 1}, /* pod priority wins */
	};

	(void)state;
	expect(s, 8, &strict, 100000, (const uint64_t[]){8, 7, 4, 5, 3, 6, 2, 1, 0},
	       (const uint64_t[]){0});
}

/* Equal usage and priorities: the pod that started last goes first. */
static void test_run_time_breaks_ties(void **state)
{
	static const struct spec s[] = {
		{.id = 1, .mem_mb = 20, .age_s = 3600},
		{.id = 2, .mem_mb = 20, .age_s = 60},
		{.id = 3, .mem_mb = 20, .age_s = 600},
	};

	(void)state;
	/* 20 MB is one unit's worth: only the youngest */
	expect(s, 3, &strict, 20, (const uint64_t[]){2, 0}, (const uint64_t[]){0});
	expect(s, 3, &strict, 60, (const uint64_t[]){2, 3, 1, 0}, (const uint64_t[]){0});
}

/*
 * DaemonSet, mirror and opted-out pods are never chosen, though they are
 * the biggest and first in the order; the round names them as skipped (in
 * order) and goes on to the next. Those after need is met are not named.
 */
static void test_guarded_never_chosen(void **state)
{
	static const struct spec s[] = {
		{.id = 1, .mem_mb = 500, .guard = EVICT_GUARD_DAEMONSET},
		{.id = 2, .mem_mb = 400, .guard = EVICT_GUARD_OPT_OUT},
		{.id = 3, .mem_mb = 300, .guard = EVICT_GUARD_MIRROR},
		{.id = 4, .mem_mb = 20},
		{.id = 5, .mem_mb = 10, .guard = EVICT_GUARD_DAEMONSET},
		{.id = 6, .mem_mb = 5},
	};

	(void)state;
	expect(s, 6, &strict, 20, (const uint64_t[]){4, 0}, (const uint64_t[]){1, 2, 3, 0});
	/* more than all: every unguarded one, every guarded one reported, none chosen */
	expect(s, 6, &kube_system_ok, 5000, (const uint64_t[]){4, 6, 0},
	       (const uint64_t[]){1, 2, 3, 5, 0});
}

/* kube-system pods (BE by a class rule) only with evict.kube_system. */
static void test_kube_system_needs_the_key(void **state)
{
	static const struct spec s[] = {
		{.id = 1, .mem_mb = 100, .guard = EVICT_GUARD_KUBE_SYSTEM},
		{.id = 2, .mem_mb = 50},
	};

	(void)state;
	expect(s, 2, &strict, 50, (const uint64_t[]){2, 0}, (const uint64_t[]){1, 0});
	expect(s, 2, &kube_system_ok, 50, (const uint64_t[]){1, 0}, (const uint64_t[]){0});
}

/* Only BE units are candidates: a guard changes nothing for LS or SYSTEM. */
static void test_class_first(void **state)
{
	static const struct spec s[] = {
		{.id = 1, .prio = -100, .mem_mb = 900, .cls = QOS_LS},
		{.id = 2,
		 .prio = -100,
		 .mem_mb = 900,
		 .cls = QOS_SYSTEM,
		 .guard = EVICT_GUARD_DAEMONSET},
		{.id = 3, .prio = 100, .mem_mb = 1},
	};

	(void)state;
	expect(s, 3, &strict, 500, (const uint64_t[]){3, 0}, (const uint64_t[]){0});
}

static const struct evict_memory_config mem_cfg = {
	.enabled = true, .threshold = 0.70, .release = 0.68, .cooldown_s = 4};

/*
 * Through the memory policy: the victim's record carries its place in the
 * order, each skipped pod is an ACT_REPORT under the rule with its guard as
 * the cause, and a round that only skipped waits the cool-down before it
 * reports again.
 */
static void test_memory_reports_skipped(void **state)
{
	static const struct spec s[] = {
		{.id = 1, .mem_mb = 300, .guard = EVICT_GUARD_DAEMONSET},
		{.id = 2, .evict_prio = 2, .mem_mb = 30, .age_s = 40},
	};
	struct evict_memory_state st = {0};
	struct action_list out = {0};
	struct pol_unit units[2];
	struct pol_input in;

	(void)state;
	build(s, 2, &in, units);
	in.mem_capacity = 1000 * MB;
	in.mem_used = 700 * MB; /* need 20 MB */
	assert_int_equal(evict_memory_run(&in, &mem_cfg, &strict, &st, &out), 0);
	assert_int_equal(out.n, 2);
	assert_int_equal(out.v[0].kind, ACT_EVICT);
	assert_int_equal(out.v[0].id, 2);
	assert_true(evidence(&out.v[0], "victim_evict_priority") == 2);
	assert_true(evidence(&out.v[0], "victim_run_s") == 40);
	assert_true(evidence(&out.v[0], "skipped_units") == 1);
	assert_int_equal(out.v[1].kind, ACT_REPORT);
	assert_int_equal(out.v[1].id, 1);
	assert_int_equal(out.v[1].rule, RULE_EVICT_MEMORY);
	assert_int_equal(out.v[1].cause.kind, ACT_CAUSE_GUARD);
	assert_int_equal(out.v[1].cause.guard, EVICT_GUARD_DAEMONSET);
	assert_true(evidence(&out.v[1], "victim_run_s") == -1);
	assert_true(evidence(&out.v[1], "victim_key") == 300.0 * MB);

	/* the BE pod gone, the DaemonSet's alone: reported, then not again within 4 s */
	in.units = &units[0];
	in.n_units = 1;
	in.ts_ns += 5 * NS;
	action_list_clear(&out);
	assert_int_equal(evict_memory_run(&in, &mem_cfg, &strict, &st, &out), 0);
	assert_int_equal(out.n, 1);
	assert_int_equal(out.v[0].kind, ACT_REPORT);
	in.ts_ns += 3 * NS;
	action_list_clear(&out);
	assert_int_equal(evict_memory_run(&in, &mem_cfg, &strict, &st, &out), 0);
	assert_int_equal(out.n, 0);
	in.ts_ns += 1 * NS;
	assert_int_equal(evict_memory_run(&in, &mem_cfg, &strict, &st, &out), 0);
	assert_int_equal(out.n, 1);
	action_list_free(&out);
	evict_memory_state_free(&st);
}

/* CPU-satisfaction eviction uses the same order and guards (its usage: CPU used). */
static void test_cpu_same_order(void **state)
{
	static const struct evict_cpu_config cpu_cfg = {.enabled = true,
							.satisfaction_lower = 0.6,
							.satisfaction_upper = 0.8,
							.be_usage_min = 0.9,
							.window_s = 1,
							.cooldown_s = 20};
	struct evict_cpu_state st = {0};
	struct action_list out = {0};
	struct pol_unit u[3];
	struct pol_input in;

	(void)state;
	memset(&in, 0, sizeof(in));
	memset(u, 0, sizeof(u));
	in.cpus = 2;
	in.units = u;
	in.n_units = 3;
	/* granted 2 CPUs (1 each) of 6 requested, all used: starved; equal use, so run time */
	for (int i = 0; i < 3; i++) {
		u[i] = (struct pol_unit){.id = (uint64_t)i + 1,
					 .cls = QOS_BE,
					 .quota_us = i == 2 ? -1 : 100000,
					 .period_us = 100000,
					 .request_cpus = 2,
					 .cpu_used = 0.95,
					 .start_ns = T0 - (uint64_t)(10 + i) * NS};
		snprintf(u[i].path, sizeof(u[i].path), "kubepods/pod%d", i + 1);
	}
	u[2].quota_us = 0; /* a 0 quota grants nothing: the total stays 2 */
	u[0].evict_guard = EVICT_GUARD_OPT_OUT;
	for (int t = 0; t < 2; t++) {
		in.ts_ns = T0 + (uint64_t)t * NS;
		action_list_clear(&out);
		assert_int_equal(evict_cpu_run(&in, &cpu_cfg, &strict, &st, &out), 0);
	}
	/* need = 6 - 2 / 0.8 = 3.5 CPUs: unit 1 (youngest) is opted out, then 2 and 3 */
	assert_int_equal(out.n, 3);
	assert_int_equal(out.v[0].kind, ACT_EVICT);
	assert_int_equal(out.v[0].id, 2);
	assert_int_equal(out.v[1].kind, ACT_EVICT);
	assert_int_equal(out.v[1].id, 3);
	assert_int_equal(out.v[2].kind, ACT_REPORT);
	assert_int_equal(out.v[2].id, 1);
	assert_int_equal(out.v[2].rule, RULE_EVICT_CPU_SATISFACTION);
	assert_int_equal(out.v[2].cause.kind, ACT_CAUSE_GUARD);
	assert_int_equal(out.v[2].cause.guard, EVICT_GUARD_OPT_OUT);
	action_list_free(&out);
	evict_cpu_state_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_run_time_breaks_ties),
		cmocka_unit_test(test_guarded_never_chosen),
		cmocka_unit_test(test_kube_system_needs_the_key),
		cmocka_unit_test(test_class_first),
		cmocka_unit_test(test_memory_reports_skipped),
		cmocka_unit_test(test_cpu_same_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
