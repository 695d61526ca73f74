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

#include "policy/action.h"
#include "policy/policy_config.h"
#include "policy/model.h"

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
	/* Guarded units (model.h, enum evict_guard) the order reached and passed over. */
	const struct pol_unit **skipped;
	size_t n_skipped;
};

/*
 * Chooses this round's victims to release `need`: nothing while the
 * cool-down since the last round runs, nothing when the pending units cover
 * it, else BE units that are not pending, in this order until their amounts
 * reach need - pending:
 *   1. the lowest pod priority first;
 *   2. then the lowest eviction priority (the pod's annotation);
 *   3. then the largest key (the policy's resource usage);
 *   4. then the shortest run time (the latest start_ns; unknown starts
 *      count as the oldest): a pod that started recently loses less work;
 *   5. then the lowest id, so that replays agree.
 * Only BE units are candidates (the class comes first): when none is left,
 * the round names nobody even though need is unmet. A guarded unit (opted
 * out, DaemonSet, mirror, and kube-system without order->kube_system) keeps
 * its place in the order but is passed over into skipped, so the round can
 * say whom it would have taken and why. Fills *out (free it with
 * evict_victims_free()); returns 0 or -ENOMEM.
 */
int evict_round_select(struct evict_round *r, const struct pol_input *in,
		       const struct evict_order_config *order, double cooldown_s, double need,
		       const struct evict_measure *m, struct evict_victims *out);

/*
 * The round's records that are not evictions: one ACT_REPORT under rule per
 * skipped unit, its guard as the cause. Call it after the victims' actions.
 * 0 or -ENOMEM.
 */
int evict_round_report_skipped(const struct evict_victims *v, const struct pol_input *in,
			       const struct evict_measure *m, enum rule_id rule,
			       struct action_list *out);

/* The evidence every victim carries about its place in the order. */
void evict_order_evidence(struct action *a, const struct pol_unit *u, const struct pol_input *in);

/*
 * Remembers that the victims were named at now_ns (once their actions are
 * out). A round that only skipped guarded units counts as a round too: its
 * reports then repeat once per cool-down, not every tick. 0 or -ENOMEM.
 */
int evict_round_commit(struct evict_round *r, const struct evict_victims *v, uint64_t now_ns);

void evict_victims_free(struct evict_victims *v);
void evict_round_free(struct evict_round *r);

#endif
