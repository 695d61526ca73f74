// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Prometheus text exposition of the agent's state. Families come in a fixed
 * order and series inside a family are sorted, so the same state always
 * renders to the same text (tests compare it byte by byte).
 */
#include "metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hist.h"

/* A label value as the exposition format wants it: \, " and newline escaped. */
static void put_escaped(FILE *f, const char *value)
{
	for (const char *p = value; *p; p++) {
		if (*p == '\\' || *p == '"')
			fputc('\\', f);
		if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
}

static void put_label(FILE *f, const char *name, const char *value)
{
	fprintf(f, "%s=\"", name);
	put_escaped(f, value);
	fputc('"', f);
}

/* ns as decimal seconds, exact (no binary rounding) and without trailing zeros. */
static const char *seconds(char buf[32], uint64_t ns)
{
	size_t n = (size_t)snprintf(buf, 32, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u,
				    ns % 1000000000u);

	while (buf[n - 1] == '0')
		buf[--n] = '\0';
	if (buf[n - 1] == '.')
		buf[n - 1] = '\0';
	return buf;
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void cgroup_labels(FILE *f, const struct metrics_cgroup *c)
{
	fputs("cgroup=\"/", f); /* absolute, as people write cgroup paths */
	put_escaped(f, c->path);
	fputc('"', f);
	if (c->pod_uid && c->pod_uid[0]) {
		fputc(',', f);
		put_label(f, "pod_uid", c->pod_uid);
	}
	if (c->qos) {
		fputc(',', f);
		put_label(f, "qos", c->qos);
	}
}

static int cmp_cgroup(const void *x, const void *y)
{
	const struct metrics_cgroup *a = *(const struct metrics_cgroup *const *)x;
	const struct metrics_cgroup *b = *(const struct metrics_cgroup *const *)y;
	int r = strcmp(a->path, b->path);

	if (r)
		return r;
	/* newest id first: it is the one kept */
	return a->s->id > b->s->id ? -1 : a->s->id < b->s->id;
}

static int runqueue(FILE *f, const struct metrics_input *in)
{
	static const char name[] = "qoslet_runqueue_wait_seconds";
	const struct metrics_cgroup **v = malloc((in->n_cgroups + 1) * sizeof(*v));
	size_t n = 0;
	char buf[32];

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_cgroups; i++)
		if (in->cgroups[i].s->parts & CG_RQ)
			v[n++] = &in->cgroups[i];
	qsort(v, n, sizeof(*v), cmp_cgroup);
	family(f, name, "histogram",
	       "Time tasks of the cgroup waited on a run queue before running, since the sched "
	       "probe started.");
	for (size_t i = 0; i < n; i++) {
		const struct lat_hist *h = &v[i]->s->rq;
		uint64_t cum = 0;

		if (i && !strcmp(v[i]->path, v[i - 1]->path))
			continue;
		for (int slot = 0; slot < QOSLET_LAT_SLOTS; slot++) {
			uint64_t le = hist_slot_le_ns(slot);

			cum += h->slots[slot];
			fprintf(f, "%s_bucket{", name);
			cgroup_labels(f, v[i]);
			fprintf(f, ",le=\"%s\"} %" PRIu64 "\n",
				le == UINT64_MAX ? "+Inf" : seconds(buf, le), cum);
		}
		fprintf(f, "%s_sum{", name);
		cgroup_labels(f, v[i]);
		fprintf(f, "} %s\n", seconds(buf, h->sum_ns));
		/*
		 * The +Inf bucket, not h->count: the probe bumps the two apart, and a
		 * reading between them must still be a consistent histogram.
		 */
		fprintf(f, "%s_count{", name);
		cgroup_labels(f, v[i]);
		fprintf(f, "} %" PRIu64 "\n", cum);
	}
	free(v);
	return 0;
}

static int cmp_count(const void *x, const void *y)
{
	const struct decision_count *a = *(const struct decision_count *const *)x;
	const struct decision_count *b = *(const struct decision_count *const *)y;

	return strcmp(act_kind_name(a->kind), act_kind_name(b->kind)) ?: strcmp(a->rule, b->rule)
									   ?: strcmp(a->outcome,
										     b->outcome);
}

static int decisions(FILE *f, const struct decision_log *log)
{
	static const char name[] = "qoslet_decisions_total";
	size_t n = log ? log->n_counts : 0;
	const struct decision_count **v = malloc((n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = &log->counts[i];
	qsort(v, n, sizeof(*v), cmp_count);
	family(f, name, "counter",
	       "Decisions the agent made since it started, by action kind, policy rule and "
	       "outcome.");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s{", name);
		put_label(f, "kind", act_kind_name(v[i]->kind));
		fputc(',', f);
		put_label(f, "rule", v[i]->rule);
		fputc(',', f);
		put_label(f, "outcome", v[i]->outcome);
		fprintf(f, "} %" PRIu64 "\n", v[i]->n);
	}
	free(v);
	return 0;
}

static void health(FILE *f, const struct metrics_input *in)
{
	char buf[32];

	family(f, "qoslet_agent_ticks_total", "counter",
	       "Ticks of the agent loop (read, decide, act) since it started.");
	fprintf(f, "qoslet_agent_ticks_total %" PRIu64 "\n", in->ticks);
	family(f, "qoslet_agent_fast_path_ticks_total", "counter",
	       "Ticks an LS run-queue wait alert from the sched probe brought forward.");
	fprintf(f, "qoslet_agent_fast_path_ticks_total %" PRIu64 "\n", in->fast_ticks);
	family(f, "qoslet_agent_loop_duration_seconds", "gauge",
	       "How long the last tick of the agent loop took.");
	fprintf(f, "qoslet_agent_loop_duration_seconds %s\n", seconds(buf, in->loop_ns));
	family(f, "qoslet_agent_probe_up", "gauge", "1 when the probe runs, 0 when it is off.");
	for (size_t i = 0; i < in->n_probes; i++) {
		fputs("qoslet_agent_probe_up{", f);
		put_label(f, "probe", in->probes[i].name);
		fprintf(f, "} %d\n", in->probes[i].on);
	}
	family(f, "qoslet_agent_probe_info", "gauge",
	       "Always 1: where a running probe's BPF maps are pinned.");
	for (size_t i = 0; i < in->n_probes; i++) {
		if (!in->probes[i].on || !in->probes[i].path)
			continue;
		fputs("qoslet_agent_probe_info{", f);
		put_label(f, "probe", in->probes[i].name);
		fputc(',', f);
		put_label(f, "path", in->probes[i].path);
		fputs("} 1\n", f);
	}
}

int metrics_render(const struct metrics_input *in, char **text, size_t *len)
{
	FILE *f = open_memstream(text, len);
	int err;

	if (!f)
		return -ENOMEM;
	err = runqueue(f, in) ?: decisions(f, in->log);
	if (!err)
		health(f, in);
	/* open_memstream() allocates while writing: fclose() reports a failure */
	if (fclose(f) || err) {
		free(*text);
		*text = NULL;
		return -ENOMEM;
	}
	return 0;
}
