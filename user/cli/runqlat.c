// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* qoslet runqlat: run-queue latency per cgroup, as histograms and quantiles. */
#include "cli/runqlat.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "cli/view.h"

#define BAR_WIDTH 40

static json_t *cgroup_json(struct view *v, const struct cg_sample *cg)
{
	json_t *buckets = json_array();

	/* Every bucket, empty or not: a fixed shape is easier on consumers. */
	for (int i = 0; i < QOSLET_LAT_SLOTS; i++) {
		uint64_t le = hist_slot_le_ns(i);

		json_array_append_new(buckets,
				      json_pack("{s:o, s:I}", "le_ns",
						le == UINT64_MAX ? json_null() : json_integer(le),
						"count", (json_int_t)cg->rq.slots[i]));
	}
	json_t *o = view_cgroup_json(v, cg->id);

	json_object_update_new(
		o, json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}", "count", (json_int_t)cg->rq.count,
			     "sum_ns", (json_int_t)cg->rq.sum_ns, "p50_ns",
			     (json_int_t)hist_quantile_ns(&cg->rq, 0.50), "p90_ns",
			     (json_int_t)hist_quantile_ns(&cg->rq, 0.90), "p99_ns",
			     (json_int_t)hist_quantile_ns(&cg->rq, 0.99), "buckets", buckets));
	return o;
}

static void print_text(FILE *out, const char *path, const struct cg_sample *cg)
{
	char a[32], b[32], c[32], d[32];
	uint64_t max = 0;
	int first = -1, last = -1;

	fprintf(out, "\ncgroup %s (id %llu): %llu waits, avg %s, p50 %s, p90 %s, p99 %s\n",
		path ? path : "(removed)", (unsigned long long)cg->id,
		(unsigned long long)cg->rq.count,
		view_fmt_ns(cg->rq.count ? (double)cg->rq.sum_ns / cg->rq.count : 0, a, sizeof(a)),
		view_fmt_ns(hist_quantile_ns(&cg->rq, 0.50), b, sizeof(b)),
		view_fmt_ns(hist_quantile_ns(&cg->rq, 0.90), c, sizeof(c)),
		view_fmt_ns(hist_quantile_ns(&cg->rq, 0.99), d, sizeof(d)));
	for (int i = 0; i < QOSLET_LAT_SLOTS; i++) {
		if (!cg->rq.slots[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (cg->rq.slots[i] > max)
			max = cg->rq.slots[i];
	}
	if (first < 0)
		return;
	fprintf(out, "  %12s  %10s  distribution\n", "wait <=", "count");
	for (int i = first; i <= last; i++) {
		uint64_t le = hist_slot_le_ns(i);
		int bar = (int)(cg->rq.slots[i] * BAR_WIDTH / max);
		char bars[BAR_WIDTH + 1];

		memset(bars, '*', bar);
		bars[bar] = '\0';
		fprintf(out, "  %12s  %10llu  |%-*s|\n",
			le == UINT64_MAX ? "+Inf" : view_fmt_ns((double)le, a, sizeof(a)),
			(unsigned long long)cg->rq.slots[i], BAR_WIDTH, bars);
	}
}

/* One cgroup to report and the p99 it is ranked by. */
struct ranked {
	const struct cg_sample *cg;
	uint64_t p99_ns;
};

/* Worst p99 first; ties by id, so the order is stable from one run to the next. */
static int by_p99_desc(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->p99_ns != y->p99_ns)
		return x->p99_ns < y->p99_ns ? 1 : -1;
	return (x->cg->id > y->cg->id) - (x->cg->id < y->cg->id);
}

/* The selected cgroups of `delta`, worst p99 first, at most --top of them; NULL when out of memory.
 */
static struct ranked *rank(struct view *v, const struct snapshot *delta, size_t *n)
{
	struct ranked *rows = calloc(delta->n_cgroups ? delta->n_cgroups : 1, sizeof(*rows));

	*n = 0;
	if (!rows)
		return NULL;
	for (size_t i = 0; i < delta->n_cgroups; i++) {
		const struct cg_sample *cg = &delta->cgroups[i];

		if (view_selected(v, cg->id))
			rows[(*n)++] = (struct ranked){cg, hist_quantile_ns(&cg->rq, 0.99)};
	}
	qsort(rows, *n, sizeof(*rows), by_p99_desc);
	if (v->args.top && *n > (size_t)v->args.top)
		*n = v->args.top;
	return rows;
}

static void render(struct view *v, const struct snapshot *delta, FILE *out)
{
	json_t *doc = v->args.json ? view_json_header(v, delta) : NULL;
	json_t *list = json_array();
	size_t n;
	struct ranked *rows = rank(v, delta, &n);

	if (!rows) {
		log_err("out of memory");
		json_decref(doc);
		json_decref(list);
		return;
	}
	if (!v->args.json) {
		char a[32];
		time_t t = delta->ts_ns / 1000000000ULL;
		struct tm tm;
		char when[32];

		strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
		fprintf(out, "%s  run-queue latency per cgroup over %s%s, worst p99 first (%s%s)\n",
			when, view_fmt_ns((double)v->interval_ns, a, sizeof(a)),
			v->partial ? " (interrupted)" : "",
			probe_set_status(v->probes, PROBE_SCHED).detail,
			probe_set_owner(v->probes) ? "" : ", shared");
	}
	for (size_t i = 0; i < n; i++) {
		char buf[PATH_MAX + 2];

		if (v->args.json)
			json_array_append_new(list, cgroup_json(v, rows[i].cg));
		else
			print_text(out, view_cgroup_path(v, rows[i].cg->id, buf, sizeof(buf)),
				   rows[i].cg);
	}
	free(rows);
	if (v->args.json) {
		json_object_set_new(doc, "cgroups", list);
		view_json_emit(doc, out);
	} else {
		json_decref(list);
		fflush(out);
	}
}

const struct view_ops runqlat_view = {
	.name = "runqlat",
	.summary = "run-queue latency histograms per cgroup",
	.usage =
		"Usage: qoslet runqlat [-c CGROUP]... [--top N] [-j] [INTERVAL [COUNT]]\n"
		"\n"
		"Per cgroup, how long runnable tasks waited for a CPU: a log2 histogram,\n"
		"count, average and p50/p90/p99 over each interval. A wait is charged to the\n"
		"cgroup of the task that waited. Only cgroups that waited in the interval\n"
		"are shown, worst p99 first. Buckets are upper bounds (Prometheus 'le'); quantiles are\n"
		"interpolated inside a bucket as Prometheus does.\n",
	.examples = "  qoslet runqlat 10 1\n"
		    "      one 10 s report of every cgroup that waited, worst p99 first\n"
		    "  qoslet runqlat -c kubepods/burstable --top 5 -j 60\n"
		    "      every minute, the 5 burstable cgroups with the worst p99, as JSON\n",
	.probes = PROBE_BIT(PROBE_SCHED),
	.options = VIEW_OPT_WAIT_SOURCE | VIEW_OPT_TOP,
	.render = render,
};
