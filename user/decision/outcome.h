/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What came of a decision: one enum for everyone who produces an outcome
 * (the actuator, the Eviction API link, replay) and everyone who reads one
 * (decision records, /metrics, Events). The names are output: the records'
 * "outcome" field, the outcome label of qoslet_decisions_total, the docs.
 */
#ifndef QOSLET_DECISION_OUTCOME_H
#define QOSLET_DECISION_OUTCOME_H

/*
 * In the order of their names: /metrics sorts its series by label text, and
 * with this order comparing the values does the same (tests/unit/test_decision.c).
 */
enum decision_outcome {
	OUT_ADOPTED = 0, /* another writer changed an owner's value: taken as the new original */
	OUT_APPLIED,	 /* written (evict.action "kill": the tasks killed) */
	OUT_CONTESTED,	 /* another writer keeps undoing a setting: written back later */
	OUT_DRY_RUN,	 /* would have been written: dry-run */
	OUT_EVICTED,	 /* the Eviction API accepted the eviction */
	OUT_FAILED,	 /* tried and failed: errno and why say how */
	OUT_GONE,	 /* the pod to evict no longer exists: counts as done */
	OUT_PENDING,	 /* an eviction of that pod is still being tried */
	OUT_REASSERTED,	 /* another writer changed a setting: written back */
	OUT_REFUSED,	 /* the actuator's rules forbid it: nothing written */
	OUT_REPLAY,	 /* `qoslet replay`: decided, not acted on */
	OUT_REPORTED,	 /* a finding, or evict.action "report": nothing to write */
	OUT_REQUESTED,	 /* an eviction handed to the Eviction API */
	OUT_RETRY,	 /* the Eviction API said not now: tried again later */
	OUT_UNCHANGED,	 /* the file already held the value */
	OUT_NR,
};

/* "applied", "dry_run", "evicted", ... as above; "?" out of range. */
const char *decision_outcome_name(enum decision_outcome o);

#endif
