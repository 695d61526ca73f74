/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Whether a program that runs under a run-queue lock (sched_switch, the
 * wake-up hooks) may create task storage, by the kernel it loads on.
 *
 * From 6.4 task storage takes its elements and each task's storage from
 * BPF's own allocator (struct bpf_local_storage_map's selem_ma and
 * storage_ma), safe in any context. Before, it took them from
 * kmalloc(GFP_ATOMIC): below the low watermark that wakes kswapd, whose
 * wake-up takes the run-queue lock of the CPU kswapd last ran on, this one's
 * at times (the deadlock of cg_maps.bpf.h, under memory pressure), and on
 * PREEMPT_RT kmalloc's slow path takes sleeping locks, which a raw spinlock
 * forbids. There those programs keep their stamps in the thread-id LRU hash
 * instead, which is preallocated. The answer is a constant after libbpf's
 * relocation; user space asks the same of the same BTF to create the maps
 * that path uses (kernel_task_storage_under_rq_lock). A kernel that renames the
 * member takes the hash too: a little slower, never unsafe.
 */
#ifndef QOSLET_TASK_STORAGE_BPF_H
#define QOSLET_TASK_STORAGE_BPF_H

#define task_storage_under_rq_lock() bpf_core_field_exists(struct bpf_local_storage_map, storage_ma)

#endif
