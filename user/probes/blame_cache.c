// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/blame_cache.h"

#include <stdlib.h>

static int cmp_cached(const void *a, const void *b)
{
	const struct cached_pair *x = a, *y = b;

	if (x->key.victim != y->key.victim)
		return x->key.victim < y->key.victim ? -1 : 1;
	if (x->key.culprit != y->key.culprit)
		return x->key.culprit < y->key.culprit ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

size_t blame_cache_pairs(const struct rq_blame_cache *first, const struct rq_blame_cache *second,
			 int ncpus, struct cached_pair *out)
{
	size_t n = 0;

	for (int cpu = 0; cpu < ncpus; cpu++) {
		for (int i = 0; i < QOSLET_BLAME_CACHE_SLOTS; i++) {
			const struct rq_blame_slot *a = &first[cpu].slot[i];

			if (!a->val.count || a->seq % 2 || a->seq != second[cpu].slot[i].seq)
				continue;
			out[n++] = (struct cached_pair){
				.key = a->key, .cpu = cpu, .val = a->val, .base = a->base};
		}
	}
	if (n)
		qsort(out, n, sizeof(*out), cmp_cached);
	return n;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void blame_cache_merge(struct blame_sample *out, const struct blame_key *key,
		       const struct blame_val *vals, int ncpus, struct cached_pair *cached,
		       size_t n_cached)
{
	*out = (struct blame_sample){.victim = key->victim, .culprit = key->culprit};
	for (int cpu = 0; cpu < ncpus; cpu++) {
		struct cached_pair want = {.key = *key, .cpu = cpu}, *c = NULL;
		struct blame_val v = vals[cpu];

		if (n_cached)
			c = bsearch(&want, cached, n_cached, sizeof(want), cmp_cached);
		if (c) {
			/* Both only grow: the larger is the newer (bpf/sched.h). */
			v.wait_ns = max_u64(v.wait_ns, c->val.wait_ns);
			v.count = max_u64(v.count, c->val.count);
			c->used = true;
		}
		out->wait_ns += v.wait_ns;
		out->count += v.count;
	}
}

int blame_cache_add_rest(struct snapshot *s, const struct cached_pair *cached, size_t n)
{
	/* No cache read (n == 0) may come as NULL: NULL + 0 is undefined in C. */
	const struct cached_pair *c = cached, *end = n ? cached + n : cached;

	while (c < end) {
		struct blame_sample b = {.victim = c->key.victim, .culprit = c->key.culprit};
		int err;

		/* Sorted by pair: a run of one pair's CPUs. */
		for (; c < end && c->key.victim == b.victim && c->key.culprit == b.culprit; c++) {
			if (c->used)
				continue;
			b.wait_ns += c->val.wait_ns;
			b.count += c->val.count;
		}
		if (b.count) {
			err = snapshot_add_blame(s, &b);
			if (err)
				return err;
		}
	}
	return 0;
}
