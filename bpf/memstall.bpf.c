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
 * PSI's inputs, the sleeps the kernel flags as memory stalls and I/O
 * waits, are measured by the probe's context-switch step in the shared
 * sched_switch program (bpf/memstall_switch.bpf.h); the bytes of the bios
 * each cgroup's tasks submit by block_bio_queue (BTF kernels).
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
#include "memstall_switch.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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

/*
 * `btf` is a constant after inlining, as in bpf/sched.bpf.c: true on tp_btf
 * (BTF-typed current task, plain loads), false on raw_tp (CO-RE reads).
 */
static __always_inline struct stall_stamps *stamps_of_current(bool btf, bool create)
{
	if (btf)
		return memstall_stamps_of(bpf_get_current_task_btf(), true, create);
	return memstall_stamps_of((struct task_struct *)bpf_get_current_task(), false, create);
}

static __always_inline __u64 current_cgroup_id(bool btf)
{
	if (btf)
		return task_cgroup_id_btf(bpf_get_current_task_btf());
	return task_cgroup_id_raw((struct task_struct *)bpf_get_current_task());
}

static __always_inline void stall_begin(enum stall_kind kind, bool btf)
{
	struct stall_stamps *st = stamps_of_current(btf, true);

	if (!st) {
		memstall_count_drop(MEMSTALL_DROP_NO_STORAGE);
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
	v = memstall_cg_record(current_cgroup_id(btf));
	if (v)
		lat_hist_add_cg(kind == STALL_DIRECT ? &v->direct : &v->memcg, delta);
}

static __always_inline void on_oom_victim(struct task_struct *task, bool btf)
{
	__u64 cgid = btf ? task_cgroup_id_btf(task) : task_cgroup_id_raw(task);
	struct memstall_cg *v = memstall_cg_record(cgid);
	struct memstall_oom *e;

	if (v)
		CG_ADD(&v->oom_kills, 1);
	e = bpf_ringbuf_reserve(&memstall_oom, sizeof(*e), 0);
	if (!e) {
		memstall_count_drop(MEMSTALL_DROP_RINGBUF_FULL);
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

/* Before 5.12 a bio named its disk itself (bi_disk); then its block device (bi_bdev). */
struct bio___old {
	struct gendisk *bi_disk;
} __attribute__((preserve_access_index));

/* The whole disk a bio goes to: a throttle rule names a disk, never a partition. */
static __always_inline __u32 bio_disk_dev(struct bio *bio)
{
	struct gendisk *disk;

	if (bpf_core_field_exists(bio->bi_bdev))
		disk = BPF_CORE_READ(bio, bi_bdev, bd_disk);
	else
		disk = BPF_CORE_READ((struct bio___old *)bio, bi_disk);
	if (!disk)
		return 0;
	return MEMSTALL_DEV(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
}

/*
 * One bio (up to MiBs), not one page: a streaming reader makes thousands a
 * second. bpf_get_current_task_btf() came in 5.11: before, current's cgroup
 * is read as raw_tp reads it (the verifier drops the call a kernel lacks,
 * since the relocated test is a constant).
 */
static __always_inline int on_bio(struct bio *bio)
{
	struct memstall_cg *v = memstall_cg_record(current_cgroup_id(
		bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)));
	__u32 size = bio->bi_iter.bi_size, dev;

	if (!v)
		return 0;
	CG_ADD(&v->io_bytes, size);
	dev = bio_disk_dev(bio);
	for (int i = 0; dev && i < MEMSTALL_IO_DEVS; i++) {
		if (v->io_dev[i].dev && v->io_dev[i].dev != dev)
			continue;
		/*
		 * Shared by the CPUs (cg_maps.bpf.h), two CPUs may claim one free
		 * slot for two disks at once: one bio's bytes then count to the
		 * other disk, and that disk's next bio takes the next slot.
		 */
		v->io_dev[i].dev = dev;
		CG_ADD(&v->io_dev[i].bytes, size);
		break;
	}
	return 0;
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(psi_bio, struct bio *bio)
{
	return on_bio(bio);
}

/* Before 5.11 the tracepoint passed the bio's request queue first (user space picks one). */
SEC("tp_btf/block_bio_queue")
int BPF_PROG(psi_bio_q, struct request_queue *q, struct bio *bio)
{
	return on_bio(bio);
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
