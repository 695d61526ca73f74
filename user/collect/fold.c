// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "fold.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "../policy/interference.h"

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
			struct cg_sample *const *totals)
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
		cg_sample_accumulate(totals[k], cg);
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

/* A victim whose outside culprits are worth naming: an LS unit whose window is over. */
static bool breaching(const struct pol_input *in, uint64_t unit,
		      const struct interference_config *icfg)
{
	const struct pol_unit *u = pol_input_find(in, unit);
	double p99;

	return u && interference_window(u, icfg, &p99) == 1;
}

static uint64_t blame_party(const struct collect_member *members, size_t n_members, uint64_t cgid,
			    bool named)
{
	const struct collect_member *m;

	if (cgid == QOSLET_CULPRIT_IDLE)
		return POL_CULPRIT_IDLE;
	m = collect_member_find(members, n_members, cgid);
	return m ? m->unit : named ? cgid : POL_CULPRIT_OTHER;
}

static int cmp_blame(const void *a, const void *b)
{
	const struct pol_blame *x = a, *y = b;

	if (x->victim != y->victim)
		return cmp_u64(x->victim, y->victim);
	return cmp_u64(x->culprit, y->culprit);
}

/* Sorts in->blame[0..n) and adds up the pairs that are one (several cgroups of one unit). */
static void merge_pairs(struct pol_input *in, size_t n)
{
	qsort(in->blame, n, sizeof(*in->blame), cmp_blame);
	in->n_blame = 0;
	for (size_t i = 0; i < n; i++) {
		struct pol_blame *last = in->n_blame ? &in->blame[in->n_blame - 1] : NULL;

		if (last && !cmp_blame(last, &in->blame[i])) {
			last->wait_ns += in->blame[i].wait_ns;
			last->count += in->blame[i].count;
		} else {
			in->blame[in->n_blame++] = in->blame[i];
		}
	}
}

/* A culprit kept by its own cgroup id: neither a unit nor one of the placeholders. */
static bool is_outside(const struct pol_input *in, uint64_t culprit)
{
	return culprit != POL_CULPRIT_IDLE && culprit != POL_CULPRIT_OTHER &&
	       !pol_input_find(in, culprit);
}

/* Beyond a victim's COLLECT_OUTSIDE_PER_VICTIM largest outside culprits, the rest are OTHER. */
static int keep_largest(struct pol_input *in)
{
	bool *drop = calloc(in->n_blame ? in->n_blame : 1, sizeof(*drop));

	if (!drop)
		return -ENOMEM;
	for (size_t a = 0, b; a < in->n_blame; a = b) {
		for (b = a; b < in->n_blame && in->blame[b].victim == in->blame[a].victim; b++)
			;
		for (size_t i = a; i < b; i++) {
			const struct pol_blame *x = &in->blame[i];
			size_t ahead = 0;

			for (size_t j = a; j < b && is_outside(in, x->culprit); j++) {
				const struct pol_blame *y = &in->blame[j];

				ahead += j != i && is_outside(in, y->culprit) &&
					 (y->wait_ns > x->wait_ns ||
					  (y->wait_ns == x->wait_ns && y->culprit < x->culprit));
			}
			drop[i] = ahead >= COLLECT_OUTSIDE_PER_VICTIM;
		}
	}
	for (size_t i = 0; i < in->n_blame; i++)
		if (drop[i])
			in->blame[i].culprit = POL_CULPRIT_OTHER;
	free(drop);
	return 0;
}

static int cmp_outside(const void *a, const void *b)
{
	return cmp_u64(((const struct pol_outside *)a)->id, ((const struct pol_outside *)b)->id);
}

/* in->outside: a name for every outside culprit left; one that has none becomes OTHER. */
static int name_outside(struct pol_input *in, collect_namer name, void *ctx)
{
	size_t n = 0;

	in->outside = calloc(in->n_blame ? in->n_blame : 1, sizeof(*in->outside));
	if (!in->outside)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_blame; i++)
		if (is_outside(in, in->blame[i].culprit))
			in->outside[n++].id = in->blame[i].culprit;
	qsort(in->outside, n, sizeof(*in->outside), cmp_outside);
	in->n_outside = 0;
	for (size_t i = 0; i < n; i++) {
		struct pol_outside *o = &in->outside[in->n_outside];

		if (in->n_outside && o[-1].id == in->outside[i].id)
			continue;
		o->id = in->outside[i].id;
		if (!name(ctx, o->id, o))
			in->n_outside++;
	}
	for (size_t i = 0; i < in->n_blame; i++)
		if (is_outside(in, in->blame[i].culprit) &&
		    !pol_outside_find(in->outside, in->n_outside, in->blame[i].culprit))
			in->blame[i].culprit = POL_CULPRIT_OTHER;
	return 0;
}

int collect_fold_blame(const struct collect_member *members, size_t n_members,
		       const struct snapshot *delta, const struct interference_config *icfg,
		       collect_namer name, void *ctx, struct pol_input *in)
{
	size_t n = 0;
	int err;

	in->blame = calloc(delta->n_blame ? delta->n_blame : 1, sizeof(*in->blame));
	if (!in->blame)
		return -ENOMEM;
	for (size_t i = 0; i < delta->n_blame; i++) {
		const struct blame_sample *b = &delta->blame[i];
		const struct collect_member *v = collect_member_find(members, n_members, b->victim);

		/*
		 * No policy takes a BE unit as a victim: on a node of BE pods the
		 * BE pairs filled the map (8000 of them at 500 pods), and sorting
		 * them every tick was a tenth of the agent's CPU. LS units are the
		 * policies' victims, SYSTEM ones the summary line's (off
		 * Kubernetes); both are few.
		 */
		if (!v || !b->count || v->cls == QOS_BE)
			continue;
		in->blame[n++] = (struct pol_blame){
			v->unit,
			blame_party(members, n_members, b->culprit, breaching(in, v->unit, icfg)),
			b->wait_ns, b->count};
	}
	merge_pairs(in, n);
	err = keep_largest(in) ?: name_outside(in, name, ctx);
	/* the culprits that became OTHER join their victim's OTHER pair */
	if (!err)
		merge_pairs(in, in->n_blame);
	return err;
}
