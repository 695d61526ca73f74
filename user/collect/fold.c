// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "fold.h"

#include <errno.h>
#include <stdlib.h>

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_member(const void *a, const void *b)
{
	return cmp_u64(((const struct collect_member *)a)->cgid,
		       ((const struct collect_member *)b)->cgid);
}

const struct collect_member *collect_member_find(const struct collect_member *members, size_t n,
						 uint64_t cgid)
{
	struct collect_member key = {.cgid = cgid};

	/* bsearch() must not see the NULL of an empty list, even for 0 elements */
	return n ? bsearch(&key, members, n, sizeof(key), cmp_member) : NULL;
}

/* Adds the probes' per-cgroup numbers of the interval to the unit each cgroup belongs to. */
int collect_fold_probes(const struct collect_member *members, size_t n_members,
			const struct snapshot *delta, struct pol_input *in,
			struct cg_sample *totals)
{
	/* cycles and instructions summed over the unit's cgroups, then divided */
	double *num = calloc(in->n_units ? in->n_units : 1, 2 * sizeof(double)), *den;

	if (!num)
		return -ENOMEM;
	den = num + in->n_units;
	for (size_t i = 0; i < delta->n_cgroups; i++) {
		const struct cg_sample *cg = &delta->cgroups[i];
		const struct collect_member *m = collect_member_find(members, n_members, cg->id);
		struct pol_unit *u = m ? (struct pol_unit *)pol_input_find(in, m->unit) : NULL;
		size_t k;

		if (!u)
			continue;
		k = (size_t)(u - in->units);
		cg_sample_accumulate(&totals[k], cg);
		if (cg->parts & CG_RQ)
			hist_add(&u->rq, &cg->rq);
		/* Only real cycles/instructions make a CPI: the software stand-ins are not one. */
		if ((cg->parts & CG_CPU) && delta->cpi_hardware) {
			num[k] += (double)cg->cpu.numerator;
			den[k] += (double)cg->cpu.denominator;
		}
	}
	for (size_t i = 0; i < in->n_units; i++)
		if (den[i] > 0) {
			in->units[i].cpi = num[i] / den[i];
			in->units[i].has_cpi = true;
		}
	free(num);
	return 0;
}

static uint64_t blame_party(const struct collect_member *members, size_t n_members, uint64_t cgid)
{
	const struct collect_member *m;

	if (cgid == QOSLET_CULPRIT_IDLE)
		return POL_CULPRIT_IDLE;
	m = collect_member_find(members, n_members, cgid);
	return m ? m->unit : POL_CULPRIT_OTHER;
}

static int cmp_blame(const void *a, const void *b)
{
	const struct pol_blame *x = a, *y = b;

	if (x->victim != y->victim)
		return cmp_u64(x->victim, y->victim);
	return cmp_u64(x->culprit, y->culprit);
}

/* Who delayed whom, between units: waits of cgroups outside every unit are left out. */
int collect_fold_blame(const struct collect_member *members, size_t n_members,
		       const struct snapshot *delta, struct pol_input *in)
{
	size_t n = 0;

	in->blame = calloc(delta->n_blame ? delta->n_blame : 1, sizeof(*in->blame));
	if (!in->blame)
		return -ENOMEM;
	for (size_t i = 0; i < delta->n_blame; i++) {
		const struct blame_sample *b = &delta->blame[i];
		const struct collect_member *v = collect_member_find(members, n_members, b->victim);

		if (!v || !b->wait_ns)
			continue;
		in->blame[n++] = (struct pol_blame){
			v->unit, blame_party(members, n_members, b->culprit), b->wait_ns};
	}
	qsort(in->blame, n, sizeof(*in->blame), cmp_blame);
	/* Several cgroups of one unit make one pair. */
	in->n_blame = 0;
	for (size_t i = 0; i < n; i++) {
		struct pol_blame *last = in->n_blame ? &in->blame[in->n_blame - 1] : NULL;

		if (last && !cmp_blame(last, &in->blame[i]))
			last->wait_ns += in->blame[i].wait_ns;
		else
			in->blame[in->n_blame++] = in->blame[i];
	}
	return 0;
}
