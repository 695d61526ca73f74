// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/rule.h"

#include <stddef.h>

/* kept on one line each: clang-format splits a brace initializer in a macro over four */
/* clang-format off */
#define EV_SUPPRESSED	 {"Normal", "Suppressed", "Suppress", "SuppressionEnded"}
#define EV_SLO_THROTTLED {"Normal", "SLOThrottled", "Throttle", "SLOThrottleEnded"}
#define EV_INTERFERENCE	 {"Warning", "Interference", "Detect", "InterferenceEnded"}
/* an eviction round's report: it would have taken the pod but passed it by (no end Event) */
#define EV_SKIPPED	 {"Normal", "EvictionSkipped", "Evict", NULL}
/* clang-format on */

#define ROW(id, n, fam, ...) [id] = {.name = n, .family = RULE_FAMILY_##fam, .event = __VA_ARGS__}

/*
 * Burst, batch resources, capacity, memory QoS, SLO growth and holds are
 * routine and make no Event, as hand-backs do. The split's short report
 * makes none: BE's new setting of the same tick has its Suppressed Event.
 * The plan's refusal of a wish on exclusive CPUs is a guard no policy
 * trips: its decision record says which rule it refused.
 */
static const struct rule_info rules[RULE_NR] = {
	ROW(RULE_NONE, "", NONE, {0}),
	ROW(RULE_BATCH_CONTAINER_CPU_QUOTA, "batch.container_cpu_quota", BATCH, {0}),
	ROW(RULE_BATCH_CONTAINER_CPU_WEIGHT, "batch.container_cpu_weight", BATCH, {0}),
	ROW(RULE_BATCH_CONTAINER_MEMORY_LIMIT, "batch.container_memory_limit", BATCH, {0}),
	ROW(RULE_BATCH_CPU_QUOTA, "batch.cpu_quota", BATCH, {0}),
	ROW(RULE_BATCH_CPU_WEIGHT, "batch.cpu_weight", BATCH, {0}),
	ROW(RULE_BATCH_MEMORY_LIMIT, "batch.memory_limit", BATCH, {0}),
	ROW(RULE_BATCH_OVERCOMMIT_CPU, "batch.overcommit_cpu", BATCH, EV_SKIPPED),
	ROW(RULE_BATCH_OVERCOMMIT_MEMORY, "batch.overcommit_memory", BATCH, EV_SKIPPED),
	ROW(RULE_BURST_BUDGET_SPENT, "burst.budget_spent", BURST, {0}),
	ROW(RULE_BURST_CPU_BURST, "burst.cpu_burst", BURST, {0}),
	ROW(RULE_BURST_HOLD, "burst.hold", BURST, {0}),
	ROW(RULE_BURST_SCALE_DOWN, "burst.scale_down", BURST, {0}),
	ROW(RULE_BURST_SCALE_UP, "burst.scale_up", BURST, {0}),
	ROW(RULE_CAPACITY_CPU, "capacity.cpu", CAPACITY, {0}),
	ROW(RULE_CAPACITY_MEMORY, "capacity.memory", CAPACITY, {0}),
	ROW(RULE_EVICT_CPU_SATISFACTION, "evict.cpu_satisfaction", EVICT, EV_SKIPPED),
	ROW(RULE_EVICT_MEMORY, "evict.memory", EVICT, EV_SKIPPED),
	ROW(RULE_INTERFERENCE_CAP, "interference.cap", INTERFERENCE,
	    {"Warning", "InterferenceCapped", "Cap", "InterferenceCapEnded"}),
	ROW(RULE_INTERFERENCE_CPI, "interference.cpi", INTERFERENCE, EV_INTERFERENCE),
	ROW(RULE_INTERFERENCE_IO, "interference.io", INTERFERENCE, EV_INTERFERENCE),
	ROW(RULE_INTERFERENCE_MEMORY, "interference.memory", INTERFERENCE, EV_INTERFERENCE),
	ROW(RULE_INTERFERENCE_RUNQ_SLO, "interference.runq_slo", INTERFERENCE, EV_INTERFERENCE),
	ROW(RULE_IO_SUPPRESS_GROW, "io_suppress.grow", IO_SUPPRESS, {0}),
	ROW(RULE_IO_SUPPRESS_LIMIT, "io_suppress.limit", IO_SUPPRESS, EV_SUPPRESSED),
	/* a culprit no throttle can reach (no controller, disk unknown): said once */
	ROW(RULE_IO_SUPPRESS_UNTHROTTLED, "io_suppress.unthrottled", IO_SUPPRESS, {0}),
	/* evicted because suppression at its floor did not relieve the victim */
	ROW(RULE_MEM_SUPPRESS_EVICT, "mem_suppress.evict", MEM_SUPPRESS, EV_SKIPPED),
	ROW(RULE_MEM_SUPPRESS_GROW, "mem_suppress.grow", MEM_SUPPRESS, {0}),
	ROW(RULE_MEM_SUPPRESS_LIMIT, "mem_suppress.limit", MEM_SUPPRESS, EV_SUPPRESSED),
	/* ahead of the unit's anon growth (v1: a limit under it would OOM-kill) */
	ROW(RULE_MEM_SUPPRESS_RAISE, "mem_suppress.raise", MEM_SUPPRESS, {0}),
	ROW(RULE_MEM_SUPPRESS_RECLAIM, "mem_suppress.reclaim", MEM_SUPPRESS, EV_SUPPRESSED),
	ROW(RULE_MEMORY_QOS_HIGH_FREE, "memory_qos.high_free", MEMORY_QOS, {0}),
	ROW(RULE_MEMORY_QOS_HIGH_LIMIT, "memory_qos.high_limit", MEMORY_QOS, {0}),
	ROW(RULE_MEMORY_QOS_LOW, "memory_qos.low", MEMORY_QOS, {0}),
	ROW(RULE_MEMORY_QOS_MIN, "memory_qos.min", MEMORY_QOS, {0}),
	ROW(RULE_PLAN_EXCLUSIVE_CPUS, "plan.exclusive_cpus", PLAN, {0}),
	ROW(RULE_PLAN_RELEASE, "plan.release", PLAN, {0}),
	ROW(RULE_SLO_CONFINE, "slo.confine", SLO, EV_SLO_THROTTLED),
	ROW(RULE_SLO_CUT, "slo.cut", SLO, EV_SLO_THROTTLED),
	ROW(RULE_SLO_CUT_IDLE, "slo.cut_idle", SLO, EV_SLO_THROTTLED),
	/* SLO control holds a BE pod on its floor: no interference found on it */
	ROW(RULE_SLO_FLOOR, "slo.floor", SLO, {"Normal", "SLOFloor", "Throttle", NULL}),
	ROW(RULE_SLO_GROW, "slo.grow", SLO, {0}),
	ROW(RULE_SLO_HOLD, "slo.hold", SLO, {0}),
	ROW(RULE_SUPPRESS_CFS_QUOTA, "suppress.cfs_quota", SUPPRESS, EV_SUPPRESSED),
	ROW(RULE_SUPPRESS_CPU_IDLE, "suppress.cpu_idle", SUPPRESS, EV_SUPPRESSED),
	ROW(RULE_SUPPRESS_CPUSET, "suppress.cpuset", SUPPRESS, EV_SUPPRESSED),
	ROW(RULE_SUPPRESS_SPLIT_BE, "suppress.split_be", SUPPRESS, EV_SUPPRESSED),
	ROW(RULE_SUPPRESS_SPLIT_LS, "suppress.split_ls", SUPPRESS, EV_SUPPRESSED),
	ROW(RULE_SUPPRESS_SPLIT_SHORT, "suppress.split_short", SUPPRESS, {0}),
};

const struct rule_info *rule_info(enum rule_id r)
{
	return &rules[(unsigned int)r < RULE_NR ? r : RULE_NONE];
}

const char *rule_name(enum rule_id r)
{
	return rule_info(r)->name;
}
