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

#endif
