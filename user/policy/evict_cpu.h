/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPU-satisfaction eviction, after koordlet's model: when BE has been
 * granted too little of what it requested while using nearly all of it, for
 * a whole window, evict BE units until the grant covers enough of the rest.
 */
#ifndef QOSLET_POLICY_EVICT_CPU_H
#define QOSLET_POLICY_EVICT_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/action.h"
#include "policy/policy_config.h"
#include "policy/evict_round.h"
#include "policy/model.h"

/* Everything the policy remembers between ticks; all zero is the initial state. */
struct evict_cpu_state {
	struct evict_round round; /* cool-down and the units named in the last 30 s */
	bool holding;		  /* the condition held on every tick since since_ns */
	uint64_t since_ns;
};

/*
 * One tick: appends the actions this policy wants to out. Pure: reads only
 * its arguments. Returns 0 or -ENOMEM.
 */
int evict_cpu_run(const struct pol_input *in, const struct evict_cpu_config *cfg,
		  const struct evict_order_config *order, struct evict_cpu_state *st,
		  struct action_list *out);
void evict_cpu_state_free(struct evict_cpu_state *st);

#endif
