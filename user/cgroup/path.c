// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cgroup/path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

bool cgroup_has_option(const char *list, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *p = list; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, opt, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
	}
	return false;
}

bool cgroup_v2_has_controller(const char *mnt, const char *ctrl)
{
	char path[PATH_MAX], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", mnt);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f))
		for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n"))
			found |= !strcmp(tok, ctrl);
	fclose(f);
	return found;
}

/*
 * mountinfo: "id parent maj:min root mountpoint opts [tags] - fstype src superopts".
 * Mount points escape blanks as \040; cgroup mounts have none in practice.
 */
int cgroup_mounts_foreach(const char *mountinfo_path,
			  int (*fn)(void *ctx, const char *mnt, bool v2, const char *superopts),
			  void *ctx)
{
	char line[4096];
	FILE *f = fopen(mountinfo_path, "r");
	int ret = 0;

	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], type[64], superopts[1024];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %*s %1023s", type, superopts) != 2)
			continue;
		if (!strcmp(type, "cgroup2"))
			ret = fn(ctx, mnt, true, superopts);
		else if (!strcmp(type, "cgroup"))
			ret = fn(ctx, mnt, false, superopts);
	}
	fclose(f);
	return ret;
}

struct fs_mounts {
	char v2[PATH_MAX], v1cpu[PATH_MAX];
};

static int fs_mount(void *ctx, const char *mnt, bool v2, const char *superopts)
{
	struct fs_mounts *m = ctx;

	if (v2 && !m->v2[0])
		snprintf(m->v2, sizeof(m->v2), "%s", mnt);
	else if (!v2 && !m->v1cpu[0] && cgroup_has_option(superopts, "cpu"))
		snprintf(m->v1cpu, sizeof(m->v1cpu), "%s", mnt);
	return 0;
}

int cgroup_fs_detect(struct cgroup_fs *fs, const char *mountinfo_path)
{
	struct fs_mounts m = {"", ""};
	int err = cgroup_mounts_foreach(mountinfo_path, fs_mount, &m);

	if (err)
		return err;
	snprintf(fs->v2_root, sizeof(fs->v2_root), "%s", m.v2);
	if (m.v2[0] && (cgroup_v2_has_controller(m.v2, "cpu") || !m.v1cpu[0])) {
		fs->mode = QOSLET_CGROUP_V2;
		snprintf(fs->root, sizeof(fs->root), "%s", m.v2);
	} else if (m.v1cpu[0]) {
		fs->mode = QOSLET_CGROUP_V1_CPU;
		snprintf(fs->root, sizeof(fs->root), "%s", m.v1cpu);
	} else {
		return -ENOENT;
	}
	return 0;
}

int cgroup_fs_read_hierarchy_id(struct cgroup_fs *fs, const char *proc_cgroup_path)
{
	char line[4096];
	FILE *f;
	int ret = -ENOENT;

	if (fs->mode == QOSLET_CGROUP_V2) {
		fs->hierarchy_id = 0;
		return 0;
	}
	f = fopen(proc_cgroup_path, "r");
	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		char ctrls[1024];
		int id;

		if (sscanf(line, "%d:%1023[^:]:", &id, ctrls) == 2 &&
		    cgroup_has_option(ctrls, "cpu")) {
			fs->hierarchy_id = id;
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

int cgroup_path_normalize(const char *root, const char *arg, char *rel, size_t size)
{
	size_t rootlen = strlen(root), n = 0;
	const char *p = arg;

	if (!*arg)
		return -EINVAL;
	while (rootlen && root[rootlen - 1] == '/')
		rootlen--;
	if (!strncmp(arg, root, rootlen) && (arg[rootlen] == '/' || arg[rootlen] == '\0'))
		p = arg + rootlen;

	if (!size)
		return -ENAMETOOLONG;
	rel[0] = '\0';
	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (!len || (len == 1 && p[0] == '.')) {
			p += len;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return -EINVAL;
		if (n + !!n + len + 1 > size)
			return -ENAMETOOLONG;
		if (n)
			rel[n++] = '/';
		memcpy(rel + n, p, len);
		n += len;
		rel[n] = '\0';
		p += len;
	}
	return 0;
}

bool cgroup_path_is_normal(const char *rel)
{
	for (const char *p = rel; *p;) {
		size_t len = strcspn(p, "/");

		if (!len || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += len;
		if (*p == '/' && !*++p)
			return false; /* a trailing '/' */
	}
	return true;
}

int cgroup_path_within(const char *rel, const char *parent)
{
	size_t n = strlen(parent);

	if (!cgroup_path_is_normal(rel))
		return 0;
	if (!n)
		return 1;
	return !strncmp(rel, parent, n) && (rel[n] == '\0' || rel[n] == '/');
}

int cgroup_id_of(const struct cgroup_fs *fs, const char *rel, uint64_t *id)
{
	char path[PATH_MAX * 2];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", fs->root, rel);
	if (stat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*id = st.st_ino;
	return 0;
}

struct name_entry {
	uint64_t id;
	char *path;
};

struct cgroup_names {
	char root[PATH_MAX];
	void *tree; /* tsearch() tree of struct name_entry, keyed by id */
	size_t count;
	uint64_t last_walk_ns;
	uint64_t generation;
	uint64_t max_id;   /* the highest id the last walk saw */
	uint64_t safe_max; /* the highest id the walk before it saw */
	void *gone;	   /* tsearch() tree of ids confirmed removed (uint64_t *) */
	size_t n_gone;
	bool walked;
	bool partial; /* the last walk skipped a directory for another reason than its removal */
};

/* Bounds the memory of the gone set on nodes with endless cgroup churn. */
#define GONE_MAX 65536

/* A miss triggers a rewalk at most this often, so churn cannot spin us. */
#define REWALK_MIN_NS 1000000000ULL

static int cmp_entry(const void *a, const void *b)
{
	uint64_t x = ((const struct name_entry *)a)->id, y = ((const struct name_entry *)b)->id;

	return x < y ? -1 : x > y;
}

static void free_entry(void *e)
{
	free(((struct name_entry *)e)->path);
	free(e);
}

struct cgroup_names *cgroup_names_new(const struct cgroup_fs *fs)
{
	struct cgroup_names *names = calloc(1, sizeof(*names));

	if (names)
		snprintf(names->root, sizeof(names->root), "%s", fs->root);
	return names;
}

void cgroup_names_free(struct cgroup_names *names)
{
	if (!names)
		return;
	tdestroy(names->tree, free_entry);
	tdestroy(names->gone, free);
	free(names);
}

static int add_name(struct cgroup_names *names, uint64_t id, const char *rel)
{
	struct name_entry *e = malloc(sizeof(*e)), **found;

	if (!e || !(e->path = strdup(rel))) {
		free(e);
		return -ENOMEM;
	}
	e->id = id;
	found = tsearch(e, &names->tree, cmp_entry);
	if (!found) {
		free_entry(e);
		return -ENOMEM;
	}
	if (*found != e) /* already known: keep the existing entry */
		free_entry(e);
	else
		names->count++;
	return 0;
}

/*
 * Depth-first over directories only. A directory that vanishes between
 * readdir and open is skipped: cgroups are removed while we walk.
 */
static int walk(struct cgroup_names *names, int fd, const char *rel, uint64_t id)
{
	DIR *dir;
	struct dirent *de;
	int err = add_name(names, id, rel);

	if (err)
		return err;
	if (id > names->max_id)
		names->max_id = id;
	dir = fdopendir(fd);
	if (!dir) {
		names->partial = true;
		close(fd);
		return 0;
	}
	while ((de = readdir(dir))) {
		char child[PATH_MAX];
		struct stat st;
		int child_fd;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(child, sizeof(child), "%s%s%s", rel, *rel ? "/" : "", de->d_name) >=
		    (int)sizeof(child))
			continue;
		child_fd = openat(dirfd(dir), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (child_fd < 0) {
			names->partial |= errno != ENOENT;
			continue;
		}
		if (fstat(child_fd, &st)) {
			names->partial = true;
			close(child_fd);
			continue;
		}
		err = walk(names, child_fd, child, st.st_ino);
		if (err)
			break;
	}
	closedir(dir);
	return err;
}

static void add_gone(struct cgroup_names *names, uint64_t id);

/* twalk() takes no context pointer: the diff of two walks keeps it here. */
static __thread struct cgroup_names *diff_names;

/* For each cgroup of the walk before: missing from this one, it was removed. */
static void diff_visit(const void *node, VISIT which, int depth)
{
	const struct name_entry *e = *(struct name_entry *const *)node;

	(void)depth;
	if ((which == postorder || which == leaf) && !tfind(e, &diff_names->tree, cmp_entry))
		add_gone(diff_names, e->id);
}

int cgroup_names_rewalk(struct cgroup_names *names)
{
	void *before = names->tree;
	struct stat st;
	int fd, err;

	names->tree = NULL;
	names->partial = false;
	names->count = 0;
	names->walked = true;
	names->generation++;
	names->safe_max = names->max_id;
	names->max_id = 0;
	fd = open(names->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	err = walk(names, fd, "", st.st_ino);
	/*
	 * Ids are never reused: one that the walk before saw and this complete
	 * walk did not is a removed cgroup, even the newest, which the id test
	 * of mark_gone cannot prove until a newer cgroup appears. A walk that
	 * could not open a directory (out of descriptors, say) proves nothing.
	 */
	if (!err && !names->partial) {
		diff_names = names;
		twalk(before, diff_visit);
		diff_names = NULL;
	}
	tdestroy(before, free_entry);
	return err ? err : (int)names->count;
}

int cgroup_names_rewalk_after(struct cgroup_names *names, const uint64_t *ids, size_t n)
{
	int ret = cgroup_names_rewalk(names);

	for (size_t i = 0; ret >= 0 && !names->partial && i < n; i++) {
		struct name_entry key = {.id = ids[i]};

		if (!tfind(&key, &names->tree, cmp_entry))
			add_gone(names, ids[i]);
	}
	return ret;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

bool cgroup_names_is_gone(struct cgroup_names *names, uint64_t id)
{
	return tfind(&id, &names->gone, cmp_id) != NULL;
}

/*
 * Remembers an id the last walk did not find, if that proves the cgroup
 * gone. The kernel hands out cgroup ids in increasing order (kernfs
 * allocates them cyclically, with a generation in the high bits on 64-bit,
 * and never reuses one), so an id below the highest one that the walk
 * before the last saw belongs to a cgroup created before the last walk
 * started: that walk would have found it. A higher id may be a cgroup
 * created since, and must not be declared gone.
 */
static void mark_gone(struct cgroup_names *names, uint64_t id)
{
	if (id < names->safe_max)
		add_gone(names, id);
}

static void add_gone(struct cgroup_names *names, uint64_t id)
{
	uint64_t *key;

	if (names->n_gone >= GONE_MAX) {
		tdestroy(names->gone, free);
		names->gone = NULL;
		names->n_gone = 0;
	}
	key = malloc(sizeof(*key));
	if (!key)
		return;
	*key = id;
	if (*(uint64_t **)tsearch(key, &names->gone, cmp_id) != key)
		free(key);
	else
		names->n_gone++;
}

const char *cgroup_names_lookup(struct cgroup_names *names, uint64_t id, uint64_t now_ns)
{
	struct name_entry key = {.id = id}, **found;

	found = tfind(&key, &names->tree, cmp_entry);
	if (found)
		return (*found)->path;
	if (cgroup_names_is_gone(names, id))
		return NULL;
	if (names->walked && id < names->safe_max) {
		mark_gone(names, id); /* no walk needed to know */
		return NULL;
	}
	if (names->walked && now_ns - names->last_walk_ns < REWALK_MIN_NS)
		return NULL;
	names->last_walk_ns = now_ns;
	log_debug("cgroup id %llu is not known: walking %s again", (unsigned long long)id,
		  names->root);
	if (cgroup_names_rewalk(names) < 0)
		return NULL;
	found = tfind(&key, &names->tree, cmp_entry);
	if (found)
		return (*found)->path;
	mark_gone(names, id);
	return NULL;
}

/* twalk() takes no context pointer: the walk in progress keeps it here. */
static __thread struct {
	int (*fn)(void *ctx, uint64_t id, const char *rel);
	void *ctx;
	int ret;
} foreach_state;

static void foreach_visit(const void *node, VISIT which, int depth)
{
	const struct name_entry *e = *(struct name_entry *const *)node;

	(void)depth;
	if ((which == postorder || which == leaf) && !foreach_state.ret)
		foreach_state.ret = foreach_state.fn(foreach_state.ctx, e->id, e->path);
}

uint64_t cgroup_names_generation(const struct cgroup_names *names)
{
	return names->generation;
}

int cgroup_names_foreach(struct cgroup_names *names,
			 int (*fn)(void *ctx, uint64_t id, const char *rel), void *ctx)
{
	if (!names->walked) {
		int err = cgroup_names_rewalk(names);

		if (err < 0)
			return err;
	}
	foreach_state.fn = fn;
	foreach_state.ctx = ctx;
	foreach_state.ret = 0;
	twalk(names->tree, foreach_visit);
	return foreach_state.ret;
}
