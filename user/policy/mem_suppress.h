/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory suppression: what happens to a BE unit the memory interference
 * policy found guilty of an LS unit's memory stall (policy/mem_guilty.h).
 *   1. Its page cache is asked back (v2 memory.reclaim, where the kernel
 *      has it), at most once per reclaim_interval_s.
 *   2. Its memory limit is cut towards its floor, anon + unevictable +
 *      margin (what reclaim cannot take), by cut_share of the gap per
 *      guilty tick: v2 memory.high (the kernel throttles and reclaims above
 *      it, never kills); v1 memory.limit_in_bytes, which the kernel meets
 *      at the write by reclaiming the unit's page cache (EBUSY, not an OOM
 *      kill, when it cannot). A v1 limit under anon growth would OOM-kill:
 *      the floor follows anon up at every tick, at once (mem_suppress.raise).
 *   3. Once the unit has not been guilty for well_s, the limit grows back
 *      by grow_share of its ceiling a second (the owner's limit, else node
 *      memory) and, there, is handed back (the plan restores the owner's).
 *      A unit guilty again after it grew waits twice as long before it
 *      grows the next time (up to BE_LIMIT_HOLD_MAX x well_s; the steps are be_limit.h's).
 *   4. A unit still guilty evict_after_s after its limit reached the floor
 *      is past what suppression can do: an eviction round in the order of
 *      evict_round.h, over the BE units, for the culprits' working sets.
 */
#ifndef QOSLET_POLICY_MEM_SUPPRESS_H
#define QOSLET_POLICY_MEM_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/action.h"
#include "policy/be_limit.h"
#include "policy/evict_round.h"
#include "policy/mem_guilty.h"
#include "policy/model.h"
#include "policy/policy_config.h"

/* Everything the policy remembers between ticks; all zero is the initial state. */
struct mem_suppress_state {
	struct be_limit_table t;
	struct evict_round round;
};

/*
 * One tick: appends the actions this policy wants to out, given the n
 * guilty pairs g of this tick (any order; a culprit that is not a BE unit
 * of in is ignored). order: the eviction order's settings. Pure: reads only
 * its arguments. Returns 0 or -ENOMEM.
 */
int mem_suppress_run(const struct pol_input *in, const struct mem_suppress_config *cfg,
		     const struct evict_order_config *order, const struct mem_guilty *g, size_t n,
		     struct mem_suppress_state *st, struct action_list *out);
void mem_suppress_state_free(struct mem_suppress_state *st);

#endif
