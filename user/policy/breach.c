// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/breach.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

/* The entries are the input's units already, in order: the common tick. */
static bool units_same(const char *v, size_t n, size_t size, const struct pol_input *in)
{
	uint64_t at;

	if (n != in->n_units)
		return false;
	for (size_t i = 0; i < n; i++) {
		memcpy(&at, v + i * size, sizeof(at));
		if (at != in->units[i].id)
			return false;
	}
	return true;
}

int breach_units_sync(void **v, size_t *n, size_t size, const struct pol_input *in)
{
	char *next, *old = *v;
	size_t j = 0;

	/*
	 * Most ticks the units are those of the last one: the entries stay
	 * where they are. A new array every tick (~1 KB a unit for
	 * interference: half a MiB at 500 pods, above the mmap threshold) cost
	 * its page faults, a copy and an munmap each time.
	 */
	if (units_same(old, *n, size, in))
		return 0;
	next = malloc((in->n_units + 1) * size);
	if (!next)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_units; i++) {
		uint64_t id = in->units[i].id, at;
		char *e = next + i * size;

		for (; j < *n; j++) {
			memcpy(&at, old + j * size, sizeof(at));
			if (at >= id)
				break;
		}
		if (j < *n && at == id) {
			memcpy(e, old + j * size, size);
			continue;
		}
		memset(e, 0, size);
		memcpy(e, &id, sizeof(id));
	}
	free(*v);
	*v = next;
	*n = in->n_units;
	return 0;
}

void breach_window_push(struct breach_window *w, bool over)
{
	w->over = w->over << 1 | (uint64_t)over;
	if (w->n < BREACH_N_MAX)
		w->n++;
}

unsigned int breach_windows(const struct breach_window *w, unsigned int n)
{
	return w->n < n ? w->n : n;
}

unsigned int breach_windows_over(const struct breach_window *w, unsigned int n)
{
	uint64_t mask = n >= 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;

	return (unsigned int)__builtin_popcountll(w->over & mask);
}

struct breach_tick *breach_tick_open(struct breach_state *st, unsigned int window_n, size_t n,
				     size_t n_out)
{
	struct breach_tick *b = &st->ticks[st->tick % window_n];

	if (array_reserve((void **)&b->v, &b->cap, n, sizeof(*b->v)) ||
	    array_reserve((void **)&b->out, &b->cap_out, n_out, sizeof(*b->out)))
		return NULL;
	b->n = 0;
	b->n_out = 0;
	b->tick = st->tick;
	return b;
}

static size_t first_of(const struct breach_tick *b, uint64_t victim)
{
	return pol_lower_bound(b->v, b->n, sizeof(*b->v), offsetof(struct pol_blame, victim),
			       victim);
}

static int culprit_cmp(const void *a, const void *b)
{
	const struct pol_blame *x = a, *y = b;

	return x->culprit < y->culprit ? -1 : x->culprit > y->culprit;
}

int breach_waits_collect(const struct breach_state *st, unsigned int window_n, uint64_t victim,
			 struct breach_waits *w)
{
	uint64_t tick = st->tick;
	size_t n = 0, k = 0;

	memset(w, 0, sizeof(*w));
	/* Pass 0 counts the victim's pairs in the kept ticks, pass 1 copies them. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t t = tick; t >= 1 && t + window_n > tick; t--) {
			const struct breach_tick *b = &st->ticks[t % window_n];

			if (b->tick != t)
				continue;
			for (size_t i = first_of(b, victim); i < b->n && b->v[i].victim == victim;
			     i++) {
				if (pass)
					w->v[k++] = b->v[i];
				else
					n++;
			}
		}
		if (!pass && !(w->v = malloc((n + 1) * sizeof(*w->v))))
			return -ENOMEM;
	}
	qsort(w->v, n, sizeof(*w->v), culprit_cmp);
	for (size_t i = 0; i < n; i++) {
		w->total += w->v[i].wait_ns;
		if (w->n && w->v[w->n - 1].culprit == w->v[i].culprit)
			w->v[w->n - 1].wait_ns += w->v[i].wait_ns;
		else
			w->v[w->n++] = w->v[i];
	}
	return 0;
}

uint64_t breach_waits_of(const struct breach_waits *w, uint64_t culprit)
{
	struct pol_blame key = {.culprit = culprit};
	const struct pol_blame *p =
		w->n ? bsearch(&key, w->v, w->n, sizeof(key), culprit_cmp) : NULL;

	return p ? p->wait_ns : 0;
}

/* What kind of party a culprit of victim's pairs is. */
static enum interference_cause cause_of(const struct pol_input *in, const struct breach_state *st,
					uint64_t victim, uint64_t culprit)
{
	if (culprit == victim)
		return CAUSE_SELF;
	switch (culprit) {
	case POL_CULPRIT_QUOTA:
		return CAUSE_QUOTA;
	case POL_CULPRIT_IDLE:
		return CAUSE_IDLE;
	case POL_CULPRIT_LIMIT:
		return CAUSE_LIMIT;
	case POL_CULPRIT_NODE:
		return CAUSE_NODE;
	default:
		break;
	}
	/* a unit gone since is outside the units now */
	if (pol_input_find(in, culprit))
		return CAUSE_UNIT;
	return st->ancestors && pol_mem_party_find(in->mem_ancestors, in->n_mem_ancestors, culprit)
		       ? CAUSE_ANCESTOR
		       : CAUSE_OUTSIDE;
}

bool breach_explain(const struct pol_input *in, const struct breach_state *st, uint64_t victim,
		    const struct breach_waits *w, struct breach_party *top, double share[CAUSE_NR])
{
	memset(share, 0, CAUSE_NR * sizeof(*share));
	if (!w->total)
		return false;
	for (size_t i = 0; i < w->n; i++) {
		struct breach_party p = {w->v[i].culprit, cause_of(in, st, victim, w->v[i].culprit),
					 w->v[i].wait_ns,
					 (double)w->v[i].wait_ns / (double)w->total, NAN};

		share[p.cause] += p.share;
		if (!i || p.share > top->share || (p.share == top->share && p.cause < top->cause))
			*top = p;
	}
	return true;
}

struct breach_pair *breach_pair_find(struct breach_state *st, uint64_t victim, uint64_t culprit)
{
	for (size_t i = 0; i < st->n_pairs; i++)
		if (st->pairs[i].victim == victim && st->pairs[i].culprit == culprit)
			return &st->pairs[i];
	return NULL;
}

/* An outside culprit is not in the input on every tick: its pair lasts its cap_s. */
void breach_pairs_expire(struct breach_state *st, const struct pol_input *in, double cap_s)
{
	size_t k = 0;

	for (size_t i = 0; i < st->n_pairs; i++) {
		struct breach_pair *p = &st->pairs[i];

		if (pol_since_s(in->ts_ns, &p->reported_ns) < cap_s &&
		    pol_input_find(in, p->victim) &&
		    (p->cause != CAUSE_UNIT || pol_input_find(in, p->culprit)))
			st->pairs[k++] = *p;
	}
	st->n_pairs = k;
}

/* The name of an outside culprit in the kept ticks, newest first; NULL when none named it. */
static const struct pol_outside *outside_name(const struct breach_state *st, unsigned int window_n,
					      uint64_t id)
{
	for (uint64_t t = st->tick; t >= 1 && t + window_n > st->tick; t--) {
		const struct breach_tick *b = &st->ticks[t % window_n];
		const struct pol_outside *o =
			b->tick == t ? pol_outside_find(b->out, b->n_out, id) : NULL;

		if (o)
			return o;
	}
	return NULL;
}

/* The report's other party: the culprit named by path, the victim for self and its limits. */
static enum qos_class relate(const struct pol_input *in, const struct breach_state *st,
			     unsigned int window_n, const struct pol_unit *v,
			     const struct breach_party *p, struct action *a)
{
	const struct pol_unit *u = NULL;
	const struct pol_outside *o;

	switch (p->cause) {
	case CAUSE_UNIT:
		u = pol_input_find(in, p->id);
		break;
	case CAUSE_SELF:
	case CAUSE_QUOTA:
	case CAUSE_LIMIT:
		u = v;
		break;
	case CAUSE_OUTSIDE:
	case CAUSE_ANCESTOR:
		o = outside_name(st, window_n, p->id);
		if (!o)
			return QOS_UNMANAGED; /* not named: tasks outside the units, unnamed */
		a->related_id = o->id;
		snprintf(a->related, sizeof(a->related), "%s", o->path);
		return o->cls;
	default:
		return QOS_UNMANAGED; /* the idle CPU, the node */
	}
	a->related_id = u->id;
	snprintf(a->related, sizeof(a->related), "%s", u->path);
	return u->cls;
}

int breach_report(const struct pol_input *in, struct breach_state *st, unsigned int window_n,
		  const struct pol_unit *v, const struct breach_party *p,
		  const double share[CAUSE_NR], unsigned int causes, enum rule_id rule,
		  breach_evidence_fn fn, const void *ctx, struct action_list *out)
{
	static const char *const share_names[CAUSE_NR] = {
		[CAUSE_UNIT] = "share_unit",	     [CAUSE_OUTSIDE] = "share_outside",
		[CAUSE_SELF] = "share_self",	     [CAUSE_QUOTA] = "share_quota",
		[CAUSE_IDLE] = "share_idle",	     [CAUSE_LIMIT] = "share_own_limit",
		[CAUSE_ANCESTOR] = "share_ancestor", [CAUSE_NODE] = "share_node",
	};
	enum qos_class cls;
	struct action *a;

	if (breach_pair_find(st, v->id, p->id))
		return 0;
	if (array_grow((void **)&st->pairs, &st->cap_pairs, st->n_pairs, sizeof(*st->pairs)))
		return -ENOMEM;
	a = action_add(out, ACT_REPORT, v, rule);
	if (!a)
		return -ENOMEM;
	st->pairs[st->n_pairs++] = (struct breach_pair){v->id, p->id, p->cause, in->ts_ns};
	a->cause = (struct act_cause){.kind = ACT_CAUSE_INTERFERENCE, .interference = p->cause};
	cls = relate(in, st, window_n, v, p, a);
	fn(a, ctx);
	action_evidence(a, "culprit_wait_share", p->share);
	action_evidence(a, "culprit_wait_ns", (double)p->wait_ns);
	if (!isnan(p->corr))
		action_evidence(a, "correlation", p->corr);
	action_evidence(a, "culprit_class", cls);
	for (int c = 0; c < CAUSE_NR; c++)
		if (causes & (1u << c))
			action_evidence(a, share_names[c], share[c]);
	return 0;
}

void breach_state_free(struct breach_state *st)
{
	for (size_t i = 0; i < BREACH_N_MAX; i++) {
		free(st->ticks[i].v);
		free(st->ticks[i].out);
	}
	free(st->pairs);
	memset(st, 0, sizeof(*st));
}
