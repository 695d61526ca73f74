// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/policy.h"

#include <errno.h>
#include <string.h>

bool policy_slo_may_confine(const struct policy_config *cfg)
{
	return !cfg->suppress.enabled || cfg->suppress.policy == SUPPRESS_CFS_QUOTA;
}

/*
 * Batch capacity, then the eviction on batch overcommit against it. A tick
 * whose cgroup reads failed adds no sample (capacity.h). Off (a reload may
 * turn it off): no result, so no gauges.
 */
static int capacity_run(const struct pol_input *in, const struct policy_config *cfg,
			struct policy_state *st, struct action_list *out)
{
	int err;

	st->have_capacity = false;
	if (!cfg->capacity.enabled)
		return 0;
	err = capacity_tick(in, in->cgroup_reads_failed ? "cgroup reads failed" : NULL,
			    &cfg->capacity, &st->capacity, &st->capacity_result, out);
	if (err)
		return err;
	st->have_capacity = true;
	return batch_evict_run(in, &st->capacity_result, &cfg->batch, &cfg->evict_order,
			       &st->batch_evict, out);
}

int policy_tick(const struct pol_input *in, const struct policy_config *cfg, bool dry_run,
		struct policy_state *st, struct action_list *out)
{
	/* Scratch, freed after the tick: two wishes per BE pod every tick, 1.5 KB each. */
	struct action_list wishes = {0};
	int err;

	/* First: the plan puts the lowest quota of a unit where its first wish stood. */
	err = batch_resources_run(in, &cfg->batch, &wishes);
	if (!err)
		err = interference_run(in, &cfg->interference, &st->interference, &wishes);
	if (!err)
		err = mem_interference_run(in, &cfg->mem_interference, &st->mem_interference,
					   &wishes);
	if (!err)
		err = suppress_run(in, &cfg->suppress, &cfg->slo, &st->suppress, &wishes);
	/* Too many CPUs to list: this tick has no cpuset wish, the rest stands. */
	if (err == -ENOSPC)
		err = 0;
	/* After suppression: its allowance this tick is the controller's ceiling. */
	if (!err)
		err = slo_run(in, &cfg->slo,
			      cfg->suppress.enabled && st->suppress.have_allowed
				      ? st->suppress.allowed_cpus
				      : in->cpus,
			      policy_slo_may_confine(cfg), &st->slo, &wishes);
	if (!err)
		err = burst_run(in, &cfg->burst, &st->burst, &wishes);
	/*
	 * The BE units memory interference found guilty this tick give back
	 * memory. Before memory QoS: both wish memory.high of a BE unit, and
	 * the plan keeps the lower. Those guilty of I/O stalls have their block
	 * I/O throttled.
	 */
	if (!err)
		err = mem_suppress_run(in, &cfg->mem_suppress, &cfg->evict_order,
				       st->mem_interference.guilty, st->mem_interference.n_guilty,
				       &st->mem_suppress, &wishes);
	if (!err)
		err = io_suppress_run(in, &cfg->io_suppress, st->mem_interference.io_guilty,
				      st->mem_interference.n_io_guilty, &st->io_suppress, &wishes);
	if (!err)
		err = evict_memory_run(in, &cfg->evict_memory, &cfg->evict_order, &st->evict_memory,
				       &wishes);
	if (!err)
		err = evict_cpu_run(in, &cfg->evict_cpu, &cfg->evict_order, &st->evict_cpu,
				    &wishes);
	if (!err)
		err = memory_qos_run(in, &cfg->memory_qos, &wishes);
	if (!err)
		err = plan_apply(&st->plan, in, &wishes, dry_run, out);
	action_list_free(&wishes);
	if (!err)
		err = capacity_run(in, cfg, st, out);
	return err;
}

void policy_state_free(struct policy_state *st)
{
	interference_state_free(&st->interference);
	mem_interference_state_free(&st->mem_interference);
	suppress_state_free(&st->suppress);
	slo_state_free(&st->slo);
	burst_state_free(&st->burst);
	evict_memory_state_free(&st->evict_memory);
	evict_cpu_state_free(&st->evict_cpu);
	plan_state_free(&st->plan);
	capacity_state_free(&st->capacity);
	batch_evict_state_free(&st->batch_evict);
	mem_suppress_state_free(&st->mem_suppress);
	io_suppress_state_free(&st->io_suppress);
	memset(st, 0, sizeof(*st));
}
