// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "collect/tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "str.h"

#define WATCH_MASK                                                                                 \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW)

struct node {
	uint64_t id;
	int wd;	       /* -1: not watched */
	uint64_t seen; /* the walk that last found it */
	struct node *parent, *child, *next;
	char *rel;
	const char *name; /* the last component, inside rel */
};

struct cg_tree {
	char root[PATH_MAX];
	char subtree[PATH_MAX];
	int ino;
	struct node *top;
	void *by_wd; /* tsearch() tree of struct node *, keyed by wd */
	uint64_t gen, walk_seq, last_walk_ns;
	bool walked, lost, unwatched, warned;
	struct cg_tree_stats st;
};

static int cmp_wd(const void *a, const void *b)
{
	const struct node *x = a, *y = b;

	return x->wd < y->wd ? -1 : x->wd > y->wd;
}

struct cg_tree *cg_tree_new(const struct cgroup_fs *fs, const char *subtree)
{
	struct cg_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (str_copy(t->root, sizeof(t->root), fs->root) ||
	    str_copy(t->subtree, sizeof(t->subtree), subtree)) {
		free(t);
		return NULL;
	}
	/* No inotify at all (fs.inotify.max_user_instances): walks every sync, said once. */
	t->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (t->ino < 0)
		log_warn("collect: no inotify (%s): the cgroup tree is walked at every tick",
			 strerror(errno));
	return t;
}

static void unwatch(struct cg_tree *t, struct node *n)
{
	if (n->wd < 0)
		return;
	tdelete(n, &t->by_wd, cmp_wd);
	inotify_rm_watch(t->ino, n->wd); /* fails harmlessly when the directory is gone */
	n->wd = -1;
}

static void free_node(struct cg_tree *t, struct node *n)
{
	while (n->child) {
		struct node *c = n->child;

		n->child = c->next;
		free_node(t, c);
	}
	unwatch(t, n);
	free(n->rel);
	free(n);
	t->st.dirs--;
	t->gen++;
}

/* Unlinks n from its parent's children and frees its subtree. */
static void remove_node(struct cg_tree *t, struct node *n)
{
	struct node **p = &n->parent->child;

	while (*p != n)
		p = &(*p)->next;
	*p = n->next;
	free_node(t, n);
}

void cg_tree_free(struct cg_tree *t)
{
	if (!t)
		return;
	if (t->top)
		free_node(t, t->top);
	if (t->ino >= 0)
		close(t->ino);
	free(t);
}

static int full_path(const struct cg_tree *t, const char *rel, char *out, size_t size)
{
	int n = snprintf(out, size, "%s%s%s", t->root, *rel ? "/" : "", rel);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The id of the directory at rel; -ENOENT when it is gone or not a directory. */
static int stat_id(const struct cg_tree *t, const char *rel, uint64_t *id)
{
	char path[PATH_MAX];
	struct stat st;

	if (full_path(t, rel, path, sizeof(path)) || stat(path, &st) || !S_ISDIR(st.st_mode))
		return -ENOENT;
	*id = st.st_ino;
	return 0;
}

static void watch(struct cg_tree *t, struct node *n)
{
	char path[PATH_MAX];

	if (t->ino < 0 || full_path(t, n->rel, path, sizeof(path))) {
		t->unwatched = true;
		return;
	}
	n->wd = inotify_add_watch(t->ino, path, WATCH_MASK);
	if (n->wd >= 0) {
		if (!tsearch(n, &t->by_wd, cmp_wd)) {
			inotify_rm_watch(t->ino, n->wd);
			n->wd = -1;
			t->unwatched = true;
		}
		return;
	}
	if (errno == ENOENT)
		return; /* removed already: its parent's event follows */
	t->unwatched = true;
	if (!t->warned)
		log_warn("collect: cannot watch %s (%s): cgroups are found by walking the tree at "
			 "every tick until it works (raise fs.inotify.max_user_watches)",
			 path, strerror(errno));
	t->warned = true;
}

/* A node for the directory `name` below parent (or the top when parent is NULL); NULL when gone. */
static struct node *add_node(struct cg_tree *t, struct node *parent, const char *name, uint64_t id)
{
	struct node *n = calloc(1, sizeof(*n));
	size_t len = parent ? strlen(parent->rel) + 1 + strlen(name) : strlen(name);

	if (!n || !(n->rel = malloc(len + 1))) {
		free(n);
		return NULL;
	}
	if (parent && parent->rel[0])
		sprintf(n->rel, "%s/%s", parent->rel, name);
	else
		strcpy(n->rel, name);
	n->name = parent && parent->rel[0] ? n->rel + strlen(parent->rel) + 1 : n->rel;
	n->id = id;
	n->wd = -1;
	n->parent = parent;
	if (parent) {
		n->next = parent->child;
		parent->child = n;
	}
	t->st.dirs++;
	t->gen++;
	watch(t, n);
	return n;
}

static struct node *find_child(const struct node *parent, const char *name)
{
	for (struct node *c = parent->child; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/*
 * Brings n's subtree up to date with the directories on disk: new ones are
 * added (watched before they are read, so a child made meanwhile is either
 * read or reported), gone or replaced ones removed. The watch comes first,
 * the listing second: nothing made in between is missed.
 */
static int scan(struct cg_tree *t, struct node *n)
{
	char path[PATH_MAX], rel[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int err = 0;

	n->seen = t->walk_seq;
	if (full_path(t, n->rel, path, sizeof(path)) || !(d = opendir(path)))
		return 0; /* vanished under the walk: its parent's event removes it */
	while (!err && (de = readdir(d))) {
		struct node *c;
		uint64_t id;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(rel, sizeof(rel), "%s%s%s", n->rel, n->rel[0] ? "/" : "",
			     de->d_name) >= (int)sizeof(rel) ||
		    stat_id(t, rel, &id))
			continue;
		c = find_child(n, de->d_name);
		if (c && c->id != id) { /* removed and made again under the same name */
			remove_node(t, c);
			c = NULL;
		}
		if (!c && !(c = add_node(t, n, de->d_name, id)))
			err = -ENOMEM;
		if (!err)
			err = scan(t, c);
	}
	closedir(d);
	/* What the listing did not show is gone. */
	for (struct node *c = n->child, *next; !err && c; c = next) {
		next = c->next;
		if (c->seen != t->walk_seq)
			remove_node(t, c);
	}
	return err;
}

static int walk(struct cg_tree *t, uint64_t mono_ns)
{
	uint64_t id;

	t->walk_seq++;
	t->st.walks++;
	t->last_walk_ns = mono_ns;
	t->walked = true;
	t->lost = t->unwatched = false;
	if (stat_id(t, t->subtree, &id)) {
		if (t->top)
			free_node(t, t->top);
		t->top = NULL;
		return -ENOENT;
	}
	if (t->top && t->top->id != id) {
		free_node(t, t->top);
		t->top = NULL;
	}
	if (!t->top && !(t->top = add_node(t, NULL, t->subtree, id)))
		return -ENOMEM;
	return scan(t, t->top);
}

/* One event of a watched directory. */
static int apply(struct cg_tree *t, const struct inotify_event *e)
{
	struct node key = {.wd = e->wd}, **found, *dir, *c;
	char rel[PATH_MAX];
	uint64_t id;

	if (e->mask & IN_Q_OVERFLOW) {
		t->lost = true;
		t->st.overflows++;
		return 0;
	}
	found = tfind(&key, &t->by_wd, cmp_wd);
	if (!found)
		return 0; /* a watch already dropped */
	dir = *found;
	if (e->mask & IN_IGNORED) { /* the directory itself went: its parent's event frees it */
		tdelete(dir, &t->by_wd, cmp_wd);
		dir->wd = -1;
		if (dir == t->top)
			t->lost = true; /* the walk says whether the subtree is gone */
		return 0;
	}
	if (!(e->mask & IN_ISDIR) || !e->len)
		return 0;
	t->st.events++;
	c = find_child(dir, e->name);
	if (e->mask & (IN_DELETE | IN_MOVED_FROM)) {
		if (c)
			remove_node(t, c);
		return 0;
	}
	if (snprintf(rel, sizeof(rel), "%s%s%s", dir->rel, dir->rel[0] ? "/" : "", e->name) >=
		    (int)sizeof(rel) ||
	    stat_id(t, rel, &id))
		return 0; /* gone again already: its delete event follows */
	if (c && c->id == id)
		return 0; /* a scan found it first */
	if (c)
		remove_node(t, c);
	c = add_node(t, dir, e->name, id);
	if (!c)
		return -ENOMEM;
	t->walk_seq++;
	return scan(t, c);
}

static int drain(struct cg_tree *t)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (;;) {
		ssize_t n = read(t->ino, buf, sizeof(buf));

		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			int err = apply(t, e);

			if (err)
				return err;
			p += sizeof(*e) + e->len;
		}
	}
}

int cg_tree_sync(struct cg_tree *t, uint64_t mono_ns)
{
	uint64_t gen = t->gen;
	int err = t->ino >= 0 && t->walked ? drain(t) : 0;

	if (!err && (!t->walked || t->lost || t->unwatched || t->ino < 0 ||
		     mono_ns - t->last_walk_ns >= CG_TREE_REWALK_NS))
		err = walk(t, mono_ns);
	if (err)
		return err;
	return t->gen != gen;
}

int cg_tree_fd(const struct cg_tree *t)
{
	return t->ino;
}

static int visit(const struct node *n, int depth, int (*fn)(void *, const struct cg_tree_dir *),
		 void *ctx)
{
	struct cg_tree_dir d = {n->id, n->rel, depth};
	int err = fn(ctx, &d);

	for (const struct node *c = n->child; !err && c; c = c->next)
		err = visit(c, depth + 1, fn, ctx);
	return err;
}

int cg_tree_foreach(const struct cg_tree *t, int (*fn)(void *ctx, const struct cg_tree_dir *d),
		    void *ctx)
{
	return t->top ? visit(t->top, 0, fn, ctx) : 0;
}

uint64_t cg_tree_generation(const struct cg_tree *t)
{
	return t->gen;
}

struct cg_tree_stats cg_tree_stats(const struct cg_tree *t)
{
	return t->st;
}
