/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How busy the shared pool is, and by whom: one measure for the policies
 * that weigh BE against the rest (suppression's allowance, burst's "is the
 * node busy"), so both count the same CPUs and the same users.
 */
#ifndef QOSLET_POLICY_POOL_USE_H
#define QOSLET_POLICY_POOL_USE_H

#include <stddef.h>

#include "policy/model.h"

/* Sums of a tick, in CPUs. */
struct pool_use {
	double capacity;   /* the shared pool's: BE can run nowhere else */
	size_t exclusive;  /* CPUs of the topology pods hold alone (not in capacity) */
	double non_be;	   /* units of any class but BE, pinned pods aside */
	double system;	   /* node use outside every unit */
	double be;	   /* BE units */
	size_t n_be;	   /* BE units */
	double be_request; /* sum of BE units' requests */
};

/*
 * The units that count as BE in the pool: BE, but for a pod the kubelet
 * pinned (a class rule may call one BE): it holds its CPUs whatever its
 * class, and pool_use_measure() leaves it out of every sum.
 */
static inline bool pool_use_is_be(const struct pol_unit *u)
{
	return u->cls == QOS_BE && !u->pinned_cpus;
}

void pool_use_measure(const struct pol_input *in, struct pool_use *m);

/*
 * The share of the pool that non-BE units and the system use (BE soaks up
 * idle CPUs by design, so its use is not busyness); 1 when the capacity is
 * unknown, so that nothing grows blindly.
 */
double pool_use_busy(const struct pool_use *m);

#endif
