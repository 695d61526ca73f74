// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * state_dir/actuator.json: what qoslet changed, with the values before.
 *
 *   {"version": 1, "boot_id": "...", "pid": 1234, "subtree": "kubepods",
 *    "changes": [{"cgroup": "kubepods/besteffort/pod1", "file": "cpu.max",
 *                 "original": "max 100000"}, ...]}
 *
 * "changes" is in the order of first change. A reader only trusts a whole
 * file: it is replaced by rename(), never written in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "../log.h"
#include "../readfile.h"
#include "../str.h"

#define JOURNAL_VERSION 1

static void read_boot_id(char *buf, size_t size)
{
	if (read_file_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id", buf, size))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

int journal_add(struct journal *j, enum cg_knob k, const char *rel, const char *orig)
{
	struct journal_entry *e;

	if (j->n == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 16;
		struct journal_entry *v = realloc(j->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		j->v = v;
		j->cap = cap;
	}
	e = &j->v[j->n];
	memset(e, 0, sizeof(*e));
	e->knob = k;
	if (str_copy(e->rel, sizeof(e->rel), rel) || str_copy(e->orig, sizeof(e->orig), orig))
		return -ENAMETOOLONG;
	j->n++;
	j->gen++;
	return 0;
}

const struct journal_entry *journal_find(const struct journal *j, enum cg_knob k, const char *rel)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->v[i].knob == k && !strcmp(j->v[i].rel, rel))
			return &j->v[i];
	return NULL;
}

void journal_remove_at(struct journal *j, size_t i)
{
	memmove(&j->v[i], &j->v[i + 1], (j->n - i - 1) * sizeof(j->v[0]));
	j->n--;
	j->gen++;
}

void journal_free(struct journal *j)
{
	free(j->v);
	j->v = NULL;
	j->n = j->cap = 0;
}

static int knob_of_file(const struct cgroup_ctrls *c, const char *file, enum cg_knob *k)
{
	for (int i = 0; i < CG_KNOB_NR; i++)
		if (!strcmp(cg_knob_file(c, i), file)) {
			*k = i;
			return 0;
		}
	return -ENOENT;
}

static int load_changes(struct journal *j, const struct cgroup_ctrls *c, json_t *changes, char *err,
			size_t errlen)
{
	size_t i;
	json_t *ch;

	json_array_foreach(changes, i, ch)
	{
		const char *rel, *file, *orig;
		enum cg_knob k;

		if (json_unpack(ch, "{s:s, s:s, s:s}", "cgroup", &rel, "file", &file, "original",
				&orig)) {
			snprintf(err, errlen, "%s: changes[%zu] lacks cgroup, file or original",
				 j->path, i);
			return -EINVAL;
		}
		if (knob_of_file(c, file, &k)) {
			log_warn(
				"%s: %s/%s is not a file this host's cgroups have: not restoring it "
				"to \"%s\"",
				j->path, rel, file, orig);
			continue;
		}
		if (journal_add(j, k, rel, orig)) {
			snprintf(err, errlen, "%s: changes[%zu] is too long", j->path, i);
			return -ENAMETOOLONG;
		}
	}
	return 0;
}

int journal_load(struct journal *j, const struct cgroup_ctrls *c, bool *stale, char *err,
		 size_t errlen)
{
	json_error_t jerr;
	json_t *root, *changes;
	const char *boot = "";
	int version, ret;

	*stale = false;
	read_boot_id(j->boot_id, sizeof(j->boot_id));
	root = json_load_file(j->path, 0, &jerr);
	if (!root) {
		if (access(j->path, F_OK) && errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s (line %d)", j->path, jerr.text, jerr.line);
		return -EINVAL;
	}
	if (json_unpack(root, "{s:i, s?s, s:o}", "version", &version, "boot_id", &boot, "changes",
			&changes) ||
	    version != JOURNAL_VERSION || !json_is_array(changes)) {
		snprintf(err, errlen, "%s: not a version %d qoslet journal", j->path,
			 JOURNAL_VERSION);
		json_decref(root);
		return -EINVAL;
	}
	if (boot[0] && j->boot_id[0] && strcmp(boot, j->boot_id)) {
		log_warn("%s is from an earlier boot: its cgroups are gone, ignoring it", j->path);
		*stale = true;
		json_decref(root);
		return 0;
	}
	ret = load_changes(j, c, changes, err, errlen);
	json_decref(root);
	return ret;
}

static json_t *to_json(const struct journal *j, const struct cgroup_ctrls *c, const char *subtree)
{
	json_t *changes = json_array(), *root;

	if (!changes)
		return NULL;
	for (size_t i = 0; i < j->n; i++) {
		const struct journal_entry *e = &j->v[i];

		if (json_array_append_new(changes, json_pack("{s:s, s:s, s:s}", "cgroup", e->rel,
							     "file", cg_knob_file(c, e->knob),
							     "original", e->orig))) {
			json_decref(changes);
			return NULL;
		}
	}
	root = json_pack("{s:i, s:s, s:i, s:s, s:o}", "version", JOURNAL_VERSION, "boot_id",
			 j->boot_id, "pid", (int)getpid(), "subtree", subtree, "changes", changes);
	return root;
}

/* The rename is only durable once the directory holding it is on disk too. */
static int fsync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	int fd, err = 0;

	if (str_copy(dir, sizeof(dir), path))
		return -ENAMETOOLONG;
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

/* All of len bytes, or -errno. */
static int write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

int journal_sync(const struct journal *j, const struct cgroup_ctrls *c, const char *subtree)
{
	char tmp[PATH_MAX + 8];
	json_t *root;
	char *text;
	int fd, err = 0;

	if (!j->n) {
		if (!unlink(j->path))
			return fsync_dir_of(j->path);
		return errno == ENOENT ? 0 : -errno;
	}
	root = to_json(j, c, subtree);
	if (!root)
		return -ENOMEM;
	/*
	 * Rendered in memory and written at once: json_dumpfd() makes a write()
	 * per token, thousands per sync, and under cgroup churn (a sync per unit
	 * changed or gone) those took most of the agent's loop.
	 */
	text = json_dumps(root, JSON_INDENT(1));
	json_decref(root);
	if (!text)
		return -ENOMEM;
	snprintf(tmp, sizeof(tmp), "%s.tmp", j->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		free(text);
		return err;
	}
	err = write_all(fd, text, strlen(text));
	free(text);
	if (!err)
		err = write_all(fd, "\n", 1);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, j->path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	return fsync_dir_of(j->path);
}

int journal_set_original(struct journal *j, size_t i, const char *text)
{
	return str_copy(j->v[i].orig, sizeof(j->v[i].orig), text) ? -ENAMETOOLONG : 0;
}
