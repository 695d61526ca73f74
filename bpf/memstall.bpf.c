// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory stalls per cgroup: how long tasks were stuck reclaiming memory,
 * and which cgroups lost tasks to the OOM killer.
 *
 * Both reclaim paths run in the context of the task that needs the memory,
 * so the stall is charged to current's cgroup:
 *   - direct reclaim (the page allocator found the node short of free
 *     pages): mm_vmscan_direct_reclaim_begin/end;
 *   - memcg reclaim (a charge hit the memory cgroup's limit, or memory.high
 *     on the way back to user space): mm_vmscan_memcg_reclaim_begin/end.
 * Neither nests in the other (reclaim runs with PF_MEMALLOC), but each kind
 * gets its own stamp so a lost end cannot corrupt the other kind.
 *
 * PSI's inputs (tp_btf on sched_switch and sched_wakeup, BTF kernels): a
 * task that goes to sleep with the kernel's in_memstall or in_iowait flag
 * set (the flags PSI itself reads) is stalled until its wake-up, and that
 * sleep is charged to its cgroup. That is what memory.pressure and
 * io.pressure sum on cgroup v2 (for memory, beside the reclaim time the
 * reclaim hooks measure while the task runs); on v1 nothing else gives it
 * per cgroup. fentry on psi_memstall_enter would be exact, but hosts that
 * forbid fentry (this project's development host does) still have these.
 * The common switch and wake-up cost two plain loads and a branch.
 *
 * OOM kills come from oom:mark_victim, which names the victim task (6.8+:
 * the task itself; older kernels pass only a pid, and user space leaves the
 * OOM part off there). Each kill is counted in the victim's cgroup (the
 * shared truth every reader sees) and sent as an event through a ring
 * buffer (consumed by whichever process reads it first).
 *
 * Every hook exists twice, tp_btf and raw_tp, as in bpf/sched.bpf.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "memstall_maps.h"
#include "cgroup_id.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

enum stall_kind { STALL_DIRECT = 0, STALL_MEMCG, STALL_PSI, STALL_IOWAIT, STALL_NR };

struct stall_stamps {
	__u64 begin[STALL_NR]; /* 0: not in a stall of that kind */
};

/* tp_btf: the begin stamps live with the task (no pid hash, no delete). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct stall_stamps);
} stall_stamp SEC(".maps");

/*
 * raw_tp: keyed by thread id. A stamp lives only for one reclaim pass
 * (microseconds to seconds); the LRU retires threads that exited mid-stall,
 * and this many tasks reclaiming at the same instant is far beyond any node.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct stall_stamps);
} stall_stamp_tid SEC(".maps");

/* Per-CPU like sched's rq_hist: no atomics, no shared cache lines. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct memstall_cg);
} memstall_cg SEC(".maps");

/*
 * OOM kills are rare (the kernel kills one task at a time under its OOM
 * lock): 16 KiB holds about 340 events (48 bytes with the ring's header)
 * between two reads, one a second. The kernel maps the ring's pages twice,
 * resident from the start: a larger ring is RSS every qoslet process pays.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 * 1024);
} memstall_oom SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MEMSTALL_DROP_NR);
	__type(key, __u32);
	__type(value, __u64);
} memstall_drops SEC(".maps");

static __always_inline void count_drop(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&memstall_drops, &why);

	if (n)
		(*n)++;
}

/*
 * `btf` is a constant after inlining, as in bpf/sched.bpf.c: true on tp_btf
 * (BTF-typed current task, plain loads), false on raw_tp (CO-RE reads).
 */
static __always_inline struct stall_stamps *stamps_of_current(bool btf, bool create)
{
	struct stall_stamps *st;
	__u32 tid;

	if (btf)
		return bpf_task_storage_get(&stall_stamp, bpf_get_current_task_btf(), 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	tid = (__u32)bpf_get_current_pid_tgid();
	st = bpf_map_lookup_elem(&stall_stamp_tid, &tid);
	if (!st && create) {
		static const struct stall_stamps zero;

		bpf_map_update_elem(&stall_stamp_tid, &tid, &zero, BPF_ANY);
		st = bpf_map_lookup_elem(&stall_stamp_tid, &tid);
	}
	return st;
}

static __always_inline __u64 current_cgroup_id(bool btf)
{
	if (btf)
		return task_cgroup_id_btf(bpf_get_current_task_btf());
	return task_cgroup_id_raw((struct task_struct *)bpf_get_current_task());
}

/* The cgroup's per-CPU record, created on first use; NULL (counted) when full. */
static __always_inline struct memstall_cg *cg_record(__u64 cgid)
{
	struct memstall_cg *v = bpf_map_lookup_elem(&memstall_cg, &cgid);

	if (!v) {
		static const struct memstall_cg zero;

		bpf_map_update_elem(&memstall_cg, &cgid, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&memstall_cg, &cgid);
		if (!v)
			count_drop(MEMSTALL_DROP_MAP_FULL);
	}
	return v;
}

static __always_inline void stall_begin(enum stall_kind kind, bool btf)
{
	struct stall_stamps *st = stamps_of_current(btf, true);

	if (!st) {
		count_drop(MEMSTALL_DROP_NO_STORAGE);
		return;
	}
	st->begin[kind] = bpf_ktime_get_ns();
}

static __always_inline void stall_end(enum stall_kind kind, bool btf)
{
	struct stall_stamps *st = stamps_of_current(btf, false);
	struct memstall_cg *v;
	__u64 delta;

	/* No stamp: the stall began before the probe was attached. */
	if (!st || !st->begin[kind])
		return;
	delta = bpf_ktime_get_ns() - st->begin[kind];
	st->begin[kind] = 0;
	v = cg_record(current_cgroup_id(btf));
	if (!v)
		return;
	if (kind == STALL_DIRECT)
		lat_hist_add(&v->direct, delta);
	else if (kind == STALL_MEMCG)
		lat_hist_add(&v->memcg, delta);
	else if (kind == STALL_PSI)
		lat_hist_add(&v->stall, delta);
	else
		lat_hist_add(&v->iowait, delta);
}

/*
 * PSI's flags on a task (BTF kernels): in_iowait (io_schedule() and kin)
 * and in_memstall (psi_memstall_enter(): reclaim, compaction, the wait on
 * a refault of a thrashing page). Plain loads of a BTF pointer's bitfields.
 */
static __always_inline __u32 psi_flags(struct task_struct *t)
{
	__u32 f = 0;

	if (bpf_core_field_exists(t->in_iowait) && BPF_CORE_READ_BITFIELD(t, in_iowait))
		f |= 1u << STALL_IOWAIT;
	if (bpf_core_field_exists(t->in_memstall) && BPF_CORE_READ_BITFIELD(t, in_memstall))
		f |= 1u << STALL_PSI;
	return f;
}

/* A task that goes to sleep flagged by PSI: its sleep is a stall until its wake-up. */
static __always_inline void psi_sleep(struct task_struct *prev, unsigned int prev_state)
{
	__u32 f = prev_state ? psi_flags(prev) : 0; /* 0: preempted, still runnable */
	struct stall_stamps *st;
	__u64 now;

	if (!f)
		return;
	st = bpf_task_storage_get(&stall_stamp, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count_drop(MEMSTALL_DROP_NO_STORAGE);
		return;
	}
	now = bpf_ktime_get_ns();
	st->begin[STALL_PSI] = f & (1u << STALL_PSI) ? now : 0;
	st->begin[STALL_IOWAIT] = f & (1u << STALL_IOWAIT) ? now : 0;
}

/* Its wake-up ends the stall, charged to the sleeper's cgroup. */
static __always_inline void psi_wake(struct task_struct *p)
{
	struct stall_stamps *st;
	struct memstall_cg *v;
	__u64 now;

	if (!psi_flags(p))
		return;
	st = bpf_task_storage_get(&stall_stamp, p, 0, 0);
	if (!st || !(st->begin[STALL_PSI] | st->begin[STALL_IOWAIT]))
		return;
	now = bpf_ktime_get_ns();
	v = cg_record(task_cgroup_id_btf(p));
	if (v && st->begin[STALL_PSI])
		lat_hist_add(&v->stall, now - st->begin[STALL_PSI]);
	if (v && st->begin[STALL_IOWAIT])
		lat_hist_add(&v->iowait, now - st->begin[STALL_IOWAIT]);
	st->begin[STALL_PSI] = 0;
	st->begin[STALL_IOWAIT] = 0;
}

static __always_inline void on_oom_victim(struct task_struct *task, bool btf)
{
	__u64 cgid = btf ? task_cgroup_id_btf(task) : task_cgroup_id_raw(task);
	struct memstall_cg *v = cg_record(cgid);
	struct memstall_oom *e;

	if (v)
		v->oom_kills++;
	e = bpf_ringbuf_reserve(&memstall_oom, sizeof(*e), 0);
	if (!e) {
		count_drop(MEMSTALL_DROP_RINGBUF_FULL);
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->cgroup_id = cgid;
	e->pid = btf ? task->tgid : BPF_CORE_READ(task, tgid);
	e->tid = btf ? task->pid : BPF_CORE_READ(task, pid);
	/* OOM kills are rare: one helper call is fine on either path. */
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), &task->comm);
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(btf_direct_begin)
{
	stall_begin(STALL_DIRECT, true);
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(btf_direct_end)
{
	stall_end(STALL_DIRECT, true);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(btf_memcg_begin)
{
	stall_begin(STALL_MEMCG, true);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(btf_memcg_end)
{
	stall_end(STALL_MEMCG, true);
	return 0;
}

SEC("tp_btf/mark_victim")
int BPF_PROG(btf_mark_victim, struct task_struct *task)
{
	on_oom_victim(task, true);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(psi_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	psi_sleep(prev, preempt ? 0 : prev_state);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(psi_wakeup, struct task_struct *p)
{
	psi_wake(p);
	return 0;
}

SEC("raw_tp/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(raw_direct_begin)
{
	stall_begin(STALL_DIRECT, false);
	return 0;
}

SEC("raw_tp/mm_vmscan_direct_reclaim_end")
int BPF_PROG(raw_direct_end)
{
	stall_end(STALL_DIRECT, false);
	return 0;
}

SEC("raw_tp/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(raw_memcg_begin)
{
	stall_begin(STALL_MEMCG, false);
	return 0;
}

SEC("raw_tp/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(raw_memcg_end)
{
	stall_end(STALL_MEMCG, false);
	return 0;
}

SEC("raw_tp/mark_victim")
int BPF_PROG(raw_mark_victim, struct task_struct *task)
{
	on_oom_victim(task, false);
	return 0;
}

/* A removed cgroup's record leaves the map with it (see bpf/sched.bpf.c). */
SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(btf_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	__u64 id = cgrp->kn->id;

	if (cgroup_is_ours_btf(cgrp))
		bpf_map_delete_elem(&memstall_cg, &id);
	return 0;
}

SEC("raw_tp/cgroup_rmdir")
int BPF_PROG(raw_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	__u64 id = BPF_CORE_READ(cgrp, kn, id);

	if (cgroup_is_ours_raw(cgrp))
		bpf_map_delete_elem(&memstall_cg, &id);
	return 0;
}
