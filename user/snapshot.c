// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void snapshot_free(struct snapshot *s)
{
	free(s->cgroups);
	free(s->blame);
	memset(s, 0, sizeof(*s));
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_cg(const void *a, const void *b)
{
	return cmp_u64(((const struct cg_sample *)a)->id, ((const struct cg_sample *)b)->id);
}

static int cmp_blame(const void *a, const void *b)
{
	const struct blame_sample *x = a, *y = b;

	return x->victim != y->victim ? cmp_u64(x->victim, y->victim)
				      : cmp_u64(x->culprit, y->culprit);
}

void snapshot_sort(struct snapshot *s)
{
	if (s->n_cgroups)
		qsort(s->cgroups, s->n_cgroups, sizeof(*s->cgroups), cmp_cg);
	if (s->n_blame)
		qsort(s->blame, s->n_blame, sizeof(*s->blame), cmp_blame);
}

/* Both inputs sorted: a merge walk finds each `now` entry's predecessor. */
static size_t delta_cgroups(struct cg_sample *out, const struct snapshot *now,
			    const struct snapshot *before)
{
	static const struct rq_hist zero;
	size_t n = 0, j = 0;

	for (size_t i = 0; i < now->n_cgroups; i++) {
		const struct cg_sample *cur = &now->cgroups[i];
		const struct rq_hist *old = &zero;

		while (j < before->n_cgroups && before->cgroups[j].id < cur->id)
			j++;
		if (j < before->n_cgroups && before->cgroups[j].id == cur->id)
			old = &before->cgroups[j].rq;
		out[n].id = cur->id;
		hist_delta(&out[n].rq, &cur->rq, old);
		if (out[n].rq.count)
			n++;
	}
	return n;
}

static size_t delta_blame(struct blame_sample *out, const struct snapshot *now,
			  const struct snapshot *before)
{
	size_t n = 0, j = 0;

	for (size_t i = 0; i < now->n_blame; i++) {
		const struct blame_sample *cur = &now->blame[i];
		struct blame_sample d = *cur;

		while (j < before->n_blame && cmp_blame(&before->blame[j], cur) < 0)
			j++;
		/* A pair that shrank was evicted and re-created: count it anew. */
		if (j < before->n_blame && !cmp_blame(&before->blame[j], cur) &&
		    before->blame[j].count <= cur->count &&
		    before->blame[j].wait_ns <= cur->wait_ns) {
			d.count -= before->blame[j].count;
			d.wait_ns -= before->blame[j].wait_ns;
		}
		if (d.count)
			out[n++] = d;
	}
	return n;
}

int snapshot_delta(struct snapshot *out, const struct snapshot *now, const struct snapshot *before)
{
	memset(out, 0, sizeof(*out));
	out->ts_ns = now->ts_ns;
	out->cgroups = calloc(now->n_cgroups ? now->n_cgroups : 1, sizeof(*out->cgroups));
	out->blame = calloc(now->n_blame ? now->n_blame : 1, sizeof(*out->blame));
	if (!out->cgroups || !out->blame) {
		snapshot_free(out);
		return -ENOMEM;
	}
	out->n_cgroups = delta_cgroups(out->cgroups, now, before);
	out->n_blame = delta_blame(out->blame, now, before);
	for (int i = 0; i < SCHED_DROP_NR; i++)
		out->drops[i] = now->drops[i] >= before->drops[i] ? now->drops[i] - before->drops[i]
								  : now->drops[i];
	return 0;
}
