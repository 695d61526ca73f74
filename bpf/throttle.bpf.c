// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CFS bandwidth throttling per cgroup: in how many periods each task group
 * was throttled, counted the way the kernel's cpu.stat nr_throttled counts
 * them (a period whose end finds any of the group's per-CPU run queues
 * throttled counts once, however many CPUs were throttled in it).
 *
 * Two ways to see it, chosen by user space at load (user/probes/throttle.c):
 *
 * fentry: fexit on throttle_cfs_rq (it returns true when it throttled) notes
 * the group's period number; fentry on unthrottle_cfs_rq counts every period
 * from then to the one that just ended, so a throttle that lasts several
 * periods counts several, and one lifted before its period ended (by the
 * slack timer) counts none, as in nr_throttled.
 *
 * sched_switch (tp_btf, or raw_tp where tp_btf does not load): a task being
 * switched out whose hierarchy has a throttled run queue marks that group's
 * current period. Since 6.18 (task-based throttling) a throttled group's
 * tasks keep running until they return to user space, where they are
 * dequeued: that dequeue is a switch-out with the group throttled. Before
 * 6.18 the whole group is dequeued at once and the current task switched out
 * the same way. Either way every throttle that holds a task back passes
 * through here while the group is throttled.
 *
 * The group is always the task group that ran out of quota, named by its
 * own cgroup (tg->css.cgroup), never by the current task's cgroup: the
 * throttled group is often an ancestor (a pod) of the task's cgroup (a
 * container), and fentry hooks run on whatever task is current.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "throttle.h"
#include "cgroup_id.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EEXIST 17 /* asm-generic/errno-base.h: vmlinux.h has no macros */

/* Updated only when a group is seen throttled (rare next to switches): shared, not per-CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct throttle_val);
} throttle_tg SEC(".maps");

/*
 * fentry path: the period in which each run queue (keyed by its address)
 * was throttled, until it is unthrottled. LRU: a run queue freed while
 * throttled (its cgroup removed) must not pin an entry forever.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} throttle_since SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, THROTTLE_DROP_NR);
	__type(key, __u32);
	__type(value, __u64);
} throttle_drops SEC(".maps");

static __always_inline void count_drop(__u32 why)
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
				count_drop(THROTTLE_DROP_MAP_FULL);
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
static __always_inline void mark_hierarchy(struct sched_entity *se, bool btf)
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
	count_drop(THROTTLE_DROP_DEPTH);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(btf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	mark_hierarchy(&prev->se, true);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	mark_hierarchy(&prev->se, false);
	return 0;
}

/*
 * fentry path: a throttle starts in the group's current period. It is
 * counted when it ends (below): a throttle that the slack timer lifts
 * before the period ends is not a throttled period for nr_throttled either.
 */
SEC("fexit/throttle_cfs_rq")
int BPF_PROG(fexit_throttle, struct cfs_rq *cfs_rq, bool throttled)
{
	__u64 key = (__u64)cfs_rq, period;
	struct task_group *tg = cfs_rq->tg;

	if (!throttled || !tg)
		return 0;
	period = tg_period(tg, true);
	bpf_map_update_elem(&throttle_since, &key, &period, BPF_ANY);
	return 0;
}

/*
 * fentry path: the period timer has just advanced nr_periods and is handing
 * out the new quota, so the throttle covered its start period up to the one
 * before now (none when the slack timer lifts it within its period). A run
 * queue without an entry in throttle_since was not seen throttled (it was
 * throttled before we attached): nothing is counted.
 */
SEC("fentry/unthrottle_cfs_rq")
int BPF_PROG(fentry_unthrottle, struct cfs_rq *cfs_rq)
{
	__u64 key = (__u64)cfs_rq, *since;
	struct task_group *tg = cfs_rq->tg;
	__u32 now, from;

	/*
	 * 6.18+ returns at once, leaving the run queue throttled, when its
	 * runtime is used up again: the throttle goes on, keep its start.
	 */
	if (cfs_rq->runtime_enabled && cfs_rq->runtime_remaining <= 0)
		return 0;
	since = bpf_map_lookup_elem(&throttle_since, &key);
	if (!since || !tg)
		return 0;
	from = *since;
	bpf_map_delete_elem(&throttle_since, &key);
	now = tg_period(tg, true) - 1;
	if ((__s32)(now - from) >= 0)
		count_periods(tg_cgroup_id(tg, true), from, now);
	return 0;
}

/* A removed cgroup's entry leaves the map with it, so churn cannot fill the map. */
SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(btf_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	__u64 id = cgrp->kn->id;

	if (cgroup_is_ours_btf(cgrp))
		bpf_map_delete_elem(&throttle_tg, &id);
	return 0;
}

SEC("raw_tp/cgroup_rmdir")
int BPF_PROG(raw_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	__u64 id = BPF_CORE_READ(cgrp, kn, id);

	if (cgroup_is_ours_raw(cgrp))
		bpf_map_delete_elem(&throttle_tg, &id);
	return 0;
}
