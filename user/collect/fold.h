/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The collector's pure steps: the probes count per cgroup, the policies
 * judge units, so each interval's numbers are added to the unit their
 * cgroup belongs to. No files, no maps: unit-tested on made-up snapshots.
 */
#ifndef QOSLET_COLLECT_FOLD_H
#define QOSLET_COLLECT_FOLD_H

#include <stddef.h>

#include "../policy/config.h"
#include "../policy/model.h"
#include "../snapshot.h"
#include "collect.h"

/* The member with this cgroup id in a list sorted by cgid, or NULL. */
const struct collect_member *collect_member_find(const struct collect_member *members, size_t n,
						 uint64_t cgid);

/*
 * Adds the interval's run-queue waits and CPI counters of each cgroup to
 * its unit in `in` (units sorted by id), and the probes' parts to the
 * unit's running totals (*totals[i] belongs to in->units[i]). 0 or -ENOMEM.
 */
int collect_fold_probes(const struct collect_member *members, size_t n_members,
			const struct snapshot *delta, struct pol_input *in,
			struct cg_sample *const *totals);

/* Outside culprits named per victim and tick: the rest of them stay POL_CULPRIT_OTHER. */
#define COLLECT_OUTSIDE_PER_VICTIM 4

/* Names an outside culprit (path and class into *o): 0, or non-zero when it cannot (gone). */
typedef int (*collect_namer)(void *ctx, uint64_t cgid, struct pol_outside *o);

/*
 * Who delayed whom, between units, into in->blame (sorted by victim, then
 * culprit; several cgroups of one unit make one pair). Waits of BE units (no
 * policy takes them as victims, and a node may hold hundreds) and of cgroups
 * outside every unit are left out. A culprit outside every unit keeps its
 * own cgroup id, named in in->outside (sorted by id), when its victim is an
 * LS unit whose window is over (interference_window(): run the probes' fold
 * first) and it is among that victim's COLLECT_OUTSIDE_PER_VICTIM largest
 * and `name` can name it; otherwise it is POL_CULPRIT_OTHER. So only
 * breaches pay for names. 0 or -ENOMEM.
 */
int collect_fold_blame(const struct collect_member *members, size_t n_members,
		       const struct snapshot *delta, const struct interference_config *icfg,
		       collect_namer name, void *ctx, struct pol_input *in);

#endif
