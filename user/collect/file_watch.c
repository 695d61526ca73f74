// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "collect/file_watch.h"

#include <errno.h>
#include <limits.h>
#include <search.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "log.h"

struct watched {
	enum cg_knob knob;
	char *rel;
	int wd;	       /* -1: not watched (gone, or no watch left) */
	uint64_t seen; /* the begin/end round that last named it */
	bool dirty;    /* changed since the last drain */
};

struct file_watch {
	const struct cgroup_ctrls *ctrls;
	int ino;
	void *by_file; /* tsearch() of struct watched *, by (knob, rel) */
	void *by_wd;   /* ... by wd, the watched ones */
	struct watched **all;
	size_t n, cap;
	uint64_t round;
	bool warned;
};

static int cmp_file(const void *x, const void *y)
{
	const struct watched *a = x, *b = y;

	return a->knob != b->knob ? (a->knob < b->knob ? -1 : 1) : strcmp(a->rel, b->rel);
}

static int cmp_wd(const void *x, const void *y)
{
	const struct watched *a = x, *b = y;

	return a->wd < b->wd ? -1 : a->wd > b->wd;
}

struct file_watch *file_watch_new(const struct cgroup_ctrls *ctrls)
{
	struct file_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->ctrls = ctrls;
	w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ino < 0) {
		log_warn("collect: no inotify for the files qoslet wrote (%s): another writer's "
			 "change is seen at the next settings re-read only",
			 strerror(errno));
		free(w);
		return NULL;
	}
	return w;
}

static void drop(struct file_watch *w, struct watched *f)
{
	if (f->wd >= 0) {
		tdelete(f, &w->by_wd, cmp_wd);
		inotify_rm_watch(w->ino, f->wd); /* fails harmlessly when the file is gone */
	}
	tdelete(f, &w->by_file, cmp_file);
	free(f->rel);
	free(f);
}

void file_watch_free(struct file_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		drop(w, w->all[i]);
	free(w->all);
	close(w->ino);
	free(w);
}

int file_watch_fd(const struct file_watch *w)
{
	return w->ino;
}

size_t file_watch_count(const struct file_watch *w)
{
	return w->n;
}

void file_watch_begin(struct file_watch *w)
{
	w->round++;
}

static void add_watch(struct file_watch *w, struct watched *f)
{
	char path[PATH_MAX];
	int err = cg_path(w->ctrls, cg_knob_ctrl(f->knob), f->rel, cg_knob_file(w->ctrls, f->knob),
			  path, sizeof(path));

	f->wd = err ? -1 : inotify_add_watch(w->ino, path, IN_MODIFY);
	if (f->wd >= 0) {
		/* A change before the watch raised nothing: the next drain reads the file. */
		f->dirty = true;
		log_debug("collect: watching %s (wd %d)", path, f->wd);
		if (tsearch(f, &w->by_wd, cmp_wd))
			return;
		inotify_rm_watch(w->ino, f->wd);
		f->wd = -1;
	}
	if (err || errno == ENOENT || w->warned)
		return; /* gone: the agent forgets its cgroup */
	w->warned = true;
	log_warn("collect: cannot watch %s (%s): another writer's changes to it are seen at the "
		 "next settings re-read only (raise fs.inotify.max_user_watches)",
		 path, strerror(errno));
}

void file_watch_want(struct file_watch *w, enum cg_knob knob, const char *rel)
{
	struct watched key = {.knob = knob, .rel = (char *)rel}, *f, **found;

	found = tfind(&key, &w->by_file, cmp_file);
	if (found) {
		(*found)->seen = w->round;
		return;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		struct watched **v = realloc(w->all, cap * sizeof(*v));

		if (!v)
			return;
		w->all = v;
		w->cap = cap;
	}
	f = calloc(1, sizeof(*f));
	if (f)
		f->knob = knob; /* before the insert: the tree is ordered by it */
	if (!f || !(f->rel = strdup(rel)) || !tsearch(f, &w->by_file, cmp_file)) {
		if (f)
			free(f->rel);
		free(f);
		return;
	}
	f->seen = w->round;
	add_watch(w, f);
	w->all[w->n++] = f;
}

void file_watch_end(struct file_watch *w)
{
	size_t k = 0;

	for (size_t i = 0; i < w->n; i++) {
		if (w->all[i]->seen == w->round) {
			w->all[k++] = w->all[i];
			continue;
		}
		log_debug("collect: no longer watching %s/%s (wd %d)", w->all[i]->rel,
			  cg_knob_file(w->ctrls, w->all[i]->knob), w->all[i]->wd);
		drop(w, w->all[i]);
	}
	w->n = k;
}

/* One event; the files it names are marked dirty, and true returned for an overflow. */
static bool apply(struct file_watch *w, const struct inotify_event *e)
{
	struct watched key = {.wd = e->wd}, **found;

	if (e->mask & IN_Q_OVERFLOW)
		return true;
	found = tfind(&key, &w->by_wd, cmp_wd);
	if (!found)
		return false;
	if (e->mask & IN_IGNORED) { /* the file went with its cgroup */
		struct watched *f = *found;

		log_debug("collect: %s/%s is gone (wd %d)", f->rel, cg_knob_file(w->ctrls, f->knob),
			  f->wd);
		tdelete(f, &w->by_wd, cmp_wd);
		f->wd = -1;
		return false;
	}
	(*found)->dirty = true;
	return false;
}

int file_watch_drain(struct file_watch *w,
		     void (*fn)(void *ctx, enum cg_knob knob, const char *rel, const char *text),
		     void *ctx)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool overflow = false;
	int n_read = 0;

	for (;;) {
		ssize_t n = read(w->ino, buf, sizeof(buf));

		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			return -errno;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;

			overflow |= apply(w, e);
			p += sizeof(*e) + e->len;
		}
	}
	/* The kernel dropped events: any file may have changed. */
	for (size_t i = 0; i < w->n; i++) {
		struct watched *f = w->all[i];
		char text[256];

		if (!f->dirty && !(overflow && f->wd >= 0))
			continue;
		f->dirty = false;
		if (cg_read_knob(w->ctrls, f->knob, f->rel, text, sizeof(text)))
			continue; /* gone, or unreadable: the next tick's read says so */
		fn(ctx, f->knob, f->rel, text);
		n_read++;
	}
	return n_read;
}
