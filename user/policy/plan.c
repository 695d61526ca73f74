// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "plan.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Settings the plan tracks; evictions and reports are events, passed as they come. */
static bool is_setting(enum act_kind k)
{
	return k == ACT_CPU_QUOTA || k == ACT_CPU_BURST || k == ACT_CPUSET || k == ACT_CPU_IDLE;
}

/* -1 (unlimited) is the largest quota. */
static bool quota_lower(int64_t a, int64_t b)
{
	if (a < 0)
		return false;
	return b < 0 || a < b;
}

/*
 * Several policies may want a quota on one BE unit (suppression and an
 * interference cap): the lowest wins, in the place of the first wish so
 * that the order a policy chose (burst before quota) holds.
 */
static int merge(const struct action_list *wishes, struct action_list *merged)
{
	for (size_t i = 0; i < wishes->n; i++) {
		const struct action *w = &wishes->v[i];
		struct action *a;
		size_t j;

		for (j = 0; j < merged->n; j++)
			if (w->kind == ACT_CPU_QUOTA && merged->v[j].kind == ACT_CPU_QUOTA &&
			    merged->v[j].id == w->id)
				break;
		if (j < merged->n) {
			if (quota_lower(w->value, merged->v[j].value))
				merged->v[j] = *w;
			continue;
		}
		a = action_add(merged, w->kind, NULL, w->rule);
		if (!a)
			return -ENOMEM;
		*a = *w;
	}
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct plan_entry *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static struct plan_entry *plan_find(struct plan_state *st, uint64_t id, enum act_kind kind)
{
	struct plan_entry key = {.id = id, .kind = kind};

	/* bsearch() is declared nonnull: an empty plan (st->v NULL at first) is not passed to it */
	if (!st->n)
		return NULL;
	return bsearch(&key, st->v, st->n, sizeof(key), cmp_entry);
}

static struct plan_entry *plan_insert(struct plan_state *st, uint64_t id, enum act_kind kind)
{
	struct plan_entry *e;

	if (st->n == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 32;

		e = realloc(st->v, cap * sizeof(*e));
		if (!e)
			return NULL;
		st->v = e;
		st->cap = cap;
	}
	e = &st->v[st->n++];
	memset(e, 0, sizeof(*e));
	e->id = id;
	e->kind = kind;
	qsort(st->v, st->n, sizeof(*e), cmp_entry);
	return plan_find(st, id, kind);
}

/* The unit's value of the knob an action sets, as read this tick. */
static void current_value(const struct pol_unit *u, enum act_kind kind, int64_t *value,
			  const char **cpus)
{
	*cpus = "";
	switch (kind) {
	case ACT_CPU_QUOTA:
		*value = u->quota_us;
		break;
	case ACT_CPU_BURST:
		*value = u->burst_us;
		break;
	case ACT_CPU_IDLE:
		*value = u->idle;
		break;
	default:
		*value = 0;
		*cpus = u->cpus;
		break;
	}
}

static bool same(int64_t v1, const char *c1, int64_t v2, const char *c2)
{
	return v1 == v2 && !strcmp(c1, c2);
}

/*
 * Counts the last ask as landed or missed, and says whether a changed wish
 * must still wait (plan.h: the holds after a miss).
 */
static bool held(struct plan_entry *e, int64_t cur, const char *cur_cpus, uint64_t now_ns,
		 bool dry_run)
{
	uint64_t hold_s;

	if (dry_run)
		return false;
	if (e->asked) {
		if (same(cur, cur_cpus, e->value, e->cpus)) {
			e->misses = 0;
		} else {
			e->misses++;
			e->missed_ns = now_ns;
		}
	}
	if (!e->misses)
		return false;
	/* The first hold << 5 is past the cap: a larger shift is never needed. */
	hold_s = (uint64_t)PLAN_HOLD_FIRST_S << (e->misses - 1 < 5 ? e->misses - 1 : 5);
	if (hold_s > PLAN_HOLD_MAX_S)
		hold_s = PLAN_HOLD_MAX_S;
	return pol_since_s(now_ns, &e->missed_ns) < (double)hold_s;
}

/* Keeps a wish when it changes something (and is not held); records it as asked. */
static int keep_if_new(struct plan_state *st, const struct pol_input *in, const struct action *a,
		       bool dry_run, bool *keep)
{
	const struct pol_unit *u = pol_input_find(in, a->id);
	struct plan_entry *e;
	const char *cur_cpus;
	bool hold = false;
	int64_t cur;

	*keep = true;
	if (!is_setting(a->kind) || !u)
		return 0;
	current_value(u, a->kind, &cur, &cur_cpus);
	e = plan_find(st, a->id, a->kind);
	if (!e) {
		/* First wish: nothing to do if the unit already has the value. */
		*keep = !same(a->value, a->cpus, cur, cur_cpus);
		e = plan_insert(st, a->id, a->kind);
		if (!e)
			return -ENOMEM;
	} else {
		bool wish_changed = !same(a->value, a->cpus, e->value, e->cpus);
		bool changed_by_others = !same(cur, cur_cpus, a->value, a->cpus) &&
					 !same(cur, cur_cpus, e->seen_value, e->seen_cpus);

		hold = held(e, cur, cur_cpus, in->ts_ns, dry_run);
		/* A change by others may have cleared what refused the write: ask at once. */
		*keep = changed_by_others || (wish_changed && !hold);
	}
	e->asked = *keep;
	/* A held wish is not asked yet: it stays a change, asked when the hold ends. */
	if (*keep || !hold) {
		e->value = a->value;
		memcpy(e->cpus, a->cpus, strlen(a->cpus) + 1); /* same size: fits */
	}
	e->seen_value = cur;
	memcpy(e->seen_cpus, cur_cpus, strlen(cur_cpus) + 1); /* a unit's cpus: same size */
	return 0;
}

static bool wished(const struct action_list *wishes, const struct plan_entry *e)
{
	for (size_t i = 0; i < wishes->n; i++)
		if (wishes->v[i].id == e->id && wishes->v[i].kind == e->kind)
			return true;
	return false;
}

/*
 * Entries of units that left the input go. A setting of a present unit that
 * no policy wants any more (an interference cap lapsed, nothing else sets a
 * quota on that unit) is handed back: the actuator restores the owner's
 * value. Without this a lapsed cap would stay for good.
 */
static int plan_release(struct plan_state *st, const struct pol_input *in,
			const struct action_list *wishes, struct action_list *out)
{
	size_t n = 0;

	for (size_t i = 0; i < st->n; i++) {
		const struct plan_entry *e = &st->v[i];
		const struct pol_unit *u = pol_input_find(in, e->id);
		struct action *a;

		if (u && wished(wishes, e)) {
			st->v[n++] = *e;
			continue;
		}
		if (!u)
			continue;
		a = action_add(out, e->kind, u, "plan.release");
		if (!a)
			return -ENOMEM;
		a->restore = true;
	}
	st->n = n;
	return 0;
}

int plan_apply(struct plan_state *st, const struct pol_input *in, const struct action_list *wishes,
	       bool dry_run, struct action_list *out)
{
	struct action_list merged = {0};
	int err = merge(wishes, &merged);

	if (!err)
		err = plan_release(st, in, &merged, out);
	for (size_t i = 0; !err && i < merged.n; i++) {
		bool keep;
		struct action *a;

		err = keep_if_new(st, in, &merged.v[i], dry_run, &keep);
		if (err || !keep)
			continue;
		a = action_add(out, merged.v[i].kind, NULL, merged.v[i].rule);
		if (!a)
			err = -ENOMEM;
		else
			*a = merged.v[i];
	}
	action_list_free(&merged);
	return err;
}

void plan_state_free(struct plan_state *st)
{
	free(st->v);
	memset(st, 0, sizeof(*st));
}
