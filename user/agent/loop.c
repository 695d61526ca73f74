// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "loop.h"

int loop_run(const struct loop_ops *ops, void *ctx, uint64_t duration_ns)
{
	uint64_t start = ops->now(ctx), last_tick = start;
	uint64_t deadline = start + ops->interval_ns(ctx);
	uint64_t end = duration_ns ? start + duration_ns : 0;
	unsigned int follow_ups = 0;
	int err = ops->tick(ctx, false);

	while (!err) {
		uint64_t step = ops->interval_ns(ctx), follow = last_tick + LOOP_FOLLOW_UP_NS, now;
		enum loop_wake wake;

		if (ops->between)
			ops->between(ctx);
		wake = ops->wait(ctx, follow_ups && follow < deadline ? follow : deadline);
		now = ops->now(ctx);
		if (wake == LOOP_WAKE_STOP || (end && now >= end))
			break;
		if (now >= deadline) {
			last_tick = now;
			err = ops->tick(ctx, false);
			/* Absolute deadlines: no drift. A late tick skips ahead. */
			deadline += step;
			if (deadline <= now)
				deadline = now + step;
		} else if (wake == LOOP_WAKE_ALERT && now - last_tick >= LOOP_FAST_GAP_NS) {
			last_tick = now;
			err = ops->tick(ctx, true);
			follow_ups = LOOP_FOLLOW_UPS;
		} else if (follow_ups && now >= follow) {
			last_tick = now;
			err = ops->tick(ctx, true);
			follow_ups--;
		}
	}
	return err;
}
