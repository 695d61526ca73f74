/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * When the agent ticks. Regular ticks every interval on absolute deadlines
 * (no drift; a late tick skips ahead instead of piling up); a fast-path tick
 * when an alert comes, at most one per LOOP_FAST_GAP_NS however many alerts
 * arrive; then LOOP_FOLLOW_UPS more ticks LOOP_FOLLOW_UP_NS apart: the
 * alert's own tick judges CPU use over an interval that mostly predates the
 * change, the follow-ups over short intervals that lie wholly in it. A
 * cgroup that appears or goes in the managed subtree (a pod starting) ticks
 * too, at once, without follow-ups, at most one such tick per
 * LOOP_TREE_GAP_NS (one serves every change until it runs, and so does any
 * other tick): a new BE pod gets its settings when it starts, not up to an
 * interval later, and a storm of pods costs at most 10 more ticks a second.
 * Another writer's change to a file the actuator wrote ticks the same way,
 * sharing the tree's gap: the tick answers it (writes the value back) within
 * milliseconds, and a writer that rewrites the file in a loop costs at most
 * 10 ticks a second until the actuator backs off (user/actuate/contest.h).
 * Such a tree tick has follow-ups too when the caller asks (tree_follow_ups): a
 * policy that judges what a new pod does to the others needs intervals
 * that lie after its start; one still ticks at most every 100 ms.
 * A tick whose write raced the making of its cgroup ticks again
 * LOOP_RETRY_NS later, at most LOOP_RETRIES times in a row: on cgroup v1 a
 * pod's directory is made one hierarchy at a time, and the tree's tick,
 * woken by the first (cpu), can come before the pod's cpuset or memory
 * directory exists, or before its new container's cpuset is filled in; the
 * next regular or tree tick would land the write 100 ms to a second later.
 * A displacement alert (an LS cgroup taking the CPU from BE many times
 * within milliseconds) ticks at once and again LOOP_QUICK_NS later, then
 * has the follow-ups: its own tick judges an interval that may lie mostly
 * before the displacement began, the quick one an interval wholly in it,
 * and the policy that confines BE for it needs that judgement within
 * milliseconds, not at the first 100 ms follow-up. At most one such
 * series per LOOP_DISPLACED_GAP_NS, counted from the last series, not from
 * the last tick (the tree's tick of the BE pod that displaces comes just
 * before): the alert is for the onset, the series' ticks judge what
 * follows, and on a node of many LS pods, each of which may alert once a
 * second, the series still cost at most two ticks and the follow-ups a
 * second.
 *
 * A pod that changed in the API (the pod watch) ticks at once too, at most
 * one such tick per LOOP_TREE_GAP_NS, on a gap of its own: the scheduler's
 * binding comes just before the kubelet makes the pod's cgroup, and the
 * cgroup's tick must not wait out the gap of the pod's.
 *
 * Pure scheduling: the clock, the waiting and the tick are the caller's
 * (struct loop_ops), so tests drive it with a fake clock.
 */
#ifndef QOSLET_AGENT_LOOP_H
#define QOSLET_AGENT_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#define LOOP_FAST_GAP_NS      (50 * 1000000ull)
#define LOOP_FOLLOW_UP_NS     (100 * 1000000ull)
#define LOOP_FOLLOW_UPS	      3
#define LOOP_TREE_GAP_NS      (100 * 1000000ull)
#define LOOP_RETRY_NS	      (10 * 1000000ull)
#define LOOP_RETRIES	      3
#define LOOP_QUICK_NS	      (10 * 1000000ull)
#define LOOP_DISPLACED_GAP_NS (1000 * 1000000ull)

enum loop_wake {
	LOOP_WAKE_TIMEOUT = 0, /* the deadline came */
	LOOP_WAKE_ALERT,       /* a fast-path alert came first */
	LOOP_WAKE_DISPLACED,   /* a fast-path displacement alert came first */
	LOOP_WAKE_TREE,	       /* a cgroup appeared or went first */
	LOOP_WAKE_PODS,	       /* a pod changed in the API first */
	LOOP_WAKE_WRITE,       /* another writer changed a file the actuator wrote, first */
	LOOP_WAKE_STOP,	       /* stop: the loop ends without another tick */
};

struct loop_ops {
	uint64_t (*now)(void *ctx); /* CLOCK_MONOTONIC, ns */
	/* Waits until deadline_ns or something earlier (an alert, the tree, a stop). */
	enum loop_wake (*wait)(void *ctx, uint64_t deadline_ns);
	int (*tick)(void *ctx, bool fast); /* non-zero ends the loop with that value */
	/* Read before every wait: a config reload may change it. */
	uint64_t (*interval_ns)(void *ctx);
	/* Called before every wait, between ticks (a reload happens here); may be NULL. */
	void (*between)(void *ctx);
	/* Called after every tick: whether a write raced its cgroup's making; may be NULL. */
	bool (*retry)(void *ctx);
	/* Whether a tick the tree woke gets follow-ups; may be NULL (none). */
	bool (*tree_follow_ups)(void *ctx);
};

/*
 * Ticks at once, then on schedule until a tick fails, the wait says stop,
 * or duration_ns passed (0: no end). Returns the failing tick's value or 0.
 */
int loop_run(const struct loop_ops *ops, void *ctx, uint64_t duration_ns);

#endif
