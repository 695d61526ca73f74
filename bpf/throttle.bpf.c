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
 *
 * This object holds the maps and the fentry and cgroup-removal hooks; the
 * context-switch step (bpf/throttle_switch.bpf.h) runs in the sched_switch
 * program all probes share, bpf/switch.bpf.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "throttle_switch.bpf.h"

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
