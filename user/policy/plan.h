/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The step between the policies' wishes and the actions taken: merges the
 * wishes (the lowest CPU quota, memory limit or memory.high on a unit wins, in the place of its
 * first wish, so a policy's order such as burst before quota holds), keeps only the ones that
 * change something, and hands back settings no policy wants any more.
 */
#ifndef QOSLET_POLICY_PLAN_H
#define QOSLET_POLICY_PLAN_H

#include <stdbool.h>

#include "policy/action.h"
#include "policy/model.h"

/* Holds after a missed ask (see plan_apply), in seconds. */
#define PLAN_HOLD_FIRST_S 1
#define PLAN_HOLD_MAX_S	  300
/*
 * A look this soon after an ask, on the agent's retry tick (10 ms on, after
 * a write that raced its cgroup's creator: pol_input.after_race), does not
 * judge it.
 */
#define PLAN_QUICK_RETRY_S 0.03

/* What the plan last asked of one knob of one target (a unit, or a container by its id). */
struct plan_entry {
	uint64_t id;
	enum act_kind kind;
	int64_t value; /* asked */
	/*
	 * ACT_CPUSET's lists, asked and last seen; NULL is "" (the other kinds):
	 * held inline they made each of a node's thousand entries 560 bytes.
	 */
	char *cpus;
	int64_t seen_value; /* the unit's value when last looked at */
	char *seen_cpus;
	bool asked;	    /* handed out at the last look: did the value land? */
	uint32_t misses;    /* asks in a row whose value did not land (live only) */
	uint64_t missed_ns; /* ts_ns of the last miss */
	uint64_t asked_ns;  /* ts_ns of the last ask */
};

struct plan_state {
	struct plan_entry *v; /* sorted by (id, kind) */
	size_t n, cap;
};

/*
 * Appends to out what to do this tick, given every policy's wishes:
 *  - a setting is asked again only when the wish changed, or when someone
 *    else changed the value since it was last looked at (so dry-run, where
 *    the value never changes, asks once, and a failed write is not retried
 *    in a storm);
 *  - live (not dry_run), an ask whose value is not there at the next look
 *    missed (the kernel or the actuator refused it): the setting is then
 *    held PLAN_HOLD_FIRST_S, doubling with each miss in a row up to
 *    PLAN_HOLD_MAX_S, and asked again when the hold ends, changed or not
 *    (the first retry comes a second later: a refusal is often a race with
 *    the cgroup's creator), so a setting the kernel keeps refusing costs one
 *    failed write per hold, not one per tick; a look within
 *    PLAN_QUICK_RETRY_S of the ask on the agent's retry tick (it ticks again
 *    10 ms after a write that raced its cgroup's creator, at most three
 *    times: pol_input.after_race) does not judge it: the ask goes again,
 *    and misses count from the next look;
 *  - a setting asked before that no policy wishes any more comes back as an
 *    action with restore set (rule "plan.release");
 *  - evictions and reports pass as they are.
 * Returns 0 or -ENOMEM.
 */
int plan_apply(struct plan_state *st, const struct pol_input *in, const struct action_list *wishes,
	       bool dry_run, struct action_list *out);

/*
 * The input's value of setting kind at target id (a unit, or a container:
 * a weight, a memory limit or a quota only) as a decision's "before" text:
 * the number, or the CPU list of a cpuset; "" when kind is not a setting or
 * the target is not in the input. Replay shows the recorded value with it.
 */
void plan_target_text(const struct pol_input *in, uint64_t id, enum act_kind kind, char *buf,
		      size_t size);

/*
 * The ordering rule between one tick's actions while they are applied, in
 * the order the tick lists them: the split's LS cpuset moves wait for its
 * BE moves (the split lists BE's cpusets first). LS confined while BE still
 * runs on every CPU (a BE cpuset of the tick failed: on v1 its directory
 * not made yet, say) would have fewer CPUs and the same neighbours; BE's
 * retry, 10 ms later, asks both again. All zero before the tick's first.
 */
struct plan_progress {
	bool be_cpus_missed; /* a BE cpuset of this tick failed */
};

/* NULL when act may be applied now, else why it is held (the decision's text). */
const char *plan_held(const struct plan_progress *p, const struct action *act);

/* After act was applied (failed: the write did not land): what later actions wait on. */
void plan_progress_note(struct plan_progress *p, const struct action *act, bool failed);

void plan_state_free(struct plan_state *st);

#endif
