// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory eviction: one ACT_EVICT per victim (an event: the round's
 * cool-down and the pending rule keep it from repeating). The numbers are
 * those of the node's memory as eviction counts it (in->mem_used), so a
 * unit's release is its working set (mem_used); the order is by anon +
 * unevictable, the memory that only eviction (not reclaim) gets back.
 */
#include "policy/evict_memory.h"

#include <errno.h>

static double mem_key(const struct pol_unit *u)
{
	return (double)u->mem_anon_unevict;
}

static double mem_amount(const struct pol_unit *u)
{
	return (double)u->mem_used;
}

const struct evict_measure evict_memory_measure = {mem_key, mem_amount};

int evict_memory_run(const struct pol_input *in, const struct evict_memory_config *cfg,
		     const struct evict_order_config *order, struct evict_memory_state *st,
		     struct action_list *out)
{
	struct evict_victims v;
	double cap = (double)in->mem_capacity, used = (double)in->mem_used, need;
	int err = 0;

	if (!cfg->enabled || !in->mem_capacity || used / cap < cfg->threshold)
		return 0;
	need = used - cfg->release * cap;
	err = evict_round_select(&st->round, in, order, cfg->cooldown_s, need,
				 &evict_memory_measure, &v);
	/*
	 * v.n == 0 with need > v.pending means no evictable BE unit is left:
	 * the rest of the memory belongs to classes never evicted or to
	 * guarded pods (reported below), so nothing is named.
	 */
	for (size_t i = 0; !err && i < v.n; i++) {
		const struct pol_unit *u = v.v[i];
		struct action *a = action_add(out, ACT_EVICT, u, RULE_EVICT_MEMORY);

		if (!a) {
			err = -ENOMEM;
			break;
		}
		action_evidence(a, "mem_used_bytes", used);
		action_evidence(a, "mem_capacity_bytes", cap);
		action_evidence(a, "used_ratio", used / cap);
		action_evidence(a, "threshold", cfg->threshold);
		action_evidence(a, "release", cfg->release);
		action_evidence(a, "need_bytes", need);
		action_evidence(a, "pending_bytes", v.pending);
		action_evidence(a, "victim_mem_bytes", mem_amount(u));
		action_evidence(a, "victim_anon_unevict_bytes", mem_key(u));
		action_evidence(a, "skipped_units", (double)v.n_skipped);
		evict_order_evidence(a, u, in);
	}
	if (!err)
		err = evict_round_report_skipped(&v, in, &evict_memory_measure, RULE_EVICT_MEMORY,
						 out);
	if (!err)
		err = evict_round_commit(&st->round, &v, in->ts_ns);
	evict_victims_free(&v);
	return err;
}

void evict_memory_state_free(struct evict_memory_state *st)
{
	evict_round_free(&st->round);
}
