/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Two writers fighting over one cgroup file: when another writer keeps
 * undoing what the actuator writes back, the actuator stops answering at
 * once and backs off, so the two never settle into a tight loop of writes
 * (docs/agent-actuator.md, "Settings that stay applied"). Pure: time is the
 * caller's.
 *
 * A write back counts as undone when another write comes within
 * CONTEST_WINDOW_NS of it. After CONTEST_STRIKES undone write-backs in a
 * row the file is contested: held for CONTEST_HOLD_FIRST_NS, then written
 * back once; undone again within the window, held twice as long, and so on
 * up to CONTEST_HOLD_MAX_NS. A write back that stands for a whole window
 * ends the contest. The window is shorter than the kubelet's periodic
 * rewrites (its CPU manager every 10 s, its QoS cgroups every minute):
 * those are answered every time, at a cost of one write per rewrite.
 */
#ifndef QOSLET_ACTUATE_CONTEST_H
#define QOSLET_ACTUATE_CONTEST_H

#include <stdbool.h>
#include <stdint.h>

#define CONTEST_STRIKES	      5
#define CONTEST_WINDOW_NS     (5 * 1000000000ull)
#define CONTEST_HOLD_FIRST_NS (1 * 1000000000ull)
#define CONTEST_HOLD_MAX_NS   (300 * 1000000000ull)

/* One file's record of other writers; all zero is a file nobody fought over. */
struct contest {
	uint32_t strikes;	/* write-backs undone within the window, in a row */
	uint32_t holds;		/* holds in a row */
	uint64_t last_ns;	/* the last answer (write back, or owner's value taken) */
	uint64_t hold_until_ns; /* 0: not held */
};

enum contest_verdict {
	CONTEST_ANSWER = 0, /* answer the write now (write back, or take the owner's value) */
	CONTEST_BACK_OFF,   /* contested: hold (contest_hold_ns says how long) */
	CONTEST_HELD,	    /* held already: leave it */
};

/* Another writer changed the file at now_ns: what to do, and the record updated. */
enum contest_verdict contest_judge(struct contest *c, uint64_t now_ns);

/* The hold the last CONTEST_BACK_OFF set, ns. */
uint64_t contest_hold_ns(const struct contest *c);

bool contest_held(const struct contest *c, uint64_t now_ns);

/*
 * True once, at the first call after a hold ended: the caller answers then
 * (its write back counts as an answer: undone within the window, the next
 * hold is twice as long).
 */
bool contest_hold_over(struct contest *c, uint64_t now_ns);

#endif
