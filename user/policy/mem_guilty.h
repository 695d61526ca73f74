/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The memory interference policy's verdicts, handed to the memory
 * suppression policy in the same tick (policy_tick runs detection first):
 * every BE unit found guilty of an LS unit's memory stall (its charges,
 * page-cache growth or reclaim drove a shared ancestor's or the node's
 * reclaim) or of its I/O stall (its block I/O), with the victim and the
 * culprit's share of the victim's evidence. Detection never acts on BE
 * memory itself; suppression reads only these lists.
 */
#ifndef QOSLET_POLICY_MEM_GUILTY_H
#define QOSLET_POLICY_MEM_GUILTY_H

#include <stdint.h>

/*
 * A BE unit guilty of an LS unit's memory stall, or of its I/O stall
 * through its block I/O, in this tick (one list per resource, one shape:
 * memory and I/O suppression share their steps, be_limit.h).
 */
struct mem_guilty {
	uint64_t culprit; /* the BE unit's id (pol_unit.id) */
	uint64_t victim;  /* the LS unit's id */
	double share;	  /* the culprit's share of the evidence (reclaim, block I/O bytes), 0..1 */
};

#endif
