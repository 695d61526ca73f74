/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Layouts shared by bpf/sched.bpf.c and user space: the run-queue latency
 * histogram per cgroup and the who-delayed-whom pairs, and the blame cache's
 * slot function (unit-tested from user space). Both sides include this header
 * and nothing else crosses between them.
 */
#ifndef QOSLET_BPF_SCHED_MAPS_H
#define QOSLET_BPF_SCHED_MAPS_H

#include "lat_hist.h"

/* The culprit id recorded when the CPU was idle before the victim ran. */
#define QOSLET_CULPRIT_IDLE 0

/* Why a cgroup id cannot name a real cgroup: the task had no css_set. */
#define QOSLET_CGROUP_UNKNOWN 0

/* Which cgroup hierarchy identifies a task; chosen by user space at start. */
enum qoslet_cgroup_mode {
	QOSLET_CGROUP_V2 = 0,	  /* the default (unified) hierarchy */
	QOSLET_CGROUP_V1_CPU = 1, /* the v1 hierarchy holding the cpu controller */
};

/* Where the wait of a task being switched in comes from; chosen at start. */
enum qoslet_wait_source {
	/*
	 * The kernel's own queue timestamp (task->sched_info.last_queued,
	 * CONFIG_SCHED_INFO): no wake-up hooks at all, and the waits add up to
	 * /proc/PID/schedstat's run_delay by construction.
	 */
	QOSLET_WAIT_SCHED_INFO = 0,
	/* Our own stamp, set on wake-up and on preemption (kernels without it). */
	QOSLET_WAIT_STAMP = 1,
};

/*
 * One CPU's histogram of a cgroup whose tasks it switched in lately, not
 * yet added to rq_hist: adding to a per-CPU array slot costs no hash
 * lookup. Readers add it to the cgroup's rq_hist entry (reading rq_hist
 * first).
 */
struct rq_pending {
	__u64 cgid; /* 0: empty */
	struct lat_hist hist;
};

/*
 * Each CPU's pending histograms of its last few cgroups, a slot each. One
 * slot was flushed to rq_hist at every switch-in of another cgroup, which is
 * every switch-in on a CPU that two pods share (ctxsw -g). A miss flushes
 * the slots round robin, so that a CPU alternating between up to this many
 * cgroups keeps them all.
 */
#define QOSLET_PENDING_SLOTS 4 /* a power of two: `next` is masked */
/*
 * A slot also goes into rq_hist at this many waits, keeping its cgroup: so
 * the pinned rq_hist (what bpftool dumps) lags each CPU by at most this many
 * waits of a cgroup that keeps waiting, and the flush costs a switch-in
 * 1/32 of a hash lookup.
 */
#define QOSLET_PENDING_FLUSH 32

struct rq_pending_cache {
	struct rq_pending slot[QOSLET_PENDING_SLOTS];
	__u32 next; /* the slot a miss takes next, mod QOSLET_PENDING_SLOTS */
	__u32 pad;
};

struct blame_key {
	__u64 victim;  /* cgroup id of the task that waited */
	__u64 culprit; /* cgroup id of the task that ran just before it */
};

struct blame_val {
	__u64 wait_ns;
	__u64 count;
};

/*
 * Each CPU's most recent blame pairs, so that a switch between the same two
 * cgroups as a recent one adds to a per-CPU array slot (inlined by the
 * verifier) instead of calling into rq_blame's hash: that lookup was the
 * most expensive step of the switch program. Direct-mapped: a pair has one
 * slot, picked by a hash of its two ids; a pair that needs an occupied slot
 * evicts the occupant into rq_blame.
 *
 * A slot holds the pair's total on its CPU, not an increment: `base` is the
 * pair's rq_blame value on this CPU when the slot took it, `val` that plus
 * every wait since. Eviction adds val - base to rq_blame (so counts anyone
 * else added meanwhile stay). Readers copy the slots first, then read
 * rq_blame, and take field by field and per CPU the larger of the two. Both
 * only grow, and a slot's total is in rq_blame before the slot changes
 * hands, so a reading never goes down and never counts a wait twice,
 * whenever evictions fall between the reads.
 */
#define QOSLET_BLAME_CACHE_SHIFT 4
#define QOSLET_BLAME_CACHE_SLOTS (1 << QOSLET_BLAME_CACHE_SHIFT)

/*
 * The slot of pair (victim, culprit). The two cgroups, unordered, pick a
 * bucket of two slots (the top bits of a multiplicative hash), and their
 * order picks the slot in it: two cgroups taking turns on a CPU, the
 * commonest cross-cgroup pattern, charge (a, b) and (b, a) by turns, and
 * those two never take each other's slot. A hash of the ordered pair put
 * both in one slot for one pair of cgroups in 16, and then every switch
 * between them evicted the other (ctxsw.sh -g: 224 ns a switch above the
 * empty program instead of 45). Here, not in the program, so that a unit
 * test holds it to that; always inlined, as it runs on every switch.
 */
static inline __attribute__((always_inline)) __u32 qoslet_blame_slot(__u64 victim, __u64 culprit)
{
	const __u64 golden = 0x9E3779B97F4A7C15ULL; /* 2^64 / phi: spreads nearby ids */
	__u64 lo = victim < culprit ? victim : culprit, hi = victim ^ culprit ^ lo;
	__u32 bucket = ((lo ^ (hi * golden)) * golden) >> (64 - QOSLET_BLAME_CACHE_SHIFT + 1);

	return bucket << 1 | (victim < culprit);
}

struct rq_blame_slot {
	/*
	 * Odd while the slot changes pairs (eviction, removal of a cgroup):
	 * readers skip a slot whose seq is odd or changed between two copies.
	 */
	__u64 seq;
	struct blame_key key;
	struct blame_val val;  /* count 0: the slot is empty */
	struct blame_val base; /* rq_blame's value when the pair came in */
};

/*
 * A kernel thread's stint on one CPU (sched_switch.bpf.h, kthread_stint):
 * the thread, the count of its context switches when it came in, and the
 * runnable task of another cgroup it took the CPU from, if any.
 */
struct rq_kthread_stint {
	__u64 from_cgid; /* 0: the thread took the CPU from no runnable task */
	__u64 switches;	 /* the thread's nvcsw + nivcsw at its switch-in */
	__u32 kthread_tid;
	__u32 from_tid;
};

struct rq_blame_cache {
	struct rq_blame_slot slot[QOSLET_BLAME_CACHE_SLOTS];
	struct rq_kthread_stint stint; /* per CPU, as the slots: not a pair */
};

/* Per-CPU counters of events the probe could not record (never silent). */
enum sched_drop {
	SCHED_DROP_HIST_FULL = 0, /* rq_hist had no room for a new cgroup */
	SCHED_DROP_BLAME_FULL,	  /* blame insert failed */
	SCHED_DROP_NO_STORAGE,	  /* task storage could not be created */
	SCHED_DROP_ALERT_LOST,	  /* the alert ring buffer was full */
	SCHED_DROP_NR,
};

/*
 * The agent's fast path: when a task of a watched (latency-sensitive) cgroup
 * waited longer than that cgroup's threshold, the switch step sends one
 * alert through a ring buffer, so the agent acts before its next tick.
 * Waits are in the hot path, alerts are rare: the common case pays one
 * array read (inlined by the verifier) and a compare.
 *
 * The second kind of alert is a displacement: a watched cgroup's tasks took
 * the CPU from (or waited behind) a displacer's (BE) task displaced_min
 * times within displaced_window_ns. That harm is in service time, not in
 * the wait (a wake-up that preempts SCHED_IDLE BE waits 0 ns), so only
 * counting it sees it at once. The agent arms it only while it could still
 * act on it: the step pays for it only on switches between two cgroups,
 * and only then.
 */
struct rq_alert_cfg {
	__u64 min_ns; /* smallest threshold of any watched cgroup; 0: alerts off */
	__u64 gap_ns; /* at most one wait alert per cgroup per gap */
	__u64 displaced_window_ns;
	__u64 displaced_gap_ns; /* at most one displacement alert per cgroup per gap */
	__u32 displaced_min;	/* 0: displacement alerts off */
	__u32 pad;
};

struct rq_alert_watch {
	__u64 threshold_ns;
	__u64 last_ns; /* bpf_ktime of the last wait alert (written by BPF) */
	/* The displacement window and the last such alert (written by BPF). */
	__u64 displaced_start_ns;
	__u64 displaced_last_ns;
	__u32 displaced; /* switch-ins after a displacer since displaced_start_ns */
	__u32 pad;
};

enum rq_alert_kind {
	RQ_ALERT_WAIT = 0,	/* a wait over the threshold: wait_ns */
	RQ_ALERT_DISPLACED = 1, /* displaced_min switch-ins after culprit's kind */
};

struct rq_alert {
	__u64 cgid;
	__u64 wait_ns;
	__u64 ktime_ns;
	__u64 culprit; /* RQ_ALERT_DISPLACED: the displacer of the last one */
	__u32 kind;    /* enum rq_alert_kind */
	__u32 pad;
};

#endif
