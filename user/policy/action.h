/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a policy asks for: a desired setting of one unit's knob (or an
 * eviction, or a finding to report), with the rule that fired and the numbers
 * it saw. Policies append to an action_list; the agent turns each action into
 * a decision record and hands the writes to the actuator.
 */
#ifndef QOSLET_POLICY_ACTION_H
#define QOSLET_POLICY_ACTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/cause.h"
#include "policy/model.h"
#include "policy/rule.h"

enum act_kind {
	ACT_CPU_QUOTA = 0, /* value = quota in us (-1 unlimited), period kept */
	ACT_CPU_BURST,	   /* value = burst in us */
	ACT_CPUSET,	   /* cpus = CPU list */
	ACT_CPU_IDLE,	   /* value = 0 or 1 */
	ACT_EVICT,	   /* evict the unit (the configured eviction action) */
	ACT_REPORT,	   /* an interference finding: nothing to write */
	ACT_CAPACITY,	   /* the node's batch capacity changed: value = milli-CPUs or bytes */
	ACT_CPU_WEIGHT,	   /* value = cpu.shares (v1) or cpu.weight (v2), as the file takes it */
	ACT_MEM_LIMIT,	   /* value = memory limit in bytes (-1 unlimited) */
	ACT_MEM_MIN,  /* value = memory.min in bytes (the actuator carries it to the parents) */
	ACT_MEM_LOW,  /* value = memory.low in bytes (the same) */
	ACT_MEM_HIGH, /* value = memory.high in bytes */
	/*
	 * value = bytes for the kernel to reclaim from the unit now (v2
	 * memory.reclaim): a one-shot request, not a setting, never restored
	 */
	ACT_MEM_RECLAIM,
	/*
	 * value = the unit's block I/O throttle on disk `dev`, bytes a second
	 * (-1 none): reads, writes (v1 blkio.throttle.*_bps_device, v2 io.max)
	 */
	ACT_IO_RBPS,
	ACT_IO_WBPS,
	ACT_NR,
};

/*
 * "cpu_quota", "cpu_burst", "cpuset", "cpu_idle", "evict", "report", "capacity",
 * "cpu_weight", "mem_limit", "memory_min", "memory_low", "memory_high",
 * "memory_reclaim", "io_rbps", "io_wbps".
 */
const char *act_kind_name(enum act_kind k);

#define ACT_EVIDENCE_MAX 20 /* a memory breach report has 17 */

/* One number the rule looked at, e.g. {"be_allowed_cpus", 0.8}. */
struct act_evidence {
	const char *name; /* static string */
	double value;
};

struct action {
	enum act_kind kind;
	uint64_t id;		    /* target unit */
	char path[POL_PATH_MAX];    /* target unit's path */
	enum qos_class cls;	    /* target unit's class */
	int64_t value;		    /* quota / burst / idle, per kind */
	uint64_t dev;		    /* ACT_IO_*: the disk, MEMSTALL_DEV(major, minor) */
	char cpus[POL_CPULIST_MAX]; /* ACT_CPUSET */
	enum rule_id rule;	    /* the rule that fired */
	/*
	 * Set by the plan when no policy wants the setting any more (a cap
	 * lapsed, a policy let go): give the knob back its owner's value.
	 * value/cpus are then meaningless.
	 */
	bool restore;
	/*
	 * ACT_CPUSET on an LS unit: the split (suppress.policy "split") moving
	 * it off the CPUs BE gets alone, the one cpuset the actuator lets an LS
	 * unit take (and only from the shared pool: docs/agent-actuator.md).
	 */
	bool ls_split;
	/* The target is a pod the kubelet pinned to CPUs of its own (pol_unit.pinned_cpus). */
	bool pinned;
	uint64_t related_id; /* the other party (a culprit, a victim); 0 none */
	char related[POL_PATH_MAX];
	/*
	 * ACT_REPORT: what explains the finding, why an eviction round passed
	 * the unit by, or the wish the plan refused; ACT_CAPACITY: why batch is
	 * held at 0; an outside write's answer: ACT_CAUSE_OUTSIDE_WRITE.
	 */
	struct act_cause cause;
	/* ACT_CAPACITY: the extended resource ("kubernetes.io/batch-cpu"); else NULL. */
	const char *resource;
	struct act_evidence ev[ACT_EVIDENCE_MAX];
	size_t n_ev;
};

struct action_list {
	struct action *v;
	size_t n, cap;
};

/*
 * Appends a zeroed action aimed at unit u (id, path, class filled), or NULL
 * when out of memory.
 */
struct action *action_add(struct action_list *l, enum act_kind kind, const struct pol_unit *u,
			  enum rule_id rule);

/* Adds one evidence number; more than ACT_EVIDENCE_MAX is a programming error (asserts). */
void action_evidence(struct action *a, const char *name, double value);

void action_list_clear(struct action_list *l);
void action_list_free(struct action_list *l);

#endif
