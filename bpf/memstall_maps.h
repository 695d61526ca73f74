/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Layouts shared by bpf/memstall.bpf.c and user space: reclaim stalls and
 * OOM kills per cgroup, and the OOM events streamed through a ring buffer.
 */
#ifndef QOSLET_BPF_MEMSTALL_MAPS_H
#define QOSLET_BPF_MEMSTALL_MAPS_H

#include "lat_hist.h"

/* Disks a cgroup's per-CPU record tells apart (most pods read and write one). */
#define MEMSTALL_IO_DEVS 2
/* A device number as the kernel's MKDEV packs it (20 minor bits). */
#define MEMSTALL_DEV(major, minor) (((__u32)(major) << 20) | (__u32)(minor))
#define MEMSTALL_DEV_MAJOR(dev)	   ((dev) >> 20)
#define MEMSTALL_DEV_MINOR(dev)	   ((dev) & ((1u << 20) - 1))

/* The value of memstall_cg[cgroup id], one per CPU. */
struct memstall_cg {
	struct lat_hist direct; /* mm_vmscan_direct_reclaim_begin .. _end */
	struct lat_hist memcg;	/* mm_vmscan_memcg_reclaim_begin .. _end */
	/*
	 * PSI's own inputs, per task (BTF kernels only): sleeps the kernel
	 * flags as memory stalls (in_memstall: refaults of thrashing pages,
	 * reclaim and compaction that sleep) and as I/O waits (in_iowait), from
	 * the switch-out to the wake-up. On cgroup v1, where no cgroup has a
	 * pressure file, stall + direct + memcg stands in for memory.pressure
	 * and iowait for io.pressure "some" (task time, not wall time: two
	 * tasks stalled together count twice).
	 */
	struct lat_hist stall;
	struct lat_hist iowait;
	/*
	 * Bytes of the bios the cgroup's tasks submitted (block_bio_queue,
	 * BTF kernels): its block I/O where v1 blkio counts none (its counters
	 * move only on a disk with a throttle rule since 6.x). Writeback is
	 * submitted by flusher threads and counts to theirs.
	 */
	__u64 io_bytes;
	__u64 oom_kills; /* oom:mark_victim with a victim in this cgroup */
	/*
	 * The same bytes by the disk they went to (its whole-disk device, as
	 * blkio.throttle.*_device and io.max name it: a partition's bios count
	 * to its disk), for the I/O suppression's throttle: the first
	 * MEMSTALL_IO_DEVS disks this CPU saw the cgroup use; a bio to a
	 * further one counts in io_bytes alone.
	 */
	struct memstall_io_dev {
		__u32 dev; /* MEMSTALL_DEV(major, minor); 0 free */
		__u32 pad;
		__u64 bytes;
	} io_dev[MEMSTALL_IO_DEVS];
};

/* One OOM kill, as the ring buffer carries it. */
struct memstall_oom {
	__u64 ts_ns;	 /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 cgroup_id; /* the victim's cgroup (qoslet's identity) */
	__u32 pid;	 /* the victim's thread-group id */
	__u32 tid;	 /* the victim thread the kernel marked */
	char comm[16];
};

/* Per-CPU counters of events the probe could not record (never silent). */
enum memstall_drop {
	MEMSTALL_DROP_MAP_FULL = 0, /* memstall_cg had no room for a new cgroup */
	MEMSTALL_DROP_NO_STORAGE,   /* no slot for a task's begin stamp */
	MEMSTALL_DROP_RINGBUF_FULL, /* an OOM event found the ring buffer full */
	MEMSTALL_DROP_NR,
};

#endif
