/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The collector's pure steps: the probes count per cgroup, the policies
 * judge units, so each interval's numbers are added to the unit their
 * cgroup belongs to. No files, no maps: unit-tested on made-up snapshots.
 */
#ifndef QOSLET_COLLECT_FOLD_H
#define QOSLET_COLLECT_FOLD_H

#include <stddef.h>

#include "../policy/model.h"
#include "../snapshot.h"
#include "collect.h"

/* The member with this cgroup id in a list sorted by cgid, or NULL. */
const struct collect_member *collect_member_find(const struct collect_member *members, size_t n,
						 uint64_t cgid);

/*
 * Adds the interval's run-queue waits and CPI counters of each cgroup to
 * its unit in `in` (units sorted by id), and the probes' parts to the
 * unit's running totals (totals[i] belongs to in->units[i]). 0 or -ENOMEM.
 */
int collect_fold_probes(const struct collect_member *members, size_t n_members,
			const struct snapshot *delta, struct pol_input *in,
			struct cg_sample *totals);

/*
 * Who delayed whom, between units, into in->blame (sorted by victim, then
 * culprit; several cgroups of one unit make one pair). Waits of cgroups
 * outside every unit are left out; a culprit outside them is
 * POL_CULPRIT_OTHER. 0 or -ENOMEM.
 */
int collect_fold_blame(const struct collect_member *members, size_t n_members,
		       const struct snapshot *delta, struct pol_input *in);

#endif
