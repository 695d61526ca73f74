/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sched probe's pure steps for reading the blame pairs: each CPU's
 * cache of recent pairs (struct rq_blame_cache in bpf/sched.h) merged with
 * rq_blame, no BPF calls, unit-tested. user/probes/sched.c reads the maps.
 */
#ifndef QOSLET_PROBES_BLAME_CACHE_H
#define QOSLET_PROBES_BLAME_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf/sched_maps.h"
#include "snapshot.h"

/* A pair as one CPU's cache holds it: its total on that CPU. */
struct cached_pair {
	struct blame_key key;
	int cpu;
	bool used; /* taken into the pair's rq_blame entry */
	struct blame_val val;
	struct blame_val base; /* val - base: what the slot counted since it took the pair */
};

/*
 * The pairs of two copies of every CPU's cache (ncpus values each, the
 * first copied before the second), sorted by pair and CPU, into out (room
 * for ncpus * QOSLET_BLAME_CACHE_SLOTS); returns how many. A slot is taken
 * from the first copy only when its seq is even and the same in both: then
 * it kept its pair while the first copy read it. A slot left out was
 * changing pairs, and its old pair's total was in rq_blame before that
 * began, so rq_blame, read after both copies, has it.
 */
size_t blame_cache_pairs(const struct rq_blame_cache *first, const struct rq_blame_cache *second,
			 int ncpus, struct cached_pair *out);

/*
 * One rq_blame entry (ncpus values) as a sample: per CPU, field by field,
 * the larger of rq_blame's value and the cached one, which it marks used.
 */
void blame_cache_merge(struct blame_sample *out, const struct blame_key *key,
		       const struct blame_val *vals, int ncpus, struct cached_pair *cached,
		       size_t n_cached);

/*
 * Adds to s one sample per pair of the n cached pairs (sorted) that rq_blame
 * did not hold, summed over CPUs. Returns 0 or -ENOMEM.
 */
int blame_cache_add_rest(struct snapshot *s, const struct cached_pair *cached, size_t n);

#endif
