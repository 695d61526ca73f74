/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the collector must read and how it classes units: derived from the
 * agent's config at start and at every reload (config_collect_wants), so
 * that the collector knows only what it reads, not the config's shape.
 */
#ifndef QOSLET_COLLECT_WANTS_H
#define QOSLET_COLLECT_WANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/pod_trust.h"
#include "policy/model.h"

/*
 * A class rule: the first whose every non-empty matcher matches a unit wins.
 * glob: fnmatch (FNM_PATHNAME) of the cgroup path; ns: fnmatch of the pod's
 * namespace; label: "key" or "key=value" on the pod. ns and label match
 * only pods the API listed.
 */
struct class_rule {
	char glob[POL_PATH_MAX];
	char ns[64];	 /* a namespace is a DNS label, at most 63 bytes */
	char label[320]; /* a label key (prefix/name) is at most 253 + 1 + 63 bytes */
	enum qos_class cls;
};

struct collect_wants {
	/* The class rules, in order (the config's `classes`; pointed at, not copied). */
	const struct class_rule *classes;
	size_t n_classes;
	struct pod_trust_config trust; /* what a pod's metadata may decide */
	/* A pod's run-queue target annotation below this is reported as clamped (slo floor). */
	double rq_target_floor_us;
	bool memory_protection; /* memory.min/low read with the settings (memory QoS) */
	/* BE units' memory every tick, their memory limit with the settings (memory suppression) */
	bool mem_suppress;
	/* BE units' block I/O throttles with the settings (I/O suppression) */
	bool io_suppress;
	bool capacity; /* every unit's memory, every COLLECT_CAPACITY_MEM_NS */
	/* Units' memory read while the node is near this share of its capacity (memory eviction).
	 */
	bool evict_memory;
	double evict_memory_threshold;
	/*
	 * Memory interference: every unit's memory.stat and limit hits every
	 * tick, and on v2 the LS units' pressure files every tick.
	 */
	bool mem_interference;
	/* The kubelet's CPU manager checkpoint (exclusive CPUs); NULL or "" none; pointed at. */
	const char *cpu_manager_state;
};

#endif
