// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "loop.h"

int loop_run(const struct loop_ops *ops, void *ctx, uint64_t duration_ns)
{
	uint64_t start = ops->now(ctx), last_tick = start;
	uint64_t deadline = start + ops->interval_ns(ctx);
	uint64_t end = duration_ns ? start + duration_ns : 0;
	uint64_t tree_due = 0;	/* the tick the tree asked for, once the gap is over; 0: none */
	uint64_t last_tree = 0; /* the last tick the tree asked for */
	unsigned int follow_ups = 0;
	int err = ops->tick(ctx, false);

	while (!err) {
		uint64_t step = ops->interval_ns(ctx), follow = last_tick + LOOP_FOLLOW_UP_NS, now;
		uint64_t until = follow_ups && follow < deadline ? follow : deadline;
		bool regular, alert, follow_up, tree;
		enum loop_wake wake;

		if (ops->between)
			ops->between(ctx);
		wake = ops->wait(ctx, tree_due && tree_due < until ? tree_due : until);
		now = ops->now(ctx);
		if (wake == LOOP_WAKE_STOP || (end && now >= end))
			break;
		if (wake == LOOP_WAKE_TREE && !tree_due)
			tree_due = last_tree + LOOP_TREE_GAP_NS > now ? last_tree + LOOP_TREE_GAP_NS
								      : now;
		regular = now >= deadline;
		alert = wake == LOOP_WAKE_ALERT && now - last_tick >= LOOP_FAST_GAP_NS;
		follow_up = follow_ups && now >= follow;
		tree = tree_due && now >= tree_due;
		if (!regular && !alert && !follow_up && !tree)
			continue;
		last_tick = now;
		if (tree && !regular && !alert && !follow_up)
			last_tree = now;
		tree_due = 0; /* every tick applies the tree's news */
		err = ops->tick(ctx, !regular);
		if (regular) {
			/* Absolute deadlines: no drift. A late tick skips ahead. */
			deadline += step;
			if (deadline <= now)
				deadline = now + step;
		} else if (alert) {
			follow_ups = LOOP_FOLLOW_UPS;
		} else if (follow_up) {
			follow_ups--;
		}
	}
	return err;
}
