// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ordered, journaled writes: the one place a cgroup file is written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actuate/internal.h"
#include "cgroup/path.h"

int steps_add(struct steps *s, enum cg_knob k, const char *rel, const char *text,
	      enum step_phase phase, size_t seq, size_t tag)
{
	struct step *st;

	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct step *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	st = &s->v[s->n];
	if (snprintf(st->rel, sizeof(st->rel), "%s", rel) >= (int)sizeof(st->rel) ||
	    snprintf(st->text, sizeof(st->text), "%s", text) >= (int)sizeof(st->text))
		return -ENAMETOOLONG;
	st->knob = k;
	st->phase = phase;
	st->seq = seq;
	st->tag = tag;
	s->n++;
	return 0;
}

static int depth(const char *rel)
{
	int d = *rel != '\0';

	for (; *rel; rel++)
		d += *rel == '/';
	return d;
}

static int cmp_step(const void *pa, const void *pb)
{
	const struct step *a = pa, *b = pb;
	int da, db;

	if (a->phase != b->phase)
		return a->phase < b->phase ? -1 : 1;
	da = depth(a->rel);
	db = depth(b->rel);
	if (a->phase != PHASE_FLAT && da != db)
		return (a->phase == PHASE_WIDEN) == (da < db) ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void steps_sort(struct steps *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(s->v[0]), cmp_step);
}

void steps_free(struct steps *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

bool act_in_subtree(const struct actuator *a, enum cg_knob k, const char *rel)
{
	return cgroup_path_within(rel, a->subtree) &&
	       (strcmp(rel, a->subtree) || (act_is_protection(k) && *rel));
}

void act_notify(struct actuator *a, const char *path, const char *text, int err)
{
	if (a->on_write)
		a->on_write(a->ctx, path, text, err);
}

/*
 * A per-disk knob's original must also undo the disks `text` (the write to
 * come) adds: entry i's original covers them, synced before the write.
 */
static int cover_disks(struct actuator *a, size_t i, const char *text)
{
	char orig[ACT_TEXT_MAX];
	int err;

	snprintf(orig, sizeof(orig), "%s", a->j.v[i].orig);
	err = cg_io_knob_cover(a->c, a->j.v[i].knob, orig, sizeof(orig), text);
	if (err || !strcmp(orig, a->j.v[i].orig))
		return err;
	err = journal_set_original(&a->j, i, orig);
	return err ? err : journal_sync(&a->j, a->c, a->subtree);
}

/* Journals the original text of (rel, k) before its first change. */
int journal_first(struct actuator *a, enum cg_knob k, const char *rel, const char *text, char *why,
		  size_t whylen)
{
	const struct journal_entry *e = journal_find(&a->j, k, rel);
	bool disks = text && cg_knob_per_device(k);
	char orig[ACT_TEXT_MAX];
	int err;

	if (e && !disks)
		return 0;
	if (e) {
		err = cover_disks(a, (size_t)(e - a->j.v), text);
		if (err)
			snprintf(why, whylen, "journal %s: %s", a->j.path, strerror(-err));
		return err;
	}
	err = cg_read_knob(a->c, k, rel, orig, sizeof(orig));
	if (!err && disks)
		err = cg_io_knob_cover(a->c, k, orig, sizeof(orig), text);
	if (err) {
		snprintf(why, whylen, "reading %s/%s: %s", rel, cg_knob_file(a->c, k),
			 err == -ENOENT ? "the cgroup vanished" : strerror(-err));
		return err;
	}
	err = journal_add(&a->j, k, rel, orig);
	if (!err) {
		err = journal_sync(&a->j, a->c, a->subtree);
		if (err)
			journal_remove_at(&a->j, a->j.n - 1);
	}
	if (err)
		snprintf(why, whylen, "journal %s: %s", a->j.path, strerror(-err));
	return err;
}

int act_write(struct actuator *a, enum cg_knob k, const char *rel, const char *text, bool journal,
	      char *why, size_t whylen)
{
	const char *file = cg_knob_file(a->c, k);
	size_t journaled = a->j.n;
	char path[PATH_MAX];
	int err;

	if (!act_in_subtree(a, k, rel)) {
		snprintf(why, whylen, "%s is not inside the managed subtree \"%s\"", rel,
			 a->subtree);
		return -EPERM;
	}
	err = cg_path(a->c, cg_knob_ctrl(k), rel, file, path, sizeof(path));
	if (err) {
		snprintf(why, whylen, "%s/%s: %s", rel, file, strerror(-err));
		return err;
	}
	if (a->dry_run) {
		act_notify(a, path, text, 0);
		return 0;
	}
	if (journal) {
		err = journal_first(a, k, rel, text, why, whylen);
		if (err)
			return err;
	}
	err = cg_write_knob(a->c, k, rel, text);
	act_notify(a, path, text, err);
	if (!err && journal)
		act_written(a, k, rel, text);
	/*
	 * The kernel checks a cgroup write before it applies it: a refused one
	 * changed nothing, and its original, journaled just now, would only
	 * make a stop write back a value that never changed. (Should the sync
	 * fail, the file keeps the entry: restoring it then rewrites the same
	 * value, which is harmless.)
	 */
	if (err && a->j.n > journaled) {
		journal_remove_at(&a->j, a->j.n - 1);
		journal_sync(&a->j, a->c, a->subtree);
	}
	if (err == -ENOENT)
		snprintf(why, whylen, "cgroup %s vanished", rel);
	else if (err == -EOPNOTSUPP)
		snprintf(why, whylen, "%s/%s does not exist on this kernel", rel, file);
	else if (err)
		snprintf(why, whylen, "writing \"%s\" to %s/%s: %s", text, rel, file,
			 strerror(-err));
	return err;
}
