// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/evict_round.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct cand {
	const struct pol_unit *u;
	double key;
};

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* The order of evict_round.h; start_ns 0 (unknown) sorts as the oldest start. */
static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->u->priority != y->u->priority)
		return cmp_i64(x->u->priority, y->u->priority);
	if (x->u->evict_priority != y->u->evict_priority)
		return cmp_i64(x->u->evict_priority, y->u->evict_priority);
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	if (x->u->start_ns != y->u->start_ns)
		return x->u->start_ns > y->u->start_ns ? -1 : 1;
	return x->u->id < y->u->id ? -1 : x->u->id > y->u->id;
}

/* Whether the order must pass u by; kube-system only counts without evict.kube_system. */
static bool guarded(const struct pol_unit *u, const struct evict_order_config *order)
{
	return u->evict_guard != EVICT_GUARD_NONE &&
	       !(u->evict_guard == EVICT_GUARD_KUBE_SYSTEM && order->kube_system);
}

/* Drops the units named too long ago, or gone: their release has landed (or never will). */
static void expire(struct evict_round *r, const struct pol_input *in)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n_pending; i++) {
		struct evict_pending *p = &r->pending[i];

		if (pol_since_s(in->ts_ns, &p->ts_ns) < EVICT_PENDING_S &&
		    pol_input_find(in, p->id))
			r->pending[k++] = *p;
	}
	r->n_pending = k;
}

static bool is_pending(const struct evict_round *r, uint64_t id)
{
	for (size_t i = 0; i < r->n_pending; i++)
		if (r->pending[i].id == id)
			return true;
	return false;
}

int evict_round_select(struct evict_round *r, const struct pol_input *in,
		       const struct evict_order_config *order, double cooldown_s, double need,
		       const struct evict_measure *m, struct evict_victims *out)
{
	struct cand *c;
	size_t n = 0;
	double left, got = 0;

	memset(out, 0, sizeof(*out));
	expire(r, in);
	if (r->has_round && pol_since_s(in->ts_ns, &r->last_round_ns) < cooldown_s)
		return 0;
	for (size_t i = 0; i < r->n_pending; i++)
		out->pending += m->amount(pol_input_find(in, r->pending[i].id));
	left = need - out->pending;
	if (left <= 0)
		return 0;

	c = malloc((in->n_units + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];

		if (u->cls == QOS_BE && !is_pending(r, u->id))
			c[n++] = (struct cand){u, m->key(u)};
	}
	qsort(c, n, sizeof(*c), cand_cmp);
	out->v = malloc((n + 1) * sizeof(*out->v));
	out->skipped = malloc((n + 1) * sizeof(*out->skipped));
	if (!out->v || !out->skipped) {
		free(c);
		evict_victims_free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && got < left; i++) {
		if (guarded(c[i].u, order)) {
			out->skipped[out->n_skipped++] = c[i].u;
			continue;
		}
		out->v[out->n++] = c[i].u;
		got += m->amount(c[i].u);
	}
	free(c);
	return 0;
}

/* Seconds the unit has run at the tick; -1 when its start is unknown. */
static double run_s(const struct pol_unit *u, const struct pol_input *in)
{
	if (!u->start_ns)
		return -1;
	return in->ts_ns > u->start_ns ? (double)(in->ts_ns - u->start_ns) / 1e9 : 0;
}

void evict_order_evidence(struct action *a, const struct pol_unit *u, const struct pol_input *in)
{
	action_evidence(a, "victim_priority", u->priority);
	action_evidence(a, "victim_evict_priority", u->evict_priority);
	action_evidence(a, "victim_run_s", run_s(u, in));
}

int evict_round_report_skipped(const struct evict_victims *v, const struct pol_input *in,
			       const struct evict_measure *m, enum rule_id rule,
			       struct action_list *out)
{
	for (size_t i = 0; i < v->n_skipped; i++) {
		const struct pol_unit *u = v->skipped[i];
		struct action *a = action_add(out, ACT_REPORT, u, rule);

		if (!a)
			return -ENOMEM;
		a->cause = (struct act_cause){.kind = ACT_CAUSE_GUARD, .guard = u->evict_guard};
		action_evidence(a, "victim_key", m->key(u));
		action_evidence(a, "victim_amount", m->amount(u));
		evict_order_evidence(a, u, in);
	}
	return 0;
}

int evict_round_commit(struct evict_round *r, const struct evict_victims *v, uint64_t now_ns)
{
	if (!v->n && !v->n_skipped)
		return 0;
	if (r->n_pending + v->n > r->cap_pending) {
		size_t cap = r->n_pending + v->n + 16;
		struct evict_pending *p = realloc(r->pending, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->pending = p;
		r->cap_pending = cap;
	}
	for (size_t i = 0; i < v->n; i++)
		r->pending[r->n_pending++] = (struct evict_pending){v->v[i]->id, now_ns};
	r->has_round = true;
	r->last_round_ns = now_ns;
	return 0;
}

void evict_victims_free(struct evict_victims *v)
{
	free(v->v);
	free(v->skipped);
	memset(v, 0, sizeof(*v));
}

void evict_round_free(struct evict_round *r)
{
	free(r->pending);
	memset(r, 0, sizeof(*r));
}
