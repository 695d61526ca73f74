// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/be_limit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "policy/rate.h"

static struct be_limit_unit *find(struct be_limit_table *t, uint64_t id)
{
	size_t i =
		pol_lower_bound(t->v, t->n, sizeof(*t->v), offsetof(struct be_limit_unit, id), id);

	return i < t->n && t->v[i].id == id ? &t->v[i] : NULL;
}

/* A new entry for a guilty unit, started by `start`; NULL with *err 0 when it cannot be sized. */
static struct be_limit_unit *add(struct be_limit_table *t, const struct pol_input *in,
				 const struct pol_unit *u, be_limit_start_fn start, int *err)
{
	struct be_limit_unit e = {.id = u->id};
	size_t i;

	*err = 0;
	if (!start(&e, in, u))
		return NULL;
	*err = array_grow((void **)&t->v, &t->cap, t->n, sizeof(*t->v));
	if (*err)
		return NULL;
	i = pol_lower_bound(t->v, t->n, sizeof(*t->v), offsetof(struct be_limit_unit, id), u->id);
	memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
	t->n++;
	t->v[i] = e;
	return &t->v[i];
}

/* Marks this tick's culprits (be_limit_tick). 0 or -ENOMEM. */
static int mark(struct be_limit_table *t, const struct pol_input *in, const struct mem_guilty *g,
		size_t n, be_limit_start_fn start)
{
	for (size_t i = 0; i < n; i++) {
		const struct pol_unit *u = pol_input_find(in, g[i].culprit);
		struct be_limit_unit *e;
		int err;

		if (!u || u->cls != QOS_BE)
			continue; /* never an LS unit's limit, whoever names it */
		e = find(t, u->id);
		/* handed back earlier, guilty again: a new suppression that keeps its wait */
		if (e && e->released) {
			if (!start(e, in, u))
				continue;
			e->wished = e->released = false;
		}
		if (!e) {
			e = add(t, in, u, start, &err);
			if (!e) {
				if (err)
					return err;
				continue;
			}
		}
		if (e->guilty_ns != in->ts_ns || g[i].share > e->share) {
			e->victim = g[i].victim;
			e->share = g[i].share;
		}
		e->guilty_ns = in->ts_ns;
	}
	return 0;
}

/*
 * The unit's limit this tick (e->limit) and the rule that set it; false
 * when it grew back to its ceiling (released: no wish).
 */
static bool step(const struct pol_input *in, const struct be_limit_params *p,
		 const struct suppress_steps *s, struct be_limit_unit *e, double floor, bool guilty,
		 enum rule_id *rule)
{
	double ceiling = e->owner >= 0 ? (double)e->owner : (double)e->ceiling;
	double prev = (double)e->limit, want = prev, next, hold = e->hold_s ? e->hold_s : s->well_s;
	bool grow = !guilty && pol_since_s(in->ts_ns, &e->guilty_ns) >= hold;
	struct rate_limit r;

	if (guilty && e->grown) {
		e->hold_s = fmin(2 * hold, BE_LIMIT_HOLD_MAX * s->well_s);
		e->grown = false;
	}
	/* An owner's limit under the floor: nothing to suppress, the floor is all it has. */
	ceiling = fmax(ceiling, floor);
	if (guilty && prev > floor) {
		/* A cut of at least min_change: the steps reach the floor, not creep to it. */
		want = prev - fmax(s->cut_share * (prev - floor), s->min_change);
	} else if (grow) {
		/*
		 * Growth runs on time since it began, not per tick (fast-path ticks
		 * come ten a second), and a step under min_change waits for the
		 * next tick rather than being lost.
		 */
		if (!e->grown) {
			e->grown = true;
			e->grow_ns = in->ts_ns;
			e->grow_base = e->limit;
		}
		want = (double)e->grow_base +
		       s->grow_share * ceiling * pol_since_s(in->ts_ns, &e->grow_ns);
		if (want >= ceiling) {
			e->released = true;
			return false;
		}
	}
	/* The cut-fast, grow-slowly step of CPU suppression; growth is paced by want itself. */
	r = (struct rate_limit){floor, ceiling, ceiling, s->min_change};
	next = rate_step(true, prev, want, &r);
	/* A first cut from a start already under the floor starts at the floor: still a cut. */
	*rule = next > prev && !grow && e->wished ? p->raise : grow ? p->grow : p->cut;
	/* Down to a whole step of align, but never under the floor. */
	e->limit = (int64_t)next / p->align * p->align;
	if ((double)e->limit < floor)
		e->limit += p->align;
	e->wished = true;
	if (!guilty || next > floor + s->min_change)
		e->floor_ns = 0;
	else if (!e->floor_ns)
		e->floor_ns = in->ts_ns;
	return true;
}

void be_limit_victim(struct action *a, const struct pol_input *in, const struct be_limit_unit *e,
		     const char *share_name)
{
	const struct pol_unit *v = pol_input_find(in, e->victim);

	a->related_id = e->victim;
	if (v)
		memcpy(a->related, v->path, strlen(v->path) + 1);
	action_evidence(a, share_name, e->share);
}

int be_limit_tick(struct be_limit_table *t, const struct pol_input *in, const struct mem_guilty *g,
		  size_t n, const struct be_limit_params *p, const struct be_limit_ops *ops)
{
	const struct suppress_steps *s = ops->steps;
	size_t k = 0;
	int err = mark(t, in, g, n, ops->start);

	/* Entries are kept (compacted to k) while their unit is BE and has not grown back. */
	for (size_t i = 0; !err && i < t->n; i++) {
		struct be_limit_unit *e = &t->v[i];
		const struct pol_unit *u = pol_input_find(in, e->id);
		bool guilty = e->guilty_ns == in->ts_ns;
		enum rule_id rule;
		double floor;

		if (!u || u->cls != QOS_BE)
			continue; /* gone, or no longer BE: no wish, the plan hands the limit back
				   */
		floor = ops->floor(ops, in, u);
		if (guilty && ops->guilty)
			err = ops->guilty(ops, in, u, e, floor);
		if (err)
			break;
		/*
		 * A released entry is kept, without a wish, for its relapse wait;
		 * once a unit stays well that long past it, it is forgotten.
		 */
		if (e->released || !step(in, p, s, e, floor, guilty, &rule)) {
			if (pol_since_s(in->ts_ns, &e->guilty_ns) <
			    BE_LIMIT_HOLD_MAX * s->well_s + (e->hold_s ? e->hold_s : s->well_s))
				t->v[k++] = *e;
			continue;
		}
		t->v[k++] = *e;
		err = ops->wish(ops, in, u, e, floor, rule);
	}
	/* Out of memory: the entries past k are dropped, so their limits are handed back. */
	t->n = k;
	return err;
}

void be_limit_table_free(struct be_limit_table *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}
