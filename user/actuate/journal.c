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
#include <time.h>
#include <unistd.h>

#include "actuate/internal.h"
#include "cgroup/path.h"
#include "log.h"
#include "readfile.h"
#include "str.h"

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

/*
 * The knob of a journaled file. v2's io.max holds two knobs (rbps, wbps):
 * the original's text tells which (cg_io_knob_owns).
 */
static int knob_of_file(const struct cgroup_ctrls *c, const char *file, const char *orig,
			enum cg_knob *k)
{
	for (int i = 0; i < CG_KNOB_NR; i++)
		if (!strcmp(cg_knob_file(c, i), file) &&
		    (!cg_knob_per_device(i) || cg_io_knob_owns(c, i, orig))) {
			*k = i;
			return 0;
		}
	return -ENOENT;
}

/*
 * Change i of a journal: 0 (loaded, or dropped with a warning when this
 * host's cgroups lack its file), or -EINVAL / -ENAMETOOLONG with err set.
 */
static int load_change(struct journal *j, const struct cgroup_ctrls *c, json_t *ch, size_t i,
		       char *err, size_t errlen)
{
	const char *rel, *file, *orig;
	enum cg_knob k;

	if (json_unpack(ch, "{s:s, s:s, s:s}", "cgroup", &rel, "file", &file, "original", &orig)) {
		snprintf(err, errlen, "changes[%zu] lacks cgroup, file or original", i);
		return -EINVAL;
	}
	/* restore writes there: a path that leaves the managed subtree must not read as inside */
	if (!cgroup_path_is_normal(rel)) {
		snprintf(err, errlen,
			 "changes[%zu]: cgroup \"%s\" is not a normalized relative path", i, rel);
		return -EINVAL;
	}
	if (knob_of_file(c, file, orig, &k)) {
		log_warn("%s: %s/%s is not a file this host's cgroups have: not restoring it to "
			 "\"%s\"",
			 j->path, rel, file, orig);
		return 0;
	}
	if (journal_add(j, k, rel, orig)) {
		snprintf(err, errlen, "changes[%zu] is too long", i);
		return -ENAMETOOLONG;
	}
	return 0;
}

/*
 * The salvage reader: jansson decodes one value at a time from the cursor
 * (with JSON_DISABLE_EOF_CHECK it reports the bytes it took), so a damaged
 * file yields every whole value before its damage and nothing after.
 */
struct cursor {
	const char *p, *end;
};

static void skip_space(struct cursor *cur)
{
	while (cur->p < cur->end && strchr(" \t\r\n", *cur->p))
		cur->p++;
}

/* Skips white space, then takes ch; false when the next character is another. */
static bool take(struct cursor *cur, char ch)
{
	skip_space(cur);
	if (cur->p == cur->end || *cur->p != ch)
		return false;
	cur->p++;
	return true;
}

static json_t *next_value(struct cursor *cur)
{
	json_error_t e;
	json_t *v;

	skip_space(cur);
	v = json_loadb(cur->p, (size_t)(cur->end - cur->p),
		       JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &e);
	if (v)
		cur->p += e.position;
	return v;
}

/*
 * What a damaged journal provably holds: the changes of a version 1 journal
 * of this boot that are whole, in order, up to the first damage. The header
 * keys come before "changes" in every journal qoslet writes (to_json()), so
 * the version and the boot are known by then; without both, nothing is
 * proven.
 */
static void salvage(struct journal *j, const struct cgroup_ctrls *c, const char *text, size_t len)
{
	struct cursor cur = {text, text + len};
	json_int_t version = 0;
	bool this_boot = false;
	char err[256];
	json_t *k, *v;

	if (!take(&cur, '{'))
		return;
	while ((k = next_value(&cur))) {
		const char *key = json_is_string(k) ? json_string_value(k) : NULL;

		if (!key || !take(&cur, ':')) {
			json_decref(k);
			return;
		}
		if (!strcmp(key, "changes")) {
			json_decref(k);
			if (version != JOURNAL_VERSION || !this_boot || !take(&cur, '['))
				return;
			for (size_t i = 0; (v = next_value(&cur)); i++) {
				int bad = load_change(j, c, v, i, err, sizeof(err));

				json_decref(v);
				if (bad || !take(&cur, ','))
					return;
			}
			return;
		}
		v = next_value(&cur);
		if (!strcmp(key, "version") && json_is_integer(v))
			version = json_integer_value(v);
		if (!strcmp(key, "boot_id") && json_is_string(v))
			this_boot = j->boot_id[0] && !strcmp(json_string_value(v), j->boot_id);
		json_decref(k);
		json_decref(v);
		if (!v || !take(&cur, ','))
			return;
	}
}

/* The whole file into *text (malloc'd, NUL-terminated); 0 or -errno. */
static int read_all(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "re");
	size_t cap = 0;
	int err = 0;

	*text = NULL;
	*len = 0;
	if (!f)
		return -errno;
	for (;;) {
		if (*len + 1 >= cap) {
			char *t;

			cap = cap ? 2 * cap : 64 * 1024;
			t = realloc(*text, cap);
			if (!t) {
				err = -ENOMEM;
				break;
			}
			*text = t;
		}
		*len += fread(*text + *len, 1, cap - *len - 1, f);
		if (ferror(f))
			err = -EIO;
		if (err || feof(f))
			break;
	}
	fclose(f);
	if (err) {
		free(*text);
		*text = NULL;
		return err;
	}
	(*text)[*len] = '\0';
	return 0;
}

/* A whole, well-formed journal of this version into j; else -EINVAL with the reason in why. */
static int load_whole(struct journal *j, const struct cgroup_ctrls *c, const char *text, size_t len,
		      bool *stale, char *why, size_t whylen)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, 0, &jerr), *changes, *ch;
	const char *boot = "";
	int version = 0, ret = 0;
	size_t i;

	if (!root) {
		snprintf(why, whylen, "%s (line %d)", jerr.text, jerr.line);
		return -EINVAL;
	}
	if (json_unpack(root, "{s:i, s?s, s:o}", "version", &version, "boot_id", &boot, "changes",
			&changes) ||
	    !json_is_array(changes)) {
		snprintf(why, whylen, "not a qoslet journal (no version or changes)");
		ret = -EINVAL;
	} else if (version != JOURNAL_VERSION) {
		snprintf(why, whylen, "version %d, and this qoslet knows version %d only", version,
			 JOURNAL_VERSION);
		ret = -EINVAL;
	} else if (boot[0] && j->boot_id[0] && strcmp(boot, j->boot_id)) {
		*stale = true;
	} else {
		json_array_foreach(changes, i, ch)
		{
			ret = load_change(j, c, ch, i, why, whylen);
			if (ret)
				break;
		}
	}
	json_decref(root);
	return ret;
}

int journal_load(struct journal *j, const struct cgroup_ctrls *c, bool *stale)
{
	char *text;
	size_t len;
	int err;

	*stale = false;
	j->damage[0] = '\0';
	read_boot_id(j->boot_id, sizeof(j->boot_id));
	err = read_all(j->path, &text, &len);
	if (err == -ENOENT || err == -ENOMEM)
		return err == -ENOENT ? 0 : err;
	if (err) {
		snprintf(j->damage, sizeof(j->damage), "cannot read it: %s", strerror(-err));
		return 0;
	}
	err = load_whole(j, c, text, len, stale, j->damage, sizeof(j->damage));
	if (*stale)
		log_warn("%s is from an earlier boot: its cgroups are gone, ignoring it", j->path);
	if (err) {
		j->n = 0; /* start over from what can be proven */
		salvage(j, c, text, len);
	}
	free(text);
	return 0;
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

static int write_journal(const struct journal *j, const struct cgroup_ctrls *c, const char *subtree)
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
	/*
	 * A new file, never one found there (a crash's leftover is removed
	 * first): the state directory is the agent's alone (private_dir.h), and
	 * O_EXCL with O_NOFOLLOW keeps it so should anything be planted there.
	 */
	if (unlink(tmp) && errno != ENOENT) {
		free(text);
		return -errno;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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

/*
 * A failed write is counted, and said once as an error when writes start
 * failing (the actuator refuses every cgroup write it cannot journal, each
 * a failed decision of its own), and once when they work again.
 */
int journal_sync(struct journal *j, const struct cgroup_ctrls *c, const char *subtree)
{
	int err = write_journal(j, c, subtree);

	if (err) {
		j->write_errors++;
		if (!j->failing)
			log_err("journal %s cannot be written: %s; cgroup writes whose original it "
				"cannot hold are refused until it can",
				j->path, strerror(-err));
		j->failing = true;
	} else if (j->failing) {
		log_info("journal %s is written again", j->path);
		j->failing = false;
	}
	return err;
}

int journal_set_aside(struct journal *j, char *err, size_t errlen)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int e;

	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
	if (snprintf(j->set_aside, sizeof(j->set_aside), "%s.bad-%s", j->path, stamp) >=
	    (int)sizeof(j->set_aside)) {
		snprintf(err, errlen, "%s: the path is too long to set it aside", j->path);
		j->set_aside[0] = '\0';
		return -ENAMETOOLONG;
	}
	if (!rename(j->path, j->set_aside)) {
		/* set aside already: a failed fsync only means a crash now may undo the rename */
		(void)fsync_dir_of(j->path);
		return 0;
	}
	e = errno;
	snprintf(err, errlen, "%s is damaged (%s) and cannot be moved aside: %s", j->path,
		 j->damage, strerror(e));
	j->set_aside[0] = '\0';
	return -e;
}
