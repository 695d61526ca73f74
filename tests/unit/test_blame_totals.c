// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's blame totals: drained increments, the caches on top, never down, bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "probes/blame_totals.h"

#define NCPUS 2

/* Adds one drained entry: per-CPU values {wait, count} on CPU 0 and 1. */
static void drained(struct blame_incs *l, uint64_t victim, uint64_t culprit, uint64_t w0,
		    uint64_t c0, uint64_t w1, uint64_t c1)
{
	struct blame_val vals[NCPUS] = {{w0, c0}, {w1, c1}};

	assert_int_equal(blame_incs_add(l, &(struct blame_key){victim, culprit}, vals, NCPUS), 0);
}

/* Emits into a fresh snapshot; returns it (the caller frees). */
static struct snapshot emit(struct blame_totals *t, const struct cached_pair *c, size_t n)
{
	struct snapshot s = {0};

	assert_int_equal(blame_totals_emit(t, c, n, &s), 0);
	return s;
}

static const struct blame_sample *find(const struct snapshot *s, uint64_t victim, uint64_t culprit)
{
	for (size_t i = 0; i < s->n_blame; i++)
		if (s->blame[i].victim == victim && s->blame[i].culprit == culprit)
			return &s->blame[i];
	return NULL;
}

static void test_increments_add_up_sorted(void **state)
{
	struct blame_totals t = {0};
	struct blame_incs l = {0};
	struct snapshot s;

	(void)state;
	/* Any order, one pair twice (two batches may hold it): summed over CPUs. */
	drained(&l, 9, 1, 100, 1, 200, 2);
	drained(&l, 3, 4, 10, 1, 0, 0);
	drained(&l, 9, 1, 5, 1, 0, 0);
	assert_int_equal(blame_totals_add(&t, &l), 0);
	assert_int_equal(l.n, 0); /* consumed */
	s = emit(&t, NULL, 0);
	assert_int_equal(s.n_blame, 2);
	assert_int_equal(s.blame[0].victim, 3); /* sorted by pair */
	assert_int_equal(s.blame[1].wait_ns, 305);
	assert_int_equal(s.blame[1].count, 4);
	snapshot_free(&s);

	/* The next drain adds to the totals; a new pair goes in its place. */
	drained(&l, 9, 1, 0, 0, 50, 1);
	drained(&l, 5, 2, 7, 1, 0, 0);
	assert_int_equal(blame_totals_add(&t, &l), 0);
	s = emit(&t, NULL, 0);
	assert_int_equal(s.n_blame, 3);
	assert_int_equal(s.blame[1].victim, 5);
	assert_int_equal(find(&s, 9, 1)->wait_ns, 355);
	assert_int_equal(find(&s, 9, 1)->count, 5);
	snapshot_free(&s);
	blame_incs_free(&l);
	blame_totals_free(&t);
}

static void test_cache_counts_since_taken(void **state)
{
	struct blame_totals t = {0};
	struct blame_incs l = {0};
	/* On both CPUs: what each slot counted since it took the pair is on top. */
	struct cached_pair c[] = {
		{.key = {1, 2}, .cpu = 0, .val = {1300, 13}, .base = {1000, 10}},
		{.key = {1, 2}, .cpu = 1, .val = {50, 1}, .base = {0, 0}},
		{.key = {4, 4}, .cpu = 0, .val = {70, 2}, .base = {60, 1}}, /* only cached */
	};
	struct snapshot s;

	(void)state;
	drained(&l, 1, 2, 1000, 10, 0, 0);
	assert_int_equal(blame_totals_add(&t, &l), 0);
	s = emit(&t, c, 3);
	assert_int_equal(s.n_blame, 2);
	assert_int_equal(find(&s, 1, 2)->wait_ns, 1000 + 300 + 50);
	assert_int_equal(find(&s, 1, 2)->count, 10 + 3 + 1);
	assert_int_equal(find(&s, 4, 4)->wait_ns, 10);
	assert_int_equal(find(&s, 4, 4)->count, 1);
	snapshot_free(&s);

	/* CPU 0's slot gave its 300 back: drained now, no longer cached. Same total. */
	drained(&l, 1, 2, 300, 3, 0, 0);
	assert_int_equal(blame_totals_add(&t, &l), 0);
	s = emit(&t, &c[1], 2);
	assert_int_equal(find(&s, 1, 2)->wait_ns, 1350);
	assert_int_equal(find(&s, 1, 2)->count, 14);
	snapshot_free(&s);
	blame_incs_free(&l);
	blame_totals_free(&t);
}

static void test_never_goes_down(void **state)
{
	struct blame_totals t = {0};
	struct blame_incs l = {0};
	struct cached_pair c = {.key = {1, 2}, .cpu = 0, .val = {500, 5}, .base = {0, 0}};
	struct snapshot s;

	(void)state;
	s = emit(&t, &c, 1);
	assert_int_equal(find(&s, 1, 2)->wait_ns, 500);
	snapshot_free(&s);
	/* Given back after the drain, before the copy: in neither place this time. */
	s = emit(&t, NULL, 0);
	assert_int_equal(find(&s, 1, 2)->wait_ns, 500);
	assert_int_equal(find(&s, 1, 2)->count, 5);
	snapshot_free(&s);
	/* The next drain has it, and what came since: counted once. */
	drained(&l, 1, 2, 600, 6, 0, 0);
	assert_int_equal(blame_totals_add(&t, &l), 0);
	s = emit(&t, NULL, 0);
	assert_int_equal(find(&s, 1, 2)->wait_ns, 600);
	assert_int_equal(find(&s, 1, 2)->count, 6);
	snapshot_free(&s);
	blame_incs_free(&l);
	blame_totals_free(&t);
}

static void test_forget_drops_the_ids_pairs(void **state)
{
	struct blame_totals t = {0};
	struct blame_incs l = {0};
	uint64_t gone[] = {7};
	struct snapshot s;

	(void)state;
	drained(&l, 7, 1, 1, 1, 0, 0);
	drained(&l, 1, 7, 1, 1, 0, 0);
	drained(&l, 1, 2, 1, 1, 0, 0);
	assert_int_equal(blame_totals_add(&t, &l), 0);
	blame_totals_forget(&t, gone, 1);
	s = emit(&t, NULL, 0);
	assert_int_equal(s.n_blame, 1);
	assert_non_null(find(&s, 1, 2));
	snapshot_free(&s);
	blame_incs_free(&l);
	blame_totals_free(&t);
}

static void test_bounded_oldest_go_first(void **state)
{
	struct blame_totals t = {0};
	struct blame_incs l = {0};
	struct snapshot s;

	(void)state;
	/* Reading 1: BLAME_TOTALS_MAX pairs (victim 1). Reading 2: 10 of them grow again. */
	for (uint64_t i = 0; i < BLAME_TOTALS_MAX; i++)
		drained(&l, 1, i, 1, 1, 0, 0);
	assert_int_equal(blame_totals_add(&t, &l), 0);
	s = emit(&t, NULL, 0);
	assert_int_equal(s.n_blame, BLAME_TOTALS_MAX); /* at the bound: nothing goes */
	snapshot_free(&s);
	for (uint64_t i = 0; i < 10; i++)
		drained(&l, 1, i, 1, 1, 0, 0);
	/* Reading 2 also brings 600 new pairs (victim 2): over the bound. */
	for (uint64_t i = 0; i < 600; i++)
		drained(&l, 2, i, 1, 1, 0, 0);
	assert_int_equal(blame_totals_add(&t, &l), 0);
	s = emit(&t, NULL, 0);
	/* Down to 7/8: those that grew now stay; of the older ones, the first in pair order go. */
	assert_int_equal(s.n_blame, BLAME_TOTALS_MAX * 7 / 8);
	assert_non_null(find(&s, 1, 9));
	assert_null(find(&s, 1, 10));
	assert_null(find(&s, 1, 10 + BLAME_TOTALS_MAX + 600 - BLAME_TOTALS_MAX * 7 / 8 - 1));
	assert_non_null(find(&s, 1, 10 + BLAME_TOTALS_MAX + 600 - BLAME_TOTALS_MAX * 7 / 8));
	assert_non_null(find(&s, 2, 599));
	snapshot_free(&s);
	/* A reading later, the pairs that grew at reading 2 are the youngest: they stay. */
	for (uint64_t i = 0; i < 1000; i++)
		drained(&l, 3, i, 1, 1, 0, 0);
	assert_int_equal(blame_totals_add(&t, &l), 0);
	s = emit(&t, NULL, 0);
	assert_int_equal(s.n_blame, BLAME_TOTALS_MAX * 7 / 8);
	assert_non_null(find(&s, 2, 0));
	assert_non_null(find(&s, 1, 0));
	snapshot_free(&s);
	blame_incs_free(&l);
	blame_totals_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_increments_add_up_sorted),
		cmocka_unit_test(test_cache_counts_since_taken),
		cmocka_unit_test(test_never_goes_down),
		cmocka_unit_test(test_forget_drops_the_ids_pairs),
		cmocka_unit_test(test_bounded_oldest_go_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
