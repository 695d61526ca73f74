// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory suppression on constructed guilty lists: a guilty BE unit's page
 * cache asked back (v2 with memory.reclaim only), its limit cut by half the
 * gap to anon + margin per guilty tick (memory.high on v2,
 * memory.limit_in_bytes on v1), raised at once under anon growth, held,
 * grown back slowly once well and handed back at its ceiling; never an LS
 * unit; evicted only after evict_after_s at its floor, in eviction order.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/mem_suppress.h"
#include "suppress_ticks.h"

#define MIB (1024ll * 1024)
#define GIB (1024 * MIB)

enum { LS = 1, BE = 2, BE2 = 3 };

static struct mem_suppress_config config(void)
{
	return (struct mem_suppress_config){
		.enabled = true,
		.reclaim_share = 0.5,
		.reclaim_interval_s = 2,
		.margin_bytes = 64 * MIB,
		.steps = {.cut_share = 0.5,
			  .well_s = 10,
			  .grow_share = 0.02,
			  .min_change = 4 * MIB},
		.evict = true,
		.evict_after_s = 60,
		.evict_cooldown_s = 20,
	};
}

struct fx {
	struct pol_unit units[3];
	struct pol_input in;
	struct mem_suppress_config cfg;
	struct evict_order_config order;
	struct mem_suppress_state st;
	struct action_list out;
};

/* A node of 16 GiB: an LS unit, and two BE units with 2 GiB used, 1.8 of it page cache. */
static void setup(struct fx *f, bool v2, bool reclaim)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 3; i++) {
		struct pol_unit *u = &f->units[i];

		u->id = (uint64_t)i + 1;
		snprintf(u->path, sizeof(u->path), "kubepods/pod%d", i + 1);
		u->cls = i ? QOS_BE : QOS_LS;
		u->mem_max = -1;
		u->mem_high = -1;
		u->mem_usage = 2 * GIB;
		u->mem_file = 1843 * MIB;
		u->mem_anon_unevict = 200 * MIB;
		u->mem_used = 300 * MIB;
	}
	f->in.units = f->units;
	f->in.n_units = 3;
	f->in.mem_capacity = 16 * GIB;
	f->in.mem_v2 = v2;
	f->in.has_mem_reclaim = reclaim;
	f->in.ts_ns = 1000 * SEC;
	f->cfg = config();
}

static void teardown(struct fx *f)
{
	mem_suppress_state_free(&f->st);
	action_list_free(&f->out);
}

/* One tick at t seconds with the given guilty list. */
static void tick(struct fx *f, double t, const struct mem_guilty *g, size_t n)
{
	tick_clock(&f->in, t);
	action_list_clear(&f->out);
	assert_int_equal(mem_suppress_run(&f->in, &f->cfg, &f->order, g, n, &f->st, &f->out), 0);
}

/* The action of kind on unit id, or NULL. */
static const struct action *find(const struct fx *f, uint64_t id, enum act_kind kind)
{
	return find_action(&f->out, id, kind);
}

static const struct mem_guilty guilty_be = {.culprit = BE, .victim = LS, .share = 0.8};

/* v2 with memory.reclaim: reclaim first, then memory.high cut by half the gap, per guilty tick. */
static void test_v2_reclaim_then_high(void **state)
{
	struct fx f;
	const struct action *a;
	int64_t floor = 264 * MIB;

	(void)state;
	setup(&f, true, true);
	tick(&f, 0, &guilty_be, 1);
	assert_int_equal(f.out.n, 2);
	assert_int_equal(f.out.v[0].kind, ACT_MEM_RECLAIM); /* first: the page cache */
	assert_int_equal(f.out.v[0].rule, RULE_MEM_SUPPRESS_RECLAIM);
	assert_int_equal(f.out.v[0].value, (int64_t)(0.5 * 1843 * MIB + 0.5));
	assert_int_equal(f.out.v[0].related_id, LS);
	assert_string_equal(f.out.v[0].related, "kubepods/pod1");
	a = &f.out.v[1];
	assert_int_equal(a->kind, ACT_MEM_HIGH);
	assert_int_equal(a->rule, RULE_MEM_SUPPRESS_LIMIT);
	assert_int_equal(a->value, 2 * GIB - (2 * GIB - floor) / 2);
	assert_null(find(&f, BE2, ACT_MEM_HIGH)); /* not guilty: untouched */
	/* a second later: cut again, but no reclaim within reclaim_interval_s */
	tick(&f, 1, &guilty_be, 1);
	assert_null(find(&f, BE, ACT_MEM_RECLAIM));
	a = find(&f, BE, ACT_MEM_HIGH);
	assert_non_null(a);
	assert_int_equal(a->value, floor + (2 * GIB - floor) / 4);
	tick(&f, 2, &guilty_be, 1);
	assert_non_null(find(&f, BE, ACT_MEM_RECLAIM));
	teardown(&f);
}

/* v1 (no memory.reclaim): memory.limit_in_bytes only; down to the floor and no lower. */
static void test_v1_limit_to_floor(void **state)
{
	struct fx f;
	const struct action *a = NULL;
	int64_t floor = 264 * MIB;

	(void)state;
	setup(&f, false, false);
	for (int t = 0; t < 12; t++) {
		tick(&f, t, &guilty_be, 1);
		assert_null(find(&f, BE, ACT_MEM_RECLAIM));
		a = find(&f, BE, ACT_MEM_LIMIT);
		assert_non_null(a);
		assert_true(a->value >= floor);
	}
	assert_true(a->value - floor < 4 * MIB);
	assert_null(find(&f, BE, ACT_EVICT));
	teardown(&f);
}

/* A v1 limit must stay above anon: growth raises it at once, guilty or not. */
static void test_raise_ahead_of_anon(void **state)
{
	struct fx f;
	const struct action *a;

	(void)state;
	setup(&f, false, false);
	for (int t = 0; t < 12; t++)
		tick(&f, t, &guilty_be, 1);
	f.units[1].mem_anon_unevict = 500 * MIB;
	tick(&f, 12, &guilty_be, 1);
	a = find(&f, BE, ACT_MEM_LIMIT);
	assert_int_equal(a->value, 564 * MIB);
	assert_int_equal(a->rule, RULE_MEM_SUPPRESS_RAISE);
	teardown(&f);
}

/* A first cut of a unit already under its floor starts at the floor, page-aligned: a cut. */
static void test_first_cut_under_floor(void **state)
{
	struct fx f;
	const struct action *a;

	(void)state;
	setup(&f, false, false);
	f.units[1].mem_usage = 60 * MIB;
	f.units[1].mem_anon_unevict = 1 * MIB + 100;
	tick(&f, 0, &guilty_be, 1);
	a = find(&f, BE, ACT_MEM_LIMIT);
	assert_int_equal(a->rule, RULE_MEM_SUPPRESS_LIMIT);
	assert_int_equal(a->value, 65 * MIB + 4096);
	teardown(&f);
}

/*
 * Well for well_s: grows by 2% of the ceiling a second, then is handed back
 * (no wish), and remembered for a while in case it relapses.
 */
static void test_grow_back_and_release(void **state)
{
	struct fx f;
	const struct action *a;
	int64_t prev;
	int t = 0, grown = 0;

	(void)state;
	setup(&f, true, false);
	f.units[1].has_mem_qos = true;
	f.units[1].mem_high = 4 * GIB; /* the owner's memory.high: the ceiling */
	for (; t < 12; t++)
		tick(&f, t, &guilty_be, 1);
	prev = find(&f, BE, ACT_MEM_HIGH)->value;
	/* not guilty, but not well_s yet: held */
	tick(&f, 12, NULL, 0);
	a = find(&f, BE, ACT_MEM_HIGH);
	assert_int_equal(a->value, prev);
	assert_int_equal(a->rule, RULE_MEM_SUPPRESS_LIMIT);
	for (t = 21; t < 200; t++) {
		tick(&f, t, NULL, 0);
		a = find(&f, BE, ACT_MEM_HIGH);
		if (!a)
			break;
		assert_int_equal(a->rule, RULE_MEM_SUPPRESS_GROW);
		/* 2% of the ceiling a second, to within the page the last step was cut to */
		assert_true(a->value - prev <= (int64_t)(0.02 * 4 * GIB) + 4096);
		prev = a->value;
		grown++;
	}
	assert_null(a);
	assert_true(grown >= 40);
	/* handed back, but remembered for a relapse: guilty again, cut again from its usage */
	assert_int_equal(f.st.t.n, 1);
	assert_true(f.st.t.v[0].released);
	tick(&f, t + 1, &guilty_be, 1);
	a = find(&f, BE, ACT_MEM_HIGH);
	assert_non_null(a);
	assert_int_equal(a->rule, RULE_MEM_SUPPRESS_LIMIT);
	assert_true(a->value < 2 * GIB);
	assert_true(f.st.t.v[0].hold_s >= 20);
	/* well long after: grows back, is handed back, and then forgotten */
	for (t += 2; t < 2000; t++)
		tick(&f, t, NULL, 0);
	assert_int_equal(f.st.t.n, 0);
	teardown(&f);
}

/*
 * Growth is per second whatever the ticks (ten a second on the fast path),
 * and a unit guilty again after growing waits twice as long the next time.
 */
static void test_growth_per_second_and_relapse(void **state)
{
	struct fx f;
	const struct action *a;
	int64_t at_floor, v = 0;

	(void)state;
	setup(&f, false, false);
	for (int t = 0; t < 12; t++)
		tick(&f, t, &guilty_be, 1);
	at_floor = find(&f, BE, ACT_MEM_LIMIT)->value;
	/* well from t = 21 (10 s after t = 11); then 10 ticks a second for 2 s */
	for (int i = 0; i <= 20; i++) {
		tick(&f, 21 + i * 0.1, NULL, 0);
		a = find(&f, BE, ACT_MEM_LIMIT);
		v = a->value;
	}
	/* 2 s of growth at 2% of the 16 GiB node a second: 655 MiB, not 20 ticks' worth */
	assert_true(v - at_floor <= (int64_t)(0.04 * 16 * GIB) + 4096);
	assert_true(v - at_floor >= (int64_t)(0.04 * 16 * GIB) - 4 * MIB);
	/* guilty again: cut; then well again at t = 24, it waits 20 s, not 10 */
	tick(&f, 23, &guilty_be, 1);
	for (int t = 24; t < 43; t++) {
		tick(&f, t, NULL, 0);
		assert_int_not_equal(find(&f, BE, ACT_MEM_LIMIT)->rule, RULE_MEM_SUPPRESS_GROW);
	}
	tick(&f, 44, NULL, 0);
	assert_int_equal(find(&f, BE, ACT_MEM_LIMIT)->rule, RULE_MEM_SUPPRESS_GROW);
	teardown(&f);
}

/* LS culprits, unknown units and not-BE units are never suppressed. */
static void test_never_ls(void **state)
{
	struct fx f;
	const struct mem_guilty g[] = {{LS, BE, 0.9}, {42, LS, 0.5}};

	(void)state;
	setup(&f, true, true);
	tick(&f, 0, g, 2);
	assert_int_equal(f.out.n, 0);
	teardown(&f);
}

/* Still guilty evict_after_s after reaching the floor: one eviction round, then its cool-down. */
static void test_evict_at_floor(void **state)
{
	struct fx f;
	const struct action *e = NULL;
	int t;

	(void)state;
	setup(&f, false, false);
	f.units[2].priority = -1; /* the lower priority BE unit goes first (eviction order) */
	for (t = 0; t < 100 && !e; t++) {
		tick(&f, t, &guilty_be, 1);
		e = find(&f, BE2, ACT_EVICT);
		assert_null(find(&f, BE, ACT_EVICT));
	}
	assert_non_null(e);
	assert_int_equal(e->rule, RULE_MEM_SUPPRESS_EVICT);
	assert_true(t > 60 && t < 75);
	tick(&f, t, &guilty_be, 1); /* pending: not again */
	assert_null(find(&f, BE2, ACT_EVICT));
	assert_null(find(&f, BE, ACT_EVICT));
	/* with eviction off: never */
	teardown(&f);
	setup(&f, false, false);
	f.cfg.evict = false;
	for (t = 0; t < 100; t++) {
		tick(&f, t, &guilty_be, 1);
		assert_null(find(&f, BE, ACT_EVICT));
		assert_null(find(&f, BE2, ACT_EVICT));
	}
	teardown(&f);
}

/* Turned off (a reload): no wish at all, so the plan hands every limit back. */
static void test_off(void **state)
{
	struct fx f;

	(void)state;
	setup(&f, true, true);
	tick(&f, 0, &guilty_be, 1);
	assert_int_equal(f.st.t.n, 1);
	f.cfg.enabled = false;
	tick(&f, 1, &guilty_be, 1);
	assert_int_equal(f.out.n, 0);
	assert_int_equal(f.st.t.n, 0);
	teardown(&f);
}

/* A unit whose memory was not read cannot be sized: nothing until it is. */
static void test_unread(void **state)
{
	struct fx f;

	(void)state;
	setup(&f, false, false);
	f.units[1].mem_usage = 0;
	tick(&f, 0, &guilty_be, 1);
	assert_int_equal(f.out.n, 0);
	f.units[1].mem_usage = GIB;
	f.units[1].mem_max = 512 * MIB; /* the owner's limit, below the usage: the start */
	tick(&f, 1, &guilty_be, 1);
	assert_int_equal(find(&f, BE, ACT_MEM_LIMIT)->value, 512 * MIB - (512 - 264) * MIB / 2);
	teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v2_reclaim_then_high),
		cmocka_unit_test(test_v1_limit_to_floor),
		cmocka_unit_test(test_raise_ahead_of_anon),
		cmocka_unit_test(test_first_cut_under_floor),
		cmocka_unit_test(test_grow_back_and_release),
		cmocka_unit_test(test_growth_per_second_and_relapse),
		cmocka_unit_test(test_never_ls),
		cmocka_unit_test(test_evict_at_floor),
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_unread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
