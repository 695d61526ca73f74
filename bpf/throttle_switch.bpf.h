/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The throttle probe's shared maps and its context-switch step, included
 * by bpf/throttle.bpf.c (fentry and cgroup-removal hooks) and
 * bpf/switch.bpf.c (the one sched_switch program every probe shares).
 */
#ifndef QOSLET_THROTTLE_SWITCH_BPF_H
#define QOSLET_THROTTLE_SWITCH_BPF_H

#include "throttle_maps.h"
#include "cgroup_id.bpf.h"

#define EEXIST 17 /* asm-generic/errno-base.h: vmlinux.h has no macros */

/*
 * Updated only when a group is seen throttled (rare next to switches):
 * shared, not per-CPU. Preallocated before 6.1 (cg_maps.bpf.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct throttle_val);
} throttle_tg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, THROTTLE_DROP_NR);
	__type(key, __u32);
	__type(value, __u64);
} throttle_drops SEC(".maps");

static __always_inline void throttle_count_drop(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&throttle_drops, &why);

	if (n)
		(*n)++;
}

/*
 * Field loads with `btf` constant after inlining: plain loads for BTF-typed
 * pointers (tp_btf, fentry: no helper calls), bpf_probe_read_kernel for raw_tp.
 */
static __always_inline struct cfs_rq *se_cfs_rq(struct sched_entity *se, bool btf)
{
	return btf ? se->cfs_rq : BPF_CORE_READ(se, cfs_rq);
}

static __always_inline struct sched_entity *se_parent(struct sched_entity *se, bool btf)
{
	return btf ? se->parent : BPF_CORE_READ(se, parent);
}

static __always_inline int cfs_rq_throttle_count(struct cfs_rq *cfs_rq, bool btf)
{
	return btf ? cfs_rq->throttle_count : BPF_CORE_READ(cfs_rq, throttle_count);
}

static __always_inline struct task_group *cfs_rq_tg(struct cfs_rq *cfs_rq, bool btf)
{
	return btf ? cfs_rq->tg : BPF_CORE_READ(cfs_rq, tg);
}

/* nr_periods is an int in the kernel: periods are compared modulo 2^32. */
static __always_inline __u32 tg_period(struct task_group *tg, bool btf)
{
	return btf ? tg->cfs_bandwidth.nr_periods : BPF_CORE_READ(tg, cfs_bandwidth.nr_periods);
}

static __always_inline __u64 tg_cgroup_id(struct task_group *tg, bool btf)
{
	return btf ? tg->css.cgroup->kn->id : BPF_CORE_READ(tg, css.cgroup, kn, id);
}

/*
 * Counts periods `from`..`upto` of cgroup `id` as throttled, except those
 * already counted: the map keeps the last counted period, so CPUs that see
 * the same throttled period count it once between them. A compare-and-swap
 * settles CPUs racing on one entry; the loser retries with the new value.
 */
static __always_inline void count_periods(__u64 id, __u32 from, __u32 upto)
{
	struct throttle_val *v = bpf_map_lookup_elem(&throttle_tg, &id);

	if (!v) {
		struct throttle_val init = {.last_period = upto, .events = upto - from + 1};
		long err = bpf_map_update_elem(&throttle_tg, &id, &init, BPF_NOEXIST);

		if (err != -EEXIST) {
			if (err)
				throttle_count_drop(THROTTLE_DROP_MAP_FULL);
			return;
		}
		v = bpf_map_lookup_elem(&throttle_tg, &id);
		if (!v)
			return; /* removed with its cgroup meanwhile */
	}
	for (int try = 0; try < 4; try++) {
		__u64 last = v->last_period;
		__u32 start = (__s32)(from - (__u32)last) > 0 ? from : (__u32)last + 1;

		if ((__s32)(upto - start) < 0)
			return; /* all counted already */
		if (__sync_val_compare_and_swap(&v->last_period, last, upto) == last) {
			__sync_fetch_and_add(&v->events, (__u32)(upto - start) + 1);
			return;
		}
	}
}

/* Marks the current period of every throttled group `cfs_rq` and its ancestors belong to. */
static __always_inline void throttle_mark_hierarchy(struct sched_entity *se, bool btf)
{
	struct cfs_rq *cfs_rq = se_cfs_rq(se, btf);
	int count = cfs_rq ? cfs_rq_throttle_count(cfs_rq, btf) : 0;

	/*
	 * throttle_count is the number of throttled groups from this run
	 * queue's up to the root: 0 on almost every switch, one load.
	 */
	if (count <= 0)
		return;
	for (int i = 0; i < THROTTLE_MAX_DEPTH; i++) {
		struct sched_entity *parent = se_parent(se, btf);
		struct cfs_rq *up = parent ? se_cfs_rq(parent, btf) : NULL;
		int up_count = up ? cfs_rq_throttle_count(up, btf) : 0;
		struct task_group *tg;

		/*
		 * One more than the level above: this level's own group is
		 * throttled. Read from the counts rather than cfs_rq->throttled,
		 * a bit-field on some kernels and an int on others.
		 */
		if (count > up_count) {
			tg = cfs_rq_tg(cfs_rq, btf);
			if (tg) {
				__u32 p = tg_period(tg, btf);

				count_periods(tg_cgroup_id(tg, btf), p, p);
			}
		}
		if (up_count <= 0)
			return;
		se = parent;
		cfs_rq = up;
		count = up_count;
	}
	throttle_count_drop(THROTTLE_DROP_DEPTH);
}

#endif
