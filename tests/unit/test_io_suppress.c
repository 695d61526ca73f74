// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * I/O suppression on constructed guilty lists (pure: tick record + config +
 * state -> actions): a guilty BE unit's read and write throttles on its
 * disk start from its measured rate and are cut by half the gap to the
 * floor per guilty tick; held; grown back once well and handed back at the
 * ceiling; an owner's lower throttle is the start and the ceiling; never
 * an LS unit; a node without the throttle, or a unit whose disk is
 * unknown, is said once and nothing is throttled; the same ticks give the
 * same actions.
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

#include "policy/io_suppress.h"
#include "evidence.h"
#include "suppress_ticks.h"

#define MIB (1024ll * 1024)
#define DEV ((254u << 20) | 0u) /* 254:0 */

enum { LS = 1, BE = 2, BE2 = 3 };

struct fx {
	struct pol_unit units[3];
	struct pol_input in;
	struct io_suppress_config cfg;
	struct io_suppress_state st;
	struct action_list out;
};

/* An LS unit and two BE units; BE streams 1000 MiB a second from disk 254:0. */
static void setup(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 3; i++) {
		struct pol_unit *u = &f->units[i];

		u->id = (uint64_t)i + 1;
		snprintf(u->path, sizeof(u->path), "kubepods/pod%d", i + 1);
		u->cls = i ? QOS_BE : QOS_LS;
		u->ms.io_bytes = i == 1 ? 1000 * MIB : 0;
		u->ms.io_dev = i == 1 ? DEV : 0;
		u->io_limit = (struct pol_io_limit){true, 0, -1, -1};
	}
	f->in.units = f->units;
	f->in.n_units = 3;
	f->in.has_io_limit = true;
	f->in.ts_ns = 1000 * SEC;
	f->cfg = (struct io_suppress_config){
		.enabled = true,
		.floor_bps = 10 * MIB,
		.steps = {.cut_share = 0.5,
			  .well_s = 10,
			  .grow_share = 0.05,
			  .min_change = 1 * MIB},
	};
}

static void teardown(struct fx *f)
{
	io_suppress_state_free(&f->st);
	action_list_free(&f->out);
}

/* One tick at t seconds with the given guilty list; the interval since the last one. */
static void tick(struct fx *f, double t, const struct mem_guilty *g, size_t n)
{
	tick_clock(&f->in, t);
	action_list_clear(&f->out);
	assert_int_equal(io_suppress_run(&f->in, &f->cfg, g, n, &f->st, &f->out), 0);
}

static const struct action *find(const struct fx *f, uint64_t id, enum act_kind kind)
{
	return find_action(&f->out, id, kind);
}

static const struct mem_guilty guilty_be = {.culprit = BE, .victim = LS, .share = 0.9};

/* From the measured rate, half the gap to the floor per guilty tick, both directions. */
static void test_cut_from_rate(void **state)
{
	struct fx f;
	const struct action *r, *w;
	int64_t rate = 1000 * MIB, floor = 10 * MIB, want;

	(void)state;
	setup(&f);
	tick(&f, 1, &guilty_be, 1);
	r = find(&f, BE, ACT_IO_RBPS);
	w = find(&f, BE, ACT_IO_WBPS);
	assert_non_null(r);
	assert_non_null(w);
	assert_int_equal(f.out.n, 2);
	want = rate - (rate - floor) / 2;
	assert_int_equal(r->value, want);
	assert_int_equal(w->value, want);
	assert_int_equal(r->dev, DEV);
	assert_int_equal(r->rule, RULE_IO_SUPPRESS_LIMIT);
	assert_int_equal(r->related_id, LS);
	assert_string_equal(r->related, "kubepods/pod1");
	assert_true(evidence(r, "victim_io_share") == 0.9);
	assert_true(evidence(r, "rate_bps") == (double)rate);
	assert_true(evidence(r, "floor_bps") == (double)floor);
	assert_true(evidence(r, "dev_major") == 254);
	/* the rate under a throttle is the throttle's, not the start: the cut goes on */
	f.units[1].ms.io_bytes = (uint64_t)want;
	tick(&f, 2, &guilty_be, 1);
	want = want - (want - floor) / 2;
	assert_int_equal(find(&f, BE, ACT_IO_RBPS)->value, want);
	for (int t = 3; t < 20; t++)
		tick(&f, t, &guilty_be, 1);
	assert_int_equal(find(&f, BE, ACT_IO_RBPS)->value, floor);
	assert_null(find(&f, LS, ACT_IO_RBPS));
	teardown(&f);
}

/* Well for well_s: grows by 5% of the ceiling a second, then is handed back (no wish). */
static void test_grow_back(void **state)
{
	struct fx f;
	int64_t v;

	(void)state;
	setup(&f);
	for (int t = 1; t <= 12; t++)
		tick(&f, t, &guilty_be, 1);
	v = find(&f, BE, ACT_IO_RBPS)->value;
	assert_int_equal(v, 10 * MIB);
	/* not guilty, not well yet: held at the floor */
	tick(&f, 13, NULL, 0);
	assert_int_equal(find(&f, BE, ACT_IO_RBPS)->value, v);
	assert_int_equal(find(&f, BE, ACT_IO_RBPS)->rule, RULE_IO_SUPPRESS_LIMIT);
	tick(&f, 22, NULL, 0); /* well_s after the last guilty tick: growth begins */
	tick(&f, 24, NULL, 0);
	assert_int_equal(find(&f, BE, ACT_IO_RBPS)->rule, RULE_IO_SUPPRESS_GROW);
	assert_int_equal(find(&f, BE, ACT_IO_RBPS)->value, v + (int64_t)(0.05 * 1000 * MIB * 2));
	/* at the ceiling (the rate it was first cut from): handed back */
	tick(&f, 45, NULL, 0);
	assert_null(find(&f, BE, ACT_IO_RBPS));
	assert_true(f.st.t.v[0].released);
	teardown(&f);
}

/* An owner's lower throttle on the disk: the start and the ceiling. */
static void test_owner_throttle(void **state)
{
	struct fx f;

	(void)state;
	setup(&f);
	f.units[1].io_limit = (struct pol_io_limit){true, DEV, 100 * MIB, -1};
	tick(&f, 1, &guilty_be, 1);
	assert_int_equal(find(&f, BE, ACT_IO_RBPS)->value, 100 * MIB - 45 * MIB);
	assert_true(evidence(find(&f, BE, ACT_IO_RBPS), "owner_bps") == (double)(100 * MIB));
	assert_true(evidence(find(&f, BE, ACT_IO_RBPS), "ceiling_bps") == (double)(100 * MIB));
	teardown(&f);
}

/* A culprit that is an LS unit (whoever names it) is never throttled. */
static void test_never_ls(void **state)
{
	struct fx f;
	const struct mem_guilty g[] = {{.culprit = LS, .victim = LS, .share = 0.6},
				       {.culprit = BE, .victim = LS, .share = 0.4}};

	(void)state;
	setup(&f);
	f.units[0].ms.io_bytes = 500 * MIB;
	f.units[0].ms.io_dev = DEV;
	tick(&f, 1, g, 2);
	assert_null(find(&f, LS, ACT_IO_RBPS));
	assert_null(find(&f, LS, ACT_IO_WBPS));
	assert_non_null(find(&f, BE, ACT_IO_RBPS)); /* the BE culprit beside it is */
	assert_int_equal(f.out.n, 2);
	teardown(&f);
}

/* No throttle on the node: said once, nothing throttled, evictions untouched. */
static void test_no_throttle(void **state)
{
	struct fx f;

	(void)state;
	setup(&f);
	f.in.has_io_limit = false;
	tick(&f, 1, &guilty_be, 1);
	assert_int_equal(f.out.n, 1);
	assert_int_equal(f.out.v[0].kind, ACT_REPORT);
	assert_int_equal(f.out.v[0].rule, RULE_IO_SUPPRESS_UNTHROTTLED);
	assert_int_equal(f.out.v[0].cause.kind, ACT_CAUSE_HELD);
	assert_non_null(strstr(f.out.v[0].cause.held, "no block I/O throttle"));
	tick(&f, 2, &guilty_be, 1);
	assert_int_equal(f.out.n, 0);
	teardown(&f);
}

/* A culprit whose disk is unknown: said once for it, not throttled; a unit with one is. */
static void test_disk_unknown(void **state)
{
	struct fx f;
	const struct mem_guilty g[] = {guilty_be, {.culprit = BE2, .victim = LS, .share = 0.5}};

	(void)state;
	setup(&f);
	f.units[2].ms.io_bytes = 300 * MIB;
	tick(&f, 1, g, 2);
	assert_non_null(find(&f, BE, ACT_IO_RBPS));
	assert_null(find(&f, BE2, ACT_IO_RBPS));
	assert_non_null(find(&f, BE2, ACT_REPORT));
	assert_non_null(strstr(find(&f, BE2, ACT_REPORT)->cause.held, "disk"));
	assert_string_equal(find(&f, BE2, ACT_REPORT)->related, "kubepods/pod1");
	tick(&f, 2, g, 2);
	assert_null(find(&f, BE2, ACT_REPORT));
	/* a culprit listed after one already told is still told */
	f.units[1].ms.io_dev = 0;
	tick(&f, 3, (const struct mem_guilty[]){g[1], g[0]}, 2);
	assert_null(find(&f, BE2, ACT_REPORT));
	assert_non_null(find(&f, BE, ACT_REPORT));
	teardown(&f);
}

/*
 * Off (a reload): no wish, the state forgotten (the plan hands the throttles
 * back); on again, a culprit starts afresh from its rate.
 */
static void test_reload(void **state)
{
	struct fx f;

	(void)state;
	setup(&f);
	tick(&f, 1, &guilty_be, 1);
	tick(&f, 2, &guilty_be, 1);
	f.cfg.enabled = false;
	tick(&f, 3, &guilty_be, 1);
	assert_true(f.out.n == 0 && f.st.t.n == 0 && !f.st.said);
	f.cfg.enabled = true;
	f.units[1].ms.io_bytes = 100 * MIB;
	tick(&f, 4, &guilty_be, 1);
	assert_int_equal(find(&f, BE, ACT_IO_WBPS)->value, 100 * MIB - 45 * MIB);
	teardown(&f);
}

/* The same ticks from the same state give the same actions (replay). */
static void test_deterministic(void **state)
{
	struct fx a, b;

	(void)state;
	setup(&a);
	setup(&b);
	for (int t = 1; t < 30; t++) {
		const struct mem_guilty *g = t < 8 ? &guilty_be : NULL;

		tick(&a, t, g, g != NULL);
		tick(&b, t, g, g != NULL);
		assert_int_equal(a.out.n, b.out.n);
		for (size_t i = 0; i < a.out.n; i++) {
			assert_int_equal(a.out.v[i].kind, b.out.v[i].kind);
			assert_int_equal(a.out.v[i].value, b.out.v[i].value);
			assert_int_equal(a.out.v[i].rule, b.out.v[i].rule);
		}
	}
	teardown(&a);
	teardown(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_from_rate),  cmocka_unit_test(test_grow_back),
		cmocka_unit_test(test_owner_throttle), cmocka_unit_test(test_never_ls),
		cmocka_unit_test(test_no_throttle),    cmocka_unit_test(test_disk_unknown),
		cmocka_unit_test(test_reload),	       cmocka_unit_test(test_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
