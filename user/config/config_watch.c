// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "config/config_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * What makes a directory's entry change under the path: a file written and
 * closed, renamed in or out, created, deleted, or its mode changed (a config
 * others may write is refused, so a chmod matters). IN_MODIFY is left out: a
 * file half written is not worth a reload that would refuse it.
 */
#define WATCH_MASK                                                                                 \
	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB |        \
	 IN_ONLYDIR)

struct config_watch {
	int fd;
	char path[PATH_MAX];
	int dir_wd;		   /* the directory holding path */
	int target_wd;		   /* the directory path resolves to, when another; else -1 */
	char target_dir[PATH_MAX]; /* "" when none */
	uint64_t seen;		   /* fingerprint() of the last content seen */
};

/* FNV-1a of the file's mode and bytes; 0 when it cannot be read. */
static uint64_t fingerprint(const char *path)
{
	uint64_t h = 1469598103934665603ull;
	unsigned char buf[4096];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	for (size_t i = 0; i < sizeof(st.st_mode); i++)
		h = (h ^ ((const unsigned char *)&st.st_mode)[i]) * 1099511628211ull;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ull;
	close(fd);
	return n < 0 ? 0 : h | 1; /* never 0: that is "unreadable" */
}

/* The directory part of path into dir ("." for a bare name). */
static void dir_of(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(dir, size, ".");
	else if (slash == path)
		snprintf(dir, size, "/");
	else
		snprintf(dir, size, "%.*s", (int)(slash - path), path);
}

/*
 * Watches the directory the path resolves to now, when it is not the one
 * holding the path (a ConfigMap's "..2026_..." directory, or a symlink's
 * target elsewhere). The old target's watch goes; a removed directory's
 * watch is gone already (the kernel drops it).
 */
static void follow_target(struct config_watch *w)
{
	char real[PATH_MAX], dir[PATH_MAX], own[PATH_MAX], own_real[PATH_MAX];

	if (!realpath(w->path, real))
		return; /* the path dangles in the middle of a swap: the next event retries */
	dir_of(real, dir, sizeof(dir));
	dir_of(w->path, own, sizeof(own));
	if (realpath(own, own_real) && !strcmp(dir, own_real))
		dir[0] = '\0';
	if (!strcmp(dir, w->target_dir))
		return;
	if (w->target_wd >= 0)
		inotify_rm_watch(w->fd, w->target_wd);
	w->target_wd = dir[0] ? inotify_add_watch(w->fd, dir, WATCH_MASK) : -1;
	snprintf(w->target_dir, sizeof(w->target_dir), "%s", w->target_wd >= 0 ? dir : "");
}

int config_watch_open(struct config_watch **out, const char *path, char *err, size_t errlen)
{
	struct config_watch *w = calloc(1, sizeof(*w));
	char dir[PATH_MAX];
	int rc;

	*out = NULL;
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	w->target_wd = -1;
	snprintf(w->path, sizeof(w->path), "%s", path);
	dir_of(path, dir, sizeof(dir));
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0 || (w->dir_wd = inotify_add_watch(w->fd, dir, WATCH_MASK)) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot watch %s: %s%s", dir, strerror(-rc),
			 rc == -ENOSPC || rc == -EMFILE
				 ? " (fs.inotify.max_user_watches or max_user_instances)"
				 : "");
		if (w->fd >= 0)
			close(w->fd);
		free(w);
		return rc;
	}
	follow_target(w);
	w->seen = fingerprint(path);
	*out = w;
	return 0;
}

int config_watch_fd(const struct config_watch *w)
{
	return w->fd;
}

bool config_watch_changed(struct config_watch *w)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	uint64_t now;

	/* The events' names do not matter: the content decides. */
	while (read(w->fd, buf, sizeof(buf)) > 0)
		;
	follow_target(w);
	now = fingerprint(w->path);
	if (now == w->seen)
		return false;
	w->seen = now;
	return true;
}

void config_watch_close(struct config_watch *w)
{
	if (!w)
		return;
	close(w->fd);
	free(w);
}
