/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sched probe's maps and its context-switch step, included by
 * bpf/sched.bpf.c (wake-up and cgroup-removal hooks) and bpf/switch.bpf.c
 * (the one sched_switch program every probe shares). User space makes
 * both objects use the same maps (user/probes/switch.c).
 */
#ifndef QOSLET_SCHED_SWITCH_BPF_H
#define QOSLET_SCHED_SWITCH_BPF_H

#include "sched_maps.h"
#include "cgroup_id.bpf.h"
#include "cg_maps.bpf.h"
#include "task_storage.bpf.h"

/* Set by user space before load. */
const volatile __u32 wait_source = QOSLET_WAIT_SCHED_INFO;

/*
 * Stamp mode, tp_btf: the stamp lives in task-local storage, a direct
 * pointer from the task, so there is no hash of a pid and no delete (bcc's
 * runqlat pays both on every event; that is most of its overhead). Only
 * where the kernel creates it safely under the run-queue lock (6.4,
 * task_storage.bpf.h); before, tp_btf stamps go in rq_stamp_tid too.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} rq_stamp SEC(".maps");

/*
 * Stamp mode, raw_tp (and tp_btf before 6.4): raw task pointers are
 * refused by task storage, so stamps are keyed by thread id. A stamp
 * matters only between wake-up and switch-in (milliseconds), so LRU
 * eviction of this many entries never drops a live one in practice;
 * consumed stamps are zeroed, not deleted.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} rq_stamp_tid SEC(".maps");

/*
 * Per-CPU: every switch-in updates its cgroup's histogram, and the same
 * cgroup is busy on several CPUs at once; per-CPU values need no atomics and
 * never bounce a cache line between CPUs. Entries are created on demand (no
 * prealloc) because the per-CPU value is multiplied by the CPU count. Before
 * 6.1 that is unsafe here, and the map is a preallocated shared hash
 * (cg_maps.bpf.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct lat_hist);
} rq_hist SEC(".maps");

/*
 * Pairs grow with the square of busy cgroups, so the map is LRU-bounded:
 * a node with thousands of cgroups evicts the coldest pairs instead of
 * exhausting memory. The common LRU list keeps eviction global (per-CPU
 * lists would shrink each CPU's share to max_entries / nr_cpus).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct blame_key);
	__type(value, struct blame_val);
} rq_blame SEC(".maps");

/*
 * What the slots gave back to rq_blame since the agent last drained this
 * map (it reads and deletes in one batch): the agent's reading then costs
 * the pairs that changed, not every pair rq_blame keeps, most of which
 * are stale on a busy node. rq_blame stays whole for the views and
 * bpftool. LRU: with no agent draining it, it keeps the newest changes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct blame_key);
	__type(value, struct blame_val);
} rq_blame_fresh SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rq_pending_cache);
} rq_pending SEC(".maps");

/* Each CPU's recent pairs, in front of rq_blame: see struct rq_blame_cache. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rq_blame_cache);
} rq_blame_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCHED_DROP_NR);
	__type(key, __u32);
	__type(value, __u64);
} sched_drops SEC(".maps");

/* The fast path (bpf/sched.h): settings, watched cgroups, and the alerts. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rq_alert_cfg);
} rq_alert_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct rq_alert_watch);
} rq_alert_watch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} rq_alerts SEC(".maps");

/* The displacers (BE cgroups) whose hand-overs count toward a displacement alert. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u32);
} rq_displacers SEC(".maps");

/* TASK_RUNNING is 0 in every kernel; the field was renamed in 5.14. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

/*
 * Every helper below takes `btf`, a constant after inlining: true for the
 * tp_btf programs, whose pointers are BTF-typed and read with plain loads
 * (no helper calls: on hosts with return-thunk mitigations each call costs
 * tens of ns); false for raw_tp, which must use bpf_probe_read_kernel.
 */
static __always_inline bool task_runnable(struct task_struct *t, bool btf)
{
	if (bpf_core_field_exists(t->__state))
		return (btf ? t->__state : BPF_CORE_READ(t, __state)) == 0;
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state) == 0;
}

static __always_inline __u32 task_tid(struct task_struct *t, bool btf)
{
	return btf ? t->pid : BPF_CORE_READ(t, pid);
}

/* PF_KTHREAD in include/linux/sched.h, unchanged since 2.6. */
#define QOSLET_PF_KTHREAD 0x00200000

static __always_inline bool task_is_kthread(struct task_struct *t, bool btf)
{
	return (btf ? t->flags : BPF_CORE_READ(t, flags)) & QOSLET_PF_KTHREAD;
}

/* __schedule counts a switch-out in one of the two before the tracepoint fires. */
static __always_inline __u64 task_switches(struct task_struct *t, bool btf)
{
	return btf ? t->nvcsw + t->nivcsw : BPF_CORE_READ(t, nvcsw) + BPF_CORE_READ(t, nivcsw);
}

static __always_inline __u64 task_cgroup_id(struct task_struct *t, bool btf)
{
	return btf ? task_cgroup_id_btf(t) : task_cgroup_id_raw(t);
}

static __always_inline void sched_count_drop(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&sched_drops, &why);

	if (n)
		(*n)++;
}

/* Stamp mode: the task's stamp slot (see rq_stamp and rq_stamp_tid). */
static __always_inline __u64 *stamp_slot(struct task_struct *p, __u32 tid, bool btf, bool create)
{
	__u64 *ts;

	if (btf && task_storage_under_rq_lock())
		return bpf_task_storage_get(&rq_stamp, p, 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	ts = bpf_map_lookup_elem(&rq_stamp_tid, &tid);
	if (!ts && create) {
		static const __u64 zero;

		bpf_map_update_elem(&rq_stamp_tid, &tid, &zero, BPF_ANY);
		ts = bpf_map_lookup_elem(&rq_stamp_tid, &tid);
	}
	return ts;
}

static __always_inline void stamp(struct task_struct *p, __u32 tid, __u64 now, bool btf)
{
	__u64 *ts;

	if (!tid) /* the idle task never waits */
		return;
	ts = stamp_slot(p, tid, btf, true);
	if (!ts) {
		sched_count_drop(SCHED_DROP_NO_STORAGE);
		return;
	}
	*ts = now;
}

/*
 * Stamp mode: how long `next` waited, consuming its stamp. Returns false
 * when `next` has no stamp (it was not seen becoming runnable).
 */
static __always_inline bool stamp_wait(struct task_struct *prev, __u32 prev_tid,
				       struct task_struct *next, __u32 next_tid, bool btf,
				       __u64 *wait)
{
	__u64 now = bpf_ktime_get_ns(), *ts;

	if (task_runnable(prev, btf))
		stamp(prev, prev_tid, now, btf);
	if (!next_tid)
		return false;
	ts = stamp_slot(next, next_tid, btf, false);
	if (!ts || !*ts)
		return false;
	*wait = now - *ts;
	*ts = 0;
	return true;
}

/*
 * sched_info mode: the scheduler set next->sched_info.last_queued from this
 * run queue's clock when it queued the task, and consumes it right after
 * this tracepoint (sched_info_arrive) with the same clock value, so the
 * difference is exactly the run_delay the kernel is about to add. When a
 * wake-up preempts at once the scheduler skips re-reading its clock, and
 * that wait is 0 here as in run_delay: it still counts as a wait.
 *
 * The run queue is reached through the task's cfs_rq (CONFIG_FAIR_GROUP_SCHED,
 * set for every class by set_task_rq), not the per-CPU `runqueues` symbol:
 * that needs CONFIG_KALLSYMS_ALL, which many kernels lack. User space checks
 * both fields exist before choosing this mode.
 */
static __always_inline bool sched_info_wait(struct task_struct *next, bool btf, __u64 *wait)
{
	__u64 queued, clock;

	if (!bpf_core_field_exists(next->sched_info) || !bpf_core_field_exists(next->se.cfs_rq))
		return false;
	if (btf) {
		queued = next->sched_info.last_queued;
		clock = queued ? next->se.cfs_rq->rq->clock : 0;
	} else {
		queued = BPF_CORE_READ(next, sched_info.last_queued);
		clock = queued ? BPF_CORE_READ(next, se.cfs_rq, rq, clock) : 0;
	}
	if (!queued)
		return false;
	*wait = clock > queued ? clock - queued : 0;
	return true;
}

/* Adds this CPU's pending histogram to its cgroup's rq_hist entry. */
static __noinline void flush_pending(struct rq_pending *p)
{
	struct lat_hist *h = bpf_map_lookup_elem(&rq_hist, &p->cgid);

	if (!h) {
		static const struct lat_hist zero;

		bpf_map_update_elem(&rq_hist, &p->cgid, &zero, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&rq_hist, &p->cgid);
		if (!h) {
			sched_count_drop(SCHED_DROP_HIST_FULL);
			return;
		}
	}
	CG_ADD(&h->count, p->hist.count);
	CG_ADD(&h->sum_ns, p->hist.sum_ns);
	for (int i = 0; i < QOSLET_LAT_SLOTS; i++)
		CG_ADD(&h->slots[i], p->hist.slots[i]);
	__builtin_memset(&p->hist, 0, sizeof(p->hist));
}

static __always_inline void charge_hist(__u64 cgid, __u64 delta)
{
	__u32 zero = 0;
	struct rq_pending_cache *c = bpf_map_lookup_elem(&rq_pending, &zero);
	struct rq_pending *p = NULL;

	if (!c)
		return;
	/* Found first, added once: lat_hist_add is not copied into every branch. */
	for (int i = 0; i < QOSLET_PENDING_SLOTS; i++) {
		if (c->slot[i].cgid == cgid) {
			p = &c->slot[i];
			break;
		}
	}
	if (!p) {
		p = &c->slot[c->next & (QOSLET_PENDING_SLOTS - 1)];
		c->next++;
		if (p->hist.count)
			flush_pending(p);
		p->cgid = cgid;
	}
	lat_hist_add(&p->hist, delta);
	if (p->hist.count >= QOSLET_PENDING_FLUSH)
		flush_pending(p);
}

/* Adds a slot's increment to its pair in rq_blame_fresh. */
static __always_inline void blame_fresh_add(struct blame_key *key, struct blame_val *add)
{
	struct blame_val *v = bpf_map_lookup_elem(&rq_blame_fresh, key);

	if (!v) {
		if (!bpf_map_update_elem(&rq_blame_fresh, key, add, BPF_NOEXIST))
			return;
		/* Another CPU created the pair between the lookup and the insert. */
		v = bpf_map_lookup_elem(&rq_blame_fresh, key);
		if (!v) {
			sched_count_drop(SCHED_DROP_BLAME_FULL);
			return;
		}
	}
	v->wait_ns += add->wait_ns;
	v->count += add->count;
}

/*
 * The slot gives its pair back to rq_blame and takes `key`, seeded with
 * key's rq_blame value (struct rq_blame_cache says why). Out of line: two
 * hash lookups, paid only when a pair is not in its CPU's cache.
 */
static __noinline void blame_slot_take(struct rq_blame_slot *s, struct blame_key *key, __u64 delta)
{
	/*
	 * The slot's pair is copied before any map call: forget_cpu empties
	 * slots from another CPU, and a key that changes between the map's
	 * hashing it and copying it in leaves an entry in the wrong bucket,
	 * which no lookup or deletion finds again and on which every
	 * key-by-key walk (bpftool map dump) starts over, for ever. A copy
	 * taken while the slot changed (seq odd, or moved) is not given back:
	 * its cgroup is going.
	 */
	__u64 seq = s->seq;
	struct blame_key old;
	struct blame_val val, base, *v;

	/* Compiler barriers: the copy stays between the two reads of seq. */
	asm volatile("" ::: "memory");
	old = s->key;
	val = s->val;
	base = s->base;
	asm volatile("" ::: "memory");
	if (val.count && !(seq & 1) && s->seq == seq) {
		/* Only what this slot added: another writer's counts stay. */
		struct blame_val add = {.wait_ns = val.wait_ns - base.wait_ns,
					.count = val.count - base.count};

		v = bpf_map_lookup_elem(&rq_blame, &old);
		if (v) {
			v->wait_ns += add.wait_ns;
			v->count += add.count;
		} else if (bpf_map_update_elem(&rq_blame, &old, &val, BPF_NOEXIST)) {
			sched_count_drop(SCHED_DROP_BLAME_FULL);
		}
		blame_fresh_add(&old, &add);
	}
	v = bpf_map_lookup_elem(&rq_blame, key);
	/* The old pair is in rq_blame already when readers may see the change. */
	__sync_fetch_and_add(&s->seq, 1);
	s->key = *key;
	if (v) {
		s->base = *v;
	} else {
		s->base.wait_ns = 0;
		s->base.count = 0;
	}
	s->val.wait_ns = s->base.wait_ns + delta;
	s->val.count = s->base.count + 1;
	__sync_fetch_and_add(&s->seq, 1);
}

static __always_inline void charge_blame(__u64 victim, __u64 culprit, __u64 delta)
{
	__u32 zero = 0;
	struct rq_blame_cache *c = bpf_map_lookup_elem(&rq_blame_cache, &zero);
	struct rq_blame_slot *s;

	if (!c)
		return;
	s = &c->slot[qoslet_blame_slot(victim, culprit)];
	/* An empty slot holds pair (0, 0) with nothing counted: adding to it is right too. */
	if (s->key.victim == victim && s->key.culprit == culprit) {
		s->val.wait_ns += delta;
		s->val.count++;
		return;
	}
	{
		struct blame_key key = {.victim = victim, .culprit = culprit};

		blame_slot_take(s, &key, delta);
	}
}

/* Sends one alert; a full ring buffer is counted. */
static __always_inline void alert_send(__u32 kind, __u64 cgid, __u64 wait_ns, __u64 culprit,
				       __u64 now)
{
	struct rq_alert *a = bpf_ringbuf_reserve(&rq_alerts, sizeof(*a), 0);

	if (!a) {
		sched_count_drop(SCHED_DROP_ALERT_LOST);
		return;
	}
	a->cgid = cgid;
	a->wait_ns = wait_ns;
	a->ktime_ns = now;
	a->culprit = culprit;
	a->kind = kind;
	a->pad = 0;
	bpf_ringbuf_submit(a, 0);
}

/*
 * Sends an alert when `cgid` is watched and waited over its threshold. The
 * hash lookup happens only past the smallest threshold: rare by design.
 */
static __noinline void alert_check(__u64 cgid, __u64 delta, __u64 gap_ns)
{
	struct rq_alert_watch *w = bpf_map_lookup_elem(&rq_alert_watch, &cgid);
	__u64 now;

	if (!w || delta <= w->threshold_ns)
		return;
	now = bpf_ktime_get_ns();
	if (now - w->last_ns < gap_ns)
		return;
	w->last_ns = now;
	alert_send(RQ_ALERT_WAIT, cgid, delta, 0, now);
}

/*
 * Counts a switch-in of `victim` right after a task of `culprit` (another
 * cgroup) when the victim is watched and the culprit a displacer, and sends
 * a displacement alert at the window's displaced_min-th. Only while the
 * agent arms it. The window is the cgroup's across CPUs: updates race, and
 * a count lost to a race only delays the alert by one switch.
 */
static __noinline void displacement_check(__u64 victim, __u64 culprit, __u32 min, __u64 window_ns,
					  __u64 gap_ns)
{
	struct rq_alert_watch *w;
	__u64 now;

	if (!bpf_map_lookup_elem(&rq_displacers, &culprit))
		return;
	w = bpf_map_lookup_elem(&rq_alert_watch, &victim);
	if (!w)
		return;
	now = bpf_ktime_get_ns();
	if (now - w->displaced_start_ns > window_ns) {
		w->displaced_start_ns = now;
		w->displaced = 0;
	}
	if (++w->displaced < min)
		return;
	w->displaced_start_ns = now; /* the window is spent: the next alert needs a new one */
	w->displaced = 0;
	if (now - w->displaced_last_ns < gap_ns)
		return;
	w->displaced_last_ns = now;
	alert_send(RQ_ALERT_DISPLACED, victim, 0, culprit, now);
}

/*
 * The culprit: prev's cgroup, or QOSLET_CULPRIT_IDLE for the idle task. A
 * task with next's css_set is in next's cgroup (a css_set names one cgroup
 * per hierarchy and never changes while tasks hold it), so with tp_btf the
 * walk to the id is skipped for switches within one cgroup, the most
 * frequent kind where switching is fastest. raw_tp keeps the walk: there
 * every load is a helper call, and comparing would add two.
 */
static __always_inline __u64 culprit_of(struct task_struct *prev, __u32 prev_tid,
					struct task_struct *next, __u64 victim, bool btf)
{
	if (!prev_tid)
		return QOSLET_CULPRIT_IDLE;
	if (btf && prev->cgroups == next->cgroups)
		return victim;
	return task_cgroup_id(prev, btf);
}

/*
 * A kernel thread's stint seen through. On PREEMPT_RT a timer wakes its
 * sleeper from the ktimers thread, not from the interrupt: the thread takes
 * the CPU from the running task, wakes the sleeper and blocks, so every such
 * switch-in comes after a task of the root cgroup, never after the task that
 * held the CPU. Threaded interrupts and ksoftirqd do the same on any kernel.
 * So each CPU records the kernel thread that came in last, with the
 * runnable task of another cgroup it took the CPU from, and when that
 * thread blocks and hands the CPU to a third task, the switch-in is charged
 * to the preempted task's cgroup (its wait, or its hand-over with no wait):
 * the stint interrupted that task's hold on the CPU, and its own few
 * microseconds go with it. The thread's switch count tells its own stint
 * from an older one whose end took a path that returns early (to the idle
 * task, say). Returns the culprit to charge. Called only for switches in
 * from the idle task or from another cgroup (a stint's start and end are
 * both, and a thread that comes in from idle must overwrite an old
 * record); a stint that ends with a wait of 0 ns is not seen, which is
 * rare: a kernel thread that wakes a CFS task is not preempted by it, so
 * the run queue's clock moves before the switch.
 */
static __always_inline __u64 kthread_stint(struct task_struct *prev, __u32 prev_tid,
					   struct task_struct *next, __u32 next_tid, __u64 culprit,
					   bool btf)
{
	__u32 zero = 0;
	struct rq_blame_cache *c = bpf_map_lookup_elem(&rq_blame_cache, &zero);
	struct rq_kthread_stint *s;
	__u64 charge = culprit;

	if (!c)
		return culprit;
	s = &c->stint;
	/* prev's state is read only at a stint's ends: most switches are neither */
	if (prev_tid && s->kthread_tid == prev_tid) {
		if (s->from_cgid && s->from_tid != next_tid && !task_runnable(prev, btf) &&
		    task_switches(prev, btf) == s->switches + 1)
			charge = s->from_cgid;
		s->kthread_tid = 0;
	}
	if (next_tid && task_is_kthread(next, btf)) {
		bool runnable = prev_tid && task_runnable(prev, btf);

		s->kthread_tid = next_tid;
		s->switches = task_switches(next, btf);
		s->from_tid = runnable ? prev_tid : 0;
		s->from_cgid = runnable ? culprit : 0;
	}
	return charge;
}

/* next_cgid: next's cgroup when the caller has read it already, else NULL. */
static __always_inline void sched_on_switch(struct task_struct *prev, struct task_struct *next,
					    const __u64 *next_cgid, bool btf)
{
	__u32 prev_tid = task_tid(prev, btf), next_tid = task_tid(next, btf), zero = 0;
	struct rq_alert_cfg *cfg;
	__u64 delta, victim, culprit;
	bool waited;

	if (wait_source == QOSLET_WAIT_STAMP)
		waited = stamp_wait(prev, prev_tid, next, next_tid, btf, &delta);
	else
		waited = next_tid && sched_info_wait(next, btf, &delta);
	if (!waited)
		return;

	victim = next_cgid ? *next_cgid : task_cgroup_id(next, btf);
	charge_hist(victim, delta);
	cfg = bpf_map_lookup_elem(&rq_alert_cfg, &zero);
	if (cfg && cfg->min_ns && delta > cfg->min_ns)
		alert_check(victim, delta, cfg->gap_ns);
	if (delta) {
		culprit = culprit_of(prev, prev_tid, next, victim, btf);
	} else if (prev_tid && task_runnable(prev, btf)) {
		/*
		 * A wait of 0 ns delayed no one, but when it took the CPU from
		 * a runnable task of another cgroup (a wake-up that preempts
		 * at once, before the run queue's clock moves: the way an LS
		 * task takes the CPU from SCHED_IDLE BE) the pair is counted,
		 * with no wait: each such hand-over costs the victim a switch
		 * of address space and the cache the other left. The common
		 * zero waits, on an idle CPU or after a task of the same
		 * cgroup, skip reading prev's cgroup and the pair's step.
		 */
		culprit = culprit_of(prev, prev_tid, next, victim, btf);
		if (culprit == victim)
			return;
	} else {
		return;
	}
	if (culprit != victim)
		culprit = kthread_stint(prev, prev_tid, next, next_tid, culprit, btf);
	/* A hand-over seen through a kernel thread may turn out to be the victim's own. */
	if (delta || culprit != victim)
		charge_blame(victim, culprit, delta);
	/* Both kinds count, as the agent's displaced share counts them. */
	if (cfg && cfg->displaced_min && culprit != victim && culprit != QOSLET_CULPRIT_IDLE)
		displacement_check(victim, culprit, cfg->displaced_min, cfg->displaced_window_ns,
				   cfg->displaced_gap_ns);
}

#endif
