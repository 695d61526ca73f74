// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "snapshot.h"

#define MAX_ENTRIES  5
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A cgroup's histogram with waits in two buckets; count is their sum. */
struct cg_spec {
	uint64_t id;
	uint64_t slot0, slot5, sum_ns;
};

struct snap_spec {
	struct cg_spec cg[MAX_ENTRIES];
	size_t n_cg;
	struct blame_sample blame[MAX_ENTRIES];
	size_t n_blame;
	uint64_t sched_drops[SCHED_DROP_NR];
};

static void cg_from_spec(struct cg_sample *cg, const struct cg_spec *spec)
{
	memset(cg, 0, sizeof(*cg));
	cg->id = spec->id;
	cg->parts = CG_RQ;
	cg->rq.slots[0] = spec->slot0;
	cg->rq.slots[5] = spec->slot5;
	cg->rq.count = spec->slot0 + spec->slot5;
	cg->rq.sum_ns = spec->sum_ns;
}

/* Builds a snapshot with malloc'd arrays, as snapshot_free() expects. */
static void snap_build(struct snapshot *s, const struct snap_spec *spec)
{
	memset(s, 0, sizeof(*s));
	s->ts_ns = 1700000000000000000ULL;
	s->cgroups = malloc((spec->n_cg + 1) * sizeof(*s->cgroups));
	s->blame = malloc((spec->n_blame + 1) * sizeof(*s->blame));
	assert_non_null(s->cgroups);
	assert_non_null(s->blame);
	for (size_t i = 0; i < spec->n_cg; i++)
		cg_from_spec(&s->cgroups[i], &spec->cg[i]);
	memcpy(s->blame, spec->blame, spec->n_blame * sizeof(*s->blame));
	s->n_cgroups = spec->n_cg;
	s->n_blame = spec->n_blame;
	memcpy(s->sched_drops, spec->sched_drops, sizeof(s->sched_drops));
}

static void snap_assert_equal(const char *name, const struct snapshot *got,
			      const struct snap_spec *want)
{
	if (got->n_cgroups != want->n_cg)
		fail_msg("%s: %zu cgroups, want %zu", name, got->n_cgroups, want->n_cg);
	for (size_t i = 0; i < want->n_cg; i++) {
		struct cg_sample w;

		cg_from_spec(&w, &want->cg[i]);
		if (memcmp(&got->cgroups[i], &w, sizeof(w)) != 0)
			fail_msg("%s: cgroup[%zu] id %llu count %llu, want id %llu count %llu",
				 name, i, (unsigned long long)got->cgroups[i].id,
				 (unsigned long long)got->cgroups[i].rq.count,
				 (unsigned long long)w.id, (unsigned long long)w.rq.count);
	}
	if (got->n_blame != want->n_blame)
		fail_msg("%s: %zu blame pairs, want %zu", name, got->n_blame, want->n_blame);
	for (size_t i = 0; i < want->n_blame; i++) {
		const struct blame_sample *g = &got->blame[i], *w = &want->blame[i];

		if (memcmp(g, w, sizeof(*g)) != 0)
			fail_msg(
				"%s: blame[%zu] (%llu,%llu) wait %llu count %llu, want (%llu,%llu) wait %llu count %llu",
				name, i, (unsigned long long)g->victim,
				(unsigned long long)g->culprit, (unsigned long long)g->wait_ns,
				(unsigned long long)g->count, (unsigned long long)w->victim,
				(unsigned long long)w->culprit, (unsigned long long)w->wait_ns,
				(unsigned long long)w->count);
	}
	for (int i = 0; i < SCHED_DROP_NR; i++)
		if (got->sched_drops[i] != want->sched_drops[i])
			fail_msg("%s: drops[%d] %llu, want %llu", name, i,
				 (unsigned long long)got->sched_drops[i],
				 (unsigned long long)want->sched_drops[i]);
}

static void test_sort(void **state)
{
	static const uint64_t ids[] = {5, 1, UINT64_MAX, 3, 2};
	static const uint64_t pairs[][2] = {{2, 1}, {1, 5}, {1, 0}, {2, 0}, {1, 3}};
	static const uint64_t sorted_ids[] = {1, 2, 3, 5, UINT64_MAX};
	static const uint64_t sorted_pairs[][2] = {{1, 0}, {1, 3}, {1, 5}, {2, 0}, {2, 1}};
	struct snap_spec spec = {.n_cg = ARRAY_LEN(ids), .n_blame = ARRAY_LEN(pairs)};
	struct snapshot s;

	(void)state;
	/* Payloads derive from keys, so we can check they moved with them. */
	for (size_t i = 0; i < ARRAY_LEN(ids); i++)
		spec.cg[i] = (struct cg_spec){ids[i], ids[i] & 0xff, 1, ids[i] * 3};
	for (size_t i = 0; i < ARRAY_LEN(pairs); i++)
		spec.blame[i] = (struct blame_sample){pairs[i][0], pairs[i][1],
						      pairs[i][0] * 100 + pairs[i][1], i + 1};
	snap_build(&s, &spec);

	snapshot_finish(&s);

	assert_int_equal(s.n_cgroups, ARRAY_LEN(ids));
	for (size_t i = 0; i < ARRAY_LEN(sorted_ids); i++) {
		uint64_t id = sorted_ids[i];

		assert_int_equal(s.cgroups[i].id, id);
		assert_int_equal(s.cgroups[i].rq.slots[0], id & 0xff);
		assert_int_equal(s.cgroups[i].rq.sum_ns, id * 3);
	}
	assert_int_equal(s.n_blame, ARRAY_LEN(pairs));
	for (size_t i = 0; i < ARRAY_LEN(sorted_pairs); i++) {
		assert_int_equal(s.blame[i].victim, sorted_pairs[i][0]);
		assert_int_equal(s.blame[i].culprit, sorted_pairs[i][1]);
		assert_int_equal(s.blame[i].wait_ns, sorted_pairs[i][0] * 100 + sorted_pairs[i][1]);
	}
	snapshot_free(&s);
}

static void test_sort_empty(void **state)
{
	struct snapshot s;

	(void)state;
	memset(&s, 0, sizeof(s));
	snapshot_finish(&s);
	assert_int_equal(s.n_cgroups, 0);
	assert_int_equal(s.n_blame, 0);
	snapshot_free(&s);
}

static const struct delta_case {
	const char *name;
	struct snap_spec before, now, want;
} delta_cases[] = {
	{"both empty", {.n_cg = 0}, {.n_cg = 0}, {.n_cg = 0}},
	{
		"new cgroup counts from zero",
		{.n_cg = 0},
		{.cg = {{7, 2, 1, 300}}, .n_cg = 1},
		{.cg = {{7, 2, 1, 300}}, .n_cg = 1},
	},
	{
		"unchanged dropped, changed kept",
		{.cg = {{1, 1, 0, 10}, {2, 2, 2, 50}, {3, 0, 1, 7}}, .n_cg = 3},
		{.cg = {{1, 1, 0, 10}, {2, 5, 3, 90}, {3, 0, 1, 7}, {4, 1, 0, 5}}, .n_cg = 4},
		{.cg = {{2, 3, 1, 40}, {4, 1, 0, 5}}, .n_cg = 2},
	},
	{
		"gone cgroup not reported",
		{.cg = {{1, 3, 0, 30}, {9, 1, 1, 20}}, .n_cg = 2},
		{.cg = {{9, 1, 2, 25}}, .n_cg = 1},
		{.cg = {{9, 0, 1, 5}}, .n_cg = 1},
	},
	{
		/* slot 0 went down: the entry was recreated, count it from zero */
		"recreated cgroup",
		{.cg = {{4, 10, 10, 1000}}, .n_cg = 1},
		{.cg = {{4, 2, 12, 900}}, .n_cg = 1},
		{.cg = {{4, 2, 12, 900}}, .n_cg = 1},
	},
	{
		"blame pairs",
		{.blame = {{1, 0, 100, 1}, {1, 2, 100, 1}, {3, 1, 50, 5}, {8, 8, 9, 9}},
		 .n_blame = 4},
		{.blame = {{1, 0, 100, 1},
			   {1, 2, 300, 3},
			   {2, 1, 40, 2},
			   {3, 1, 50, 5},
			   {3, QOSLET_CULPRIT_IDLE + 7, 11, 1}},
		 .n_blame = 5},
		{.blame = {{1, 2, 200, 2}, {2, 1, 40, 2}, {3, 7, 11, 1}}, .n_blame = 3},
	},
	{
		"drops",
		{.sched_drops = {1, 0, 5}},
		{.sched_drops = {4, 0, 5}},
		{.sched_drops = {3, 0, 0}},
	},
	{
		"everything at once",
		{.cg = {{1, 1, 1, 10}, {5, 4, 0, 8}},
		 .n_cg = 2,
		 .blame = {{5, 1, 10, 1}},
		 .n_blame = 1,
		 .sched_drops = {0, 2, 0}},
		{.cg = {{1, 1, 1, 10}, {5, 6, 0, 12}, {6, 0, 3, 60}},
		 .n_cg = 3,
		 .blame = {{5, 1, 25, 3}, {6, 0, 4, 1}},
		 .n_blame = 2,
		 .sched_drops = {0, 3, 1}},
		{.cg = {{5, 2, 0, 4}, {6, 0, 3, 60}},
		 .n_cg = 2,
		 .blame = {{5, 1, 15, 2}, {6, 0, 4, 1}},
		 .n_blame = 2,
		 .sched_drops = {0, 1, 1}},
	},
};

static void test_delta_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(delta_cases); i++) {
		const struct delta_case *c = &delta_cases[i];
		struct snapshot before, now, out;

		snap_build(&before, &c->before);
		snap_build(&now, &c->now);
		memset(&out, 0xa5, sizeof(out));

		if (snapshot_delta(&out, &now, &before) != 0)
			fail_msg("%s: snapshot_delta failed", c->name);
		snap_assert_equal(c->name, &out, &c->want);
		/* the inputs are const */
		snap_assert_equal(c->name, &before, &c->before);
		snap_assert_equal(c->name, &now, &c->now);

		snapshot_free(&out);
		snapshot_free(&before);
		snapshot_free(&now);
	}
}

/* A delta against itself is empty. */
static void test_delta_self(void **state)
{
	const struct snap_spec spec = {
		.cg = {{1, 4, 4, 100}, {2, 1, 0, 3}},
		.n_cg = 2,
		.blame = {{1, 2, 30, 3}},
		.n_blame = 1,
		.sched_drops = {7, 8, 9},
	};
	const struct snap_spec empty = {.n_cg = 0};
	struct snapshot s, out;

	(void)state;
	snap_build(&s, &spec);
	assert_int_equal(snapshot_delta(&out, &s, &s), 0);
	snap_assert_equal("self", &out, &empty);
	snapshot_free(&out);
	snapshot_free(&s);
}

/*
 * snapshot_free() releases both arrays, seen in glibc's heap accounting.
 * The arrays are too large for the tcache, which would hide the free.
 */
static void test_free_arrays(void **state)
{
	struct snapshot s;
	size_t in_use;

	(void)state;
	in_use = mallinfo2().uordblks;
	memset(&s, 0, sizeof(s));
	s.cgroups = calloc(64, sizeof(*s.cgroups));
	s.blame = calloc(64, sizeof(*s.blame));
	assert_non_null(s.cgroups);
	assert_non_null(s.blame);
	s.n_cgroups = 2;
	s.n_blame = 1;
	if (mallinfo2().uordblks < in_use + 64 * sizeof(*s.cgroups)) {
		/* not glibc's allocator (valgrind, ASan): nothing to measure */
		snapshot_free(&s);
		skip();
	}
	snapshot_free(&s);
	assert_int_equal(mallinfo2().uordblks, in_use);

	/* an empty snapshot frees without harm */
	memset(&s, 0, sizeof(s));
	snapshot_free(&s);
}

/*
 * Many records in several cycles of the permutation, with repeated ids:
 * sorted and merged where they are (no second array), payloads with them.
 */
static void test_finish_in_place(void **state)
{
	enum { N = 97 };
	struct snapshot s = {0};
	struct cg_sample *v;

	(void)state;
	for (size_t i = 0; i < N; i++) {
		/* ids 0..63 in a scrambled order, then the first 33 again with CPU */
		uint64_t id = (i * 37) % 64;
		struct cg_sample *cg = snapshot_add(&s, id);

		assert_non_null(cg);
		if (i < 64) {
			cg->parts = CG_RQ;
			cg->rq.sum_ns = id * 3;
		} else {
			cg->parts = CG_CPU;
			cg->cpu.cpu_ns = id + 1;
		}
	}
	v = s.cgroups;
	snapshot_finish(&s);
	assert_ptr_equal(s.cgroups, v);
	assert_int_equal(s.n_cgroups, 64);
	for (uint64_t id = 0; id < 64; id++) {
		const struct cg_sample *cg = &s.cgroups[id];
		bool twice = false;

		for (size_t i = 64; i < N; i++)
			twice |= (i * 37) % 64 == id;
		assert_int_equal(cg->id, id);
		assert_int_equal(cg->rq.sum_ns, id * 3);
		assert_int_equal(cg->parts, twice ? CG_RQ | CG_CPU : CG_RQ);
		assert_int_equal(cg->cpu.cpu_ns, twice ? id + 1 : 0);
	}
	snapshot_free(&s);
}

/* Two probes report one cgroup: finish() keeps one record holding both parts. */
static void test_finish_merges_parts(void **state)
{
	struct snapshot s = {0};
	struct cg_sample *a, *b, *c;

	(void)state;
	a = snapshot_add(&s, 7);
	assert_non_null(a);
	a->parts = CG_RQ;
	a->rq.count = 3;
	b = snapshot_add(&s, 5);
	assert_non_null(b);
	b->parts = CG_RQ;
	c = snapshot_add(&s, 7);
	assert_non_null(c);
	c->parts = CG_CPU;
	c->cpu.cpu_ns = 42;
	snapshot_finish(&s);
	assert_int_equal(s.n_cgroups, 2);
	assert_int_equal(s.cgroups[0].id, 5);
	assert_int_equal(s.cgroups[1].id, 7);
	assert_int_equal(s.cgroups[1].parts, CG_RQ | CG_CPU);
	assert_int_equal(s.cgroups[1].rq.count, 3);
	assert_int_equal(s.cgroups[1].cpu.cpu_ns, 42);
	assert_ptr_equal(snapshot_find(&s, 7), &s.cgroups[1]);
	assert_null(snapshot_find(&s, 6));
	snapshot_free(&s);
}

/* Counters subtract, gauges carry, and a cgroup active in one part only is kept. */
static void test_delta_parts(void **state)
{
	struct snapshot before = {0}, now = {0}, out;
	struct cg_sample *cg;

	(void)state;
	cg = snapshot_add(&before, 9);
	cg->parts = CG_THROTTLE | CG_PSI;
	cg->throttle.nr_periods = 10;
	cg->throttle.nr_throttled = 4;
	cg->psi.some[PSI_CPU].total_us = 100;
	cg->parts |= CG_MEMSTALL;
	cg->mem.io_dev[0] = (struct io_dev_bytes){7, 1000};
	cg->mem.io_dev[1] = (struct io_dev_bytes){9, 500};
	cg = snapshot_add(&now, 9);
	cg->parts = CG_THROTTLE | CG_PSI | CG_MEMSTALL;
	/* by disk, whatever slot it is in now: 9 read 100 more, 7 none, 3 is new */
	cg->mem.io_dev[0] = (struct io_dev_bytes){9, 600};
	cg->mem.io_dev[1] = (struct io_dev_bytes){7, 1000};
	cg->mem.io_dev[2] = (struct io_dev_bytes){3, 40};
	cg->throttle.nr_periods = 25;
	cg->throttle.nr_throttled = 9;
	cg->psi.some[PSI_CPU].total_us = 160;
	cg->psi.some[PSI_CPU].avg10 = 1.5;
	snapshot_finish(&before);
	snapshot_finish(&now);
	assert_int_equal(snapshot_delta(&out, &now, &before), 0);
	assert_int_equal(out.n_cgroups, 1);
	assert_int_equal(out.cgroups[0].throttle.nr_periods, 15);
	assert_int_equal(out.cgroups[0].throttle.nr_throttled, 5);
	assert_int_equal(out.cgroups[0].psi.some[PSI_CPU].total_us, 60);
	assert_true(out.cgroups[0].psi.some[PSI_CPU].avg10 == 1.5);
	assert_int_equal(out.cgroups[0].mem.io_dev[0].dev, 9);
	assert_int_equal(out.cgroups[0].mem.io_dev[0].bytes, 100);
	assert_int_equal(out.cgroups[0].mem.io_dev[1].dev, 3); /* 7 moved nothing: no slot */
	assert_int_equal(out.cgroups[0].mem.io_dev[1].bytes, 40);
	assert_int_equal(io_dev_top(out.cgroups[0].mem.io_dev, SNAPSHOT_IO_DEVS), 9);
	snapshot_free(&out);
	snapshot_free(&before);
	snapshot_free(&now);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_sort_empty),
		cmocka_unit_test(test_delta_table),
		cmocka_unit_test(test_delta_self),
		cmocka_unit_test(test_free_arrays),
		cmocka_unit_test(test_finish_merges_parts),
		cmocka_unit_test(test_finish_in_place),
		cmocka_unit_test(test_delta_parts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
