/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory QoS (docs/memory-qos.md), on units whose memory controller is
 * cgroup v2 (pol_unit.has_mem_qos):
 *
 *   LSE, LSR, LS  memory.min = request x min_share, memory.low = request x
 *                 low_share (per class), each at most limit x limit_cap, so
 *                 protection never reaches the limit (page cache then
 *                 cannot be reclaimed and the pod is OOM-killed)
 *   BE, limited   memory.high = request + throttling x (limit - request)
 *   BE, no limit  memory.high = max(request, used + free_share x node free
 *                 / unlimited BE units), kept while it moves by less than
 *                 min_change x capacity
 *
 * Values are page-aligned down (the kernel stores pages: an unaligned value
 * would read back different and look refused). Units without a request get
 * no protection; the actuator carries protection up to the unit's parents.
 */
#ifndef QOSLET_POLICY_MEMORY_QOS_H
#define QOSLET_POLICY_MEMORY_QOS_H

#include "policy/action.h"
#include "policy/policy_config.h"
#include "policy/model.h"

/* The page size the values are aligned to (x86-64 and most arm64 kernels). */
#define MEMORY_QOS_PAGE 4096

/* Appends the tick's wishes to out; 0 or -ENOMEM. */
int memory_qos_run(const struct pol_input *in, const struct memory_qos_config *cfg,
		   struct action_list *out);

#endif
