// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cli/top_rows.h"

#define SEC 1000000000ULL

/* No memory stall explained. */
static const struct mem_explain no_mem;

static const char *fake_path(void *ctx, uint64_t id, char *buf, size_t size)
{
	(void)ctx;
	if (id == 99)
		return NULL; /* a cgroup removed before it was named */
	snprintf(buf, size, "/kubepods/burstable/pod%llu/c%llu", (unsigned long long)id,
		 (unsigned long long)id);
	return buf;
}

/* Three cgroups: 1 busy and throttled, 2 waiting behind 1, 99 removed. */
static void build(struct snapshot *s)
{
	struct cg_sample *cg;
	struct blame_sample b1 = {.victim = 2, .culprit = 1, .wait_ns = 900, .count = 3};
	struct blame_sample b2 = {.victim = 2, .culprit = 0, .wait_ns = 5000, .count = 9};
	struct blame_sample b3 = {.victim = 2, .culprit = 2, .wait_ns = 4000, .count = 9};

	memset(s, 0, sizeof(*s));
	cg = snapshot_add(s, 1);
	cg->parts = CG_CPU | CG_THROTTLE;
	cg->cpu = (struct cpi_sample){.cpu_ns = SEC / 2, .numerator = 300, .denominator = 100};
	cg->throttle.nr_periods = 10;
	cg->throttle.nr_throttled = 4;
	cg = snapshot_add(s, 2);
	cg->parts = CG_RQ | CG_CPU | CG_PSI;
	cg->rq.count = 1;
	cg->rq.slots[10] = 1; /* (2^19, 2^20] ns: p99 inside it */
	cg->cpu.cpu_ns = SEC / 10;
	cg->psi.some[PSI_MEMORY].avg10 = 3.5;
	cg->psi.some[PSI_CPU].avg10 = 1.0;
	snapshot_add(s, 99)->parts = CG_MEMSTALL;
	snapshot_add_blame(s, &b1);
	snapshot_add_blame(s, &b2);
	snapshot_add_blame(s, &b3);
	snapshot_finish(s);
}

static void test_build_values(void **state)
{
	struct snapshot s;
	struct top_row rows[3];
	size_t n;

	(void)state;
	build(&s);
	n = top_rows_build(rows, &s, SEC, &no_mem, fake_path, NULL);
	assert_int_equal(n, 3);
	assert_true(rows[0].val[TOP_COL_CPU] == 50.0);
	assert_true(rows[0].val[TOP_COL_THROTTLED] == 40.0);
	assert_true(rows[0].val[TOP_COL_CPI] == TOP_NA); /* software mode: never CPI */
	assert_true(rows[0].val[TOP_COL_RQ_P99] == TOP_NA);
	assert_true(rows[0].is_kube);
	assert_string_equal(rows[0].kube.pod_uid, "1");
	/* The culprit skips idle (0) and itself (2) even with larger waits. */
	assert_int_equal(rows[1].culprit, 1);
	assert_int_equal(rows[1].culprit_wait_ns, 900);
	assert_true(rows[1].val[TOP_COL_RQ_P99] > (double)(1 << 19));
	assert_true(rows[1].val[TOP_COL_RQ_P99] <= (double)(1 << 20));
	assert_true(rows[1].val[TOP_COL_PSI] == 3.5); /* the highest resource */
	assert_string_equal(rows[2].path, "(removed)");
	assert_true(rows[2].val[TOP_COL_RECLAIM_P99] == TOP_NA); /* no stalls */
	snapshot_free(&s);
}

static void test_cpi_only_with_hardware(void **state)
{
	struct snapshot s;
	struct top_row rows[3];

	(void)state;
	build(&s);
	s.cpi_hardware = true;
	top_rows_build(rows, &s, SEC, &no_mem, fake_path, NULL);
	assert_true(rows[0].val[TOP_COL_CPI] == 3.0);
	snapshot_free(&s);
}

static void test_sort_and_filter(void **state)
{
	struct snapshot s;
	struct top_row rows[3];
	size_t n;

	(void)state;
	build(&s);
	n = top_rows_build(rows, &s, SEC, &no_mem, fake_path, NULL);
	top_rows_sort(rows, n, TOP_COL_CPU);
	assert_int_equal(rows[0].id, 1);
	assert_int_equal(rows[1].id, 2);
	assert_int_equal(rows[2].id, 99); /* unknown sorts last */
	top_rows_sort(rows, n, TOP_COL_RQ_P99);
	assert_int_equal(rows[0].id, 2);
	top_rows_sort(rows, n, TOP_COL_NAME);
	assert_string_equal(rows[0].path, "(removed)");
	n = top_rows_filter(rows, n, "pod2/");
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, 2);
	assert_int_equal(top_rows_filter(rows, n, ""), 1);
	snapshot_free(&s);
}

/* MEM% and the memory culprit are the explanation's (the agent's), not the probe's sum. */
static void test_mem_from_explanation(void **state)
{
	struct snapshot s;
	struct top_row rows[3];
	struct mem_explain_cg e = {.id = 99, .mem = {.stall_ns = SEC / 4, .explained = true}};
	struct mem_explain mx = {.v = &e, .n = 1};

	(void)state;
	build(&s);
	s.memstall_psi = true;
	s.cgroups[2].mem.stall = (struct lat_hist){.count = 1, .sum_ns = SEC / 100};
	e.mem.top = (struct breach_party){.id = 1, .cause = CAUSE_UNIT, .share = 0.75};
	top_rows_build(rows, &s, SEC, &mx, fake_path, NULL);
	assert_true(rows[2].val[TOP_COL_MEM_STALL] == 25.0);
	assert_true(rows[2].mem.explained);
	assert_int_equal(rows[2].mem.top.id, 1);
	/* a cgroup without memstall activity: no stall, nothing explained */
	assert_true(rows[0].val[TOP_COL_MEM_STALL] == TOP_NA);
	assert_false(rows[0].mem.explained);
	top_rows_build(rows, &s, SEC, &no_mem, fake_path, NULL);
	assert_true(rows[2].val[TOP_COL_MEM_STALL] == 0);
	snapshot_free(&s);
}

/* The culprit columns keep a long name's end, the part that differs. */
static void test_fmt_tail(void **state)
{
	char buf[16];

	(void)state;
	assert_string_equal(view_fmt_tail("/short", 10, buf, sizeof(buf)), "/short");
	assert_string_equal(view_fmt_tail("/kubepods/besteffort/pod9f/be", 10, buf, sizeof(buf)),
			    "...od9f/be");
	assert_int_equal(strlen(buf), 10);
}

static void test_keys_unique(void **state)
{
	(void)state;
	for (int a = 0; a < TOP_COL_NR; a++) {
		assert_non_null(top_col_title(a));
		for (int b = a + 1; b < TOP_COL_NR; b++)
			assert_int_not_equal(top_col_key(a), top_col_key(b));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_values),
		cmocka_unit_test(test_cpi_only_with_hardware),
		cmocka_unit_test(test_sort_and_filter),
		cmocka_unit_test(test_mem_from_explanation),
		cmocka_unit_test(test_fmt_tail),
		cmocka_unit_test(test_keys_unique),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
