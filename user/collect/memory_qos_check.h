/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What of memory QoS (docs/memory-qos.md) this host can do, said once at
 * start: cgroup v1 has none of memory.min/low/high; on v2 the memory
 * controller may not be enabled for the managed subtree, or the kernel may
 * lack memory.min (before 4.18); without the memory_recursiveprot mount
 * option a unit's protection does not reach tasks in its child cgroups.
 * What is off is off; the rest runs.
 */
#ifndef QOSLET_COLLECT_MEMORY_QOS_CHECK_H
#define QOSLET_COLLECT_MEMORY_QOS_CHECK_H

#include "cgroup/knob.h"

void memory_qos_check(const struct cgroup_ctrls *c, const char *subtree, const char *mountinfo);

/*
 * What memory suppression (docs/agent-policies.md) does on this host, said
 * once at start: without a memory controller nothing; without
 * memory.reclaim (cgroup v1, or a v2 kernel before 5.19) it steps the
 * limit only (v1 memory.limit_in_bytes, v2 memory.high).
 */
void mem_suppress_check(const struct cgroup_ctrls *c, const char *subtree);

/*
 * What I/O suppression does on this host, said once at start: without the
 * blkio / io controller, or without its throttle files
 * (CONFIG_BLK_DEV_THROTTLING; v2: io not enabled for the subtree), nothing
 * (its culprits are reported once, io_suppress.unthrottled).
 */
void io_suppress_check(const struct cgroup_ctrls *c, const char *subtree);

#endif
