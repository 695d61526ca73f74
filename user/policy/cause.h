/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Why an action was taken or refused, beside its rule: each kind of cause
 * keeps its own type until it is printed (act_cause_name()), so the
 * breach counters, Event notes and decision records branch on values, not
 * on text.
 */
#ifndef QOSLET_POLICY_CAUSE_H
#define QOSLET_POLICY_CAUSE_H

#include "policy/model.h"
#include "policy/rule.h"

/*
 * What explains a breach: the kind of party that held the largest share of
 * the victim's waits (CPU) or stall (memory, I/O). A fixed set: the
 * metrics label breaches with it.
 */
enum interference_cause {
	CAUSE_UNIT = 0, /* another unit */
	CAUSE_OUTSIDE,	/* a cgroup outside every unit (system slices, the runtime, ...) */
	CAUSE_SELF,	/* the victim's own tasks, queueing behind each other */
	CAUSE_QUOTA,	/* the victim's own CPU limit: its throttled periods */
	CAUSE_IDLE,	/* wake-up latency: the CPU was idle before the victim ran */
	/* Memory and I/O (mem_interference.c): */
	CAUSE_LIMIT,	/* the victim's own memory limit: not interference */
	CAUSE_ANCESTOR, /* a shared ancestor (kubepods, a QoS tier) at its limit, no unit to blame
			 */
	CAUSE_NODE,	/* the node short of memory (global reclaim), no party to blame */
	CAUSE_NR,
};

/*
 * "unit", "outside", "self", "quota", "idle", "own_limit", "ancestor",
 * "node"; NULL out of range.
 */
const char *interference_cause_name(enum interference_cause c);

enum act_cause_kind {
	ACT_CAUSE_NONE = 0,
	ACT_CAUSE_INTERFERENCE, /* .interference: an interference report's explanation */
	ACT_CAUSE_GUARD,	/* .guard: why an eviction round passed the unit by */
	ACT_CAUSE_REFUSED_RULE, /* .rule: the wish the plan refused (plan.exclusive_cpus) */
	/* .held, a static text: why batch capacity is held at 0, why a culprit is not throttled */
	ACT_CAUSE_HELD,
	ACT_CAUSE_OUTSIDE_WRITE, /* another writer changed a file the agent wrote */
};

struct act_cause {
	enum act_cause_kind kind;
	union {
		enum interference_cause interference;
		enum evict_guard guard;
		enum rule_id rule;
		const char *held;
	};
};

/*
 * As decision records print it: the interference cause's or the guard's
 * name, the refused rule's name, the held text, "outside_write"; NULL for
 * none.
 */
const char *act_cause_name(const struct act_cause *c);

#endif
