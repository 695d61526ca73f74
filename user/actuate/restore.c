// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Writing the journaled originals back (clean stop, and reconcile after a
 * crash).
 *
 * The base order is the reverse of first change: undoing the latest change
 * first. For one change of one unit that alone is right (a cpuset shrink
 * wrote children first, so its undo grows the parent first; a quota raise
 * wrote the unit first, so its undo lowers the children first). It is not
 * enough in general: a cpuset moved from "0" to "1" (grown to "0-1", then
 * shrunk) undone in reverse order would write the child's "0" while its
 * parent still holds "1", which v1 refuses; and a quota raised, then
 * lowered later, would have a child raised back above its still-lowered
 * parent. So each original is placed in the widen, flat or narrow phase by
 * comparing it with the value in place now (see struct step), and reverse
 * first change only breaks ties within a phase and depth.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actuate/internal.h"
#include "cgroup/path.h"
#include "log.h"

/* E_KEPT: not asked for this time (a restore of one knob of one unit). */
enum entry_state { E_PENDING = 0, E_DONE, E_GONE, E_FAILED, E_KEPT };

/* Which entries to restore: all, or one knob of one unit and its descendants. */
struct restore_filter {
	bool all;
	enum cg_knob knob;
	const char *rel;
};

static bool wanted(const struct restore_filter *f, const struct journal_entry *e)
{
	return f->all || (e->knob == f->knob && cgroup_path_within(e->rel, f->rel));
}

/*
 * Restores cpuset.cpus to "" (v2: no CPUs of its own, it inherits). Kernels
 * before 6.x refuse to empty a cpuset that has tasks (ENOSPC, also on v2,
 * where "" means inherit), and a pod cgroup always has them. Then it gets
 * what inheriting gave it, its parent's effective CPUs: the same CPUs now,
 * though it no longer follows its parent's later changes. On v1 "" is what
 * a new cpuset holds until its creator writes its CPUs (the agent may have
 * come first); with tasks, or children holding CPUs, v1 refuses it (ENOSPC,
 * EBUSY), and the unit gets what creators write there, its parent's CPUs.
 */
static int restore_inherited_cpus(struct actuator *a, const char *rel, char *why, size_t whylen)
{
	char parent[POL_PATH_MAX], eff[ACT_TEXT_MAX];
	bool v2 = a->c->v2[CTRL_CPUSET];
	int err = act_write(a, CG_KNOB_CPUS, rel, "", false, why, whylen);

	if (err != -ENOSPC && (v2 || err != -EBUSY))
		return err;
	if (act_parent_cpus(a, rel, parent, sizeof(parent), eff, sizeof(eff)) || !eff[0])
		return err;
	log_info("restore: the kernel refuses to empty %s/cpuset.cpus while it has tasks: "
		 "writing its parent's %sCPUs \"%s\" instead",
		 rel, v2 ? "effective " : "", eff);
	return act_write(a, CG_KNOB_CPUS, rel, eff, false, why, whylen);
}

/* The steps that bring one entry from `cur` back to its original. */
static int plan_entry(const struct actuator *a, const struct journal_entry *e, const char *cur,
		      size_t seq, size_t tag, struct steps *s)
{
	int64_t o, v;
	int err = 0;

	if (!strcmp(cur, e->orig))
		return 0;
	switch (e->knob) {
	case CG_KNOB_QUOTA:
	case CG_KNOB_MEM_MAX: /* -1 (unlimited) the largest of both */
		if (cg_knob_parse(a->c, e->knob, e->orig, &o) ||
		    cg_knob_parse(a->c, e->knob, cur, &v))
			break;
		if (o == v)
			return 0;
		return steps_add(s, e->knob, e->rel, e->orig,
				 act_quota_lt(v, o) ? PHASE_WIDEN : PHASE_NARROW, seq, tag);
	case CG_KNOB_CPUS: {
		struct act_cpus *m = malloc(3 * sizeof(*m)); /* orig, cur, union */
		char text[ACT_TEXT_MAX];

		if (!m)
			return -ENOMEM;
		if (act_cpus_parse(e->orig, &m[0]) || act_cpus_parse(cur, &m[1])) {
			free(m);
			break;
		}
		act_cpus_union(&m[2], &m[0], &m[1]);
		if (!act_cpus_subset(&m[2], &m[1])) { /* the original has CPUs cur lacks */
			err = act_cpus_format(&m[2], text, sizeof(text));
			if (!err)
				err = steps_add(s, e->knob, e->rel, text, PHASE_WIDEN, seq, tag);
		}
		if (!err && !act_cpus_subset(&m[2], &m[0])) /* cur has CPUs the original lacks */
			err = steps_add(s, e->knob, e->rel, e->orig, PHASE_NARROW, seq, tag);
		free(m);
		return err;
	}
	default:
		if (!cg_knob_parse(a->c, e->knob, e->orig, &o) &&
		    !cg_knob_parse(a->c, e->knob, cur, &v) && o == v)
			return 0;
		break;
	}
	/* Burst, idle, or a text that does not parse: the kernel will say. */
	return steps_add(s, e->knob, e->rel, e->orig, PHASE_FLAT, seq, tag);
}

/* Reads what is in place now and plans every pending entry. */
static int plan_all(struct actuator *a, const struct restore_filter *f, enum entry_state *st,
		    struct steps *s)
{
	for (size_t i = 0; i < a->j.n; i++) {
		const struct journal_entry *e = &a->j.v[i];
		char cur[ACT_TEXT_MAX];
		size_t before = s->n;
		int err;

		if (!wanted(f, e)) {
			st[i] = E_KEPT;
			continue;
		}
		err = cg_read_knob(a->c, e->knob, e->rel, cur, sizeof(cur));
		if (err == -ENOENT) {
			st[i] = E_GONE;
			continue;
		}
		if (err) {
			log_warn("cannot read %s/%s to restore it to \"%s\": %s", e->rel,
				 cg_knob_file(a->c, e->knob), e->orig, strerror(-err));
			st[i] = E_FAILED;
			continue;
		}
		err = plan_entry(a, e, cur, a->j.n - 1 - i, i, s);
		if (err)
			return err;
		if (s->n == before)
			st[i] = E_DONE; /* already the original */
	}
	return 0;
}

static int restore(struct actuator *a, const struct restore_filter *f, size_t *restored)
{
	enum entry_state *st = calloc(a->j.n + 1, sizeof(*st));
	struct steps s = {0};
	int failed = 0, err;

	*restored = 0;
	if (!st)
		return -ENOMEM;
	err = plan_all(a, f, st, &s);
	steps_sort(&s);
	for (size_t i = 0; !err && i < s.n; i++) {
		const struct step *p = &s.v[i];
		char why[160];
		int werr;

		if (st[p->tag] != E_PENDING)
			continue; /* an earlier step of the entry failed or found it gone */
		log_info("%srestoring %s/%s to \"%s\"", a->dry_run ? "dry run: not " : "", p->rel,
			 cg_knob_file(a->c, p->knob), p->text);
		if (p->knob == CG_KNOB_CPUS && !p->text[0])
			werr = restore_inherited_cpus(a, p->rel, why, sizeof(why));
		else
			werr = act_write(a, p->knob, p->rel, p->text, false, why, sizeof(why));
		if (werr == -ENOENT) {
			st[p->tag] = E_GONE;
		} else if (werr) {
			log_warn("restore: %s", why);
			st[p->tag] = E_FAILED;
		}
	}
	steps_free(&s);
	if (err || a->dry_run) {
		free(st);
		return err;
	}
	/* Entries still pending had every step written. */
	for (size_t i = a->j.n; i-- > 0;) {
		if (st[i] == E_KEPT)
			continue;
		if (st[i] == E_FAILED) {
			failed++;
			continue;
		}
		*restored += st[i] == E_PENDING;
		journal_remove_at(&a->j, i);
	}
	free(st);
	err = journal_sync(&a->j, a->c, a->subtree);
	return err ? err : failed;
}

int act_restore_all(struct actuator *a, size_t *restored)
{
	struct restore_filter all = {.all = true};

	return restore(a, &all, restored);
}

int act_restore_knob(struct actuator *a, enum cg_knob k, const char *rel, size_t *restored)
{
	struct restore_filter one = {.knob = k, .rel = rel};

	return restore(a, &one, restored);
}
