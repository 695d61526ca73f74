/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory and I/O interference detection, in the shape of the run-queue
 * policy (interference.h, sharing its machinery: policy/breach.h). An LS
 * unit whose memory stall share is over stall_share in k of the last n
 * windows is a victim; its stall is PSI's memory stall plus the waits for
 * its refaults that PSI leaves out (the I/O wait beyond the memory stall,
 * times the share of its block I/O that refaults read back). Each tick its
 * stall is shared out among parties:
 *   - its own limit (own limit hits / all limit hits it met): not
 *     interference, reported as "own_limit", nobody guilty;
 *   - the rest, when a shared ancestor's limit was hit, among the units by
 *     the reclaim their tasks did (the reclaimer is the charger whose charge
 *     hit the limit); the ancestor itself when no unit reclaimed;
 *   - the rest, when no limit was hit (the node was short), among the units
 *     and the cgroups outside them (system slices) by their reclaim; the
 *     node itself when none shows any.
 * The breach is explained by the party with the largest share over the
 * window and reported; every BE unit holding culprit_min_share of it is
 * guilty (mem_guilty.h), for memory suppression to act on. I/O the same
 * way, with the io stall shared out by block I/O bytes, save the victim's
 * refault reads: those go to whoever memory says evicted the pages (a
 * unit, an ancestor, its own limit, the node), not to itself. Nothing here
 * acts.
 */
#ifndef QOSLET_POLICY_MEM_INTERFERENCE_H
#define QOSLET_POLICY_MEM_INTERFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/action.h"
#include "policy/breach.h"
#include "policy/mem_guilty.h"
#include "policy/model.h"
#include "policy/policy_config.h"

/* One unit of the last input: its windows. */
struct mem_interference_unit {
	uint64_t id;
	struct breach_window mem, io;
	double mem_share, io_share; /* of the last window */
	double refault_share;	    /* of mem_share: refault waits PSI left out */
};

/* Everything the policy remembers between ticks; all zero is the initial state. */
struct mem_interference_state {
	uint64_t tick;
	struct mem_interference_unit *units; /* one per unit of the last input, sorted by id */
	size_t n_units;
	struct breach_state mem, io;
	/* This tick's verdicts (mem_guilty.h): rebuilt by every run. */
	struct mem_guilty *guilty;
	size_t n_guilty, cap_guilty;
	struct mem_guilty *io_guilty;
	size_t n_io_guilty, cap_io_guilty;
};

/*
 * One tick: appends its reports to out and rebuilds the guilty lists.
 * Pure. 0, -ENOMEM, or -EINVAL for a config outside its ranges (n in
 * 1..BREACH_N_MAX, k in 1..n, shares in [0, 1]).
 */
int mem_interference_run(const struct pol_input *in, const struct mem_interference_config *cfg,
			 struct mem_interference_state *st, struct action_list *out);

void mem_interference_state_free(struct mem_interference_state *st);

/* One unit's stall of one input, as the policy measures and explains it. */
struct mem_stall_explained {
	uint64_t stall_ns;	  /* memory: PSI's stall + refault waits; I/O: the I/O wait */
	uint64_t refault_wait_ns; /* of stall_ns: the refault waits PSI left out (memory) */
	bool explained;		  /* some party holds a share (stall_ns > 0) */
	struct breach_party top;  /* the party with the largest share (top.corr: NAN) */
	double share[CAUSE_NR];	  /* each cause's share */
};

/*
 * For the CLI's views (qoslet memstall, qoslet top): every unit of `in`,
 * whatever its class, taken as a victim of this one input's memory stall
 * (io: its I/O stall), shared out among the parties and explained by the
 * same steps as a breach, over one window, with no threshold and no state.
 * out has room for in->n_units, in the units' order. Pure. 0 or -ENOMEM.
 */
int mem_stall_explain(const struct pol_input *in, bool io, struct mem_stall_explained *out);

#endif
