// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Memory and CPU-satisfaction eviction: triggers, arithmetic, order, cool-down, pending rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "policy/evict_cpu.h"
#include "policy/evict_memory.h"
#include "evidence.h"

#define MAX_UNITS 8
#define MAX_STEPS 8
#define MB	  1000000.0
#define NS	  1000000000ULL

/* One unit; memory in MB, CPU in CPUs; quota -1 = none. */
struct unit_spec {
	uint64_t id;
	enum qos_class cls;
	int32_t prio;
	double mem_mb, anon_mb;
	double cpu, req, quota;
	const char *cpus;
};

/* One tick: time, node memory used, units gone (bit i = units[i]), CPU use scale, victims. */
struct step {
	double t;
	double used_mb;
	unsigned int gone;
	double cpu_scale;	  /* 0 = 1 */
	uint64_t want[MAX_UNITS]; /* victim ids in order, 0-terminated */
};

struct evict_case {
	const char *name;
	struct unit_spec u[MAX_UNITS];
	struct step s[MAX_STEPS];
};

static const struct evict_memory_config mem_cfg = {
	.enabled = true, .threshold = 0.70, .release = 0.68, .cooldown_s = 4};
static const struct evict_cpu_config cpu_cfg = {.enabled = true,
						.satisfaction_lower = 0.6,
						.satisfaction_upper = 0.8,
						.be_usage_min = 0.9,
						.window_s = 60,
						.cooldown_s = 20};

static const struct evict_order_config order_cfg = {.kube_system = false};

static size_t n_units(const struct evict_case *c)
{
	size_t n = 0;

	while (n < MAX_UNITS && c->u[n].id)
		n++;
	return n;
}

/* Capacity: 1000 MB and 4 CPUs; units sorted by id as the contract says. */
static void build(const struct evict_case *c, const struct step *s, struct pol_input *in,
		  struct pol_unit *units)
{
	size_t k = 0;

	memset(in, 0, sizeof(*in));
	in->ts_ns = (uint64_t)(s->t * NS) + 1000 * NS;
	in->cpus = 4;
	in->mem_capacity = (uint64_t)(1000 * MB);
	in->mem_used = (uint64_t)(s->used_mb * MB);
	for (size_t i = 0; i < n_units(c); i++) {
		const struct unit_spec *us = &c->u[i];
		struct pol_unit *u = &units[k];

		if (s->gone & (1u << i))
			continue;
		memset(u, 0, sizeof(*u));
		u->id = us->id;
		snprintf(u->path, sizeof(u->path), "unit%llu", (unsigned long long)us->id);
		u->cls = us->cls;
		u->priority = us->prio;
		u->mem_used = (uint64_t)(us->mem_mb * MB);
		u->mem_anon_unevict = (uint64_t)(us->anon_mb * MB);
		u->cpu_used = us->cpu * (s->cpu_scale ? s->cpu_scale : 1);
		u->request_cpus = us->req;
		u->period_us = 100000;
		u->quota_us = us->quota < 0 ? -1 : (int64_t)(us->quota * 100000);
		snprintf(u->cpus, sizeof(u->cpus), "%s", us->cpus ? us->cpus : "");
		k++;
	}
	in->units = units;
	in->n_units = k;
}

typedef int (*run_fn)(const struct pol_input *in, void *st, struct action_list *out);

static int run_mem(const struct pol_input *in, void *st, struct action_list *out)
{
	return evict_memory_run(in, &mem_cfg, &order_cfg, st, out);
}

static int run_cpu(const struct pol_input *in, void *st, struct action_list *out)
{
	return evict_cpu_run(in, &cpu_cfg, &order_cfg, st, out);
}

/* Runs every step; each must name exactly its victims, in order, with the rule given. */
static void run_case(const struct evict_case *c, run_fn run, void *st, enum rule_id rule)
{
	struct pol_unit units[MAX_UNITS];
	struct action_list out = {0};

	for (size_t i = 0; i < MAX_STEPS && (i == 0 || c->s[i].t); i++) {
		const struct step *s = &c->s[i];
		struct pol_input in;
		size_t n = 0;

		build(c, s, &in, units);
		action_list_clear(&out);
		assert_int_equal(run(&in, st, &out), 0);
		while (n < MAX_UNITS && s->want[n])
			n++;
		if (out.n != n)
			fail_msg("%s: step %zu (t=%g): %zu victims, want %zu", c->name, i, s->t,
				 out.n, n);
		for (size_t j = 0; j < n; j++) {
			if (out.v[j].id != s->want[j])
				fail_msg("%s: step %zu victim %zu is %llu, want %llu", c->name, i,
					 j, (unsigned long long)out.v[j].id,
					 (unsigned long long)s->want[j]);
			assert_int_equal(out.v[j].kind, ACT_EVICT);
			assert_int_equal(out.v[j].rule, rule);
			assert_int_equal(out.v[j].cls, QOS_BE);
		}
	}
	action_list_free(&out);
}

/* Units shared by the memory cases: need at 700 MB is 700 - 680 = 20 MB. */
#define BE_P10                                                                                     \
	{                                                                                          \
		1, QOS_BE, 10, 50, 50, 0, 0, -1, NULL                                              \
	}
#define BE_8_8                                                                                     \
	{                                                                                          \
		2, QOS_BE, 0, 8, 8, 0, 0, -1, NULL                                                 \
	}
#define BE_8_20                                                                                    \
	{                                                                                          \
		3, QOS_BE, 0, 8, 20, 0, 0, -1, NULL                                                \
	}
#define BE_8_20B                                                                                   \
	{                                                                                          \
		4, QOS_BE, 0, 8, 20, 0, 0, -1, NULL                                                \
	}
#define BE_12                                                                                      \
	{                                                                                          \
		1, QOS_BE, 0, 12, 12, 0, 0, -1, NULL                                               \
	}
#define BE_8                                                                                       \
	{                                                                                          \
		2, QOS_BE, 0, 8, 8, 0, 0, -1, NULL                                                 \
	}
#define BE_10_20                                                                                   \
	{                                                                                          \
		2, QOS_BE, 0, 10, 20, 0, 0, -1, NULL                                               \
	}
#define BE_5                                                                                       \
	{                                                                                          \
		3, QOS_BE, 0, 5, 5, 0, 0, -1, NULL                                                 \
	}
#define BE_30_1                                                                                    \
	{                                                                                          \
		6, QOS_BE, 0, 30, 1, 0, 0, -1, NULL                                                \
	}
#define LS_BIG                                                                                     \
	{                                                                                          \
		5, QOS_LS, -100, 400, 400, 0, 0, -1, NULL                                          \
	}

static const struct evict_case mem_cases[] = {
	{"below threshold", {BE_8_8, LS_BIG}, {{.t = 0, .used_mb = 699}}},
	{"exactly at threshold", {BE_8_20, LS_BIG}, {{.t = 0, .used_mb = 700, .want = {3}}}},
	/* Priority first, then anon + unevictable, then id; stops once 8+8+8 >= 20. */
	{"victim order",
	 {BE_P10, BE_8_8, BE_8_20, BE_8_20B, LS_BIG},
	 {{.t = 0, .used_mb = 700, .want = {3, 4, 2}}}},
	/* need = used - 680 MB: 20 MB is covered by 12 + 8 MB, 21 MB takes the third unit. */
	{"release arithmetic: 20 MB",
	 {BE_12, BE_8, BE_5},
	 {{.t = 0, .used_mb = 700, .want = {1, 2}}}},
	{"release arithmetic: 21 MB",
	 {BE_12, BE_8, BE_5},
	 {{.t = 0, .used_mb = 701, .want = {1, 2, 3}}}},
	{"never LS, LSR, LSE or SYSTEM",
	 {LS_BIG,
	  {6, QOS_LSR, -9, 300, 300, 0, 0, -1, NULL},
	  {7, QOS_LSE, -9, 100, 100, 0, 0, -1, NULL},
	  {8, QOS_SYSTEM, -9, 100, 100, 0, 0, -1, NULL}},
	 {{.t = 0, .used_mb = 950}}},
	{"BE runs out: only BE named", {BE_8_8, LS_BIG}, {{.t = 0, .used_mb = 900, .want = {2}}}},
	/* Units 1 and 2 leave after the first round; the next waits for the 4 s cool-down. */
	{"cool-down",
	 {BE_12, BE_10_20, BE_30_1},
	 {{.t = 0, .used_mb = 700, .want = {2, 1}},
	  {.t = 1, .used_mb = 700, .gone = 3},
	  {.t = 3.9, .used_mb = 700, .gone = 3},
	  {.t = 4, .used_mb = 700, .gone = 3, .want = {6}}}},
	/*
	 * Named units that stay count as released for 30 s and are not named
	 * again: at t = 10 only 50 - 22 MB is needed, at 29.9 s every BE unit is
	 * pending, at 30 s units 1 and 2 are due again (and not enough).
	 */
	{"pending eviction",
	 {BE_12, BE_10_20, {9, QOS_BE, 5, 30, 30, 0, 0, -1, NULL}},
	 {{.t = 0, .used_mb = 700, .want = {2, 1}},
	  {.t = 5, .used_mb = 700},
	  {.t = 10, .used_mb = 730, .want = {9}},
	  {.t = 29.9, .used_mb = 740},
	  {.t = 30, .used_mb = 740, .want = {2, 1}}}},
	/* A pending unit that is gone has released its memory: the need is unmet again. */
	{"gone units leave pending",
	 {{3, QOS_BE, 0, 20, 20, 0, 0, -1, NULL}, BE_30_1},
	 {{.t = 0, .used_mb = 700, .want = {3}}, {.t = 5, .used_mb = 700, .gone = 1, .want = {6}}}},
};

static void test_memory_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(mem_cases) / sizeof(mem_cases[0]); i++) {
		struct evict_memory_state st = {0};

		run_case(&mem_cases[i], run_mem, &st, RULE_EVICT_MEMORY);
		evict_memory_state_free(&st);
	}
}

static void assert_near(double got, double want, double eps)
{
	if (!(fabs(got - want) <= eps))
		fail_msg("got %.17g, want %.17g", got, want);
}

static void test_memory_evidence(void **state)
{
	static const struct evict_case c = {"", {BE_8_20}, {{.t = 0, .used_mb = 750}}};
	struct evict_memory_config off = mem_cfg;
	struct evict_memory_state st = {0};
	struct action_list out = {0};
	struct pol_unit units[MAX_UNITS];
	struct pol_input in;

	(void)state;
	build(&c, &c.s[0], &in, units);
	assert_int_equal(evict_memory_run(&in, &mem_cfg, &order_cfg, &st, &out), 0);
	assert_int_equal(out.n, 1);
	assert_near(evidence(&out.v[0], "mem_used_bytes"), 750 * MB, 1);
	assert_near(evidence(&out.v[0], "mem_capacity_bytes"), 1000 * MB, 1);
	assert_near(evidence(&out.v[0], "used_ratio"), 0.75, 1e-9);
	assert_near(evidence(&out.v[0], "threshold"), 0.70, 1e-9);
	assert_near(evidence(&out.v[0], "release"), 0.68, 1e-9);
	assert_near(evidence(&out.v[0], "need_bytes"), 70 * MB, 1);
	assert_near(evidence(&out.v[0], "victim_mem_bytes"), 8 * MB, 1);
	assert_near(evidence(&out.v[0], "victim_priority"), 0, 0);
	action_list_free(&out);
	evict_memory_state_free(&st);

	/* Disabled: nothing, even far over the threshold. */
	off.enabled = false;
	assert_int_equal(evict_memory_run(&in, &off, &order_cfg, &st, &out), 0);
	assert_int_equal(out.n, 0);
	action_list_free(&out);
}

/*
 * BE units granted 0.5 CPU each by quota (2 in all) and requesting 10:
 * satisfaction 0.2 < 0.6, usage 1.94 / 2 >= 0.9. Release until requested -
 * released >= 2 / 0.8, that is released >= 7.5: 4 + 3 + 1 by CPU use.
 */
#define BE_R4                                                                                      \
	{                                                                                          \
		1, QOS_BE, 0, 0, 0, 0.50, 4, 0.5, NULL                                             \
	}
#define BE_R3                                                                                      \
	{                                                                                          \
		2, QOS_BE, 0, 0, 0, 0.49, 3, 0.5, NULL                                             \
	}
#define BE_R1                                                                                      \
	{                                                                                          \
		3, QOS_BE, 0, 0, 0, 0.48, 1, 0.5, NULL                                             \
	}
#define BE_R2                                                                                      \
	{                                                                                          \
		4, QOS_BE, 0, 0, 0, 0.47, 2, 0.5, NULL                                             \
	}
#define LS_HOT                                                                                     \
	{                                                                                          \
		5, QOS_LS, -100, 0, 0, 3.0, 8, -1, NULL                                            \
	}

static const struct evict_case cpu_cases[] = {
	{"window then victim order",
	 {BE_R4, BE_R3, BE_R1, BE_R2, LS_HOT},
	 {{.t = 0}, {.t = 30}, {.t = 59.9}, {.t = 60, .want = {1, 2, 3}}}},
	/* Usage under 90% of the grant at t = 50 restarts the window. */
	{"window reset",
	 {BE_R4, BE_R3, BE_R1, BE_R2},
	 {{.t = 0},
	  {.t = 40},
	  {.t = 50, .cpu_scale = 0.5},
	  {.t = 60},
	  {.t = 100},
	  {.t = 119},
	  {.t = 120, .want = {1, 2, 3}}}},
	/* Priority first, then CPU use. */
	{"priority first",
	 {BE_R4, BE_R3, BE_R1, {4, QOS_BE, -1, 0, 0, 0.47, 2, 0.5, NULL}},
	 {{.t = 0}, {.t = 60, .want = {4, 1, 2}}}},
	/* The victims leave; unit 4 alone (0.5 of 2 granted) is due after 20 s. */
	{"cool-down",
	 {BE_R4, BE_R3, BE_R1, BE_R2},
	 {{.t = 0},
	  {.t = 60, .want = {1, 2, 3}},
	  {.t = 70, .gone = 7},
	  {.t = 79.9, .gone = 7},
	  {.t = 80, .gone = 7, .want = {4}}}},
	/* The victims stay (report mode): pending covers the need until 30 s have passed. */
	{"pending eviction",
	 {BE_R4, BE_R3, BE_R1, BE_R2},
	 {{.t = 0},
	  {.t = 60, .want = {1, 2, 3}},
	  {.t = 80},
	  {.t = 89.9},
	  {.t = 90, .want = {1, 2, 3}}}},
	/* Granted by cpuset "0-1" (2 CPUs) and by the capacity (4): 6 / 10 is not under 0.6. */
	{"at the lower bound",
	 {{1, QOS_BE, 0, 0, 0, 2, 4, -1, "0-1"}, {2, QOS_BE, 0, 0, 0, 4, 6, -1, NULL}},
	 {{.t = 0}, {.t = 60}}},
	{"no BE request", {{1, QOS_BE, 0, 0, 0, 2, 0, 0.5, NULL}, LS_HOT}, {{.t = 0}, {.t = 60}}},
	{"only LS starved", {LS_HOT}, {{.t = 0}, {.t = 60}}},
};

static void test_cpu_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cpu_cases) / sizeof(cpu_cases[0]); i++) {
		struct evict_cpu_state st = {0};

		run_case(&cpu_cases[i], run_cpu, &st, RULE_EVICT_CPU_SATISFACTION);
		evict_cpu_state_free(&st);
	}
}

/* Grants from a quota (0.5), a cpuset "0,2-3" (3) and the capacity (4): 7.5 CPUs. */
static void test_cpu_evidence(void **state)
{
	static const struct evict_case c = {"",
					    {{1, QOS_BE, 0, 0, 0, 0.5, 5, 0.5, NULL},
					     {2, QOS_BE, 0, 0, 0, 3, 5, -1, "0,2-3"},
					     {3, QOS_BE, 0, 0, 0, 3.5, 5, -1, ""}},
					    {{.t = 0}, {.t = 60}}};
	struct evict_cpu_state st = {0};
	struct action_list out = {0};
	struct pol_unit units[MAX_UNITS];
	struct pol_input in;

	(void)state;
	for (int i = 0; i < 2; i++) {
		action_list_clear(&out);
		build(&c, &c.s[i], &in, units);
		assert_int_equal(evict_cpu_run(&in, &cpu_cfg, &order_cfg, &st, &out), 0);
	}
	/* need = 15 - 7.5 / 0.8 = 5.625: units 3 (3.5 CPUs) then 2 (3 CPUs). */
	assert_int_equal(out.n, 2);
	assert_int_equal(out.v[0].id, 3);
	assert_int_equal(out.v[1].id, 2);
	assert_near(evidence(&out.v[0], "granted_cpus"), 7.5, 1e-9);
	assert_near(evidence(&out.v[0], "requested_cpus"), 15, 1e-9);
	assert_near(evidence(&out.v[0], "satisfaction"), 0.5, 1e-9);
	assert_near(evidence(&out.v[0], "be_used_cpus"), 7, 1e-9);
	assert_near(evidence(&out.v[0], "usage_ratio"), 7 / 7.5, 1e-9);
	assert_near(evidence(&out.v[0], "window_s"), 60, 1e-9);
	assert_near(evidence(&out.v[0], "victim_request_cpus"), 5, 1e-9);
	action_list_free(&out);
	evict_cpu_state_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_cases),
		cmocka_unit_test(test_memory_evidence),
		cmocka_unit_test(test_cpu_cases),
		cmocka_unit_test(test_cpu_evidence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
