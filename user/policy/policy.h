/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One tick of every policy, the way the agent and `qoslet replay` both run
 * it: each policy states what it wants, then the plan merges the wishes
 * (the lowest CPU quota on a unit wins) and keeps only what changes; then
 * batch capacity and the eviction on batch overcommit, which compares the
 * BE pods' batch requests against the capacity of the same tick.
 */
#ifndef QOSLET_POLICY_POLICY_H
#define QOSLET_POLICY_POLICY_H

#include "policy/action.h"
#include "policy/batch_evict.h"
#include "policy/batch_resources.h"
#include "policy/burst.h"
#include "policy/capacity.h"
#include "policy/policy_config.h"
#include "policy/evict_cpu.h"
#include "policy/evict_memory.h"
#include "policy/interference.h"
#include "policy/mem_interference.h"
#include "policy/io_suppress.h"
#include "policy/mem_suppress.h"
#include "policy/memory_qos.h"
#include "policy/model.h"
#include "policy/plan.h"
#include "policy/slo.h"
#include "policy/suppress.h"

struct policy_state {
	struct interference_state interference;
	/* its guilty lists are memory suppression's input in the same tick */
	struct mem_interference_state mem_interference;
	struct suppress_state suppress;
	struct slo_state slo;
	struct burst_state burst;
	struct evict_memory_state evict_memory;
	struct evict_cpu_state evict_cpu;
	struct plan_state plan;
	struct capacity_state capacity;
	struct capacity_result capacity_result; /* this tick's, when have_capacity */
	bool have_capacity;			/* capacity ran at the last tick */
	struct batch_evict_state batch_evict;
	struct mem_suppress_state mem_suppress;
	struct io_suppress_state io_suppress;
};

/*
 * Runs every enabled policy on `in` and appends to `out` the actions to
 * take, in the order to take them: the plan's, then batch capacity's
 * ACT_CAPACITY reports, then the batch overcommit evictions. A setting is
 * asked again only when the wish changed, or when someone else changed the
 * value since it was asked (dry-run never changes it, so in dry_run it is
 * asked once). Needs nothing of what the actuator did with the actions of
 * earlier ticks. Returns 0 or -ENOMEM.
 */
int policy_tick(const struct pol_input *in, const struct policy_config *cfg, bool dry_run,
		struct policy_state *st, struct action_list *out);

void policy_state_free(struct policy_state *st);

/*
 * Whether BE's CPUs are SLO control's to confine: not while suppression's
 * cpuset or split policy holds them.
 */
bool policy_slo_may_confine(const struct policy_config *cfg);

#endif
