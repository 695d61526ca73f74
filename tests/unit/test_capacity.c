// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Batch capacity: the formula, rises at once, lulls believed after the
 * window, stale data to 0 with a reason, LSE/LSR requests above usage, and
 * which changes become decision records; the published figure's hold and
 * step.
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

#include "policy/capacity.h"
#include "evidence.h"

#define SEC   1000000000ull
#define GIB   (1024.0 * 1024 * 1024)
#define T0_NS (1700000000ull * SEC)

/* A node of 4 CPUs and 16 GiB with one LS unit, one BE unit and system usage. */
struct world {
	struct pol_input in;
	struct pol_unit units[2];
};

static void world_set(struct world *w, uint64_t t_s, double ls_cpus, double be_cpus,
		      double sys_cpus)
{
	memset(w, 0, sizeof(*w));
	w->in.ts_ns = T0_NS + t_s * SEC;
	w->in.interval_s = 1;
	w->in.cpus = 4;
	w->in.mem_capacity = (uint64_t)(16 * GIB);
	w->in.units = w->units;
	w->in.n_units = 2;
	w->units[0] = (struct pol_unit){.id = 10, .cls = QOS_LS, .cpu_used = ls_cpus};
	w->units[1] = (struct pol_unit){.id = 20, .cls = QOS_BE, .cpu_used = be_cpus};
	w->units[0].mem_used = (uint64_t)(4 * GIB);
	w->units[1].mem_used = (uint64_t)(2 * GIB);
	w->in.node_cpu_used = ls_cpus + be_cpus + sys_cpus;
	w->in.mem_used = (uint64_t)(7 * GIB); /* 1 GiB system */
}

static struct capacity_config config(void)
{
	return (struct capacity_config){
		.enabled = true,
		.cpu_threshold = 0.60,
		.mem_threshold = 0.65,
		.window_s = 10,
		.percentile = 0.95,
		.cpu_reserve = 0.1,
		.mem_reserve = 0,
		.stale_s = 5,
		.min_change = 0.01,
		.hold_s = 10,
		.step = 0.10,
	};
}

static const struct action *find_rule(const struct action_list *l, enum rule_id rule)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].rule == rule)
			return &l->v[i];
	return NULL;
}

/* One step of a scenario: the load at t, and the batch CPU the policy must give. */
struct step {
	uint64_t t_s;
	double ls_cpus;
	double batch_cpus; /* expected; NAN: not checked */
	bool held;	   /* expected: held at 0 with a reason */
	bool cpu_record;   /* expected: a capacity.cpu decision this tick */
};

/*
 * Ticks every second from the first step to the last; a step's load holds
 * until the next step, and its expectations are checked at its own tick.
 */
static void run_steps(const struct step *steps, size_t n, const struct capacity_config *cfg)
{
	struct capacity_state st = {0};
	struct action_list acts = {0};
	struct capacity_result res;
	struct world w;

	for (size_t i = 0; i < n; i++) {
		const struct step *s = &steps[i];
		uint64_t end = i + 1 < n ? steps[i + 1].t_s : s->t_s + 1;

		for (uint64_t t = s->t_s; t < end; t++) {
			world_set(&w, t, s->ls_cpus, 1.0, 0.2);
			action_list_clear(&acts);
			assert_int_equal(capacity_tick(&w.in, NULL, cfg, &st, &res, &acts), 0);
			if (t != s->t_s)
				continue;
			if (!isnan(s->batch_cpus) &&
			    fabs(res.r[CAP_CPU].batch - s->batch_cpus) > 1e-9)
				fail_msg("t=%llu s: batch %.3f CPUs, want %.3f",
					 (unsigned long long)t, res.r[CAP_CPU].batch,
					 s->batch_cpus);
			if ((res.held != NULL) != s->held)
				fail_msg("t=%llu s: held \"%s\", want %s", (unsigned long long)t,
					 res.held ? res.held : "(none)",
					 s->held ? "held" : "not held");
			if ((find_rule(&acts, RULE_CAPACITY_CPU) != NULL) != s->cpu_record)
				fail_msg("t=%llu s: a capacity.cpu record %s",
					 (unsigned long long)t,
					 s->cpu_record ? "missing" : "not wanted");
		}
	}
	action_list_free(&acts);
	capacity_state_free(&st);
}

/*
 * 4 CPUs x 0.60 = 2.4; reserve 0.1; system 0.2. LS 0.2 leaves
 * 2.4 - 0.4 - 0.1 = 1.9; LS 1.2 leaves 0.9. Warm-up holds 0 for the first
 * window (10 s), then 1.9 shows at once.
 */
static void rising_load(void **state)
{
	static const struct step steps[] = {
		{0, 0.2, 0, true, true},      {5, 0.2, 0, true, false},
		{9, 0.2, 0, true, false},     {10, 0.2, 1.9, false, true},
		{11, 0.2, 1.9, false, false}, {12, 1.2, 0.9, false, true}, /* at once */
		{13, 1.2, 0.9, false, false},
	};
	struct capacity_config cfg = config();

	(void)state;
	run_steps(steps, sizeof(steps) / sizeof(steps[0]), &cfg);
}

/*
 * After a long rise, a lull of LS 1.2 -> 0.2: batch stays at 0.9 while the
 * window (10 s, p95) still holds a high sample, and comes back to 1.9 only
 * when the last high sample left the window.
 */
static void lull(void **state)
{
	static const struct step steps[] = {
		{0, 1.2, 0, true, true},      {10, 1.2, 0.9, false, true},
		{20, 1.2, 0.9, false, false}, {21, 0.2, 0.9, false, false},
		{25, 0.2, 0.9, false, false}, {30, 0.2, 0.9, false, false},
		{31, 0.2, 1.9, false, true}, /* the 1.2 of t=20 left the 10 s window */
	};
	struct capacity_config cfg = config();

	(void)state;
	run_steps(steps, sizeof(steps) / sizeof(steps[0]), &cfg);
}

/* A short spike inside a long lull: taken at once, believed gone after the window. */
static void spike(void **state)
{
	static const struct step steps[] = {
		{0, 0.2, 0, true, true},    {10, 0.2, 1.9, false, true},
		{11, 2.2, 0, false, true},  {12, 0.2, 0, false, false},
		{21, 0.2, 0, false, false}, {22, 0.2, 1.9, false, true},
	};
	struct capacity_config cfg = config();

	(void)state;
	run_steps(steps, sizeof(steps) / sizeof(steps[0]), &cfg);
}

/* Unwhole readings keep the last value for stale_s, then 0 with their reason; recovery. */
static void stale_data(void **state)
{
	struct capacity_config cfg = config();
	struct capacity_state st = {0};
	struct action_list acts = {0};
	struct capacity_result res;
	const struct action *a;
	struct world w;

	(void)state;
	for (uint64_t t = 0; t <= 10; t++) {
		world_set(&w, t, 0.2, 1.0, 0.2);
		assert_int_equal(capacity_tick(&w.in, NULL, &cfg, &st, &res, &acts), 0);
	}
	assert_null(res.held);
	assert_true(fabs(res.r[CAP_CPU].batch - 1.9) < 1e-9);
	/* reads fail from t=11; the numbers of the failing ticks must not count */
	for (uint64_t t = 11; t <= 15; t++) {
		world_set(&w, t, 3.0, 1.0, 0.2);
		action_list_clear(&acts);
		assert_int_equal(
			capacity_tick(&w.in, "cgroup reads failed", &cfg, &st, &res, &acts), 0);
		assert_null(res.held);
		assert_true(fabs(res.r[CAP_CPU].batch - 1.9) < 1e-9);
		assert_int_equal(acts.n, 0);
	}
	world_set(&w, 16, 3.0, 1.0, 0.2);
	action_list_clear(&acts);
	assert_int_equal(capacity_tick(&w.in, "cgroup reads failed", &cfg, &st, &res, &acts), 0);
	assert_string_equal(res.held, "cgroup reads failed");
	assert_true(res.r[CAP_CPU].batch == 0 && res.r[CAP_MEM].batch == 0);
	a = find_rule(&acts, RULE_CAPACITY_CPU);
	assert_non_null(a);
	assert_int_equal(a->value, 0);
	assert_int_equal(a->cause.kind, ACT_CAUSE_HELD);
	assert_string_equal(a->cause.held, "cgroup reads failed");
	assert_non_null(find_rule(&acts, RULE_CAPACITY_MEMORY));
	/* whole again at t=17: the gap since t=10 (7 s > stale_s) starts the window over */
	world_set(&w, 17, 0.2, 1.0, 0.2);
	action_list_clear(&acts);
	assert_int_equal(capacity_tick(&w.in, NULL, &cfg, &st, &res, &acts), 0);
	assert_non_null(res.held);
	assert_int_equal(res.samples, 1);
	for (uint64_t t = 18; t <= 30; t++) {
		world_set(&w, t, 0.2, 1.0, 0.2);
		action_list_clear(&acts);
		assert_int_equal(capacity_tick(&w.in, NULL, &cfg, &st, &res, &acts), 0);
		assert_true((res.held != NULL) == (t < 27)); /* 10 s after the restart at 17 */
	}
	assert_true(res.window_covered_s == cfg.window_s); /* full, and no more */
	assert_int_equal(res.samples, 11);		   /* t = 20 .. 30 */
	assert_true(fabs(res.r[CAP_CPU].batch - 1.9) < 1e-9);
	action_list_free(&acts);
	capacity_state_free(&st);
}

/*
 * An LSR pod requesting 2 CPUs and 6 GiB that uses 0.2 CPUs and 4 GiB counts
 * its request; an LS pod the same size counts its usage. Memory:
 * 16 GiB x 0.65 = 10.4; system 1 GiB.
 */
static void lse_request_above_usage(void **state)
{
	struct capacity_config cfg = config();
	struct capacity_result res;
	const struct capacity_terms *cpu = &res.r[CAP_CPU], *mem = &res.r[CAP_MEM];
	static const struct {
		enum qos_class cls;
		double ls_cpus, batch_cpus, ls_gib, batch_gib;
	} rows[] = {
		{QOS_LSR, 2.0, 0.1, 6.0, 3.4},
		{QOS_LSE, 2.0, 0.1, 6.0, 3.4},
		{QOS_LS, 0.2, 1.9, 4.0, 5.4},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct capacity_state st = {0};
		struct action_list acts = {0};
		struct world w;

		for (uint64_t t = 0; t <= 10; t++) {
			world_set(&w, t, 0.2, 1.0, 0.2);
			w.units[0].cls = rows[i].cls;
			w.units[0].request_cpus = 2.0;
			w.units[0].request_mem = (uint64_t)(6 * GIB);
			action_list_clear(&acts);
			assert_int_equal(capacity_tick(&w.in, NULL, &cfg, &st, &res, &acts), 0);
		}
		assert_null(res.held);
		assert_true(fabs(cpu->ls - rows[i].ls_cpus) < 1e-9);
		assert_true(fabs(cpu->system - 0.2) < 1e-9);
		assert_true(fabs(cpu->batch - rows[i].batch_cpus) < 1e-9);
		assert_true(fabs(mem->ls / GIB - rows[i].ls_gib) < 1e-6);
		assert_true(fabs(mem->system / GIB - 1.0) < 1e-6);
		assert_true(fabs(mem->batch / GIB - rows[i].batch_gib) < 1e-6);
		action_list_free(&acts);
		capacity_state_free(&st);
	}
}

/* The formula never goes below 0, and the records carry its terms. */
static void floor_and_evidence(void **state)
{
	struct capacity_config cfg = config();
	struct capacity_state st = {0};
	struct action_list acts = {0};
	struct capacity_result res;
	const struct action *a = NULL;
	struct world w;

	(void)state;
	for (uint64_t t = 0; t <= 10; t++) {
		world_set(&w, t, 3.5, 0.3, 0.2);
		action_list_clear(&acts);
		assert_int_equal(capacity_tick(&w.in, NULL, &cfg, &st, &res, &acts), 0);
		if (find_rule(&acts, RULE_CAPACITY_CPU))
			a = find_rule(&acts, RULE_CAPACITY_CPU);
	}
	assert_true(res.r[CAP_CPU].batch == 0);
	/* the end of the warm-up is a record of its own: 0 by the formula, no longer held */
	assert_non_null(a);
	assert_ptr_equal(a, find_rule(&acts, RULE_CAPACITY_CPU));
	assert_int_equal(a->value, 0);
	assert_int_equal(a->cause.kind, ACT_CAUSE_NONE);
	world_set(&w, 11, 0.2, 0.3, 0.2);
	action_list_clear(&acts);
	assert_int_equal(capacity_tick(&w.in, NULL, &cfg, &st, &res, &acts), 0);
	assert_null(find_rule(&acts, RULE_CAPACITY_CPU)); /* 3.5 is still in the window */
	for (uint64_t t = 12; t <= 20; t++) {
		world_set(&w, t, 0.2, 0.3, 0.2);
		action_list_clear(&acts);
		assert_int_equal(capacity_tick(&w.in, NULL, &cfg, &st, &res, &acts), 0);
		assert_null(find_rule(&acts, RULE_CAPACITY_CPU));
	}
	world_set(&w, 21, 0.2, 0.3, 0.2);
	action_list_clear(&acts);
	assert_int_equal(capacity_tick(&w.in, NULL, &cfg, &st, &res, &acts), 0);
	a = find_rule(&acts, RULE_CAPACITY_CPU);
	assert_non_null(a);
	assert_int_equal(a->kind, ACT_CAPACITY);
	assert_string_equal(a->resource, "kubernetes.io/batch-cpu");
	assert_int_equal(a->value, 1900);
	assert_true(fabs(evidence(a, "capacity") - 4) < 1e-9);
	assert_true(fabs(evidence(a, "threshold") - 0.6) < 1e-9);
	assert_true(fabs(evidence(a, "ls") - 0.2) < 1e-9);
	assert_true(fabs(evidence(a, "system") - 0.2) < 1e-9);
	assert_true(fabs(evidence(a, "used") - 0.4) < 1e-9);
	assert_true(fabs(evidence(a, "reserve") - 0.1) < 1e-9);
	assert_true(fabs(evidence(a, "batch") - 1.9) < 1e-9);
	action_list_free(&acts);
	capacity_state_free(&st);
}

/* Changes under min_change of capacity are not records; larger ones are. */
static void min_change(void **state)
{
	static const struct step steps[] = {
		{0, 0.2, 0, true, true},
		{10, 0.2, 1.9, false, true},
		{11, 0.23, 1.87, false, false}, /* 30 milli-CPUs < 1% of 4 CPUs */
		{12, 0.3, 1.8, false, true},
	};
	struct capacity_config cfg = config();

	(void)state;
	run_steps(steps, sizeof(steps) / sizeof(steps[0]), &cfg);
}

/*
 * The published figure (the Node's) with a hold of 10 minutes: ticks every
 * second from `from` to `to` (exclusive) with LS load ls(t); returns how
 * often the published CPU figure changed, *last its final API value.
 */
static int run_published(struct capacity_state *st, const struct capacity_config *cfg,
			 uint64_t from, uint64_t to, double (*ls)(uint64_t t), uint64_t *last)
{
	struct action_list acts = {0};
	struct capacity_result res;
	struct world w;
	int changes = 0;

	for (uint64_t t = from; t < to; t++) {
		uint64_t before = st->published[CAP_CPU];

		world_set(&w, t, ls(t), 1.0, 0.2);
		action_list_clear(&acts);
		assert_int_equal(capacity_tick(&w.in, NULL, cfg, st, &res, &acts), 0);
		assert_true(fabs(res.r[CAP_CPU].published * 1000 - (double)st->published[CAP_CPU]) <
			    1e-6);
		/* the scheduler's figure is never above what the node can take now */
		assert_true(res.r[CAP_CPU].published <= res.r[CAP_CPU].batch + 1e-9);
		if (st->published[CAP_CPU] != before) {
			changes++;
			/* each change of it is a record the patch can point at */
			assert_non_null(find_rule(&acts, RULE_CAPACITY_CPU));
		}
	}
	*last = st->published[CAP_CPU];
	action_list_free(&acts);
	return changes;
}

static struct capacity_config hold_config(void)
{
	struct capacity_config cfg = config();

	cfg.hold_s = 600;
	return cfg;
}

/* LS swinging 0.2 to 1.0 CPUs every minute, from its peak at t=0. */
static double ls_swing(uint64_t t)
{
	return 0.6 + 0.4 * cos(2 * M_PI * (double)t / 60);
}

/*
 * A load that swings within the hold publishes once, after the warm-up,
 * and then holds for two hours while the formula's figure follows every
 * swing: 2.4 - (1.0 + 0.2) - 0.1 = 1.1 CPUs, less the step: 990m.
 */
static void swing_publishes_once(void **state)
{
	struct capacity_config cfg = hold_config();
	struct capacity_state st = {0};
	uint64_t last;

	(void)state;
	assert_int_equal(run_published(&st, &cfg, 0, 10, ls_swing, &last), 0);
	assert_int_equal(last, 0); /* held while warming up */
	assert_int_equal(run_published(&st, &cfg, 10, 7200, ls_swing, &last), 1);
	assert_int_equal(last, 990);
	capacity_state_free(&st);
}

static double ls_rise(uint64_t t)
{
	/* steady 0.2; 1.2 from t=100 for 10 s, 1.25 at t=110 (a step's margin), then a lull */
	return t < 100 ? 0.2 : t < 110 ? 1.2 : t == 110 ? 1.25 : 0.2;
}

/*
 * A rise shrinks the figure on its first tick, to a step under the new
 * floor: 2.4 - 1.4 - 0.1 = 0.9, published 810m; a peak a little higher
 * within the step moves nothing. The lull grows it back once, after the
 * hold (600 s, to a 60th) from the last high tick: 1.9 less the step, 1710m.
 */
static void rise_shrinks_lull_grows_once(void **state)
{
	struct capacity_config cfg = hold_config();
	struct capacity_state st = {0};
	uint64_t last;

	(void)state;
	assert_int_equal(run_published(&st, &cfg, 0, 100, ls_rise, &last), 1);
	assert_int_equal(last, 1710);
	assert_int_equal(run_published(&st, &cfg, 100, 101, ls_rise, &last), 1);
	assert_int_equal(last, 810);
	/* 1.25 leaves a floor of 0.85: above 810m, no move */
	assert_int_equal(run_published(&st, &cfg, 101, 111, ls_rise, &last), 0);
	/* the lull: nothing while the hold remembers the peak */
	assert_int_equal(run_published(&st, &cfg, 111, 700, ls_rise, &last), 0);
	assert_int_equal(last, 810);
	/* then one growth, and nothing more for an hour */
	assert_int_equal(run_published(&st, &cfg, 700, 4300, ls_rise, &last), 1);
	assert_int_equal(last, 1710);
	capacity_state_free(&st);
}

static double ls_rise_late(uint64_t t)
{
	return t >= 5000 && t < 5010 ? 1.2 : 0.2;
}

/*
 * A new hold_s (a reload) keeps the peak it had: no early growth. Nor does
 * a wall clock stepped back (by 1000 s, once the window let the peak go):
 * the peak holds a whole hold from the step.
 */
static void hold_reload_keeps_peak(void **state)
{
	struct capacity_config cfg = hold_config();
	struct capacity_state st = {0};
	uint64_t last;

	(void)state;
	run_published(&st, &cfg, 0, 111, ls_rise, &last);
	assert_int_equal(last, 810);
	cfg.hold_s = 300;
	assert_int_equal(run_published(&st, &cfg, 111, 400, ls_rise, &last), 0);
	assert_int_equal(last, 810);
	/* the folded peak sits in the bucket of t=111 and leaves 300 s later */
	assert_int_equal(run_published(&st, &cfg, 400, 430, ls_rise, &last), 1);
	assert_int_equal(last, 1710);
	capacity_state_free(&st);

	cfg = hold_config();
	memset(&st, 0, sizeof(st));
	assert_int_equal(run_published(&st, &cfg, 0, 5100, ls_rise_late, &last), 2);
	assert_int_equal(last, 810);
	assert_int_equal(run_published(&st, &cfg, 4100, 4690, ls_rise_late, &last), 0);
	assert_int_equal(run_published(&st, &cfg, 4690, 4720, ls_rise_late, &last), 1);
	assert_int_equal(last, 1710);
	capacity_state_free(&st);
}

/*
 * A day whose LS peaks climb and fall: on 16 CPUs, LS swinging by 1 CPU every
 * 10 minutes over a base that rises from 0 to 4 CPUs and back over 24 hours
 * (hourly peaks of 1.2 to 5.2 CPUs with the system's 0.2), ticks of 10 s, the
 * shipped settings (window 300 s, hold 3600 s, step 10 %). The published
 * figure steps down as the morning's peaks rise and up an hour behind the
 * evening's: five moves each way (3 to 7 allowed), at most 14 a day, under
 * the 17 a day (0.72 an hour) that 1 write a second at 5,000 nodes allows.
 */
static void diurnal_day(void **state)
{
	struct capacity_config cfg = config();
	struct capacity_state st = {0};
	struct action_list acts = {0};
	struct capacity_result res;
	struct world w;
	int changes[2] = {0};

	(void)state;
	cfg.window_s = 300;
	cfg.hold_s = 3600;
	cfg.stale_s = 60;
	for (uint64_t t = 0; t < 2 * 86400; t += 10) {
		double base = 2 * (1 - cos(2 * M_PI * (double)t / 86400));
		uint64_t before = st.published[CAP_CPU];

		world_set(&w, t, base + 0.5 + 0.5 * sin(2 * M_PI * (double)t / 600), 1.0, 0.2);
		w.in.cpus = 16;
		w.in.interval_s = 10;
		action_list_clear(&acts);
		assert_int_equal(capacity_tick(&w.in, NULL, &cfg, &st, &res, &acts), 0);
		/* the first day's start aside: the second day is a day in steady state */
		if (t >= 86400 && st.published[CAP_CPU] != before)
			changes[st.published[CAP_CPU] < before]++;
	}
	print_message("diurnal day: %d moves up, %d down\n", changes[0], changes[1]);
	assert_in_range(changes[0], 3, 7);
	assert_in_range(changes[1], 3, 7);
	action_list_free(&acts);
	capacity_state_free(&st);
}

/* The API's figure of a batch value: rounded down; none, negative or absurd (a replayed record's)
 * bounded. */
static void test_api_value(void **state)
{
	(void)state;
	assert_int_equal(capacity_api_value(CAP_CPU, 1.9), 1900);
	assert_int_equal(capacity_api_value(CAP_MEM, 1048576.7), 1048576);
	assert_int_equal(capacity_api_value(CAP_CPU, -3), 0);
	assert_int_equal(capacity_api_value(CAP_MEM, NAN), 0);
	assert_true(capacity_api_value(CAP_MEM, 2.46667e+65) == UINT64_MAX);
	assert_true(capacity_api_value(CAP_CPU, INFINITY) == UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api_value),
		cmocka_unit_test(rising_load),
		cmocka_unit_test(lull),
		cmocka_unit_test(spike),
		cmocka_unit_test(stale_data),
		cmocka_unit_test(lse_request_above_usage),
		cmocka_unit_test(floor_and_evidence),
		cmocka_unit_test(min_change),
		cmocka_unit_test(swing_publishes_once),
		cmocka_unit_test(rise_shrinks_lull_grows_once),
		cmocka_unit_test(hold_reload_keeps_peak),
		cmocka_unit_test(diurnal_day),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
