/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Change notifications for single cgroup files: the ones the actuator
 * wrote, so that another writer's change (systemd re-applying a unit's
 * properties, the kubelet rewriting its cgroups or resizing a pod) reaches
 * the agent at once rather than at the next settings re-read. A write to a
 * cgroup file goes through the VFS write path, which raises inotify
 * IN_MODIFY on it, on cgroup v1 and v2 alike; a write the kernel refuses
 * raises nothing. The actuator's own writes raise it too: the reader tells
 * them apart by the value (actuator_note).
 *
 * One watch per file rather than one per directory: a directory watch would
 * also wake the agent for every other file of the cgroup (cgroup.procs on
 * each task move, memory.* by the kubelet).
 */
#ifndef QOSLET_COLLECT_FILE_WATCH_H
#define QOSLET_COLLECT_FILE_WATCH_H

#include <stdint.h>

#include "cgroup/knob.h"

struct file_watch;

/* NULL: out of memory, or no inotify (said once in the log). */
struct file_watch *file_watch_new(const struct cgroup_ctrls *ctrls);
void file_watch_free(struct file_watch *w);

/* Readable when changes wait for file_watch_drain (poll it). */
int file_watch_fd(const struct file_watch *w);

/*
 * Sets the files watched: file_watch_want for each between begin and end;
 * the ones not named again are dropped. A file that cannot be watched (gone,
 * fs.inotify.max_user_watches) is left out, said once. A file newly watched
 * is read at the next drain whatever the events: a change made before its
 * watch was added raised none.
 */
void file_watch_begin(struct file_watch *w);
void file_watch_want(struct file_watch *w, enum cg_knob knob, const char *rel);
void file_watch_end(struct file_watch *w);

/* Files watched now. */
size_t file_watch_count(const struct file_watch *w);

/*
 * Reads every file changed since the last drain (once, however many writes
 * it had) and hands its text to fn. Returns the number of files read, or
 * -errno.
 */
int file_watch_drain(struct file_watch *w,
		     void (*fn)(void *ctx, enum cg_knob knob, const char *rel, const char *text),
		     void *ctx);

#endif
