// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's tick schedule (user/agent/loop.c) on a fake clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/loop.h"

#define MS 1000000ull
#define S  1000000000ull

struct fake {
	uint64_t now;
	uint64_t stop_at;	/* the wait says stop once the clock reaches it */
	const uint64_t *alerts; /* times, ascending */
	size_t n_alerts, next_alert;
	const uint64_t *trees; /* times a cgroup appeared, ascending */
	size_t n_trees, next_tree;
	const uint64_t *pods; /* pod watch events, ascending */
	size_t n_pods, next_pod;
	uint64_t slow_at, slow_ns; /* the tick starting at slow_at takes slow_ns */
	unsigned int missing;	   /* this many ticks, from missing_at on, find a cgroup missing */
	uint64_t missing_at;
	uint64_t missing_again_at; /* and one more tick, at this time; 0 none */
	bool last_missing;	   /* the last tick found one (fake_retry takes it) */
	bool tree_follow_ups;
	bool displaced; /* the alerts are displacement alerts */
	bool writes;	/* the trees are outside writes to a file the actuator wrote */
	uint64_t ticks[64];
	bool fast[64];
	size_t n_ticks;
};

static uint64_t fake_now(void *ctx)
{
	return ((struct fake *)ctx)->now;
}

static enum loop_wake fake_wait(void *ctx, uint64_t deadline)
{
	struct fake *f = ctx;

	while (f->next_alert < f->n_alerts && f->alerts[f->next_alert] < f->now)
		f->next_alert++; /* came while a tick ran: the ring buffer holds it */
	while (f->next_tree < f->n_trees && f->trees[f->next_tree] < f->now)
		f->next_tree++; /* came before the last tick, which applied it */
	while (f->next_pod < f->n_pods && f->pods[f->next_pod] < f->now)
		f->next_pod++;
	if (f->next_tree < f->n_trees && f->trees[f->next_tree] < deadline &&
	    (f->next_alert == f->n_alerts || f->trees[f->next_tree] < f->alerts[f->next_alert]) &&
	    (f->next_pod == f->n_pods || f->trees[f->next_tree] < f->pods[f->next_pod])) {
		f->now = f->trees[f->next_tree++];
		return f->writes ? LOOP_WAKE_WRITE : LOOP_WAKE_TREE;
	}
	if (f->next_pod < f->n_pods && f->pods[f->next_pod] < deadline &&
	    (f->next_tree == f->n_trees || f->pods[f->next_pod] < f->trees[f->next_tree])) {
		f->now = f->pods[f->next_pod++];
		return LOOP_WAKE_PODS;
	}
	if (f->next_alert < f->n_alerts && f->alerts[f->next_alert] < deadline) {
		f->now =
			f->alerts[f->next_alert++] > f->now ? f->alerts[f->next_alert - 1] : f->now;
		return f->displaced ? LOOP_WAKE_DISPLACED : LOOP_WAKE_ALERT;
	}
	if (deadline > f->now)
		f->now = deadline;
	return f->now >= f->stop_at ? LOOP_WAKE_STOP : LOOP_WAKE_TIMEOUT;
}

static int fake_tick(void *ctx, bool fast)
{
	struct fake *f = ctx;

	assert_true(f->n_ticks < 64);
	f->ticks[f->n_ticks] = f->now;
	f->fast[f->n_ticks++] = fast;
	if (f->missing && f->now >= f->missing_at) {
		f->missing--;
		f->last_missing = true;
	}
	if (f->missing_again_at && f->now == f->missing_again_at)
		f->last_missing = true;
	if (f->slow_ns && f->now == f->slow_at)
		f->now += f->slow_ns;
	return 0;
}

static uint64_t fake_interval(void *ctx)
{
	(void)ctx;
	return S;
}

static bool fake_retry(void *ctx)
{
	struct fake *f = ctx;
	bool missing = f->last_missing;

	f->last_missing = false;
	return missing;
}

static bool fake_tree_follow_ups(void *ctx)
{
	return ((struct fake *)ctx)->tree_follow_ups;
}

static const struct loop_ops ops = {fake_now, fake_wait,  fake_tick,	       fake_interval,
				    NULL,     fake_retry, fake_tree_follow_ups};

static void expect_ticks(const struct fake *f, const uint64_t *at, const bool *fast, size_t n)
{
	assert_int_equal(f->n_ticks, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(f->ticks[i], at[i]);
		assert_int_equal(f->fast[i], fast[i]);
	}
}

/* Nothing happens: one tick per interval, on the second. */
static void test_regular(void **state)
{
	struct fake f = {.now = 10 * S, .stop_at = 14 * S + 1};
	const uint64_t at[] = {10 * S, 11 * S, 12 * S, 13 * S, 14 * S};
	const bool fast[5] = {0};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 5);
}

/* An alert ticks at once, then three follow-ups 100 ms apart, then the regular tick. */
static void test_alert_and_follow_ups(void **state)
{
	const uint64_t alerts[] = {1300 * MS};
	struct fake f = {.stop_at = 2 * S + 1, .alerts = alerts, .n_alerts = 1};
	const uint64_t at[] = {0, 1 * S, 1300 * MS, 1400 * MS, 1500 * MS, 1600 * MS, 2 * S};
	const bool fast[] = {false, false, true, true, true, true, false};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 7);
}

/* A storm of alerts: at most one fast tick per LOOP_FAST_GAP_NS. */
static void test_alert_storm(void **state)
{
	const uint64_t alerts[] = {1300 * MS, 1310 * MS, 1320 * MS,
				   1330 * MS, 1340 * MS, 1350 * MS};
	struct fake f = {.stop_at = 1390 * MS, .alerts = alerts, .n_alerts = 6};
	const uint64_t at[] = {0, 1 * S, 1300 * MS, 1350 * MS};
	const bool fast[] = {false, false, true, true};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 4);
}

/* A tick that takes 2.5 s is followed by one catch-up tick, not by one per missed second. */
static void test_slow_tick(void **state)
{
	struct fake f = {.stop_at = 5 * S, .slow_at = 1 * S, .slow_ns = 2500 * MS};
	const uint64_t at[] = {0, 1 * S, 3500 * MS, 4500 * MS};
	const bool fast[4] = {0};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 4);
}

/* --duration ends the loop without a tick at the end. */
static void test_duration(void **state)
{
	struct fake f = {.stop_at = 100 * S};
	const uint64_t at[] = {0, 1 * S, 2 * S};
	const bool fast[3] = {0};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 3 * S), 0);
	expect_ticks(&f, at, fast, 3);
}

/* A cgroup appears: a tick at once (the last was long ago), no follow-ups. */
static void test_tree_ticks_at_once(void **state)
{
	const uint64_t trees[] = {1300 * MS};
	struct fake f = {.stop_at = 2 * S + 1, .trees = trees, .n_trees = 1};
	const uint64_t at[] = {0, 1 * S, 1300 * MS, 2 * S};
	const bool fast[] = {false, false, true, false};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 4);
}

/*
 * Asked for, a cgroup's tick has the alert's follow-ups. In a storm, a
 * follow-up serves the cgroups that came since the last tick and counts as
 * their tick, so the ticks stay at most one per LOOP_TREE_GAP_NS.
 */
static void test_tree_follow_ups(void **state)
{
	static const struct {
		uint64_t trees[5];
		size_t n_trees;
		uint64_t at[7];
	} cases[] = {
		{{1300 * MS}, 1, {0, 1 * S, 1300 * MS, 1400 * MS, 1500 * MS, 1600 * MS, 2 * S}},
		{{1030 * MS, 1050 * MS, 1090 * MS, 1150 * MS, 1210 * MS},
		 5,
		 {0, 1 * S, 1030 * MS, 1130 * MS, 1230 * MS, 1330 * MS, 2 * S}},
	};
	const bool fast[] = {false, false, true, true, true, true, false};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake f = {.stop_at = 2 * S + 1,
				 .trees = cases[i].trees,
				 .n_trees = cases[i].n_trees,
				 .tree_follow_ups = true};

		assert_int_equal(loop_run(&ops, &f, 0), 0);
		expect_ticks(&f, cases[i].at, fast, 7);
	}
}

/*
 * A pod's event ticks at once, and the cgroup that comes 20 ms later ticks at
 * once too (their gaps are their own); a second pod event within the gap
 * waits for it.
 */
static void test_pod_then_cgroup(void **state)
{
	const uint64_t pods[] = {1300 * MS, 1350 * MS}, trees[] = {1320 * MS};
	struct fake f = {
		.stop_at = 2 * S + 1, .trees = trees, .n_trees = 1, .pods = pods, .n_pods = 2};
	const uint64_t at[] = {0, 1 * S, 1300 * MS, 1320 * MS, 1400 * MS, 2 * S};
	const bool fast[] = {false, false, true, true, true, false};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 6);
}

/* A storm of cgroups: at most one tick of theirs per LOOP_TREE_GAP_NS, one for all that wait. */
static void test_tree_storm(void **state)
{
	const uint64_t trees[] = {1030 * MS, 1050 * MS, 1090 * MS};
	struct fake f = {.stop_at = 2 * S + 1, .trees = trees, .n_trees = 3};
	const uint64_t at[] = {0, 1 * S, 1030 * MS, 1030 * MS + LOOP_TREE_GAP_NS, 2 * S};
	const bool fast[] = {false, false, true, true, false};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 5);
}

/*
 * Another writer's change ticks at once, in the tree's gap (a writer in a
 * loop: at most one tick per LOOP_TREE_GAP_NS), and never with follow-ups.
 */
static void test_outside_writes(void **state)
{
	const uint64_t writes[] = {1030 * MS, 1050 * MS, 1090 * MS, 1300 * MS};
	struct fake f = {.stop_at = 2 * S + 1,
			 .trees = writes,
			 .n_trees = 4,
			 .writes = true,
			 .tree_follow_ups = true};
	const uint64_t at[] = {0, 1 * S, 1030 * MS, 1030 * MS + LOOP_TREE_GAP_NS, 1300 * MS, 2 * S};
	const bool fast[] = {false, false, true, true, true, false};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 6);
}

/* A tick that comes while the tree's waits for its gap applies the news: no tick of its own. */
static void test_tree_served_by_another_tick(void **state)
{
	const uint64_t trees[] = {1950 * MS, 1980 * MS};
	struct fake f = {.stop_at = 2350 * MS, .trees = trees, .n_trees = 2};
	const uint64_t at[] = {0, 1 * S, 1950 * MS, 2 * S};
	const bool fast[] = {false, false, true, false};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 4);
}

/* A tick of any other kind just before does not hold the tree's back. */
static void test_tree_after_an_alert(void **state)
{
	const uint64_t alerts[] = {1300 * MS};
	const uint64_t trees[] = {1310 * MS};
	struct fake f = {.stop_at = 1390 * MS,
			 .alerts = alerts,
			 .n_alerts = 1,
			 .trees = trees,
			 .n_trees = 1};
	const uint64_t at[] = {0, 1 * S, 1300 * MS, 1310 * MS};
	const bool fast[] = {false, false, true, true};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 4);
}

/*
 * A pod appears; its tick's write finds the pod's directory of one hierarchy
 * not made yet (v1): a retry LOOP_RETRY_NS later, which finds it.
 */
static void test_retry_missing(void **state)
{
	const uint64_t trees[] = {1300 * MS};
	struct fake f = {.stop_at = 2 * S + 1,
			 .trees = trees,
			 .n_trees = 1,
			 .missing = 1,
			 .missing_at = 1300 * MS};
	const uint64_t at[] = {0, 1 * S, 1300 * MS, 1300 * MS + LOOP_RETRY_NS, 2 * S};
	const bool fast[] = {false, false, true, true, false};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 5);
}

/*
 * A write that keeps failing: LOOP_RETRIES retries, then only the regular
 * ticks (a retry series ends only at a tick whose writes all found their
 * cgroups).
 */
static void test_retry_bounded(void **state)
{
	struct fake f = {.stop_at = 4 * S + 1, .missing = 6, .missing_at = 1 * S};
	const uint64_t at[] = {0,
			       1 * S,
			       1 * S + LOOP_RETRY_NS,
			       1 * S + 2 * LOOP_RETRY_NS,
			       1 * S + 3 * LOOP_RETRY_NS,
			       2 * S,
			       3 * S,
			       4 * S};
	const bool fast[] = {false, false, true, true, true, false, false, false};

	(void)state;
	assert_int_equal(LOOP_RETRIES, 3);
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 8);
	assert_int_equal(f.missing, 0); /* every tick from 1 s to 3 s found it missing */
}

/* A tick whose writes all landed ends the series: the next miss retries again. */
static void test_retry_series_again(void **state)
{
	struct fake f = {.stop_at = 3 * S + LOOP_RETRY_NS + 1,
			 .missing = 4,
			 .missing_at = 1 * S,
			 .missing_again_at = 3 * S};
	const uint64_t at[] = {0,
			       1 * S,
			       1 * S + LOOP_RETRY_NS,
			       1 * S + 2 * LOOP_RETRY_NS,
			       1 * S + 3 * LOOP_RETRY_NS,
			       2 * S,
			       3 * S,
			       3 * S + LOOP_RETRY_NS};
	const bool fast[] = {false, false, true, true, true, false, false, true};

	(void)state;
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 8);
}

/*
 * A displacement alert 5 ms after the tree's tick (inside the wait alert's
 * gap) ticks at once, again LOOP_QUICK_NS later, then has the follow-ups.
 */
static void test_displaced_quick(void **state)
{
	const uint64_t trees[] = {1300 * MS}, alerts[] = {1305 * MS};
	struct fake f = {.stop_at = 2 * S + 1,
			 .trees = trees,
			 .n_trees = 1,
			 .alerts = alerts,
			 .n_alerts = 1,
			 .displaced = true};
	const uint64_t at[] = {0,	  1 * S,     1300 * MS, 1305 * MS, 1315 * MS,
			       1415 * MS, 1515 * MS, 1615 * MS, 2 * S};
	const bool fast[] = {false, false, true, true, true, true, true, true, false};

	(void)state;
	assert_int_equal(LOOP_QUICK_NS, 10 * MS);
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 9);
}

/*
 * Displacement alerts closer than LOOP_DISPLACED_GAP_NS (1 s) to the last
 * series start none, however many cgroups send them.
 */
static void test_displaced_storm(void **state)
{
	const uint64_t alerts[] = {1300 * MS, 1310 * MS, 1320 * MS,
				   1360 * MS, 1900 * MS, 2400 * MS};
	struct fake f = {.stop_at = 2800 * MS, .alerts = alerts, .n_alerts = 6, .displaced = true};
	const uint64_t at[] = {0,	  1 * S,     1300 * MS, 1310 * MS, 1410 * MS,
			       1510 * MS, 1610 * MS, 2 * S,	2400 * MS, 2410 * MS,
			       2510 * MS, 2610 * MS, 2710 * MS};
	const bool fast[] = {false, false, true, true, true, true, true,
			     false, true,  true, true, true, true};

	(void)state;
	assert_int_equal(LOOP_DISPLACED_GAP_NS, 1 * S);
	assert_int_equal(loop_run(&ops, &f, 0), 0);
	expect_ticks(&f, at, fast, 13);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular),
		cmocka_unit_test(test_alert_and_follow_ups),
		cmocka_unit_test(test_alert_storm),
		cmocka_unit_test(test_slow_tick),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_tree_ticks_at_once),
		cmocka_unit_test(test_tree_storm),
		cmocka_unit_test(test_pod_then_cgroup),
		cmocka_unit_test(test_outside_writes),
		cmocka_unit_test(test_tree_follow_ups),
		cmocka_unit_test(test_tree_served_by_another_tick),
		cmocka_unit_test(test_tree_after_an_alert),
		cmocka_unit_test(test_retry_missing),
		cmocka_unit_test(test_retry_bounded),
		cmocka_unit_test(test_retry_series_again),
		cmocka_unit_test(test_displaced_quick),
		cmocka_unit_test(test_displaced_storm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
