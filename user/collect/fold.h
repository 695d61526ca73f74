/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The collector's pure steps: the probes count per cgroup, the policies
 * judge units, so each interval's numbers are added to the unit their
 * cgroup belongs to. No files, no maps: unit-tested on made-up snapshots.
 */
#ifndef QOSLET_COLLECT_FOLD_H
#define QOSLET_COLLECT_FOLD_H

#include <stddef.h>

#include "policy/model.h"
#include "snapshot.h"
#include "collect/collect.h"

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

/*
 * The memstall probe's interval into the units' memory stall (pol_unit.ms):
 * every unit's reclaim time; with stall_from_probe (cgroup v1 memory: no
 * pressure files) and the probe tracing PSI's inputs, every unit's stall
 * (in_memstall sleeps + reclaim), I/O wait and bios' bytes, measured
 * (has_) even when zero. Cgroups outside every unit that reclaimed or
 * submitted bios (with the probe tracing them) become in->mem_outside,
 * each named by `name` (several cgroups of one party add up; unnamed ones
 * are left out), sorted by id. 0 or -ENOMEM.
 */
typedef int (*collect_namer)(void *ctx, uint64_t cgid, struct pol_outside *o);
int collect_fold_mem(const struct collect_member *members, size_t n_members,
		     const struct snapshot *delta, bool stall_from_probe, collect_namer name,
		     void *ctx, struct pol_input *in);

/* Outside parties kept per victim and tick: the rest of them add up to POL_CULPRIT_OTHER. */
#define COLLECT_OUTSIDE_PER_VICTIM 4

/*
 * The party that explains a wait behind cgroup cgid, outside every unit:
 * its id, path and class into *o (o->id may name an ancestor of cgid, see
 * collect_outside_depth). 0, or non-zero when it cannot (the cgroup is gone).
 */
/*
 * How much of `path` (relative to the hierarchy's root, as the subtree)
 * names the party behind a wait in it, as the operator knows it: a cgroup
 * in the managed subtree is itself; elsewhere, below the node's root (the
 * subtree's parent: where kubepods sits beside the system's slices), the
 * top-level cgroup, or, for a systemd slice, the deepest slice and its
 * service: system.slice/containerd.service, user.slice/user-1000.slice,
 * noisy.slice for noisy.slice/run-u7.scope (a scope, like any other leaf
 * of a slice, is transient: the operator made the slice). Tasks of the
 * node's root are the root. A path outside the node's root is cut the
 * same way below the hierarchy's root. Returns the length of the prefix.
 */
size_t collect_outside_depth(const char *path, const char *subtree);

/*
 * Who delayed whom, between units, into in->blame (sorted by victim, then
 * culprit; several cgroups of one unit make one pair). Waits of BE units (no
 * policy takes them as victims, and a node may hold hundreds) and of cgroups
 * outside every unit are left out. For an LS victim, a culprit outside
 * every unit becomes the party `name` gives it (its own cgroup or the
 * ancestor that explains it; several culprits of one party add up), named
 * in in->outside (sorted by id), on every tick whether or not the victim's
 * window is over: a breach is judged over several ticks, and one party
 * must be one party in all of them. A victim's COLLECT_OUTSIDE_PER_VICTIM
 * largest parties are kept; the others, those `name` cannot name (gone),
 * and every outside culprit of a SYSTEM victim are POL_CULPRIT_OTHER.
 * 0 or -ENOMEM.
 */
int collect_fold_blame(const struct collect_member *members, size_t n_members,
		       const struct snapshot *delta, collect_namer name, void *ctx,
		       struct pol_input *in);

#endif
