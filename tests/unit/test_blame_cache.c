// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading the blame pairs: each CPU's cache of recent pairs merged with rq_blame. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "probes/blame_cache.h"

#define NCPUS 2

static void slot_set(struct rq_blame_cache *c, int i, __u64 seq, __u64 victim, __u64 culprit,
		     __u64 wait_ns, __u64 count)
{
	c->slot[i] = (struct rq_blame_slot){
		.seq = seq,
		.key = {victim, culprit},
		.val = {wait_ns, count},
	};
}

static void test_pairs_only_stable_slots(void **state)
{
	struct rq_blame_cache first[NCPUS], second[NCPUS];
	struct cached_pair out[NCPUS * QOSLET_BLAME_CACHE_SLOTS];
	size_t n;

	(void)state;
	memset(first, 0, sizeof(first));
	slot_set(&first[0], 3, 2, 7, 1, 700, 7); /* stable: taken */
	slot_set(&first[0], 5, 3, 8, 1, 800, 8); /* odd: changing pairs */
	slot_set(&first[1], 0, 2, 9, 1, 900, 9); /* seq moved on in the second copy */
	slot_set(&first[1], 9, 4, 5, 1, 500, 5); /* stable: taken, sorts first */
	slot_set(&first[1], 12, 0, 0, 0, 0, 0);	 /* empty */
	memcpy(second, first, sizeof(first));
	second[1].slot[0].seq = 4;
	/* The second copy serves only for seq: its other fields may be newer. */
	second[0].slot[3].val.count = 70;

	n = blame_cache_pairs(first, second, NCPUS, out);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].key.victim, 5);
	assert_int_equal(out[0].cpu, 1);
	assert_int_equal(out[1].key.victim, 7);
	assert_int_equal(out[1].cpu, 0);
	assert_int_equal(out[1].val.count, 7);
	assert_false(out[1].used);
}

static void test_merge_takes_larger_per_cpu(void **state)
{
	struct cached_pair cached[] = {
		{.key = {1, 2}, .cpu = 0, .val = {300, 3}}, /* newer than rq_blame */
		{.key = {1, 2}, .cpu = 1, .val = {400, 4}}, /* older: evicted since */
		{.key = {1, 3}, .cpu = 0, .val = {100, 1}},
	};
	struct blame_val vals[NCPUS] = {{100, 1}, {500, 5}};
	struct blame_sample b;

	(void)state;
	blame_cache_merge(&b, &(struct blame_key){1, 2}, vals, NCPUS, cached, 3);
	assert_int_equal(b.victim, 1);
	assert_int_equal(b.culprit, 2);
	assert_int_equal(b.wait_ns, 300 + 500);
	assert_int_equal(b.count, 3 + 5);
	assert_true(cached[0].used && cached[1].used);
	assert_false(cached[2].used);

	/* No cache at all: rq_blame's sum. */
	blame_cache_merge(&b, &(struct blame_key){1, 2}, vals, NCPUS, NULL, 0);
	assert_int_equal(b.wait_ns, 600);
	assert_int_equal(b.count, 6);
}

static void test_rest_sums_unused(void **state)
{
	struct cached_pair cached[] = {
		{.key = {1, 2}, .cpu = 0, .used = true, .val = {100, 1}},
		{.key = {1, 2}, .cpu = 1, .val = {200, 2}},
		{.key = {3, 4}, .cpu = 0, .val = {10, 1}},
		{.key = {3, 4}, .cpu = 1, .val = {20, 2}},
		{.key = {5, 6}, .cpu = 1, .used = true, .val = {30, 3}},
	};
	struct snapshot s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(blame_cache_add_rest(&s, cached, 5), 0);
	assert_int_equal(s.n_blame, 2);
	assert_int_equal(s.blame[0].victim, 1);
	assert_int_equal(s.blame[0].wait_ns, 200);
	assert_int_equal(s.blame[0].count, 2);
	assert_int_equal(s.blame[1].victim, 3);
	assert_int_equal(s.blame[1].wait_ns, 30);
	assert_int_equal(s.blame[1].count, 3);
	assert_int_equal(blame_cache_add_rest(&s, NULL, 0), 0);
	assert_int_equal(s.n_blame, 2);
	snapshot_free(&s);
}

/*
 * One CPU, one pair and the BPF side's steps (bpf/sched_switch.bpf.h) as a
 * model: a wait added in the slot, and the slot handing the pair back to
 * rq_blame for another. A reader copies the cache twice, then reads rq_blame;
 * an eviction may fall before or between any of those reads, or tear the
 * first copy. With one CPU and no waits during the reading, the reading
 * must be exactly the waits counted: none lost, none twice.
 */
struct model {
	struct rq_blame_cache cache;
	struct blame_val rq_blame; /* the pair's entry, this CPU */
	__u64 waits;		   /* every wait counted so far */
};

static void model_wait(struct model *m)
{
	struct rq_blame_slot *s = &m->cache.slot[0];

	if (s->key.victim != 1) {
		s->seq++;
		s->key = (struct blame_key){1, 2};
		s->base = m->rq_blame;
		s->val = s->base;
		s->seq++;
	}
	s->val.wait_ns += 10;
	s->val.count++;
	m->waits++;
}

static void model_evict(struct model *m)
{
	struct rq_blame_slot *s = &m->cache.slot[0];

	if (s->key.victim != 1)
		return;
	m->rq_blame.wait_ns += s->val.wait_ns - s->base.wait_ns;
	m->rq_blame.count += s->val.count - s->base.count;
	s->seq++;
	s->key = (struct blame_key){3, 4}; /* another pair takes the slot */
	s->val = s->base = (struct blame_val){10, 1};
	s->seq++;
}

static __u64 model_read(struct model *m, int evict_at)
{
	struct rq_blame_cache first, second;
	struct cached_pair cached[QOSLET_BLAME_CACHE_SLOTS];
	struct blame_sample b;
	size_t n;

	if (evict_at == 0)
		model_evict(m);
	first = m->cache;
	if (evict_at == 1 || evict_at == 3)
		model_evict(m);
	if (evict_at == 3) {
		/* A torn first copy: the seq from before the eviction, the rest from after. */
		__u64 seq = first.slot[0].seq;

		first = m->cache;
		first.slot[0].seq = seq;
	}
	second = m->cache;
	if (evict_at == 2)
		model_evict(m);
	n = blame_cache_pairs(&first, &second, 1, cached);
	blame_cache_merge(&b, &(struct blame_key){1, 2}, &m->rq_blame, 1, cached, n);
	assert_int_equal(b.wait_ns, 10 * b.count);
	return b.count;
}

static void test_reading_never_goes_down(void **state)
{
	(void)state;
	/* 0-2: an eviction before the first copy, before the second, before rq_blame; 3: torn; 4:
	 * none. */
	for (int evict_at = 0; evict_at < 5; evict_at++) {
		struct model m;
		__u64 last = 0, before;

		memset(&m, 0, sizeof(m));
		for (int round = 0; round < 4; round++) {
			__u64 got;

			for (int i = 0; i <= round; i++)
				model_wait(&m);
			before = m.waits;
			got = model_read(&m, evict_at);
			assert_true(got >= last);
			assert_int_equal(got, before);
			last = got;
		}
	}
}

/*
 * The slot a pair takes in the program's cache: two cgroups taking turns on a
 * CPU never share a slot (each switch between them would evict the other), and
 * pairs still spread over every slot. Cgroup ids are small and close together
 * on a node, so the ids here are too.
 */
static void test_slot_keeps_turns_apart(void **state)
{
	unsigned int per_slot[QOSLET_BLAME_CACHE_SLOTS] = {0}, pairs = 0;

	(void)state;
	for (__u64 a = 1; a < 600; a++) {
		for (__u64 b = a + 1; b < 600; b++) {
			__u32 ab = qoslet_blame_slot(a, b), ba = qoslet_blame_slot(b, a);

			assert_true(ab < QOSLET_BLAME_CACHE_SLOTS && ba < QOSLET_BLAME_CACHE_SLOTS);
			assert_int_not_equal(ab, ba);
			per_slot[ab]++;
			per_slot[ba]++;
			pairs += 2;
		}
		assert_true(qoslet_blame_slot(a, a) < QOSLET_BLAME_CACHE_SLOTS);
	}
	/* Each slot within 5% of an even share. */
	for (int i = 0; i < QOSLET_BLAME_CACHE_SLOTS; i++) {
		assert_true(per_slot[i] * 100 > pairs / QOSLET_BLAME_CACHE_SLOTS * 95);
		assert_true(per_slot[i] * 100 < pairs / QOSLET_BLAME_CACHE_SLOTS * 105);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pairs_only_stable_slots),
		cmocka_unit_test(test_merge_takes_larger_per_cpu),
		cmocka_unit_test(test_rest_sums_unused),
		cmocka_unit_test(test_reading_never_goes_down),
		cmocka_unit_test(test_slot_keeps_turns_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
