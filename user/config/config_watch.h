/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Noticing that the config file changed, so that the agent reloads it as
 * SIGHUP does (a FROM-scratch image has no shell to send one). inotify on
 * the directory that holds the path, not on the file: editors replace files
 * by renaming, and a Kubernetes ConfigMap volume swaps its "..data" symlink
 * to a new "..YYYY_MM_DD_..." directory, so the file's inode changes while
 * its path stays. The directory the path resolves to is watched too (a
 * symlink to a file edited in place elsewhere), and followed when it moves.
 * Events only wake the check: a change is a change of the file's bytes or
 * mode, so the ConfigMap's several renames make one reload, and unrelated
 * files in the directory none.
 */
#ifndef QOSLET_CONFIG_CONFIG_WATCH_H
#define QOSLET_CONFIG_CONFIG_WATCH_H

#include <stdbool.h>
#include <stddef.h>

struct config_watch;

/*
 * Starts watching path (as the agent was given it), taking its current
 * content as seen. Returns 0, or -errno with err saying why (inotify's
 * limits, a directory that cannot be watched).
 */
int config_watch_open(struct config_watch **out, const char *path, char *err, size_t errlen);

/* The fd to poll for input. */
int config_watch_fd(const struct config_watch *w);

/*
 * Reads the pending events; true when the file's bytes or mode differ from
 * what was last seen (a file that became unreadable counts as a change),
 * which becomes the new "seen".
 */
bool config_watch_changed(struct config_watch *w);

/* NULL is fine. */
void config_watch_close(struct config_watch *w);

#endif
