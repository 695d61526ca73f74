/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The actuator: the only code that writes cgroup files (docs/agent-actuator.md).
 * It turns a policy action into writes inside the managed subtree, never
 * lowers an LS unit's CPU quota, never writes an empty cpuset, orders nested
 * writes so the kernel accepts each one, and journals every original value
 * before its first change, so a clean stop restores them and the next start
 * after a crash reconciles them.
 */
#ifndef QOSLET_ACTUATE_ACTUATOR_H
#define QOSLET_ACTUATE_ACTUATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/knob.h"
#include "decision/outcome.h"
#include "policy/action.h"
#include "policy/policy_config.h"

struct actuator_opts {
	const struct cgroup_ctrls *ctrls;
	const char *
		subtree; /* managed subtree, relative to the roots; writes outside it are refused */
	/*
	 * The journal lives in state_dir/actuator.json. Created 0700 if absent;
	 * refused unless it is the agent's user's alone (private_dir.h).
	 */
	const char *state_dir;
	/*
	 * Where the cgroup tree's locks live (tree_lock.c), the agent's user's
	 * alone like state_dir: every agent on the node must use the same one.
	 * NULL: ACT_TREE_LOCK_DIR.
	 */
	const char *tree_lock_dir;
	bool dry_run;
	enum evict_action evict; /* user/policy/config.h */
	/*
	 * Optional, for audit logs and tests: called after each real write (or
	 * would-be write in dry-run) with the file's absolute path, the text, and
	 * 0 or -errno. An eviction reports the unit's directory and "kill".
	 */
	void (*on_write)(void *ctx, const char *path, const char *value, int err);
	void *ctx;
};

#define ACT_TREE_LOCK_DIR "/run/qoslet-trees"

#define ACT_TEXT_MAX 256

struct act_result {
	/*
	 * The decision's outcome: OUT_APPLIED, _DRY_RUN, _UNCHANGED, _REFUSED,
	 * _FAILED, _REPORTED, or _REQUESTED (an eviction the caller hands to the
	 * Kubernetes Eviction API).
	 */
	enum decision_outcome outcome;
	int err;		   /* OUT_FAILED: -errno */
	char before[ACT_TEXT_MAX]; /* the unit's file as it was ("50000 100000", "0-1", "1") */
	char after[ACT_TEXT_MAX];  /* as written (or as it would be, in dry-run) */
	char why[160];		   /* refused / failed / reported: the reason */
};

struct actuator;

/*
 * Reads the journal a previous run left (crash, kill -9) and restores every
 * original value it holds (skipping cgroups that vanished), then removes it:
 * that is the reconcile. Originals it could not restore stay journaled (and
 * are retried by actuator_restore). In dry-run it restores nothing and
 * leaves the journal, logging what it would do. Returns 0 or -errno with a
 * message in err.
 */
int actuator_open(struct actuator **out, const struct actuator_opts *o, char *err, size_t errlen);

/*
 * Changes what an eviction does, for a config reload: between "report" and
 * "kubernetes" only (the caller's check). "kill" needs privileges that
 * start-up keeps or drops, so it is set at open only.
 */
void actuator_set_evict(struct actuator *a, enum evict_action evict);

/* Settings restored at open. */
size_t actuator_reconciled(const struct actuator *a);

/*
 * The journal's trouble, for the metrics: journals found damaged and moved
 * aside at open (0 or 1), and journal writes that failed (each refused the
 * cgroup write whose original it was to hold, or left restored entries
 * listed).
 */
void actuator_journal_errors(const struct actuator *a, uint64_t *set_aside, uint64_t *write_errors);

void actuator_apply(struct actuator *a, const struct action *act, struct act_result *r);

/* The owner's quota before qoslet changed it, if qoslet did. */
bool actuator_original_quota(const struct actuator *a, const char *rel, int64_t *quota_us);
/* Whether qoslet changed rel's memory limit or memory.high (and holds the original). */
bool actuator_holds_memory(const struct actuator *a, const char *rel);

/*
 * The settings qoslet changed and has not restored yet (the journal), for
 * reports: entry i (from 0, in the order of first change) as its knob and
 * cgroup; false past the last. *rel is valid until the next apply, forget
 * or restore.
 */
bool actuator_changed(const struct actuator *a, size_t i, enum cg_knob *knob, const char **rel);

/* A unit vanished: drop the journal entries of it and its descendants. */
void actuator_forget(struct actuator *a, const char *rel);

/*
 * Settings that stay applied (docs/agent-actuator.md). Another writer (the
 * kubelet, systemd, an operator) may change a file the actuator wrote; the
 * caller watches those files and tells the actuator what they read after
 * each change, and the actuator answers at the next tick: it writes its
 * value back (reasserted), or, for a value it only scales from (an LS
 * unit's CPU limit), takes the owner's new value as the original (adopted).
 * Either way the other writer's value is what a stop restores. A writer
 * that keeps undoing the write-backs is contested: the actuator backs off
 * (contest.h).
 */

/*
 * Calls fn with each file to watch: those the actuator wrote and has not
 * given back, except while a contest holds them.
 */
void actuator_watch_list(const struct actuator *a,
			 void (*fn)(void *ctx, enum cg_knob knob, const char *rel), void *ctx);

/* Changes whenever the list does. */
uint64_t actuator_watch_generation(const struct actuator *a);

/*
 * A watched file reads text after a change: true when that is not what
 * the actuator's last write left there (another writer's change, then
 * answered by the next actuator_answer); false for the actuator's own
 * writes and for files it does not hold.
 */
bool actuator_note(struct actuator *a, enum cg_knob k, const char *rel, const char *text);

enum act_answer_kind {
	ACT_ANSWER_REASSERTED = 0, /* written back */
	ACT_ANSWER_ADOPTED,	   /* the owner's new value taken as the original */
	ACT_ANSWER_CONTESTED,	   /* backed off: written back when the hold ends */
	ACT_ANSWER_NR,
};

/* "reasserted", "adopted", "contested". */
const char *act_answer_name(enum act_answer_kind k);

struct act_answer {
	enum act_answer_kind kind;
	enum cg_knob knob;
	const char *rel; /* the file's cgroup; valid during the callback */
	/* The action that last wrote the file (its unit, which may be an ancestor of rel). */
	enum act_kind act_kind;
	uint64_t id;
	enum qos_class cls;
	enum rule_id rule;
	/*
	 * outcome OUT_REASSERTED, _ADOPTED, _CONTESTED, or _FAILED (the write
	 * back or the journal failed: err, why); before: the other writer's
	 * text; after: the file now.
	 */
	struct act_result r;
	uint64_t hold_ns; /* CONTESTED: for how long */
};

/*
 * At a tick (now_ns CLOCK_MONOTONIC): answers every change noted since the
 * last call, and writes back the files whose hold ended, calling fn with
 * each answer.
 */
void actuator_answer(struct actuator *a, uint64_t now_ns,
		     void (*fn)(void *ctx, const struct act_answer *ans), void *ctx);

/*
 * Clean stop: writes back every original (in an order the kernel accepts)
 * and removes the journal. Returns the number of settings that failed (they
 * stay journaled), or -errno when the journal cannot be updated.
 */
int actuator_restore(struct actuator *a);

/* Frees; restores nothing (the journal stays for the next start). */
void actuator_close(struct actuator *a);

#endif
