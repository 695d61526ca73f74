/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's running totals of the blame pairs (probe_opts.blame_fresh).
 * Each reading, the sched probe drains rq_blame_fresh, where the per-CPU
 * caches give back what they counted (bpf/sched_switch.bpf.h), and copies
 * the caches; this module adds the one to the totals and the other on top,
 * so a reading costs the pairs that changed instead of every pair rq_blame
 * keeps. Pure: no BPF calls, unit-tested; user/probes/sched.c reads the maps.
 *
 * A wait is in exactly one place at any moment: a cache slot, or (given
 * back) rq_blame_fresh. Draining first and copying the caches second can
 * miss a slot given back in between, never count one twice; the miss shows
 * at the next reading. A pair's total is therefore never taken lower than
 * the one handed out last, so it never goes down.
 */
#ifndef QOSLET_PROBES_BLAME_TOTALS_H
#define QOSLET_PROBES_BLAME_TOTALS_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"
#include "probes/blame_cache.h"

/*
 * Pairs kept: those whose total grew most recently. A pair dropped starts
 * again from zero when it comes back, as one rq_blame's LRU evicts does.
 */
#define BLAME_TOTALS_MAX 4096

struct blame_total {
	uint64_t victim, culprit;
	uint64_t given_wait_ns, given_count; /* drained (or read at the start), all CPUs */
	uint64_t shown_wait_ns, shown_count; /* the total last handed out */
	uint32_t grown;			     /* the reading at which it last grew */
};

struct blame_totals {
	struct blame_total *v; /* sorted by (victim, culprit) */
	size_t n, cap;
	uint32_t reading; /* readings handed out so far */
};

/* Increments: pairs in any order, a pair possibly more than once. */
struct blame_incs {
	struct blame_sample *v;
	size_t n, cap;
};

/* Appends one entry of a per-CPU map of struct blame_val, summed; -ENOMEM. */
int blame_incs_add(struct blame_incs *l, const struct blame_key *key, const struct blame_val *vals,
		   int ncpus);

/* Adds the increments to the totals (sorting l); 0 or -ENOMEM. */
int blame_totals_add(struct blame_totals *t, struct blame_incs *l);

/*
 * Adds to s each pair's total: what was given, plus what the cached slots
 * (blame_cache_pairs(), sorted) counted since they took the pair, never
 * less than the last reading's. Then keeps at most BLAME_TOTALS_MAX pairs,
 * dropping those that grew longest ago (never one that grew now).
 * Returns 0 or -ENOMEM.
 */
int blame_totals_emit(struct blame_totals *t, const struct cached_pair *cached, size_t n_cached,
		      struct snapshot *s);

/* Drops every pair in which one of the ids takes part. */
void blame_totals_forget(struct blame_totals *t, const uint64_t *ids, size_t n);

void blame_totals_free(struct blame_totals *t);
void blame_incs_free(struct blame_incs *l);

#endif
