/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How the per-cgroup maps (rq_hist, cpi_usage, memstall_cg, throttle_tg)
 * are added to, by the kernel they load on.
 *
 * From 6.1 a hash map that makes its elements on demand takes them from
 * BPF's own allocator (struct bpf_mem_alloc), safe in any context. Before,
 * it took them from kmalloc and the per-CPU allocator, which may wake a
 * kworker (the per-CPU allocator's balance work, queued on this CPU) or
 * kswapd: under the run-queue lock that sched_switch and the wake-up hooks
 * hold, that wake-up takes the same lock and the CPU deadlocks (a 5.10
 * guest hung so, both CPUs spinning on one run queue's lock, while cgroups
 * came and went). There user space makes these maps preallocated hashes
 * shared by the CPUs instead (user/probes/cg_map.c), and their counters are
 * added atomically. bpf_core_type_exists() is a constant after libbpf's
 * relocation, so the verifier drops the branch a kernel does not take: a
 * 6.1 or later kernel runs the per-CPU adds as before.
 */
#ifndef QOSLET_CG_MAPS_BPF_H
#define QOSLET_CG_MAPS_BPF_H

#include "lat_hist.h"

#define cg_maps_shared() (!bpf_core_type_exists(struct bpf_mem_alloc))

/*
 * Adds v to a counter of a per-cgroup map's value. Shared, a zero is not
 * added: a locked add costs tens of ns, and most of a flushed histogram's
 * slots are zero.
 */
#define CG_ADD(ptr, v)                                                                             \
	do {                                                                                       \
		if (!cg_maps_shared())                                                             \
			*(ptr) += (v);                                                             \
		else if (v)                                                                        \
			__sync_fetch_and_add((ptr), (v));                                          \
	} while (0)

/* lat_hist_add() for a histogram in a per-cgroup map's value. */
static __always_inline void lat_hist_add_cg(struct lat_hist *h, __u64 ns)
{
	CG_ADD(&h->count, 1);
	CG_ADD(&h->sum_ns, ns);
	CG_ADD(&h->slots[lat_hist_slot(ns)], 1);
}

#endif
