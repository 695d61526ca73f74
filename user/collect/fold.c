// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "collect/fold.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/path.h"

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

static int cmp_party(const void *a, const void *b)
{
	return cmp_u64(((const struct pol_mem_party *)a)->name.id,
		       ((const struct pol_mem_party *)b)->name.id);
}

/* Several cgroups of one outside party (a slice's services) add up to one entry. */
static void merge_parties(struct pol_input *in)
{
	size_t n = 0;

	if (in->n_mem_outside)
		qsort(in->mem_outside, in->n_mem_outside, sizeof(*in->mem_outside), cmp_party);
	for (size_t i = 0; i < in->n_mem_outside; i++) {
		if (n && in->mem_outside[n - 1].name.id == in->mem_outside[i].name.id) {
			in->mem_outside[n - 1].reclaim_ns += in->mem_outside[i].reclaim_ns;
			in->mem_outside[n - 1].io_bytes += in->mem_outside[i].io_bytes;
		} else {
			in->mem_outside[n++] = in->mem_outside[i];
		}
	}
	in->n_mem_outside = n;
}

int collect_fold_mem(const struct collect_member *members, size_t n_members,
		     const struct snapshot *delta, bool stall_from_probe, collect_namer name,
		     void *ctx, struct pol_input *in)
{
	bool stall = stall_from_probe && delta->memstall_psi;

	in->mem_outside = calloc(delta->n_cgroups ? delta->n_cgroups : 1, sizeof(*in->mem_outside));
	in->n_mem_outside = 0;
	if (!in->mem_outside)
		return -ENOMEM;
	/* each unit's disk: the one its busiest cgroup used most */
	uint64_t *dev_bytes = calloc(in->n_units + 1, sizeof(*dev_bytes));

	if (!dev_bytes)
		return -ENOMEM;
	for (size_t i = 0; stall && i < in->n_units; i++)
		in->units[i].ms.has_stall = in->units[i].ms.has_io = true;
	for (size_t i = 0; i < delta->n_cgroups; i++) {
		const struct cg_sample *cg = &delta->cgroups[i];
		const struct collect_member *m = collect_member_find(members, n_members, cg->id);
		struct pol_unit *u = m ? (struct pol_unit *)pol_input_find(in, m->unit) : NULL;
		uint64_t reclaim = cg->mem.direct.sum_ns + cg->mem.memcg.sum_ns;
		/* the bio hook's bytes, also where the units' come from io.stat (v2) */
		uint64_t bytes = delta->memstall_psi ? cg->mem.io_bytes : 0;
		struct pol_mem_party *o = &in->mem_outside[in->n_mem_outside];

		if (!(cg->parts & CG_MEMSTALL))
			continue;
		if (u) {
			uint32_t dev = io_dev_top(cg->mem.io_dev, SNAPSHOT_IO_DEVS);
			size_t ui = (size_t)(u - in->units);

			if (dev && cg->mem.io_bytes > dev_bytes[ui]) {
				dev_bytes[ui] = cg->mem.io_bytes;
				u->ms.io_dev = dev;
			}
			u->ms.reclaim_ns += reclaim;
			if (stall) {
				u->ms.stall_ns += reclaim + cg->mem.stall.sum_ns;
				u->ms.io_ns += cg->mem.iowait.sum_ns;
				u->ms.io_bytes += cg->mem.io_bytes;
			}
			continue;
		}
		/* a party must not pass for a unit */
		if (!m && (reclaim || bytes) && !name(ctx, cg->id, &o->name) &&
		    !pol_input_find(in, o->name.id)) {
			o->reclaim_ns = reclaim;
			o->io_bytes = bytes;
			in->n_mem_outside++;
		}
	}
	free(dev_bytes);
	merge_parties(in);
	return 0;
}

/* A culprit outside every unit keeps its cgroup id for an LS victim, else it is OTHER. */
static uint64_t blame_party(const struct collect_member *members, size_t n_members, uint64_t cgid,
			    bool keep_outside)
{
	const struct collect_member *m;

	if (cgid == QOSLET_CULPRIT_IDLE)
		return POL_CULPRIT_IDLE;
	m = collect_member_find(members, n_members, cgid);
	return m ? m->unit : keep_outside ? cgid : POL_CULPRIT_OTHER;
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

/* Beyond a victim's COLLECT_OUTSIDE_PER_VICTIM largest outside parties, the rest are OTHER. */
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

static int cmp_id(const void *a, const void *b)
{
	return cmp_u64(*(const uint64_t *)a, *(const uint64_t *)b);
}

static int cmp_outside(const void *a, const void *b)
{
	return cmp_u64(((const struct pol_outside *)a)->id, ((const struct pol_outside *)b)->id);
}

/*
 * Every outside culprit becomes its party (the namer's answer: the cgroup
 * at the depth that explains it, so the services of one slice add up), or
 * OTHER when it has none; in->outside gets each party once, sorted by id.
 */
static int to_parties(struct pol_input *in, collect_namer name, void *ctx)
{
	uint64_t *leaf = malloc((in->n_blame ? in->n_blame : 1) * sizeof(*leaf));
	uint64_t *party;
	size_t n = 0, m = 0;

	in->outside = calloc(in->n_blame ? in->n_blame : 1, sizeof(*in->outside));
	in->n_outside = 0;
	party = leaf ? malloc((in->n_blame ? in->n_blame : 1) * sizeof(*party)) : NULL;
	if (!in->outside || !party) {
		free(leaf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < in->n_blame; i++)
		if (is_outside(in, in->blame[i].culprit))
			leaf[n++] = in->blame[i].culprit;
	if (n)
		qsort(leaf, n, sizeof(*leaf), cmp_id);
	for (size_t i = 0; i < n; i++) {
		struct pol_outside o = {0};

		if (m && leaf[m - 1] == leaf[i])
			continue;
		leaf[m] = leaf[i];
		/* a party must not pass for a unit or a placeholder */
		party[m++] =
			!name(ctx, leaf[i], &o) && is_outside(in, o.id) ? o.id : POL_CULPRIT_OTHER;
		if (party[m - 1] != POL_CULPRIT_OTHER)
			in->outside[in->n_outside++] = o;
	}
	/* several culprits may share a party: each once */
	if (in->n_outside)
		qsort(in->outside, in->n_outside, sizeof(*in->outside), cmp_outside);
	n = 0;
	for (size_t i = 0; i < in->n_outside; i++)
		if (!n || in->outside[n - 1].id != in->outside[i].id)
			in->outside[n++] = in->outside[i];
	in->n_outside = n;
	for (size_t i = 0; i < in->n_blame; i++) {
		const uint64_t *k =
			is_outside(in, in->blame[i].culprit)
				? bsearch(&in->blame[i].culprit, leaf, m, sizeof(*leaf), cmp_id)
				: NULL;

		if (k)
			in->blame[i].culprit = party[k - leaf];
	}
	free(leaf);
	free(party);
	return 0;
}

/* Forgets the parties no pair names any more (those keep_largest made OTHER). */
static void drop_unused(struct pol_input *in)
{
	size_t k = 0;

	for (size_t i = 0; i < in->n_outside; i++) {
		bool used = false;

		for (size_t j = 0; j < in->n_blame && !used; j++)
			used = in->blame[j].culprit == in->outside[i].id;
		if (used)
			in->outside[k++] = in->outside[i];
	}
	in->n_outside = k;
}

int collect_fold_blame(const struct collect_member *members, size_t n_members,
		       const struct snapshot *delta, collect_namer name, void *ctx,
		       struct pol_input *in)
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
			v->unit, blame_party(members, n_members, b->culprit, qos_is_ls(v->cls)),
			b->wait_ns, b->count};
	}
	in->n_blame = n;
	err = to_parties(in, name, ctx);
	if (err)
		return err;
	/* the culprits of one party (and those that became OTHER) make one pair */
	merge_pairs(in, in->n_blame);
	err = keep_largest(in);
	if (!err) {
		merge_pairs(in, in->n_blame);
		drop_unused(in);
	}
	return err;
}

/* Whether the n-byte path component at c ends in suffix (".slice", ".service"). */
static bool ends_in(const char *c, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && !memcmp(c + n - k, suffix, k);
}

size_t collect_outside_depth(const char *path, const char *subtree)
{
	const char *slash = strrchr(subtree, '/');
	size_t base = slash ? (size_t)(slash - subtree) : 0, end;
	bool in_slice = false;

	if (cgroup_path_within(path, subtree))
		return strlen(path);
	/* below the node's root (the subtree's parent), else below the hierarchy's */
	if (!base || strncmp(path, subtree, base) || (path[base] != '/' && path[base]))
		base = 0;
	end = base;
	while (path[end]) {
		const char *c = path + end + (end > 0);
		size_t n = strcspn(c, "/");

		/* a slice's child slice, or its service: an operator's unit; anything else ends it
		 */
		if (end > base && in_slice && !ends_in(c, n, ".slice")) {
			if (ends_in(c, n, ".service"))
				end = (size_t)(c - path) + n;
			break;
		}
		end = (size_t)(c - path) + n;
		in_slice = ends_in(c, n, ".slice");
		if (!in_slice)
			break;
	}
	return end;
}
