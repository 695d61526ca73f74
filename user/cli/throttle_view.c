// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* qoslet throttle: CFS bandwidth throttling per cgroup with a CPU quota. */
#include "cli/throttle_view.h"

#include <stdlib.h>
#include <time.h>

/* Selected cgroups of the interval, most throttled time first. */
static int cmp_throttled(const void *a, const void *b)
{
	const struct cg_sample *x = *(const struct cg_sample *const *)a;
	const struct cg_sample *y = *(const struct cg_sample *const *)b;

	if (x->throttle.throttled_ns != y->throttle.throttled_ns)
		return x->throttle.throttled_ns < y->throttle.throttled_ns ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static double throttled_pct(const struct throttle_sample *t)
{
	return t->nr_periods ? 100.0 * t->nr_throttled / t->nr_periods : 0;
}

static json_t *cgroup_json(struct view *v, const struct cg_sample *cg)
{
	const struct throttle_sample *t = &cg->throttle;
	json_t *o = view_cgroup_json(v, cg->id);

	json_object_update_new(
		o, json_pack("{s:I, s:I, s:f, s:I, s:I, s:I, s:I}", "nr_periods",
			     (json_int_t)t->nr_periods, "nr_throttled", (json_int_t)t->nr_throttled,
			     "throttled_pct", throttled_pct(t), "throttled_ns",
			     (json_int_t)t->throttled_ns, "nr_bursts", (json_int_t)t->nr_bursts,
			     "burst_ns", (json_int_t)t->burst_ns, "events", (json_int_t)t->events));
	return o;
}

static void print_header(struct view *v, FILE *out, const char *path)
{
	char a[32], when[32];
	time_t t = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
	fprintf(out, "%s  CFS throttling per cgroup over %s (%s%s)\n", when,
		view_fmt_ns((double)v->interval_ns, a, sizeof(a)), path,
		probe_set_owner(v->probes) ? "" : ", shared");
	fprintf(out, "%8s %9s %6s %10s %6s %10s %7s  %s\n", "PERIODS", "THROTTLED", "THR%",
		"THR_TIME", "BURSTS", "BURST_TIME", "EVENTS", "CGROUP");
}

static void print_row(FILE *out, const char *path, const struct cg_sample *cg)
{
	const struct throttle_sample *t = &cg->throttle;
	char a[32], b[32];

	fprintf(out, "%8llu %9llu %5.1f%% %10s %6llu %10s %7llu  %s\n",
		(unsigned long long)t->nr_periods, (unsigned long long)t->nr_throttled,
		throttled_pct(t), view_fmt_ns((double)t->throttled_ns, a, sizeof(a)),
		(unsigned long long)t->nr_bursts, view_fmt_ns((double)t->burst_ns, b, sizeof(b)),
		(unsigned long long)t->events, path ? path : "(removed)");
}

static void render(struct view *v, const struct snapshot *delta, FILE *out)
{
	struct probe_status st = probe_set_status(v->probes, PROBE_THROTTLE);
	const struct cg_sample **rows = calloc(delta->n_cgroups + 1, sizeof(*rows));
	json_t *doc = NULL, *list = NULL;
	size_t n = 0;

	if (!rows)
		return;
	for (size_t i = 0; i < delta->n_cgroups; i++)
		if ((delta->cgroups[i].parts & CG_THROTTLE) &&
		    view_selected(v, delta->cgroups[i].id))
			rows[n++] = &delta->cgroups[i];
	qsort(rows, n, sizeof(*rows), cmp_throttled);
	if (v->args.json) {
		doc = view_json_header(v, delta);
		list = json_array();
	} else {
		print_header(v, out, st.detail);
	}
	for (size_t i = 0; i < n; i++) {
		char buf[PATH_MAX + 2];

		if (v->args.json)
			json_array_append_new(list, cgroup_json(v, rows[i]));
		else
			print_row(out, view_cgroup_path(v, rows[i]->id, buf, sizeof(buf)), rows[i]);
	}
	free(rows);
	if (v->args.json) {
		/* "source": where events come from, as in the probe's detail. */
		json_object_set_new(doc, "source", json_string(st.detail));
		json_object_set_new(doc, "cgroups", list);
		view_json_emit(doc, out);
	} else {
		fflush(out);
	}
}

const struct view_ops throttle_view = {
	.name = "throttle",
	.summary = "CFS bandwidth throttling per cgroup with a CPU quota",
	.usage = "Usage: qoslet throttle [-c CGROUP]... [-j] [--throttle-source SRC]\n"
		 "                       [INTERVAL [COUNT]]\n"
		 "\n"
		 "Per cgroup with a CPU quota (v1 cpu.cfs_quota_us, v2 cpu.max), over each\n"
		 "interval: enforcement periods, periods in which the cgroup was throttled,\n"
		 "their share, throttled time, bursts and burst time (the kernel's cpu.stat),\n"
		 "and the throttled periods the probe counted itself (EVENTS; 0 when polling\n"
		 "cpu.stat only). The source is fentry, tp_btf (sched_switch) or cpustat,\n"
		 "the best the kernel allows unless --throttle-source forces one. Only\n"
		 "cgroups that used their quota's periods in the interval are shown, most\n"
		 "throttled time first.\n",
	.examples = "  qoslet throttle 5\n"
		    "      every 5 s, the cgroups with a quota, most throttled time first\n"
		    "  qoslet throttle --throttle-source cpustat -j 1 30\n"
		    "      thirty 1 s JSON reports from cpu.stat alone (no BPF program)\n",
	.probes = PROBE_BIT(PROBE_THROTTLE),
	.options = VIEW_OPT_THROTTLE_SOURCE,
	.render = render,
};
