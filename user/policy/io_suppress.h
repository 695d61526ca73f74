/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * I/O suppression: what happens to a BE unit the interference policy found
 * guilty of an LS unit's I/O stall through its block I/O (mem_guilty.h,
 * io_guilty). The steps are memory suppression's (be_limit.h), on a block
 * I/O throttle of the disk its bios went to (pol_mem_stall.io_dev, pinned
 * at the first cut): v1 blkio.throttle.read_bps_device and
 * write_bps_device, v2 io.max rbps and wbps, both set to the same limit.
 *   1. It starts from the unit's measured rate (its block I/O bytes over
 *      the interval), or its owner's throttle on that disk when lower, and
 *      is cut towards floor_bps by cut_share of the gap per guilty tick.
 *   2. Once the unit has not been guilty for well_s, the throttle grows by
 *      grow_share of its ceiling a second (the owner's throttle, else the
 *      rate it was first cut from) and, there, is handed back.
 * A node without the throttle (in->has_io_limit false) or a unit whose disk
 * is unknown is passed by with one report each (io_suppress.unthrottled);
 * the evictions are unchanged.
 */
#ifndef QOSLET_POLICY_IO_SUPPRESS_H
#define QOSLET_POLICY_IO_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/action.h"
#include "policy/be_limit.h"
#include "policy/mem_guilty.h"
#include "policy/model.h"
#include "policy/policy_config.h"

/* Everything the policy remembers between ticks; all zero is the initial state. */
struct io_suppress_state {
	struct be_limit_table t;
	bool said_no_limit; /* the node-wide report was made */
	/* units already told they cannot be throttled (no disk known), sorted */
	uint64_t *said;
	size_t n_said, cap_said;
};

/*
 * One tick: appends the actions this policy wants to out, given the n
 * guilty pairs g of this tick (any order; a culprit that is not a BE unit
 * of in is ignored). Pure. Returns 0 or -ENOMEM.
 */
int io_suppress_run(const struct pol_input *in, const struct io_suppress_config *cfg,
		    const struct mem_guilty *g, size_t n, struct io_suppress_state *st,
		    struct action_list *out);
void io_suppress_state_free(struct io_suppress_state *st);

#endif
