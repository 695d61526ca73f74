/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The rules that make actions, one id each, with one table (rule.c) of what
 * the rest of the agent needs to know of a rule: its printed name (decision
 * records, the metrics' rule label, Event notes), its family, and the
 * Kubernetes Event a decision of it makes when it lands. Rules stay ids
 * until they are printed: nothing matches them by name.
 */
#ifndef QOSLET_POLICY_RULE_H
#define QOSLET_POLICY_RULE_H

/*
 * In the order of their names, so that sorting by id sorts the metrics'
 * series as by their label text.
 */
enum rule_id {
	RULE_NONE = 0, /* "": an outside write to a file no action of this run wrote */
	RULE_BATCH_CONTAINER_CPU_QUOTA,
	RULE_BATCH_CONTAINER_CPU_WEIGHT,
	RULE_BATCH_CONTAINER_MEMORY_LIMIT,
	RULE_BATCH_CPU_QUOTA,
	RULE_BATCH_CPU_WEIGHT,
	RULE_BATCH_MEMORY_LIMIT,
	RULE_BATCH_OVERCOMMIT_CPU,
	RULE_BATCH_OVERCOMMIT_MEMORY,
	RULE_BURST_BUDGET_SPENT,
	RULE_BURST_CPU_BURST,
	RULE_BURST_HOLD,
	RULE_BURST_SCALE_DOWN,
	RULE_BURST_SCALE_UP,
	RULE_CAPACITY_CPU,
	RULE_CAPACITY_MEMORY,
	RULE_EVICT_CPU_SATISFACTION,
	RULE_EVICT_MEMORY,
	RULE_INTERFERENCE_CAP,
	RULE_INTERFERENCE_CPI,
	RULE_INTERFERENCE_IO,
	RULE_INTERFERENCE_MEMORY,
	RULE_INTERFERENCE_RUNQ_SLO,
	RULE_IO_SUPPRESS_GROW,
	RULE_IO_SUPPRESS_LIMIT,
	RULE_IO_SUPPRESS_UNTHROTTLED,
	RULE_MEM_SUPPRESS_EVICT,
	RULE_MEM_SUPPRESS_GROW,
	RULE_MEM_SUPPRESS_LIMIT,
	RULE_MEM_SUPPRESS_RAISE,
	RULE_MEM_SUPPRESS_RECLAIM,
	RULE_MEMORY_QOS_HIGH_FREE,
	RULE_MEMORY_QOS_HIGH_LIMIT,
	RULE_MEMORY_QOS_LOW,
	RULE_MEMORY_QOS_MIN,
	RULE_PLAN_EXCLUSIVE_CPUS,
	RULE_PLAN_RELEASE,
	RULE_SLO_CONFINE,
	RULE_SLO_CUT,
	RULE_SLO_CUT_IDLE,
	RULE_SLO_FLOOR,
	RULE_SLO_GROW,
	RULE_SLO_HOLD,
	RULE_SUPPRESS_CFS_QUOTA,
	RULE_SUPPRESS_CPU_IDLE,
	RULE_SUPPRESS_CPUSET,
	RULE_SUPPRESS_SPLIT_BE,
	RULE_SUPPRESS_SPLIT_LS,
	RULE_SUPPRESS_SPLIT_SHORT,
	RULE_NR,
};

/* The policy a rule belongs to: the part of its name before the dot. */
enum rule_family {
	RULE_FAMILY_NONE = 0,
	RULE_FAMILY_BATCH,
	RULE_FAMILY_BURST,
	RULE_FAMILY_CAPACITY,
	RULE_FAMILY_EVICT,
	RULE_FAMILY_INTERFERENCE,
	RULE_FAMILY_IO_SUPPRESS,
	RULE_FAMILY_MEMORY_QOS,
	RULE_FAMILY_MEM_SUPPRESS,
	RULE_FAMILY_PLAN,
	RULE_FAMILY_SLO,
	RULE_FAMILY_SUPPRESS,
};

/*
 * The Events a rule's decisions make on their pod: only on transitions a
 * person wants to see (kube/report.c). A write of the rule that lands (not a
 * hand-back) starts a hold of `reason` on the pod; a finding starts a
 * finding of it. The Event `reason` is made when the pod's hold or finding
 * starts, not at each step of a quota or each tick a breach lasts;
 * `end_reason` (type Normal, action "Release") when the hold's last setting
 * is handed back or the finding has not been seen for a while; NULL: no
 * Event at the end. Evictions and contested settings make theirs by outcome
 * whatever the rule. reason NULL: none (routine changes, reports that
 * another decision of the same tick explains).
 */
struct rule_event {
	const char *type, *reason, *action, *end_reason;
};

struct rule_info {
	const char *name; /* "suppress.cfs_quota", as records and metrics print it */
	enum rule_family family;
	struct rule_event event;
};

/* The rule's row; RULE_NONE's for an id out of range. */
const struct rule_info *rule_info(enum rule_id r);

/* rule_info(r)->name. */
const char *rule_name(enum rule_id r);

#endif
