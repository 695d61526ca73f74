// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "hist.h"

#define LAST_SLOT (QOSLET_LAT_SLOTS - 1)
#define LE(i)	  ((double)(1ULL << ((i) + QOSLET_LAT_MIN_SHIFT)))
#define MAX_SET	  4

/* Fills the histogram from (slot, count) pairs; count is the sum of slots. */
struct slot_set {
	int slot;
	uint64_t n;
};

static void hist_fill(struct lat_hist *h, const struct slot_set *set, size_t n, uint64_t sum_ns)
{
	memset(h, 0, sizeof(*h));
	h->sum_ns = sum_ns;
	for (size_t i = 0; i < n; i++) {
		h->slots[set[i].slot] += set[i].n;
		h->count += set[i].n;
	}
}

static int near(double got, double want)
{
	return fabs(got - want) <= fmax(1e-6, fabs(want) * 1e-12);
}

static void test_slot_le_ns(void **state)
{
	(void)state;
	assert_int_equal(hist_slot_le_ns(0), 1024);
	assert_int_equal(hist_slot_le_ns(1), 2048);
	assert_int_equal(hist_slot_le_ns(10), 1ULL << 20);
	assert_int_equal(hist_slot_le_ns(LAST_SLOT - 1), 1ULL << 35);
	assert_int_equal(hist_slot_le_ns(LAST_SLOT), UINT64_MAX);
	for (int i = 0; i < LAST_SLOT; i++)
		assert_int_equal(hist_slot_le_ns(i), 1ULL << (i + QOSLET_LAT_MIN_SHIFT));
}

static void test_add(void **state)
{
	struct lat_hist dst, src;

	(void)state;
	memset(&dst, 0, sizeof(dst));
	memset(&src, 0, sizeof(src));
	for (int i = 0; i < QOSLET_LAT_SLOTS; i++) {
		dst.slots[i] = i;
		src.slots[i] = 100 * i + 1;
	}
	dst.count = 5;
	dst.sum_ns = 1000;
	src.count = 7;
	src.sum_ns = UINT64_C(1) << 40;

	hist_add(&dst, &src);

	assert_int_equal(dst.count, 12);
	assert_int_equal(dst.sum_ns, 1000 + (UINT64_C(1) << 40));
	for (int i = 0; i < QOSLET_LAT_SLOTS; i++)
		assert_int_equal(dst.slots[i], 101 * i + 1);
	/* src is left alone */
	assert_int_equal(src.count, 7);
	assert_int_equal(src.slots[3], 301);
}

static void test_add_zero(void **state)
{
	struct lat_hist dst, zero, want;
	const struct slot_set set[] = {{0, 3}, {7, 2}, {LAST_SLOT, 1}};

	(void)state;
	hist_fill(&dst, set, 3, 12345);
	want = dst;
	memset(&zero, 0, sizeof(zero));
	hist_add(&dst, &zero);
	assert_memory_equal(&dst, &want, sizeof(dst));
}

static void test_delta(void **state)
{
	struct lat_hist now, before, out;

	(void)state;
	memset(&now, 0, sizeof(now));
	memset(&before, 0, sizeof(before));
	for (int i = 0; i < QOSLET_LAT_SLOTS; i++) {
		before.slots[i] = i;
		now.slots[i] = 3 * i;
	}
	before.count = 351; /* sum of 0..26 */
	now.count = 3 * 351;
	before.sum_ns = 1000;
	now.sum_ns = 5000;
	memset(&out, 0xa5, sizeof(out));

	hist_delta(&out, &now, &before);

	assert_int_equal(out.count, 2 * 351);
	assert_int_equal(out.sum_ns, 4000);
	for (int i = 0; i < QOSLET_LAT_SLOTS; i++)
		assert_int_equal(out.slots[i], 2 * i);
}

static void test_delta_unchanged(void **state)
{
	struct lat_hist h, out, zero;
	const struct slot_set set[] = {{2, 5}, {LAST_SLOT, 1}};

	(void)state;
	hist_fill(&h, set, 2, 999);
	memset(&zero, 0, sizeof(zero));
	memset(&out, 0xa5, sizeof(out));
	hist_delta(&out, &h, &h);
	assert_memory_equal(&out, &zero, sizeof(out));
}

/* One bucket lower than before: the entry was recreated, so out = now. */
static void test_delta_recreated(void **state)
{
	static const int down_slots[] = {0, 5, LAST_SLOT};

	(void)state;
	for (size_t k = 0; k < sizeof(down_slots) / sizeof(down_slots[0]); k++) {
		struct lat_hist now, before, out;
		int down = down_slots[k];

		memset(&now, 0, sizeof(now));
		memset(&before, 0, sizeof(before));
		for (int i = 0; i < QOSLET_LAT_SLOTS; i++) {
			before.slots[i] = 10;
			now.slots[i] = i == down ? 4 : 20;
		}
		before.count = 10 * QOSLET_LAT_SLOTS;
		now.count = 20 * (QOSLET_LAT_SLOTS - 1) + 4;
		before.sum_ns = 100;
		now.sum_ns = 300;
		memset(&out, 0xa5, sizeof(out));

		hist_delta(&out, &now, &before);

		if (memcmp(&out, &now, sizeof(out)) != 0)
			fail_msg(
				"slot %d went down: out != now (out.count %llu, out.slots[%d] %llu)",
				down, (unsigned long long)out.count, down,
				(unsigned long long)out.slots[down]);
	}
}

static void test_quantile_empty(void **state)
{
	struct lat_hist h;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_true(near(hist_quantile_ns(&h, 0.5), 0));
	assert_true(near(hist_quantile_ns(&h, 0.99), 0));
	assert_true(near(hist_quantile_ns(&h, 1), 0));
}

/* Expected values computed by hand with Prometheus' bucketQuantile(). */
static const struct quantile_case {
	const char *name;
	struct slot_set set[MAX_SET];
	size_t n;
	double q;
	double want;
} quantile_cases[] = {
	/* rank 2 of 4 in [0, 1024] */
	{"bucket0 median", {{0, 4}}, 1, 0.5, 512},
	{"bucket0 q=1", {{0, 4}}, 1, 1.0, 1024},
	/* rank 2 of 4 in (1024, 2048] */
	{"bucket1 median", {{1, 4}}, 1, 0.5, 1536},
	/* rank 1 of 10 in (4096, 8192]: 4096 + 4096 * 0.1 */
	{"bucket3 p10", {{3, 10}}, 1, 0.1, 4505.6},
	{"bucket3 q=1", {{3, 10}}, 1, 1.0, 8192},
	/* cumulative 2 >= rank 2 already in bucket 0: its upper bound */
	{"rank on boundary", {{0, 2}, {2, 2}}, 2, 0.5, 1024},
	/* rank 3: skips empty bucket 1, 1 of 2 in (2048, 4096] */
	{"across empty bucket", {{0, 2}, {2, 2}}, 2, 0.75, 3072},
	/* rank 3.96: 0.96 of 1 in (4096, 8192] */
	{"p99 of four", {{0, 1}, {1, 1}, {2, 1}, {3, 1}}, 4, 0.99, 8028.16},
	/* rank 2.5 of cumulative (1, 2, 4): 0.5 of 2 in (2048, 4096] */
	{"p62.5 of spread", {{0, 1}, {1, 1}, {2, 2}}, 3, 0.625, 2560},
	/* highest finite bucket: rank 1 of 2 in (2^34, 2^35] */
	{"last finite bucket", {{LAST_SLOT - 1, 2}}, 1, 0.5, 25769803776.0},
	{"only +Inf", {{LAST_SLOT, 1}}, 1, 0.5, 34359738368.0},
	/* rank 9 is reached by the finite bucket 0 */
	{"p90 before +Inf", {{0, 9}, {LAST_SLOT, 1}}, 2, 0.9, 1024},
	/* rank 9.5 lies in +Inf: the last finite bound */
	{"p95 in +Inf", {{0, 9}, {LAST_SLOT, 1}}, 2, 0.95, 34359738368.0},
	{"q=1 with +Inf", {{0, 9}, {LAST_SLOT, 1}}, 2, 1.0, 34359738368.0},
	/* large counts: rank 1.5e9 of 2e9, 0.5e9 of 1e9 in (2^18, 2^19] */
	{"large counts", {{0, 1000000000}, {9, 1000000000}}, 2, 0.75, 393216},
};

static void test_quantile_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(quantile_cases) / sizeof(quantile_cases[0]); i++) {
		const struct quantile_case *c = &quantile_cases[i];
		struct lat_hist h;
		double got;

		hist_fill(&h, c->set, c->n, 0);
		got = hist_quantile_ns(&h, c->q);
		if (!near(got, c->want))
			fail_msg("%s: q=%g got %.6f, want %.6f", c->name, c->q, got, c->want);
	}
}

/* Like Prometheus, the quantile reads the buckets, not the count field. */
static void test_quantile_uses_buckets(void **state)
{
	const struct slot_set set[] = {{0, 4}};
	struct lat_hist h;

	(void)state;
	hist_fill(&h, set, 1, 0);
	h.count = 5;
	assert_true(near(hist_quantile_ns(&h, 0.5), 512));
	h.count = 0;
	assert_true(near(hist_quantile_ns(&h, 0.5), 512));
}

/* Quantiles never decrease with q and stay within [0, last finite bound]. */
static void test_quantile_monotonic(void **state)
{
	const struct slot_set set[] = {{0, 3}, {4, 7}, {12, 1}, {LAST_SLOT, 2}};
	struct lat_hist h;
	double prev = 0;

	(void)state;
	hist_fill(&h, set, 4, 0);
	for (int i = 1; i <= 100; i++) {
		double v = hist_quantile_ns(&h, i / 100.0);

		assert_true(v >= prev);
		assert_true(v <= LE(LAST_SLOT - 1));
		prev = v;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slot_le_ns),
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_add_zero),
		cmocka_unit_test(test_delta),
		cmocka_unit_test(test_delta_unchanged),
		cmocka_unit_test(test_delta_recreated),
		cmocka_unit_test(test_quantile_empty),
		cmocka_unit_test(test_quantile_table),
		cmocka_unit_test(test_quantile_uses_buckets),
		cmocka_unit_test(test_quantile_monotonic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
