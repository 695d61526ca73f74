// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cli/top_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *title;
	char key;
} cols[TOP_COL_NR] = {
	[TOP_COL_NAME] = {"CGROUP", 'n'},   [TOP_COL_CPU] = {"CPU%", 'c'},
	[TOP_COL_RQ_P99] = {"RQ-P99", 'r'}, [TOP_COL_THROTTLED] = {"THR%", 't'},
	[TOP_COL_CPI] = {"CPI", 'i'},	    [TOP_COL_RECLAIM_P99] = {"RECLAIM-P99", 'm'},
	[TOP_COL_PSI] = {"PSI10", 'p'},	    [TOP_COL_MEM_STALL] = {"MEM%", 's'},
	[TOP_COL_IO_STALL] = {"IO%", 'o'},
};

const char *top_col_title(enum top_col col)
{
	return cols[col].title;
}

char top_col_key(enum top_col col)
{
	return cols[col].key;
}

/*
 * The culprit (not idle, not itself) that cost this victim the most wait.
 * Pairs are sorted by victim: binary-search the victim's run.
 */
static void top_culprit(struct top_row *row, const struct snapshot *delta)
{
	size_t lo = 0, hi = delta->n_blame;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (delta->blame[mid].victim < row->id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < delta->n_blame && delta->blame[i].victim == row->id; i++) {
		const struct blame_sample *b = &delta->blame[i];

		if (b->culprit == QOSLET_CULPRIT_IDLE || b->culprit == row->id ||
		    b->wait_ns <= row->culprit_wait_ns)
			continue;
		row->culprit = b->culprit;
		row->culprit_wait_ns = b->wait_ns;
	}
}

static double reclaim_p99(const struct memstall_sample *m)
{
	struct lat_hist both = m->direct;

	hist_add(&both, &m->memcg);
	return both.count ? hist_quantile_ns(&both, 0.99) : TOP_NA;
}

static void fill_values(struct top_row *row, const struct cg_sample *cg,
			const struct snapshot *delta, uint64_t interval_ns,
			const struct mem_explain *mx)
{
	const struct mem_explain_cg *e = mem_explain_find(mx, cg->id);

	bool cpi_hardware = delta->cpi_hardware;

	const struct throttle_sample *thr = &cg->throttle;

	for (int c = 0; c < TOP_COL_NR; c++)
		row->val[c] = TOP_NA;
	if ((cg->parts & CG_CPU) && interval_ns)
		row->val[TOP_COL_CPU] = 100.0 * (double)cg->cpu.cpu_ns / (double)interval_ns;
	if ((cg->parts & CG_CPU) && cpi_hardware && cg->cpu.denominator)
		row->val[TOP_COL_CPI] = (double)cg->cpu.numerator / (double)cg->cpu.denominator;
	if ((cg->parts & CG_RQ) && cg->rq.count)
		row->val[TOP_COL_RQ_P99] = hist_quantile_ns(&cg->rq, 0.99);
	if ((cg->parts & CG_THROTTLE) && thr->nr_periods)
		row->val[TOP_COL_THROTTLED] =
			100.0 * (double)thr->nr_throttled / (double)thr->nr_periods;
	if (cg->parts & CG_MEMSTALL)
		row->val[TOP_COL_RECLAIM_P99] = reclaim_p99(&cg->mem);
	if ((cg->parts & CG_MEMSTALL) && delta->memstall_psi && interval_ns) {
		row->val[TOP_COL_MEM_STALL] =
			e ? 100.0 * (double)e->mem.stall_ns / (double)interval_ns : 0;
		if (e)
			row->mem = e->mem;
		row->val[TOP_COL_IO_STALL] =
			100.0 * (double)cg->mem.iowait.sum_ns / (double)interval_ns;
	}
	if (cg->parts & CG_PSI) {
		double max = 0;

		for (int r = 0; r < PSI_NR; r++)
			if (cg->psi.some[r].avg10 > max)
				max = cg->psi.some[r].avg10;
		row->val[TOP_COL_PSI] = max;
	}
}

size_t top_rows_build(struct top_row *rows, const struct snapshot *delta, uint64_t interval_ns,
		      const struct mem_explain *mx, top_path_fn path, void *ctx)
{
	for (size_t i = 0; i < delta->n_cgroups; i++) {
		const struct cg_sample *cg = &delta->cgroups[i];
		struct top_row *row = &rows[i];

		memset(row, 0, sizeof(*row));
		row->id = cg->id;
		if (!path(ctx, cg->id, row->path, sizeof(row->path)))
			snprintf(row->path, sizeof(row->path), "(removed)");
		row->is_kube = kube_path_parse(row->path, &row->kube);
		fill_values(row, cg, delta, interval_ns, mx);
		top_culprit(row, delta);
	}
	return delta->n_cgroups;
}

/* qsort() has no context argument; sorting is single-threaded. */
static enum top_col sort_col;

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	double u, v;

	if (sort_col == TOP_COL_NAME)
		return strcmp(x->path, y->path);
	u = x->val[sort_col];
	v = y->val[sort_col];
	if (u != v)
		return u > v ? -1 : 1; /* TOP_NA (-1) sorts after every real value */
	return strcmp(x->path, y->path);
}

void top_rows_sort(struct top_row *rows, size_t n, enum top_col col)
{
	sort_col = col;
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_rows);
}

size_t top_rows_filter(struct top_row *rows, size_t n, const char *needle)
{
	size_t kept = 0;

	if (!needle || !*needle)
		return n;
	for (size_t i = 0; i < n; i++)
		if (strstr(rows[i].path, needle))
			rows[kept++] = rows[i];
	return kept;
}
