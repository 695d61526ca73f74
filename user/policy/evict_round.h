/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the two eviction policies share: the cool-down between rounds, the
 * victim order and count, and the memory of recent evictions.
 */
#ifndef QOSLET_POLICY_EVICT_ROUND_H
#define QOSLET_POLICY_EVICT_ROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/*
 * An eviction takes time to land (the kubelet's grace period, the pod's
 * shutdown), and report mode never lands at all. A unit named within this
 * many seconds that still exists counts as already released: a round does
 * not over-evict while the previous round's pods terminate, and report mode
 * does not name the same pod every cool-down.
 */
#define EVICT_PENDING_S 30

struct evict_pending {
	uint64_t id;
	uint64_t ts_ns; /* when it was named */
};

/* One eviction policy's memory; all zero is the initial state. */
struct evict_round {
	struct evict_pending *pending; /* named in the last EVICT_PENDING_S s */
	size_t n_pending, cap_pending;
	bool has_round;		/* a round has named victims before */
	uint64_t last_round_ns; /* when the last one did */
};

/* How a policy weighs a candidate, in its own units (bytes, CPUs). */
struct evict_measure {
	double (*key)(const struct pol_unit *u);    /* larger is evicted first */
	double (*amount)(const struct pol_unit *u); /* what evicting it releases */
};

struct evict_victims {
	const struct pol_unit **v; /* in eviction order, pointing into the input */
	size_t n;
	double pending; /* amount the pending units still hold: counted as released */
};

/*
 * Chooses this round's victims to release `need`: nothing while the
 * cool-down since the last round runs, nothing when the pending units cover
 * it, else BE units that are not pending, lowest priority first, then the
 * largest key, then the lowest id (so replays agree), until their amounts
 * reach need - pending. Only BE units are candidates: when none is left,
 * the round names nobody even though need is unmet (LS, LSR, LSE and
 * SYSTEM units are never evicted). Fills *out (free it with
 * evict_victims_free()); returns 0 or -ENOMEM.
 */
int evict_round_select(struct evict_round *r, const struct pol_input *in, double cooldown_s,
		       double need, const struct evict_measure *m, struct evict_victims *out);

/* Remembers that the victims were named at now_ns (once their actions are out). 0 or -ENOMEM. */
int evict_round_commit(struct evict_round *r, const struct evict_victims *v, uint64_t now_ns);

void evict_victims_free(struct evict_victims *v);
void evict_round_free(struct evict_round *r);

#endif
