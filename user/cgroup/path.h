/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which cgroup hierarchy names a task, and cgroup id <-> path. Everything
 * that differs between cgroup v1 and v2 is decided here.
 */
#ifndef QOSLET_CGROUP_H
#define QOSLET_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/sched_maps.h"

struct cgroup_fs {
	enum qoslet_cgroup_mode mode;
	int hierarchy_id;	/* as in /proc/PID/cgroup: 0 for v2 */
	char root[PATH_MAX];	/* mount point of that hierarchy */
	char v2_root[PATH_MAX]; /* the cgroup2 mount ("" if none): PSI files live there */
};

/*
 * Picks the hierarchy from a mountinfo file: the v2 mount when it offers the
 * cpu controller, else the v1 mount holding cpu, else the v2 mount alone.
 * Returns 0, or -ENOENT when no usable cgroup mount exists.
 */
int cgroup_fs_detect(struct cgroup_fs *fs, const char *mountinfo_path);

/*
 * Calls fn for every cgroup (v1) and cgroup2 mount of a mountinfo file, in
 * file order, with its mount point and super options ("rw,cpu,cpuacct").
 * Stops at the first non-zero value of fn and returns it; -errno when the
 * file cannot be read.
 */
int cgroup_mounts_foreach(const char *mountinfo_path,
			  int (*fn)(void *ctx, const char *mnt, bool v2, const char *superopts),
			  void *ctx);

/* Does a comma-separated option list hold exactly `opt`? */
bool cgroup_has_option(const char *list, const char *opt);

/* Does the cgroup2 mount at mnt list `ctrl` in its cgroup.controllers? */
bool cgroup_v2_has_controller(const char *mnt, const char *ctrl);

/*
 * Sets fs->hierarchy_id from a /proc/PID/cgroup file ("ID:CONTROLLERS:PATH"
 * lines): 0 for v2, else the line whose controllers include "cpu".
 * Returns 0, or -ENOENT when the file has no such line.
 */
int cgroup_fs_read_hierarchy_id(struct cgroup_fs *fs, const char *proc_cgroup_path);

/*
 * Turns a user's cgroup argument into a path relative to fs->root ("" is
 * the root): an argument under fs->root is taken as absolute, anything else
 * as relative to the root (a leading '/' allowed, as in /proc/PID/cgroup).
 * Repeated and trailing slashes and "." vanish. Returns 0, or -EINVAL for
 * an empty argument or one with "..", or -ENAMETOOLONG.
 */
int cgroup_path_normalize(const char *root, const char *arg, char *rel, size_t size);

/* Id of the cgroup at `rel`; -ENOENT / -ENOTDIR when it is not one. */
int cgroup_id_of(const struct cgroup_fs *fs, const char *rel, uint64_t *id);

/*
 * True when `rel` is relative and normalized: components joined by single
 * '/', none empty, "." or ".." (what cgroup_path_normalize() makes).
 */
bool cgroup_path_is_normal(const char *rel);

/*
 * True when `rel` is `parent` or below it, component by component (parent
 * normalized). A `rel` that is not normalized is never within: a path from
 * a file ("kubepods/../../x") must not pass as a text prefix.
 */
int cgroup_path_within(const char *rel, const char *parent);

/*
 * Maps ids to paths by walking the hierarchy. Cgroups come and go: the walk
 * skips directories that vanish under it. Nothing is walked until the first
 * lookup; a lookup of an unknown id rewalks at most once a second of the
 * caller's clock (now_ns), so churn cannot make every lookup a walk.
 */
struct cgroup_names;

struct cgroup_names *cgroup_names_new(const struct cgroup_fs *fs);
void cgroup_names_free(struct cgroup_names *names);

/*
 * Path relative to the root ("" for the root), or NULL if no such cgroup.
 * now_ns is CLOCK_MONOTONIC for every user of one instance (it is shared).
 */
const char *cgroup_names_lookup(struct cgroup_names *names, uint64_t id, uint64_t now_ns);

/*
 * True when the cgroup was removed: a lookup of `id` found it missing from
 * a walk that must have seen it (it is older than the newest cgroup that
 * walk found), or a walk saw it and the next complete walk did not. Such
 * ids never trigger another walk.
 */
bool cgroup_names_is_gone(struct cgroup_names *names, uint64_t id);

/*
 * Calls fn for every cgroup of the last walk (root included), in id order,
 * with its id and its path relative to the root; stops early and returns
 * fn's value when it is non-zero. Walks first if nothing was walked yet.
 */
int cgroup_names_foreach(struct cgroup_names *names,
			 int (*fn)(void *ctx, uint64_t id, const char *rel), void *ctx);

/*
 * Counts the walks so far: a user that derives data from the tree (e.g. the
 * cgroups with a CPU quota) redoes it when this changes.
 */
uint64_t cgroup_names_generation(const struct cgroup_names *names);

/* Forces a rewalk; returns the number of cgroups found (root included) or -errno. */
int cgroup_names_rewalk(struct cgroup_names *names);

/*
 * cgroup_names_rewalk(), for ids known to have existed before the call (read
 * from a map, say): when the walk is complete, each of them that it did not
 * find was removed (cgroup_names_is_gone), however new.
 */
int cgroup_names_rewalk_after(struct cgroup_names *names, const uint64_t *ids, size_t n);

#endif
