/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The memstall probe's shared maps and its context-switch step, included
 * by bpf/memstall.bpf.c (reclaim, OOM and bio hooks) and bpf/switch.bpf.c
 * (the one sched_switch program every probe shares).
 *
 * The step measures PSI's inputs: a task that goes to sleep with the
 * kernel's in_memstall or in_iowait flag set (the flags PSI itself reads)
 * is stalled until it runs again, and the stall is charged to its cgroup
 * at its switch-in. That is what memory.pressure and io.pressure sum on
 * cgroup v2 (for memory, beside the reclaim time the reclaim hooks measure
 * while the task runs); on v1 nothing else gives it per cgroup. Ending at
 * the switch-in rather than the wake-up needs no sched_wakeup program and
 * adds the run-queue wait after the wake-up, which PSI's memory stall
 * counts too (a task stays in_memstall while runnable); for I/O, which PSI
 * ends at the wake-up, that wait is the error. fentry on
 * psi_memstall_enter would be exact, but hosts that forbid fentry (the
 * development host does) still have this. A common switch costs two plain
 * loads and two branches.
 */
#ifndef QOSLET_MEMSTALL_SWITCH_BPF_H
#define QOSLET_MEMSTALL_SWITCH_BPF_H

#include "memstall_maps.h"
#include "cgroup_id.bpf.h"
#include "cg_maps.bpf.h"
#include "task_storage.bpf.h"

enum stall_kind { STALL_DIRECT = 0, STALL_MEMCG, STALL_PSI, STALL_IOWAIT, STALL_NR };

struct stall_stamps {
	__u64 begin[STALL_NR]; /* 0: not in a stall of that kind */
};

/*
 * tp_btf: the begin stamps live with the task (no pid hash, no delete);
 * the switch step's only where the kernel creates task storage safely
 * under the run-queue lock (6.4, task_storage.bpf.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stall_stamps);
} stall_stamp SEC(".maps");

/*
 * raw_tp, and the switch step before 6.4: keyed by thread id. A stamp
 * lives only for one stall (microseconds to seconds); the LRU retires
 * threads that exited mid-stall, and this many tasks stalled at the same
 * instant is far beyond any node.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct stall_stamps);
} stall_stamp_tid SEC(".maps");

/*
 * Per-CPU like sched's rq_hist (no atomics, no shared cache lines), and
 * shared before 6.1 likewise.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct memstall_cg);
} memstall_cg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MEMSTALL_DROP_NR);
	__type(key, __u32);
	__type(value, __u64);
} memstall_drops SEC(".maps");

static __always_inline void memstall_count_drop(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&memstall_drops, &why);

	if (n)
		(*n)++;
}

/* The cgroup's per-CPU record, created on first use; NULL (counted) when full. */
static __always_inline struct memstall_cg *memstall_cg_record(__u64 cgid)
{
	struct memstall_cg *v = bpf_map_lookup_elem(&memstall_cg, &cgid);

	if (!v) {
		static const struct memstall_cg zero;

		bpf_map_update_elem(&memstall_cg, &cgid, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&memstall_cg, &cgid);
		if (!v)
			memstall_count_drop(MEMSTALL_DROP_MAP_FULL);
	}
	return v;
}

/* PSI's flags on a task: in_iowait and in_memstall (bitfields), as STALL_* bits. */
static __always_inline __u32 memstall_psi_flags(struct task_struct *t, bool btf)
{
	__u32 f = 0;

	if (bpf_core_field_exists(t->in_iowait) &&
	    (btf ? BPF_CORE_READ_BITFIELD(t, in_iowait)
		 : BPF_CORE_READ_BITFIELD_PROBED(t, in_iowait)))
		f |= 1u << STALL_IOWAIT;
	if (bpf_core_field_exists(t->in_memstall) &&
	    (btf ? BPF_CORE_READ_BITFIELD(t, in_memstall)
		 : BPF_CORE_READ_BITFIELD_PROBED(t, in_memstall)))
		f |= 1u << STALL_PSI;
	return f;
}

/*
 * A task's stamps: task storage when `storage` (a tp_btf caller where that
 * is safe), else the tid hash.
 */
static __always_inline struct stall_stamps *memstall_stamps_of(struct task_struct *t, bool storage,
							       bool create)
{
	struct stall_stamps *st;
	__u32 tid;

	if (storage)
		return bpf_task_storage_get(&stall_stamp, t, 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	tid = BPF_CORE_READ(t, pid);
	st = bpf_map_lookup_elem(&stall_stamp_tid, &tid);
	if (!st && create) {
		static const struct stall_stamps zero;

		bpf_map_update_elem(&stall_stamp_tid, &tid, &zero, BPF_ANY);
		st = bpf_map_lookup_elem(&stall_stamp_tid, &tid);
	}
	return st;
}

/*
 * The step: prev going to sleep (not preempted) flagged by PSI is stamped;
 * next flagged and stamped has its stall charged. Both flags may be set at
 * once (a refault's read waits on I/O): the sleep then counts to both, as
 * PSI counts it to memory and I/O pressure.
 */
static __always_inline void memstall_on_switch(bool preempt, struct task_struct *prev,
					       struct task_struct *next, bool btf)
{
	__u32 f = preempt ? 0 : memstall_psi_flags(prev, btf);
	bool storage = btf && task_storage_under_rq_lock();
	struct stall_stamps *st;
	struct memstall_cg *v;
	__u64 now;

	if (f) {
		st = memstall_stamps_of(prev, storage, true);
		if (!st) {
			memstall_count_drop(MEMSTALL_DROP_NO_STORAGE);
		} else {
			now = bpf_ktime_get_ns();
			st->begin[STALL_PSI] = f & (1u << STALL_PSI) ? now : 0;
			st->begin[STALL_IOWAIT] = f & (1u << STALL_IOWAIT) ? now : 0;
		}
	}
	if (!memstall_psi_flags(next, btf))
		return;
	st = memstall_stamps_of(next, storage, false);
	if (!st || !(st->begin[STALL_PSI] | st->begin[STALL_IOWAIT]))
		return;
	now = bpf_ktime_get_ns();
	v = memstall_cg_record(btf ? task_cgroup_id_btf(next) : task_cgroup_id_raw(next));
	if (v && st->begin[STALL_PSI])
		lat_hist_add_cg(&v->stall, now - st->begin[STALL_PSI]);
	if (v && st->begin[STALL_IOWAIT])
		lat_hist_add_cg(&v->iowait, now - st->begin[STALL_IOWAIT]);
	st->begin[STALL_PSI] = 0;
	st->begin[STALL_IOWAIT] = 0;
}

#endif
