/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The units' ancestors in the managed subtree (kubepods, its QoS tiers):
 * each tick, the hits on each one's own memory limit (v1 memory.failcnt,
 * v2 memory.events.local), so that the memory interference policy tells a
 * shared ancestor at its limit from a unit's own limit and from the node.
 * A handful of cgroups whatever the pods: read by path each tick.
 */
#ifndef QOSLET_COLLECT_MEM_ANCESTORS_H
#define QOSLET_COLLECT_MEM_ANCESTORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/knob.h"
#include "cgroup/path.h"
#include "policy/model.h"

struct mem_ancestor {
	char path[POL_PATH_MAX];
	uint64_t id;
	uint64_t prev; /* the counter at the last reading */
	bool have_prev;
	bool seen; /* an ancestor of a unit at this tick */
};

struct mem_ancestors {
	struct mem_ancestor *v;
	size_t n, cap;
};

/*
 * This tick: the ancestors of in's units from `subtree` down (new ones
 * found by their paths, gone ones dropped), their hits since the last
 * tick into in->mem_ancestors (sorted by id), and each unit's
 * ms.ancestor_hits and ms.ancestor. 0 or -ENOMEM; an unreadable ancestor
 * counts no hits.
 */
int mem_ancestors_read(struct mem_ancestors *a, const struct cgroup_ctrls *ctrls,
		       const struct cgroup_fs *fs, const char *subtree, struct pol_input *in);

void mem_ancestors_free(struct mem_ancestors *a);

#endif
