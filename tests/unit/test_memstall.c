// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The memstall probe's pure steps and the memstall view's ranking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cli/memstall_view.h"
#include "probes/memstall_fold.h"

static void test_fold_sums_cpus(void **state)
{
	struct memstall_cg cpus[3];
	struct memstall_sample out;

	(void)state;
	memset(cpus, 0, sizeof(cpus));
	cpus[0].direct = (struct lat_hist){.count = 1, .sum_ns = 2000, .slots = {[1] = 1}};
	cpus[1].direct = (struct lat_hist){.count = 2, .sum_ns = 8000, .slots = {[3] = 2}};
	cpus[2].memcg = (struct lat_hist){.count = 4, .sum_ns = 1 << 20, .slots = {[10] = 4}};
	cpus[0].oom_kills = 1;
	cpus[2].oom_kills = 2;
	/* bios by disk: each CPU's slots, in any order, summed by disk */
	cpus[0].io_dev[0] = (struct memstall_io_dev){.dev = 7, .bytes = 100};
	cpus[1].io_dev[0] = (struct memstall_io_dev){.dev = 9, .bytes = 50};
	cpus[1].io_dev[1] = (struct memstall_io_dev){.dev = 7, .bytes = 30};
	memset(&out, 0xff, sizeof(out)); /* fold must not add to what was there */
	memstall_fold(&out, cpus, 3);
	assert_int_equal(out.direct.count, 3);
	assert_int_equal(out.direct.sum_ns, 10000);
	assert_int_equal(out.direct.slots[1], 1);
	assert_int_equal(out.direct.slots[3], 2);
	assert_int_equal(out.memcg.count, 4);
	assert_int_equal(out.memcg.sum_ns, 1 << 20);
	assert_int_equal(out.memcg.slots[10], 4);
	assert_int_equal(out.oom_kills, 3);
	assert_int_equal(out.io_dev[0].dev, 7);
	assert_int_equal(out.io_dev[0].bytes, 130);
	assert_int_equal(out.io_dev[1].dev, 9);
	assert_int_equal(out.io_dev[1].bytes, 50);
	assert_int_equal(io_dev_top(out.io_dev, SNAPSHOT_IO_DEVS), 7);
}

static void test_fold_no_cpus(void **state)
{
	struct memstall_sample out;

	(void)state;
	memset(&out, 0xff, sizeof(out));
	memstall_fold(&out, NULL, 0);
	assert_int_equal(out.direct.count, 0);
	assert_int_equal(out.oom_kills, 0);
}

static void test_oom_event_converts(void **state)
{
	struct memstall_oom in = {
		.ts_ns = 5000000000ULL, .cgroup_id = 42, .pid = 1234, .tid = 1235};
	struct oom_event out;

	(void)state;
	memcpy(in.comm, "memhog", 7);
	memstall_oom_event(&out, &in, 1700000000000000000LL);
	assert_int_equal(out.ts_ns, 1700000005000000000ULL);
	assert_int_equal(out.cgroup_id, 42);
	assert_int_equal(out.pid, 1234); /* the thread-group id, not the thread */
	assert_string_equal(out.comm, "memhog");
}

/* A negative offset is legal (a clock set before boot); comm is always terminated. */
static void test_oom_event_edges(void **state)
{
	struct memstall_oom in = {.ts_ns = 3000};
	struct oom_event out;

	(void)state;
	memset(in.comm, 'x', sizeof(in.comm)); /* no NUL at all */
	memstall_oom_event(&out, &in, -1000);
	assert_int_equal(out.ts_ns, 2000);
	assert_int_equal(strlen(out.comm), sizeof(out.comm) - 1);
}

static struct cg_sample cg(uint64_t id, uint64_t direct_ns, uint64_t memcg_ns, uint64_t ooms)
{
	struct cg_sample c = {.id = id, .parts = CG_MEMSTALL};

	c.mem.direct = (struct lat_hist){.count = direct_ns ? 1 : 0, .sum_ns = direct_ns};
	c.mem.memcg = (struct lat_hist){.count = memcg_ns ? 1 : 0, .sum_ns = memcg_ns};
	c.mem.oom_kills = ooms;
	return c;
}

static void test_rank_orders_and_filters(void **state)
{
	struct cg_sample cgs[] = {
		cg(1, 0, 0, 0),	    /* idle: left out */
		cg(2, 100, 0, 0),   /* 100 ns */
		cg(3, 0, 500, 0),   /* 500 ns */
		cg(4, 0, 0, 2),	    /* no stall, 2 kills */
		cg(5, 300, 200, 0), /* 500 ns, tie with 3: lower id first */
		cg(6, 0, 0, 1),	    /* no stall, 1 kill */
		{.id = 7, .parts = CG_RQ, .rq = {.count = 9}}, /* another probe's part only */
	};
	struct snapshot s = {.cgroups = cgs, .n_cgroups = sizeof(cgs) / sizeof(cgs[0])};
	const struct cg_sample *out[sizeof(cgs) / sizeof(cgs[0])];
	const uint64_t want[] = {3, 5, 2, 4, 6};
	struct mem_explain none = {0}; /* no stall measured: reclaim ranks */
	size_t n;

	(void)state;
	n = memstall_rank(&s, &none, out);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i]->id, want[i]);
}

/* The stall as the agent counts it (refault waits included) ranks first. */
static void test_rank_by_agent_stall(void **state)
{
	struct cg_sample cgs[] = {cg(2, 100, 0, 0), cg(3, 0, 500, 0), cg(4, 0, 0, 1)};
	struct mem_explain_cg e[] = {{.id = 2, .mem.stall_ns = 100},
				     {.id = 3, .mem.stall_ns = 500},
				     {.id = 4, .mem.stall_ns = 900}};
	struct mem_explain x = {.v = e, .n = 3};
	struct snapshot s = {.cgroups = cgs, .n_cgroups = 3};
	const struct cg_sample *out[3];

	(void)state;
	assert_int_equal(memstall_rank(&s, &x, out), 3);
	assert_int_equal(out[0]->id, 4);
	assert_int_equal(out[1]->id, 3);
	assert_int_equal(out[2]->id, 2);
}

static void test_rank_empty(void **state)
{
	struct snapshot s = {0};
	struct mem_explain none = {0};

	(void)state;
	assert_int_equal(memstall_rank(&s, &none, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold_sums_cpus),
		cmocka_unit_test(test_fold_no_cpus),
		cmocka_unit_test(test_oom_event_converts),
		cmocka_unit_test(test_oom_event_edges),
		cmocka_unit_test(test_rank_orders_and_filters),
		cmocka_unit_test(test_rank_by_agent_stall),
		cmocka_unit_test(test_rank_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
