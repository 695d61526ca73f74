// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "agent/loop.h"

int loop_run(const struct loop_ops *ops, void *ctx, uint64_t duration_ns)
{
	uint64_t start = ops->now(ctx), last_tick = start;
	uint64_t deadline = start + ops->interval_ns(ctx);
	uint64_t end = duration_ns ? start + duration_ns : 0;
	uint64_t tree_due = 0;	/* the tick the tree asked for, once the gap is over; 0: none */
	uint64_t last_tree = 0; /* the last tick the tree asked for */
	uint64_t pods_due = 0, last_pods = 0; /* the same for the pod watch */
	uint64_t retry_due = 0;		      /* the retry's tick; 0: none */
	uint64_t quick_due = 0;		      /* a displacement's second tick; 0: none */
	bool tree_woke = false; /* the tree, not an outside write, asked for tree_due */
	uint64_t last_displaced = 0;
	bool displaced_seen = false; /* last_displaced holds */
	unsigned int follow_ups = 0;
	/*
	 * Retries in the current series. Only a tick whose writes all found
	 * their cgroups ends a series, so a write that keeps failing (a unit
	 * missing from one hierarchy for good) costs LOOP_RETRIES ticks once,
	 * not at every tick.
	 */
	unsigned int retries = 0;
	bool ticked = true;
	int err = ops->tick(ctx, false);

	while (!err) {
		uint64_t step = ops->interval_ns(ctx), follow = last_tick + LOOP_FOLLOW_UP_NS, now;
		uint64_t until = follow_ups && follow < deadline ? follow : deadline;
		bool regular, alert, follow_up, tree, retry, displaced, quick, pods;
		enum loop_wake wake;

		if (ticked && ops->retry) {
			if (!ops->retry(ctx))
				retries = 0;
			else if (retries < LOOP_RETRIES) {
				retries++;
				retry_due = ops->now(ctx) + LOOP_RETRY_NS;
			}
		}
		ticked = false;
		if (tree_due && tree_due < until)
			until = tree_due;
		if (pods_due && pods_due < until)
			until = pods_due;
		if (retry_due && retry_due < until)
			until = retry_due;
		if (quick_due && quick_due < until)
			until = quick_due;
		if (ops->between)
			ops->between(ctx);
		wake = ops->wait(ctx, until);
		now = ops->now(ctx);
		if (wake == LOOP_WAKE_STOP || (end && now >= end))
			break;
		if ((wake == LOOP_WAKE_TREE || wake == LOOP_WAKE_WRITE) && !tree_due)
			tree_due = last_tree + LOOP_TREE_GAP_NS > now ? last_tree + LOOP_TREE_GAP_NS
								      : now;
		if (wake == LOOP_WAKE_PODS && !pods_due)
			pods_due = last_pods + LOOP_TREE_GAP_NS > now ? last_pods + LOOP_TREE_GAP_NS
								      : now;
		tree_woke |= wake == LOOP_WAKE_TREE;
		regular = now >= deadline;
		alert = wake == LOOP_WAKE_ALERT && now - last_tick >= LOOP_FAST_GAP_NS;
		follow_up = follow_ups && now >= follow;
		tree = tree_due && now >= tree_due;
		retry = retry_due && now >= retry_due;
		displaced = wake == LOOP_WAKE_DISPLACED &&
			    (!displaced_seen || now - last_displaced >= LOOP_DISPLACED_GAP_NS);
		quick = quick_due && now >= quick_due;
		pods = pods_due && now >= pods_due;
		if (!regular && !alert && !follow_up && !tree && !retry && !displaced && !quick &&
		    !pods)
			continue;
		last_tick = now;
		/* a follow-up that serves the tree is the tree's tick: the gap holds with them */
		if (tree && !regular && !alert && !displaced)
			last_tree = now;
		if (pods && !tree && !regular && !alert && !displaced)
			last_pods = now;
		pods_due = 0;  /* and the pods' */
		tree_due = 0;  /* every tick applies the tree's news */
		retry_due = 0; /* and writes again what failed */
		err = ops->tick(ctx, !regular);
		ticked = true;
		if (regular) {
			/* Absolute deadlines: no drift. A late tick skips ahead. */
			deadline += step;
			if (deadline <= now)
				deadline = now + step;
		} else if (alert) {
			follow_ups = LOOP_FOLLOW_UPS;
		} else if (follow_up) {
			follow_ups--;
		} else if (tree && tree_woke && ops->tree_follow_ups && ops->tree_follow_ups(ctx)) {
			follow_ups = LOOP_FOLLOW_UPS;
		}
		tree_woke = false;
		if (quick) {
			quick_due = 0;
			follow_ups = LOOP_FOLLOW_UPS;
		}
		if (displaced) {
			displaced_seen = true;
			last_displaced = now;
			quick_due = now + LOOP_QUICK_NS;
			follow_ups = 0; /* they start after the quick tick */
		}
	}
	return err;
}
