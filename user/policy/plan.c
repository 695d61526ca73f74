// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/plan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"

/* Settings the plan tracks; evictions and reports are events, passed as they come. */
static bool is_setting(enum act_kind k)
{
	return k == ACT_CPU_QUOTA || k == ACT_CPU_BURST || k == ACT_CPUSET || k == ACT_CPU_IDLE ||
	       k == ACT_CPU_WEIGHT || k == ACT_MEM_LIMIT || k == ACT_MEM_MIN || k == ACT_MEM_LOW ||
	       k == ACT_MEM_HIGH || k == ACT_IO_RBPS || k == ACT_IO_WBPS;
}

/*
 * Limits, where the lowest wish wins (memory.high too: memory QoS's ceiling
 * and memory suppression's cut of a BE unit meet there).
 */
static bool is_limit(enum act_kind k)
{
	return k == ACT_CPU_QUOTA || k == ACT_MEM_LIMIT || k == ACT_MEM_HIGH || k == ACT_IO_RBPS ||
	       k == ACT_IO_WBPS;
}

/* -1 (unlimited) is the largest quota (or memory limit). */
static bool quota_lower(int64_t a, int64_t b)
{
	if (a < 0)
		return false;
	return b < 0 || a < b;
}

/* A wish's place in the tick's index of wishes, sorted by (id, kind, order). */
struct wish_key {
	uint64_t id;
	uint32_t kind;
	uint32_t idx; /* in the wishes list */
};

static int cmp_wish_key(const void *a, const void *b)
{
	const struct wish_key *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * The wishes indexed by (id, kind), so that finding one is a bsearch: with
 * two wishes per BE pod every tick, scanning the list for each wish and
 * each plan entry was quadratic, and each step touched a 1.6 KB action.
 */
static struct wish_key *index_wishes(const struct action_list *wishes)
{
	struct wish_key *keys = malloc((wishes->n ? wishes->n : 1) * sizeof(*keys));

	if (!keys)
		return NULL;
	for (size_t i = 0; i < wishes->n; i++)
		keys[i] = (struct wish_key){wishes->v[i].id, wishes->v[i].kind, (uint32_t)i};
	qsort(keys, wishes->n, sizeof(*keys), cmp_wish_key);
	return keys;
}

/*
 * Several policies may want a quota on one BE unit (suppression, an
 * interference cap, its batch limit): the lowest wins (the first of
 * equals), and so for a memory limit, in the place of
 * the first wish so that the order a policy chose (burst before quota)
 * holds. Other kinds pass as they come. Fills take[] with the indexes of the
 * wishes to consider, in order, and returns how many.
 */
static size_t merge(const struct action_list *wishes, const struct wish_key *keys, size_t *take)
{
	size_t n = 0;

	/* take[i]: the wish that stands at position i, or SIZE_MAX for none. */
	for (size_t i = 0; i < wishes->n; i++)
		take[i] = i;
	for (size_t g = 0; g < wishes->n;) {
		size_t end = g + 1, win = keys[g].idx;

		while (end < wishes->n && keys[end].id == keys[g].id &&
		       keys[end].kind == keys[g].kind)
			end++;
		if (is_limit(keys[g].kind)) {
			for (size_t k = g + 1; k < end; k++) {
				take[keys[k].idx] = SIZE_MAX;
				if (quota_lower(wishes->v[keys[k].idx].value, wishes->v[win].value))
					win = keys[k].idx;
			}
			take[keys[g].idx] = win;
		}
		g = end;
	}
	for (size_t i = 0; i < wishes->n; i++)
		if (take[i] != SIZE_MAX)
			take[n++] = take[i];
	return n;
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

/* Inserts in place, keeping the order: a sort per insert made the first tick quadratic. */
static struct plan_entry *plan_insert(struct plan_state *st, uint64_t id, enum act_kind kind)
{
	struct plan_entry key = {.id = id, .kind = kind};
	size_t lo = 0, hi = st->n;
	struct plan_entry *e;

	if (st->n == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 32;

		e = realloc(st->v, cap * sizeof(*e));
		if (!e)
			return NULL;
		st->v = e;
		st->cap = cap;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_entry(&st->v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	e = &st->v[lo];
	memmove(e + 1, e, (st->n - lo) * sizeof(*e));
	st->n++;
	*e = key;
	return e;
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
	case ACT_CPU_WEIGHT:
		*value = u->weight;
		break;
	case ACT_MEM_LIMIT:
		*value = u->mem_max;
		break;
	case ACT_MEM_MIN:
		*value = u->mem_min;
		break;
	case ACT_MEM_LOW:
		*value = u->mem_low;
		break;
	case ACT_MEM_HIGH:
		*value = u->mem_high;
		break;
	case ACT_IO_RBPS: /* not read: as if none */
		*value = u->io_limit.has ? u->io_limit.rbps : -1;
		break;
	case ACT_IO_WBPS:
		*value = u->io_limit.has ? u->io_limit.wbps : -1;
		break;
	default:
		*value = 0;
		*cpus = u->cpus;
		break;
	}
}

/*
 * The value of the knob at target id, a unit or a container (which has a
 * weight, a memory limit and a quota only); false when the target left the
 * input.
 */
static bool target_value(const struct pol_input *in, uint64_t id, enum act_kind kind,
			 int64_t *value, const char **cpus)
{
	const struct pol_unit *u = pol_input_find(in, id);
	const struct pol_container *c = u ? NULL : pol_container_find(in, id);

	if (u)
		current_value(u, kind, value, cpus);
	else if (c) {
		*cpus = "";
		*value = kind == ACT_CPU_WEIGHT	 ? c->weight
			 : kind == ACT_MEM_LIMIT ? c->mem_max
			 : kind == ACT_CPU_QUOTA ? c->quota_us
						 : 0;
	}
	return u || c;
}

void plan_target_text(const struct pol_input *in, uint64_t id, enum act_kind kind, char *buf,
		      size_t size)
{
	const char *cpus;
	int64_t value;

	buf[0] = '\0';
	if (!is_setting(kind) || !target_value(in, id, kind, &value, &cpus))
		return;
	if (kind == ACT_CPUSET)
		snprintf(buf, size, "%s", cpus);
	else
		snprintf(buf, size, "%" PRId64, value);
}

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
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
		if (same(cur, cur_cpus, e->value, str_or_empty(e->cpus))) {
			e->misses = 0;
		} else {
			e->misses++;
			e->missed_ns = now_ns;
		}
	}
	if (!e->misses)
		return false;
	hold_s = PLAN_HOLD_FIRST_S;
	for (uint32_t k = 1; k < e->misses && hold_s < PLAN_HOLD_MAX_S; k++)
		hold_s *= 2;
	if (hold_s > PLAN_HOLD_MAX_S)
		hold_s = PLAN_HOLD_MAX_S;
	return pol_since_s(now_ns, &e->missed_ns) < (double)hold_s;
}

/* *dst becomes a copy of src (NULL for ""). 0 or -ENOMEM, *dst unchanged then. */
static int set_cpus(char **dst, const char *src)
{
	char *copy;

	if (!strcmp(str_or_empty(*dst), src))
		return 0;
	copy = *src ? strdup(src) : NULL;
	if (*src && !copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

static void entry_free(struct plan_entry *e)
{
	free(e->cpus);
	free(e->seen_cpus);
}

/* Keeps a wish when it changes something (and is not held); records it as asked. */
static int keep_if_new(struct plan_state *st, const struct pol_input *in, const struct action *a,
		       bool dry_run, bool *keep)
{
	struct plan_entry *e;
	const char *cur_cpus;
	bool hold = false;
	int64_t cur;

	*keep = true;
	if (!is_setting(a->kind) || !target_value(in, a->id, a->kind, &cur, &cur_cpus))
		return 0;
	e = plan_find(st, a->id, a->kind);
	if (!e) {
		/* First wish: nothing to do if the unit already has the value. */
		*keep = !same(a->value, a->cpus, cur, cur_cpus);
		e = plan_insert(st, a->id, a->kind);
		if (!e)
			return -ENOMEM;
	} else {
		bool wish_changed = !same(a->value, a->cpus, e->value, str_or_empty(e->cpus));
		bool changed_by_others =
			!same(cur, cur_cpus, a->value, a->cpus) &&
			!same(cur, cur_cpus, e->seen_value, str_or_empty(e->seen_cpus));

		/*
		 * The agent's retry tick, 10 ms after a write that raced its
		 * cgroup's creator, does not judge the ask: it goes again, the
		 * misses and their holds count from the next look. Any other tick
		 * judges, however soon it comes (a tree change can wake one 10 ms
		 * after a refused write: judged as a retry, it asked again at once).
		 */
		bool quick = !dry_run && e->asked && in->after_race &&
			     !same(cur, cur_cpus, e->value, str_or_empty(e->cpus)) &&
			     in->ts_ns - e->asked_ns < (uint64_t)(PLAN_QUICK_RETRY_S * 1e9);
		bool retry;

		hold = !quick && held(e, cur, cur_cpus, in->ts_ns, dry_run);
		/*
		 * A missed ask is asked again when its hold ends, even unchanged: what
		 * refused it may have gone (a cgroup its creator was still making).
		 */
		retry = (quick || e->misses) && !same(cur, cur_cpus, a->value, a->cpus);
		/* A change by others may have cleared what refused the write: ask at once. */
		*keep = changed_by_others || ((wish_changed || retry) && !hold);
	}
	e->asked = *keep;
	if (*keep)
		e->asked_ns = in->ts_ns;
	/* A held wish is not asked yet: it stays a change, asked when the hold ends. */
	if (*keep || !hold) {
		e->value = a->value;
		if (set_cpus(&e->cpus, a->cpus))
			return -ENOMEM;
	}
	e->seen_value = cur;
	return set_cpus(&e->seen_cpus, cur_cpus);
}

static bool wished(const struct wish_key *keys, size_t n, const struct plan_entry *e)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (keys[mid].id == e->id && keys[mid].kind == (uint32_t)e->kind)
			return true;
		if (keys[mid].id < e->id ||
		    (keys[mid].id == e->id && keys[mid].kind < (uint32_t)e->kind))
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* A release of the setting e: on its unit, or on a container (the class its pod's). */
static struct action *release(struct action_list *out, const struct plan_entry *e,
			      const struct pol_unit *u, const struct pol_container *c,
			      const struct pol_input *in)
{
	const struct pol_unit *pod = c ? pol_input_find(in, c->unit) : NULL;
	struct action *a = action_add(out, e->kind, u, RULE_PLAN_RELEASE);

	if (!a)
		return NULL;
	a->restore = true;
	if (c) {
		a->id = c->id;
		a->cls = pod ? pod->cls : QOS_UNMANAGED;
		snprintf(a->path, sizeof(a->path), "%s", c->path);
	}
	return a;
}

/*
 * Entries of targets (units, containers) that left the input go. A setting
 * of a present target that no policy wants any more (an interference cap
 * lapsed, nothing else sets a quota on that unit) is handed back: the
 * actuator restores the owner's value. Without this a lapsed cap would
 * stay for good.
 */
static int plan_release(struct plan_state *st, const struct pol_input *in,
			const struct wish_key *keys, size_t n_keys, struct action_list *out)
{
	size_t n = 0;

	for (size_t i = 0; i < st->n; i++) {
		const struct plan_entry *e = &st->v[i];
		const struct pol_unit *u = pol_input_find(in, e->id);
		const struct pol_container *c = u ? NULL : pol_container_find(in, e->id);

		if ((u || c) && wished(keys, n_keys, e)) {
			st->v[n++] = *e;
			continue;
		}
		if ((u || c) && !release(out, e, u, c, in)) {
			/* the entries not looked at yet stay, after the kept ones */
			memmove(&st->v[n], e, (st->n - i) * sizeof(*e));
			st->n = n + st->n - i;
			return -ENOMEM;
		}
		entry_free(&st->v[i]);
	}
	st->n = n;
	return 0;
}

/*
 * Belt and braces under the policies' own care (cpu_pool): a cpuset wish
 * that names a CPU a pod holds alone, or aims at a pinned pod, or whose
 * list cannot be checked against them. The policies never make one (their
 * tests say so); should one come, it is refused here, where every policy's
 * wishes meet, rather than in the actuator, which knows cgroup files only.
 */
static bool on_exclusive(const struct pol_input *in, const struct action *w)
{
	bool excl[POL_CPUS_MAX], want[POL_CPUS_MAX];
	const struct pol_unit *u;

	if (w->kind != ACT_CPUSET || w->restore)
		return false;
	u = pol_input_owner(in, w->id);
	if (u && u->pinned_cpus)
		return true;
	if (!in->exclusive_cpus[0])
		return false;
	if (cpu_list_parse(in->exclusive_cpus, excl, POL_CPUS_MAX) ||
	    cpu_list_parse(w->cpus, want, POL_CPUS_MAX))
		return true;
	for (int cpu = 0; cpu < POL_CPUS_MAX; cpu++)
		if (excl[cpu] && want[cpu])
			return true;
	return false;
}

/*
 * A refused cpuset wish (on_exclusive) as a report on its target: nothing
 * is written, the kernel keeps what it has, and the refused rule is the
 * report's cause.
 */
static int refuse(const struct action *w, struct action_list *out)
{
	struct action *a = action_add(out, ACT_REPORT, NULL, RULE_PLAN_EXCLUSIVE_CPUS);

	if (!a)
		return -ENOMEM;
	*a = *w;
	a->kind = ACT_REPORT;
	a->rule = RULE_PLAN_EXCLUSIVE_CPUS;
	a->cause = (struct act_cause){.kind = ACT_CAUSE_REFUSED_RULE, .rule = w->rule};
	return 0;
}

int plan_apply(struct plan_state *st, const struct pol_input *in, const struct action_list *wishes,
	       bool dry_run, struct action_list *out)
{
	struct wish_key *keys = index_wishes(wishes);
	size_t *take = malloc((wishes->n ? wishes->n : 1) * sizeof(*take));
	size_t n_take;
	int err = keys && take ? 0 : -ENOMEM;

	if (!err) {
		n_take = merge(wishes, keys, take);
		err = plan_release(st, in, keys, wishes->n, out);
	}
	for (size_t i = 0; !err && i < n_take; i++) {
		const struct action *w = &wishes->v[take[i]];
		bool keep;
		struct action *a;

		if (on_exclusive(in, w)) {
			err = refuse(w, out);
			continue;
		}
		err = keep_if_new(st, in, w, dry_run, &keep);
		if (err || !keep)
			continue;
		a = action_add(out, w->kind, NULL, w->rule);
		if (!a)
			err = -ENOMEM;
		else
			*a = *w;
	}
	free(take);
	free(keys);
	return err;
}

const char *plan_held(const struct plan_progress *p, const struct action *act)
{
	return act->ls_split && p->be_cpus_missed
		       ? "held: a BE cpuset of this tick did not land, and LS keeps its CPUs "
			 "until BE is off them"
		       : NULL;
}

void plan_progress_note(struct plan_progress *p, const struct action *act, bool failed)
{
	if (failed && act->kind == ACT_CPUSET && act->cls == QOS_BE)
		p->be_cpus_missed = true;
}

void plan_state_free(struct plan_state *st)
{
	for (size_t i = 0; i < st->n; i++)
		entry_free(&st->v[i]);
	free(st->v);
	memset(st, 0, sizeof(*st));
}
