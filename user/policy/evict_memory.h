/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory eviction, after koordlet's model: when node memory use reaches
 * threshold x capacity, evict BE units until it would fall to release x
 * capacity, in evict_round.h's order with anon + unevictable as the usage.
 */
#ifndef QOSLET_POLICY_EVICT_MEMORY_H
#define QOSLET_POLICY_EVICT_MEMORY_H

#include "policy/action.h"
#include "policy/policy_config.h"
#include "policy/evict_round.h"
#include "policy/model.h"

/*
 * How memory eviction weighs a BE unit: anon + unevictable orders (what
 * only eviction gets back), the working set is what evicting it releases.
 * Memory suppression's evictions weigh them the same.
 */
extern const struct evict_measure evict_memory_measure;

/* Everything the policy remembers between ticks; all zero is the initial state. */
struct evict_memory_state {
	struct evict_round round; /* cool-down and the units named in the last 30 s */
};

/*
 * One tick: appends the actions this policy wants to out. Pure: reads only
 * its arguments. Returns 0 or -ENOMEM.
 */
int evict_memory_run(const struct pol_input *in, const struct evict_memory_config *cfg,
		     const struct evict_order_config *order, struct evict_memory_state *st,
		     struct action_list *out);
void evict_memory_state_free(struct evict_memory_state *st);

#endif
