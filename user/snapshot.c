// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "snapshot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

void snapshot_free(struct snapshot *s)
{
	free(s->cgroups);
	free(s->blame);
	free(s->ooms);
	memset(s, 0, sizeof(*s));
}

struct cg_sample *snapshot_add(struct snapshot *s, uint64_t id)
{
	struct cg_sample *cg;

	if (array_grow((void **)&s->cgroups, &s->cap_cgroups, s->n_cgroups, sizeof(*cg)))
		return NULL;
	cg = &s->cgroups[s->n_cgroups++];
	memset(cg, 0, sizeof(*cg));
	cg->id = id;
	return cg;
}

int snapshot_add_blame(struct snapshot *s, const struct blame_sample *b)
{
	if (array_grow((void **)&s->blame, &s->cap_blame, s->n_blame, sizeof(*b)))
		return -ENOMEM;
	s->blame[s->n_blame++] = *b;
	return 0;
}

int snapshot_add_oom(struct snapshot *s, const struct oom_event *e)
{
	if (array_grow((void **)&s->ooms, &s->cap_ooms, s->n_ooms, sizeof(*e)))
		return -ENOMEM;
	s->ooms[s->n_ooms++] = *e;
	return 0;
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

/* Copies the parts `src` holds into `dst`; each probe fills only its own. */
static void merge_parts(struct cg_sample *dst, const struct cg_sample *src)
{
	if (src->parts & CG_RQ)
		dst->rq = src->rq;
	if (src->parts & CG_CPU)
		dst->cpu = src->cpu;
	if (src->parts & CG_THROTTLE)
		dst->throttle = src->throttle;
	if (src->parts & CG_MEMSTALL)
		dst->mem = src->mem;
	if (src->parts & CG_PSI)
		dst->psi = src->psi;
	dst->parts |= src->parts;
}

/* Where each record sits, sorted by id: records are ~1 KB, so sort these. */
struct cg_order {
	uint64_t id;
	size_t idx;
};

static int cmp_order(const void *a, const void *b)
{
	const struct cg_order *x = a, *y = b;

	return x->id != y->id ? cmp_u64(x->id, y->id) : cmp_u64(x->idx, y->idx);
}

/* Merges runs of one id of the sorted records, in place. */
static size_t merge_runs(struct cg_sample *v, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (m && v[m - 1].id == v[i].id)
			merge_parts(&v[m - 1], &v[i]);
		else if (m++ != i)
			v[m - 1] = v[i];
	}
	return m;
}

/*
 * Moves the records into the order ord gives (ord[k].idx: the record for
 * place k), following each cycle of the permutation with one record
 * aside; ord's idx become k.
 */
static void permute(struct cg_sample *v, struct cg_order *ord, size_t n)
{
	struct cg_sample aside;

	for (size_t k = 0; k < n; k++) {
		size_t j = k;

		if (ord[k].idx == k)
			continue;
		aside = v[k];
		while (ord[j].idx != k) {
			size_t from = ord[j].idx;

			v[j] = v[from];
			ord[j].idx = j;
			j = from;
		}
		v[j] = aside;
		ord[j].idx = j;
	}
}

/* The agent's sched probe hands its pairs over sorted (blame_totals.h): no sort then. */
static bool blame_sorted(const struct snapshot *s)
{
	for (size_t i = 1; i < s->n_blame; i++)
		if (cmp_blame(&s->blame[i - 1], &s->blame[i]) > 0)
			return false;
	return true;
}

void snapshot_finish(struct snapshot *s)
{
	size_t n = s->n_cgroups;
	struct cg_order *ord = malloc((n + 1) * sizeof(*ord));

	/*
	 * Sorted in place: a sorted copy was a second array of every record
	 * (1.5 KB each, ~750 KiB at 500 pods) mapped, faulted in and the old
	 * one unmapped at every tick. The records are sorted through their
	 * ids (ord), then each moved once.
	 */
	if (ord) {
		for (size_t i = 0; i < n; i++)
			ord[i] = (struct cg_order){s->cgroups[i].id, i};
		qsort(ord, n, sizeof(*ord), cmp_order);
		permute(s->cgroups, ord, n);
	} else if (n) { /* out of memory: the slow way */
		qsort(s->cgroups, n, sizeof(*s->cgroups), cmp_cg);
	}
	s->n_cgroups = merge_runs(s->cgroups, n);
	free(ord);
	if (!blame_sorted(s))
		qsort(s->blame, s->n_blame, sizeof(*s->blame), cmp_blame);
}

const struct cg_sample *snapshot_find(const struct snapshot *s, uint64_t id)
{
	struct cg_sample key = {.id = id};

	return s->n_cgroups ? bsearch(&key, s->cgroups, s->n_cgroups, sizeof(key), cmp_cg) : NULL;
}

/* now - before for one counter; a counter that went down restarted from zero. */
static uint64_t dc(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : now;
}

void io_dev_add(struct io_dev_bytes *v, size_t n, uint32_t dev, uint64_t bytes)
{
	for (size_t i = 0; dev && bytes && i < n; i++) {
		if (v[i].dev && v[i].dev != dev)
			continue;
		v[i].dev = dev;
		v[i].bytes += bytes;
		return;
	}
}

uint32_t io_dev_top(const struct io_dev_bytes *v, size_t n)
{
	uint32_t dev = 0;
	uint64_t most = 0;

	for (size_t i = 0; i < n; i++)
		if (v[i].dev && v[i].bytes > most) {
			most = v[i].bytes;
			dev = v[i].dev;
		}
	return dev;
}

/* Per disk, matched by device (a slot's disk may differ between two reads). */
static void io_dev_delta(struct io_dev_bytes *out, const struct io_dev_bytes *now,
			 const struct io_dev_bytes *before)
{
	memset(out, 0, SNAPSHOT_IO_DEVS * sizeof(*out));
	for (size_t i = 0; i < SNAPSHOT_IO_DEVS; i++) {
		uint64_t was = 0;

		for (size_t j = 0; j < SNAPSHOT_IO_DEVS; j++)
			if (before[j].dev && before[j].dev == now[i].dev)
				was = before[j].bytes;
		io_dev_add(out, SNAPSHOT_IO_DEVS, now[i].dev, dc(now[i].bytes, was));
	}
}

static void delta_psi_lines(struct psi_line *out, const struct psi_line *now,
			    const struct psi_line *before)
{
	for (int r = 0; r < PSI_NR; r++) {
		out[r] = now[r];
		out[r].total_us = dc(now[r].total_us, before[r].total_us);
	}
}

/* out = now - before, part by part; true when the interval saw activity. */
static bool delta_cg(struct cg_sample *out, const struct cg_sample *now,
		     const struct cg_sample *before)
{
	bool active = false;

	memset(out, 0, sizeof(*out));
	out->id = now->id;
	out->parts = now->parts;
	if (now->parts & CG_RQ) {
		hist_delta(&out->rq, &now->rq, &before->rq);
		active |= out->rq.count > 0;
	}
	if (now->parts & CG_CPU) {
		out->cpu.cpu_ns = dc(now->cpu.cpu_ns, before->cpu.cpu_ns);
		out->cpu.numerator = dc(now->cpu.numerator, before->cpu.numerator);
		out->cpu.denominator = dc(now->cpu.denominator, before->cpu.denominator);
		active |= out->cpu.cpu_ns > 0;
	}
	if (now->parts & CG_THROTTLE) {
		const struct throttle_sample *n = &now->throttle, *b = &before->throttle;

		out->throttle = (struct throttle_sample){
			.nr_periods = dc(n->nr_periods, b->nr_periods),
			.nr_throttled = dc(n->nr_throttled, b->nr_throttled),
			.throttled_ns = dc(n->throttled_ns, b->throttled_ns),
			.nr_bursts = dc(n->nr_bursts, b->nr_bursts),
			.burst_ns = dc(n->burst_ns, b->burst_ns),
			.events = dc(n->events, b->events),
		};
		active |= out->throttle.nr_periods > 0 || out->throttle.events > 0;
	}
	if (now->parts & CG_MEMSTALL) {
		hist_delta(&out->mem.direct, &now->mem.direct, &before->mem.direct);
		hist_delta(&out->mem.memcg, &now->mem.memcg, &before->mem.memcg);
		hist_delta(&out->mem.stall, &now->mem.stall, &before->mem.stall);
		hist_delta(&out->mem.iowait, &now->mem.iowait, &before->mem.iowait);
		out->mem.io_bytes = dc(now->mem.io_bytes, before->mem.io_bytes);
		io_dev_delta(out->mem.io_dev, now->mem.io_dev, before->mem.io_dev);
		out->mem.oom_kills = dc(now->mem.oom_kills, before->mem.oom_kills);
		active |= out->mem.direct.count || out->mem.memcg.count || out->mem.oom_kills ||
			  out->mem.stall.count || out->mem.iowait.count || out->mem.io_bytes;
	}
	if (now->parts & CG_PSI) {
		delta_psi_lines(out->psi.some, now->psi.some, before->psi.some);
		delta_psi_lines(out->psi.full, now->psi.full, before->psi.full);
		for (int r = 0; r < PSI_NR; r++)
			active |= out->psi.some[r].total_us > 0;
	}
	return active;
}

static size_t delta_cgroups(struct cg_sample *out, const struct snapshot *now,
			    const struct snapshot *before)
{
	static const struct cg_sample zero;
	size_t n = 0, j = 0;

	for (size_t i = 0; i < now->n_cgroups; i++) {
		const struct cg_sample *cur = &now->cgroups[i], *old = &zero;

		while (j < before->n_cgroups && before->cgroups[j].id < cur->id)
			j++;
		if (j < before->n_cgroups && before->cgroups[j].id == cur->id)
			old = &before->cgroups[j];
		if (delta_cg(&out[n], cur, old))
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
	out->cpi_hardware = now->cpi_hardware;
	out->memstall_psi = now->memstall_psi;
	out->cap_cgroups = now->n_cgroups ? now->n_cgroups : 1;
	out->cap_blame = now->n_blame ? now->n_blame : 1;
	out->cgroups = calloc(out->cap_cgroups, sizeof(*out->cgroups));
	out->blame = calloc(out->cap_blame, sizeof(*out->blame));
	if (!out->cgroups || !out->blame) {
		snapshot_free(out);
		return -ENOMEM;
	}
	out->n_cgroups = delta_cgroups(out->cgroups, now, before);
	out->n_blame = delta_blame(out->blame, now, before);
	for (size_t i = 0; i < now->n_ooms; i++) {
		if (snapshot_add_oom(out, &now->ooms[i])) {
			snapshot_free(out);
			return -ENOMEM;
		}
	}
	for (int i = 0; i < SCHED_DROP_NR; i++)
		out->sched_drops[i] = dc(now->sched_drops[i], before->sched_drops[i]);
	out->cpi_mode = now->cpi_mode;
	for (int i = 0; i < CPI_DROP_NR; i++)
		out->cpi_drops[i] = dc(now->cpi_drops[i], before->cpi_drops[i]);
	for (int i = 0; i < MEMSTALL_DROP_NR; i++)
		out->memstall_drops[i] = dc(now->memstall_drops[i], before->memstall_drops[i]);
	return 0;
}

void cg_sample_accumulate(struct cg_sample *acc, const struct cg_sample *d)
{
	if (d->parts & CG_RQ)
		hist_add(&acc->rq, &d->rq);
	if (d->parts & CG_CPU) {
		acc->cpu.cpu_ns += d->cpu.cpu_ns;
		acc->cpu.numerator += d->cpu.numerator;
		acc->cpu.denominator += d->cpu.denominator;
	}
	if (d->parts & CG_MEMSTALL) {
		hist_add(&acc->mem.direct, &d->mem.direct);
		hist_add(&acc->mem.memcg, &d->mem.memcg);
		hist_add(&acc->mem.stall, &d->mem.stall);
		hist_add(&acc->mem.iowait, &d->mem.iowait);
		acc->mem.io_bytes += d->mem.io_bytes;
		for (size_t i = 0; i < SNAPSHOT_IO_DEVS; i++)
			io_dev_add(acc->mem.io_dev, SNAPSHOT_IO_DEVS, d->mem.io_dev[i].dev,
				   d->mem.io_dev[i].bytes);
		acc->mem.oom_kills += d->mem.oom_kills;
	}
	acc->parts |= d->parts & (CG_RQ | CG_CPU | CG_MEMSTALL);
}
