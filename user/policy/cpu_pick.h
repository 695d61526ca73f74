/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which CPUs BE gets when it is confined to some of them (suppression's
 * cpuset and split policies, SLO control's confinement): a stable set that
 * keeps hyperthread siblings together and spreads over NUMA nodes.
 */
#ifndef QOSLET_POLICY_CPU_PICK_H
#define QOSLET_POLICY_CPU_PICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/model.h"

/* Words of a CPU set bitmap: bit n = CPU n. */
#define CPU_SET_WORDS (POL_CPUS_MAX / 64)

static inline bool cpu_set_has(const uint64_t *set, int cpu)
{
	return set[cpu / 64] >> (cpu % 64) & 1;
}

/*
 * The shared pool: the CPUs of in's topology that a cpuset may name (the
 * bitmap holds their numbers) and that no pod holds alone
 * (in->exclusive_cpus). on[] (POL_CPUS_MAX entries) gets them; returns how
 * many. A malformed exclusive list leaves no pool: better no cpuset at all
 * than one on a pinned pod's CPUs.
 */
size_t cpu_pool(const struct pol_input *in, bool *on);

/*
 * Moves set to ceil(allowed) CPUs of the shared pool (cpu_pool) (at least 1, at most
 * all), keeping what it holds: CPUs gone from the pool leave it, then
 * CPUs are added or removed one at a time. Returns the number chosen; 0 when
 * the pool is empty.
 */
size_t cpu_pick(const struct pol_input *in, double allowed, uint64_t *set);

/* set as a canonical kernel list ("0-3,8") in buf; -ENOSPC when it does not fit. */
int cpu_pick_format(const uint64_t *set, char *buf, size_t size);

#endif
