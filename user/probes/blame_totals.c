// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/blame_totals.h"

#include <errno.h>
#include <stdlib.h>

#include "grow.h"

static int cmp_pair(uint64_t v1, uint64_t c1, uint64_t v2, uint64_t c2)
{
	if (v1 != v2)
		return v1 < v2 ? -1 : 1;
	return (c1 > c2) - (c1 < c2);
}

static int cmp_sample(const void *a, const void *b)
{
	const struct blame_sample *x = a, *y = b;

	return cmp_pair(x->victim, x->culprit, y->victim, y->culprit);
}

int blame_incs_add(struct blame_incs *l, const struct blame_key *key, const struct blame_val *vals,
		   int ncpus)
{
	struct blame_sample *b;

	if (array_grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)))
		return -ENOMEM;
	b = &l->v[l->n++];
	*b = (struct blame_sample){.victim = key->victim, .culprit = key->culprit};
	for (int cpu = 0; cpu < ncpus; cpu++) {
		b->wait_ns += vals[cpu].wait_ns;
		b->count += vals[cpu].count;
	}
	return 0;
}

/* Sorts l and sums the entries of one pair into one; returns how many are left. */
static size_t sort_and_sum(struct blame_incs *l)
{
	size_t m = 0;

	if (!l->n)
		return 0;
	qsort(l->v, l->n, sizeof(*l->v), cmp_sample);
	for (size_t i = 1; i < l->n; i++) {
		if (!cmp_sample(&l->v[m], &l->v[i])) {
			l->v[m].wait_ns += l->v[i].wait_ns;
			l->v[m].count += l->v[i].count;
		} else {
			l->v[++m] = l->v[i];
		}
	}
	return m + 1;
}

static int cmp_total_inc(const struct blame_total *e, const struct blame_sample *b)
{
	return cmp_pair(e->victim, e->culprit, b->victim, b->culprit);
}

int blame_totals_add(struct blame_totals *t, struct blame_incs *l)
{
	size_t m = sort_and_sum(l), fresh = 0, i, j, w;

	l->n = 0;
	/* Pairs the totals lack: the merge below needs their room first. */
	for (i = 0, j = 0; j < m;) {
		int c = i < t->n ? cmp_total_inc(&t->v[i], &l->v[j]) : 1;

		if (c < 0) {
			i++;
		} else {
			fresh += c > 0;
			i += !c;
			j++;
		}
	}
	if (array_reserve((void **)&t->v, &t->cap, t->n + fresh, sizeof(*t->v)))
		return -ENOMEM;
	/* Merged from the back, in place: nothing is moved before it is read. */
	i = t->n;
	j = m;
	w = t->n + fresh;
	while (j > 0) {
		const struct blame_sample *b = &l->v[j - 1];
		int c = i > 0 ? cmp_total_inc(&t->v[i - 1], b) : -1;

		if (c > 0) {
			t->v[--w] = t->v[--i];
			continue;
		}
		if (c == 0) {
			t->v[--w] = t->v[--i];
		} else {
			t->v[--w] = (struct blame_total){
				.victim = b->victim, .culprit = b->culprit, .grown = t->reading};
		}
		t->v[w].given_wait_ns += b->wait_ns;
		t->v[w].given_count += b->count;
		j--;
	}
	t->n += fresh;
	return 0;
}

static uint64_t since(uint64_t now, uint64_t base)
{
	return now > base ? now - base : 0; /* a slot emptied by a removal holds zeros */
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

enum { TRIM_AGES = 256 }; /* readings; older ones count as the oldest */

static uint32_t age_of(const struct blame_totals *t, const struct blame_total *e)
{
	uint32_t age = t->reading - e->grown;

	return age < TRIM_AGES ? age : TRIM_AGES - 1;
}

/*
 * Drops the pairs that grew longest ago, down to 7/8 of the bound (so that
 * it runs once in a few readings, not at each), by age in readings: all of
 * the ages above `cut`, and of age `cut` as many as are still needed (the
 * first in pair order). Never a pair that grew at this reading.
 */
static void trim(struct blame_totals *t)
{
	size_t count[TRIM_AGES] = {0}, drop = t->n - BLAME_TOTALS_MAX * 7 / 8, dropped = 0, m = 0;
	uint32_t cut = TRIM_AGES - 1;

	for (size_t i = 0; i < t->n; i++)
		count[age_of(t, &t->v[i])]++;
	while (cut > 1 && dropped + count[cut] < drop)
		dropped += count[cut--];
	drop -= dropped; /* now: how many of age `cut` go */
	for (size_t i = 0; i < t->n; i++) {
		uint32_t age = age_of(t, &t->v[i]);

		if (age > cut || (age == cut && drop && drop--))
			continue;
		t->v[m++] = t->v[i];
	}
	t->n = m;
}

int blame_totals_emit(struct blame_totals *t, const struct cached_pair *cached, size_t n_cached,
		      struct snapshot *s)
{
	struct blame_incs keys = {0};
	const struct cached_pair *c = cached, *end = n_cached ? cached + n_cached : cached;
	int err = 0;

	/* A pair only a cache holds yet gets its total too. */
	for (size_t i = 0; i < n_cached && !err; i++)
		err = blame_incs_add(&keys, &cached[i].key, &(struct blame_val){0}, 1);
	if (!err)
		err = blame_totals_add(t, &keys);
	blame_incs_free(&keys);
	if (err)
		return err;
	t->reading++;
	for (size_t i = 0; i < t->n; i++) {
		struct blame_total *e = &t->v[i];
		uint64_t wait = e->given_wait_ns, count = e->given_count;

		/* Both sorted by pair: c walks the cached runs alongside. */
		while (c < end &&
		       cmp_pair(c->key.victim, c->key.culprit, e->victim, e->culprit) < 0)
			c++;
		for (; c < end && c->key.victim == e->victim && c->key.culprit == e->culprit; c++) {
			wait += since(c->val.wait_ns, c->base.wait_ns);
			count += since(c->val.count, c->base.count);
		}
		if (wait > e->shown_wait_ns || count > e->shown_count) {
			e->shown_wait_ns = max_u64(e->shown_wait_ns, wait);
			e->shown_count = max_u64(e->shown_count, count);
			e->grown = t->reading;
		}
	}
	if (t->n > BLAME_TOTALS_MAX)
		trim(t);
	for (size_t i = 0; i < t->n && !err; i++) {
		const struct blame_total *e = &t->v[i];
		struct blame_sample b = {e->victim, e->culprit, e->shown_wait_ns, e->shown_count};

		if (b.count)
			err = snapshot_add_blame(s, &b);
	}
	return err;
}

void blame_totals_forget(struct blame_totals *t, const uint64_t *ids, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct blame_total *e = &t->v[i];
		size_t k = 0;

		while (k < n && e->victim != ids[k] && e->culprit != ids[k])
			k++;
		if (k == n)
			t->v[m++] = *e;
	}
	t->n = m;
}

void blame_totals_free(struct blame_totals *t)
{
	free(t->v);
	*t = (struct blame_totals){0};
}

void blame_incs_free(struct blame_incs *l)
{
	free(l->v);
	*l = (struct blame_incs){0};
}
