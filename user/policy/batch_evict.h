/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Eviction on batch overcommit (docs/batch-resources.md): when the BE pods'
 * batch requests of a resource exceed the node's batch capacity for at
 * least evict_after_s, evict BE pods that request it, in the standard
 * eviction order (evict_round_select), until their requests cover the
 * excess. Nothing while batch capacity is held at 0 (warm-up, stale
 * readings): a value qoslet does not believe is no reason to evict.
 */
#ifndef QOSLET_POLICY_BATCH_EVICT_H
#define QOSLET_POLICY_BATCH_EVICT_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/action.h"
#include "policy/capacity.h"
#include "policy/policy_config.h"
#include "policy/evict_round.h"
#include "policy/model.h"

/* All zero is the initial state. */
struct batch_evict_state {
	/* per resource: pending victims are the ones named for it */
	struct evict_round round[CAP_NR];
	bool over[CAP_NR]; /* requests exceeded capacity on every tick since since_ns */
	uint64_t since_ns[CAP_NR];
};

/* The BE pods' batch requests of resource r: CPUs or bytes. */
double batch_requested(const struct pol_input *in, enum capacity_resource r);

/*
 * One tick, after capacity_tick gave cap for the same input. Appends one
 * ACT_EVICT per victim (rule "batch.overcommit_cpu" / "batch.overcommit_memory"),
 * and one ACT_REPORT per guarded pod the order passed over (evict_round.h).
 * Pure. Returns 0 or -ENOMEM.
 */
int batch_evict_run(const struct pol_input *in, const struct capacity_result *cap,
		    const struct batch_resources_config *cfg,
		    const struct evict_order_config *order, struct batch_evict_state *st,
		    struct action_list *out);

void batch_evict_state_free(struct batch_evict_state *st);

#endif
