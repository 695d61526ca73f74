/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the actuator's files share: CPU sets, the journal, ordered writes. */
#ifndef QOSLET_ACTUATE_INTERNAL_H
#define QOSLET_ACTUATE_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actuate/actuator.h"
#include "actuate/contest.h"

/* CPU sets. The kernel's largest NR_CPUS is 8192, so no real list names a CPU past it. */
#define ACT_CPUS_MAX 8192

struct act_cpus {
	bool on[ACT_CPUS_MAX];
};

/* A kernel CPU list ("0-3,8"; "" is the empty set); -EINVAL when malformed. */
int act_cpus_parse(const char *s, struct act_cpus *m);
/* The kernel's own form ("0-3,8"); -ENAMETOOLONG when it does not fit. */
int act_cpus_format(const struct act_cpus *m, char *buf, size_t size);
bool act_cpus_subset(const struct act_cpus *a, const struct act_cpus *b); /* a within b */
bool act_cpus_empty(const struct act_cpus *m);
void act_cpus_union(struct act_cpus *out, const struct act_cpus *a, const struct act_cpus *b);

/*
 * What the actuator remembers of a file it wrote, in memory only, for the
 * answer to another writer (reassert.c): the file as its last write left
 * it, who wrote it, and the other writers' changes.
 */
struct act_written {
	char last[ACT_TEXT_MAX]; /* as read back after the last write; "" not written */
	bool noted;		 /* another writer changed it since: not answered yet */
	enum act_kind kind;	 /* the action that last wrote it */
	uint64_t id;
	enum qos_class cls;
	enum rule_id rule;
	struct contest contest;
};

/* The journal: each (cgroup, knob) qoslet changed, with its text before the first change. */
struct journal_entry {
	enum cg_knob knob;
	char rel[POL_PATH_MAX];
	char orig[ACT_TEXT_MAX];
	struct act_written w; /* not saved */
};

struct journal {
	char path[PATH_MAX];
	char boot_id[40];	 /* this boot's; a journal of another boot is stale */
	struct journal_entry *v; /* in the order of first change */
	size_t n, cap;
	uint64_t gen;		       /* changes with every entry added or removed */
	char damage[256];	       /* journal_load(): why the file is not trusted whole; "" */
	char set_aside[PATH_MAX + 32]; /* journal_set_aside(): where it went; "" */
	uint64_t write_errors;	       /* journal_sync() failures */
	bool failing;		       /* the last journal_sync() failed */
};

/*
 * Loads j->path (a missing file is an empty journal). A journal from an
 * earlier boot is ignored (its cgroups are gone) and *stale set. Entries
 * naming a file this host does not have are dropped with a warning.
 * A journal that cannot be trusted whole (unreadable, not JSON, truncated,
 * another version, an entry of the wrong shape) gets its reason in
 * j->damage, and j holds what it provably says: the whole entries of a
 * version 1 journal of this boot, in order, up to the first damage
 * (nothing for another version: its entries may mean something else).
 * Returns 0, or -ENOMEM.
 */
int journal_load(struct journal *j, const struct cgroup_ctrls *c, bool *stale);
/*
 * Moves a damaged j->path aside, for a person, to j->path.bad-<UTC time>
 * (j->set_aside). 0, or -errno with err set (then nothing moved).
 */
int journal_set_aside(struct journal *j, char *err, size_t errlen);
/* Rewrites the file atomically (tmp, fsync, rename, fsync of the directory), or removes it when
 * empty. A failure is counted in write_errors and logged when writes start and stop failing. */
int journal_sync(struct journal *j, const struct cgroup_ctrls *c, const char *subtree);
const struct journal_entry *journal_find(const struct journal *j, enum cg_knob k, const char *rel);
int journal_add(struct journal *j, enum cg_knob k, const char *rel, const char *orig);
void journal_remove_at(struct journal *j, size_t i);
void journal_free(struct journal *j);
/*
 * The owner changed entry i's file: text is its new original (what a
 * restore writes back). The caller syncs the journal.
 */
int journal_set_original(struct journal *j, size_t i, const char *text);

/* The managed subtree's depth the cgroup lock covers, its root included. */
#define TREE_LOCK_MAX 16

struct actuator {
	const struct cgroup_ctrls *c;
	char subtree[POL_PATH_MAX];
	bool dry_run;
	enum evict_action evict;
	void (*on_write)(void *ctx, const char *path, const char *value, int err);
	void *ctx;
	struct journal j;
	size_t reconciled;
	int state_fd;		    /* state_dir, checked to be the agent's alone; -1 in dry-run */
	int lock_fd;		    /* flock on state_dir/lock: one agent per state directory */
	int tree_dir_fd;	    /* the tree lock directory; -1 until tree_lock() */
	int tree_fd[TREE_LOCK_MAX]; /* flock on the subtree and its ancestors (tree_lock.c) */
	size_t tree_fds;
	const struct action *cur; /* the action actuator_apply is writing; NULL otherwise */
	uint64_t watch_gen;	  /* changes when a file starts or stops being watched */
};

/*
 * One acting agent per cgroup tree (tree_lock.c): flock on a lock file per
 * cgroup of the cpu hierarchy, in the root-only `dir`: the managed
 * subtree's (exclusive) and its ancestors' (shared). Dry-run locks nothing.
 * 0, -EBUSY with the holder named in err, or -errno.
 */
int tree_lock(struct actuator *a, const char *dir, char *err, size_t errlen);
void tree_unlock(struct actuator *a);

/* memory.min / memory.low: the knobs whose protection needs every ancestor to carry it. */
static inline bool act_is_protection(enum cg_knob k)
{
	return k == CG_KNOB_MEM_MIN || k == CG_KNOB_MEM_LOW;
}

/*
 * Can the actuator write knob k of cgroup rel: strictly inside the managed
 * subtree, or the subtree's root itself for protection (memory.min/low of a
 * pod counts only as far as every ancestor carries it: docs/memory-qos.md).
 */
bool act_in_subtree(const struct actuator *a, enum cg_knob k, const char *rel);

/*
 * The CPUs rel's parent holds, into buf, and the parent's path into parent:
 * on v2 its cpuset.cpus.effective (what a child's "" inherits), on v1 its
 * cpuset.cpus (what a child must stay within). 0 or -errno.
 */
int act_parent_cpus(const struct actuator *a, const char *rel, char *parent, size_t psize,
		    char *buf, size_t size);

/* Calls opts->on_write, if set. */
void act_notify(struct actuator *a, const char *path, const char *text, int err);

/* CFS quota a < b, -1 being unlimited. */
static inline bool act_quota_lt(int64_t a, int64_t b)
{
	return a != -1 && (b == -1 || a < b);
}

/*
 * Ordered writes. Nested limits (v1 cpuset: a child's CPUs within its
 * parent's; v1 quota: a child's quota at most its parent's; both versions:
 * burst at most quota) are kept valid at every step by doing all the
 * widening first, parents before children, then the knobs without nesting,
 * then all the narrowing, children before parents: a parent is wide before
 * any child widens, and a child is narrow before its parent narrows.
 */
enum step_phase {
	PHASE_WIDEN = 0, /* quota up, CPUs added: parents first */
	PHASE_FLAT,	 /* burst, idle */
	PHASE_NARROW,	 /* quota down, CPUs removed: children first */
};

struct step {
	enum cg_knob knob;
	char rel[POL_PATH_MAX];
	char text[ACT_TEXT_MAX];
	enum step_phase phase;
	size_t seq; /* ties within a phase and depth: lower first */
	size_t tag; /* the caller's (restore: the journal entry) */
};

struct steps {
	struct step *v;
	size_t n, cap;
};

int steps_add(struct steps *s, enum cg_knob k, const char *rel, const char *text,
	      enum step_phase phase, size_t seq, size_t tag);
void steps_sort(struct steps *s);
void steps_free(struct steps *s);

/*
 * Journals the original of (rel, k) unless it already is, syncing the
 * journal first; text (or NULL): the write to come, whose new disks a
 * per-disk knob's original must also undo. 0 or -errno with `why` filled.
 */
int journal_first(struct actuator *a, enum cg_knob k, const char *rel, const char *text, char *why,
		  size_t whylen);

/*
 * One write: in dry-run only on_write; else, when `journal` and this is the
 * first change of (rel, k), its original text is journaled (and the journal
 * synced) first. Refuses (-EPERM) anything outside the managed subtree.
 * Returns 0 or -errno with the reason in why.
 */
int act_write(struct actuator *a, enum cg_knob k, const char *rel, const char *text, bool journal,
	      char *why, size_t whylen);

/*
 * After a write of (rel, k) that landed: the file as it now reads, and the
 * action that wrote it (a->cur), are what an answer to another writer
 * writes back (reassert.c).
 */
void act_written(struct actuator *a, enum cg_knob k, const char *rel, const char *text);

/*
 * Writes back every journaled original, drops the entries restored or whose
 * cgroup vanished, and syncs the journal (dry-run: logs, changes nothing).
 * *restored counts the settings written back. Returns the number of
 * settings that failed, or -errno when the journal cannot be synced.
 */
int act_restore_all(struct actuator *a, size_t *restored);

/* The same for knob k of cgroup rel and its descendants only (a plan.release). */
int act_restore_knob(struct actuator *a, enum cg_knob k, const char *rel, size_t *restored);

/*
 * Protection knob k of the ancestors of rel (up to the subtree's root) set
 * to the sums over their children, rel counted as holding value (0 when it
 * is gone): after a release, or when the unit vanished. 0, or 1 when a
 * write or read failed.
 */
int act_sync_ancestors(struct actuator *a, enum cg_knob k, const char *rel, int64_t value);

#endif
