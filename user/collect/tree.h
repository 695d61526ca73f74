/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The cgroups of the managed subtree, kept up to date from the kernel's
 * own notifications instead of a walk per tick: every directory of the
 * subtree carries an inotify watch, and a mkdir or rmdir below it (the
 * kubelet's, runc's, systemd's) reaches us as an event naming the child.
 * cgroupfs (kernfs) sends these for v1 and v2 alike.
 *
 * A full walk happens only at the first sync, after the kernel dropped
 * events (queue overflow), and as a slow safety net (CG_TREE_REWALK_NS).
 * inotify rather than a BPF program on cgroup_mkdir: each process gets its
 * own events, while a BPF ring buffer would be shared through the pinned
 * maps by every qoslet process on the node and each would steal the others'
 * events; and a fake tree on tmpfs works the same in unit tests.
 */
#ifndef QOSLET_COLLECT_TREE_H
#define QOSLET_COLLECT_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "cgroup/path.h"

/*
 * The safety net: a full walk this often even when no event was lost. Lost
 * events are reported (overflow, a watch that could not be added) and walk
 * at once; this only bounds what a silent loss could cost. A walk of a
 * 500-pod tree is about 2% of the agent's CPU when done every minute.
 */
#define CG_TREE_REWALK_NS (300 * 1000000000ull)

struct cg_tree;

/* One directory of the tree, as cg_tree_foreach hands it out. */
struct cg_tree_dir {
	uint64_t id;	 /* the cgroup id (inode of the directory) */
	const char *rel; /* relative to the hierarchy's root, no leading '/' */
	int depth;	 /* 0 for the subtree's root */
};

struct cg_tree_stats {
	uint64_t walks;	    /* full walks */
	uint64_t events;    /* mkdir/rmdir events applied */
	uint64_t overflows; /* times the kernel dropped events */
	uint64_t dirs;	    /* directories now in the tree */
};

/* fs: the hierarchy that names cgroups; subtree relative to its root. NULL: out of memory. */
struct cg_tree *cg_tree_new(const struct cgroup_fs *fs, const char *subtree);
void cg_tree_free(struct cg_tree *t);

/*
 * Applies the events that arrived since the last call (a walk instead,
 * when one is due). Returns 1 when the tree changed, 0 when it did not,
 * -ENOENT when the subtree's root is gone, or -errno.
 */
int cg_tree_sync(struct cg_tree *t, uint64_t mono_ns);

/* Readable when events wait for cg_tree_sync (poll it); -1 without inotify. */
int cg_tree_fd(const struct cg_tree *t);

/* Pre-order (a parent before its children); stops at fn's first non-zero value and returns it. */
int cg_tree_foreach(const struct cg_tree *t, int (*fn)(void *ctx, const struct cg_tree_dir *d),
		    void *ctx);

/* Changes whenever the tree does: consumers rebuild what they derive from it. */
uint64_t cg_tree_generation(const struct cg_tree *t);

struct cg_tree_stats cg_tree_stats(const struct cg_tree *t);

#endif
