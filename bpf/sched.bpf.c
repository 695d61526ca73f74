// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Run-queue latency per cgroup and who-delayed-whom.
 *
 * When a task is switched in, the time since it became runnable is the time
 * it waited on a run queue. That wait is charged to the cgroup of the task
 * that waited (not to the current task at wake-up time, which is the waker)
 * and to the pair (waiting cgroup, cgroup of the task that ran on this CPU
 * just before).
 *
 * When it became runnable: preferably the kernel's own record
 * (sched_info.last_queued, set on every enqueue and on preemption, read
 * here before the scheduler consumes it). Without CONFIG_SCHED_INFO, we
 * stamp tasks ourselves on wake-up and on preemption.
 *
 * Every hook exists twice: tp_btf (cheapest: typed arguments, plain loads)
 * and raw_tp (for kernels where tp_btf does not load). User space picks one
 * set and the wait source after load-time probes (user/probes/sched.c).
 *
 * This object holds the maps and the wake-up and cgroup-removal hooks; the
 * context-switch step (bpf/sched_switch.bpf.h) runs in the sched_switch
 * program all probes share, bpf/switch.bpf.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "sched_switch.bpf.h"

/* Possible CPUs, for the rmdir hook's walk over every CPU's pending slot. */
const volatile __u32 nr_cpus = 1;

/* Wake-up hooks exist for stamp mode only; sched_info mode never loads them. */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(btf_wakeup, struct task_struct *p)
{
	stamp(p, p->pid, bpf_ktime_get_ns(), true);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(btf_wakeup_new, struct task_struct *p)
{
	stamp(p, p->pid, bpf_ktime_get_ns(), true);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(raw_wakeup, struct task_struct *p)
{
	stamp(p, BPF_CORE_READ(p, pid), bpf_ktime_get_ns(), false);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(raw_wakeup_new, struct task_struct *p)
{
	stamp(p, BPF_CORE_READ(p, pid), bpf_ktime_get_ns(), false);
	return 0;
}

/* Deletes the blame pairs in which the removed cgroup takes part. */
static long forget_pair(struct bpf_map *map, struct blame_key *key, struct blame_val *val,
			__u64 *gone)
{
	if (key->victim == *gone || key->culprit == *gone)
		bpf_map_delete_elem(map, key);
	return 0;
}

/*
 * A removed cgroup's entries leave the maps with it, so cgroup churn
 * cannot fill them. The pair scan costs O(pairs) per rmdir, about 20 ns a
 * pair, paid only when a cgroup goes away.
 *
 * Empties a CPU's pending slots that hold the removed cgroup, and its
 * cached pairs in which the cgroup takes part (without giving them back
 * to rq_blame, whose pairs of the cgroup go next). This runs on another
 * CPU than the slots' own: a switch there that takes one of these slots
 * at the same moment can leave its pair behind, as it can leave a pending
 * slot; user space's sweep (probes.c: forget_gone) removes such leftovers.
 */
static long forget_cpu(__u32 cpu, __u64 *gone)
{
	__u32 zero = 0;
	struct rq_pending_cache *p = bpf_map_lookup_percpu_elem(&rq_pending, &zero, cpu);
	struct rq_blame_cache *c = bpf_map_lookup_percpu_elem(&rq_blame_cache, &zero, cpu);

	for (int i = 0; p && i < QOSLET_PENDING_SLOTS; i++) {
		if (p->slot[i].cgid != *gone)
			continue;
		p->slot[i].cgid = 0;
		__builtin_memset(&p->slot[i].hist, 0, sizeof(p->slot[i].hist));
	}
	if (!c)
		return 0;
	for (int i = 0; i < QOSLET_BLAME_CACHE_SLOTS; i++) {
		struct rq_blame_slot *s = &c->slot[i];

		if (!s->val.count || (s->key.victim != *gone && s->key.culprit != *gone))
			continue;
		__sync_fetch_and_add(&s->seq, 1);
		s->key.victim = s->key.culprit = 0;
		s->val.wait_ns = s->val.count = s->base.wait_ns = s->base.count = 0;
		__sync_fetch_and_add(&s->seq, 1);
	}
	return 0;
}

static __always_inline void forget_cgroup(__u64 id)
{
	bpf_loop(nr_cpus, forget_cpu, &id, 0);
	bpf_map_delete_elem(&rq_hist, &id);
	bpf_for_each_map_elem(&rq_blame, forget_pair, &id, 0);
	bpf_for_each_map_elem(&rq_blame_fresh, forget_pair, &id, 0);
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(btf_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	if (cgroup_is_ours_btf(cgrp))
		forget_cgroup(cgrp->kn->id);
	return 0;
}

SEC("raw_tp/cgroup_rmdir")
int BPF_PROG(raw_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	if (cgroup_is_ours_raw(cgrp))
		forget_cgroup(BPF_CORE_READ(cgrp, kn, id));
	return 0;
}
