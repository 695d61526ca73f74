// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qoslet cpi: CPU time and CPI per cgroup. In software mode the same
 * columns hold task-clock and cpu-clock ns, labelled as such: their ratio
 * is never called CPI.
 */
#include "cli/cpi_view.h"

#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "probes/cpi_mode.h"

static const char *const drop_names[CPI_DROP_NR] = {
	[CPI_DROP_MAP_FULL] = "map_full",
	[CPI_DROP_READ] = "read",
	[CPI_DROP_NOT_COUNTED] = "not_counted",
};

/* Cgroups with CPU time in the interval, busiest first. */
static int cmp_cpu(const void *a, const void *b)
{
	const struct cg_sample *x = *(const struct cg_sample *const *)a;
	const struct cg_sample *y = *(const struct cg_sample *const *)b;

	return x->cpu.cpu_ns != y->cpu.cpu_ns ? (x->cpu.cpu_ns < y->cpu.cpu_ns ? 1 : -1)
					      : (x->id > y->id) - (x->id < y->id);
}

static double cpu_pct(const struct view *v, const struct cg_sample *cg)
{
	return v->interval_ns ? 100.0 * cg->cpu.cpu_ns / v->interval_ns : 0;
}

static json_t *cgroup_json(struct view *v, const struct cg_sample *cg, struct cpi_labels l)
{
	json_t *o = view_cgroup_json(v, cg->id);
	double r;

	json_object_update_new(o, json_pack("{s:I, s:f}", "cpu_ns", (json_int_t)cg->cpu.cpu_ns,
					    "cpu_pct", cpu_pct(v, cg)));
	if (!l.ratio)
		return o;
	json_object_set_new(o, l.numerator, json_integer((json_int_t)cg->cpu.numerator));
	json_object_set_new(o, l.denominator, json_integer((json_int_t)cg->cpu.denominator));
	json_object_set_new(o, l.ratio,
			    cpi_ratio(cg->cpu.numerator, cg->cpu.denominator, &r) ? json_real(r)
										  : json_null());
	return o;
}

static json_t *cpi_json(const struct snapshot *delta, struct cpi_labels l)
{
	json_t *drops = json_object();

	for (int i = 0; i < CPI_DROP_NR; i++)
		json_object_set_new(drops, drop_names[i],
				    json_integer((json_int_t)delta->cpi_drops[i]));
	return json_pack("{s:s, s:s?, s:s?, s:s?, s:o}", "mode", cpi_mode_name(delta->cpi_mode),
			 "numerator", l.numerator, "denominator", l.denominator, "ratio", l.ratio,
			 "drops", drops);
}

static void print_header(struct view *v, const struct snapshot *delta, FILE *out,
			 struct cpi_labels l)
{
	time_t t = delta->ts_ns / 1000000000ULL;
	char when[32], a[32];
	struct tm tm;

	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
	fprintf(out, "%s  CPU time per cgroup over %s (%s%s)\n", when,
		view_fmt_ns((double)v->interval_ns, a, sizeof(a)),
		probe_set_status(v->probes, PROBE_CPI).detail,
		probe_set_owner(v->probes) ? "" : ", shared");
	if (delta->cpi_mode == CPI_MODE_SOFTWARE)
		fprintf(out, "software stand-ins: two clocks, their ratio is NOT CPI\n");
	fprintf(out, "%7s  %10s", "CPU%", "CPU_TIME");
	if (l.ratio)
		fprintf(out, "  %14s  %14s  %13s", l.numerator, l.denominator, l.ratio);
	fprintf(out, "  CGROUP\n");
}

static void print_row(FILE *out, const struct view *v, const char *path, const struct cg_sample *cg,
		      struct cpi_labels l)
{
	char a[32];
	double r;

	fprintf(out, "%6.1f%%  %10s", cpu_pct(v, cg),
		view_fmt_ns((double)cg->cpu.cpu_ns, a, sizeof(a)));
	if (l.ratio) {
		fprintf(out, "  %14llu  %14llu", (unsigned long long)cg->cpu.numerator,
			(unsigned long long)cg->cpu.denominator);
		if (cpi_ratio(cg->cpu.numerator, cg->cpu.denominator, &r))
			fprintf(out, "  %13.3f", r);
		else
			fprintf(out, "  %13s", "-");
	}
	fprintf(out, "  %s\n", path ? path : "(removed)");
}

static void warn_drops(const struct snapshot *delta)
{
	for (int i = 0; i < CPI_DROP_NR; i++)
		if (delta->cpi_drops[i])
			log_warn("cpi probe: %llu slices without counter deltas (%s)",
				 (unsigned long long)delta->cpi_drops[i], drop_names[i]);
}

static void render(struct view *v, const struct snapshot *delta, FILE *out)
{
	struct cpi_labels l = cpi_mode_labels(delta->cpi_mode);
	const struct cg_sample **rows = calloc(delta->n_cgroups + 1, sizeof(*rows));
	json_t *doc = NULL, *list = NULL;
	size_t n = 0;

	if (!rows) {
		log_err("out of memory");
		return;
	}
	warn_drops(delta);
	for (size_t i = 0; i < delta->n_cgroups; i++) {
		const struct cg_sample *cg = &delta->cgroups[i];

		if ((cg->parts & CG_CPU) && cg->cpu.cpu_ns && view_selected(v, cg->id))
			rows[n++] = cg;
	}
	qsort(rows, n, sizeof(*rows), cmp_cpu);
	if (v->args.json) {
		doc = view_json_header(v, delta);
		list = json_array();
		json_object_set_new(doc, "counters", cpi_json(delta, l));
	} else {
		print_header(v, delta, out, l);
	}
	for (size_t i = 0; i < n; i++) {
		char buf[PATH_MAX + 2];

		if (list)
			json_array_append_new(list, cgroup_json(v, rows[i], l));
		else
			print_row(out, v, view_cgroup_path(v, rows[i]->id, buf, sizeof(buf)),
				  rows[i], l);
	}
	if (doc) {
		json_object_set_new(doc, "cgroups", list);
		view_json_emit(doc, out);
	} else {
		fputc('\n', out);
		fflush(out);
	}
	free(rows);
}

const struct view_ops cpi_view = {
	.name = "cpi",
	.summary = "CPU time and cycles per instruction per cgroup",
	.usage = "Usage: qoslet cpi [-c CGROUP]... [-j] [--cpi-events EVENTS] [INTERVAL [COUNT]]\n"
		 "\n"
		 "Per cgroup, over each interval: the CPU time its tasks ran (and as a percentage\n"
		 "of one CPU), and the cycles and instructions they retired with their ratio,\n"
		 "CPI, from one pair of counting perf events per CPU, read whenever a CPU\n"
		 "passes from one cgroup's tasks to another's. Busiest cgroups first; only\n"
		 "cgroups that ran are shown.\n"
		 "\n"
		 "Without a hardware PMU (many VMs), --cpi-events auto counts software\n"
		 "stand-ins instead: task-clock and cpu-clock ns, two clocks whose ratio is\n"
		 "about 1 and NOT CPI; they exercise the same counter path. Every output\n"
		 "says so (JSON: \"mode\":\"software\", \"clock_ratio\"). Named events that\n"
		 "do not open leave CPU time only.\n",
	.examples = "  qoslet cpi 5 1\n"
		    "      one 5 s report of CPU time and CPI per cgroup, busiest first\n"
		    "  qoslet cpi --cpi-events software -j 1 10\n"
		    "      ten 1 s JSON reports counting the software stand-ins (no PMU needed)\n",
	.probes = PROBE_BIT(PROBE_CPI),
	.options = VIEW_OPT_CPI_EVENTS,
	.render = render,
};
