// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Prometheus text exposition of the agent's state. Families come in a fixed
 * order and series inside a family are sorted, so the same state always
 * renders to the same text (tests compare it byte by byte).
 *
 * Each cgroup's label text is escaped once per render and reused by every
 * line of every family: a histogram alone has 29 lines per cgroup.
 */
#include "report/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "kube_path.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* A cgroup of the input, with its label text. */
struct row {
	const struct metrics_cgroup *c;
	size_t off;	    /* of its labels in the arena, while it is being written */
	const char *labels; /* `cgroup="/...",...`, without braces */
	bool shown;	    /* the newest id of its path: the one published */
};

struct render {
	const struct metrics_input *in;
	FILE *f;
	struct row *rows;   /* by path, newest id first */
	struct row **by_id; /* the shown rows by id */
	size_t n_rows, n_by_id;
	char *arena;		       /* every row's labels */
	char le[QOSLET_LAT_SLOTS][32]; /* the buckets' bounds as written */
};

const char *metrics_error_name(enum metrics_error e)
{
	static const char *const names[METRICS_ERR_NR] = {
		[METRICS_ERR_PROBE_READ] = "probe_read",
		[METRICS_ERR_SUBTREE_READ] = "subtree_read",
		[METRICS_ERR_CGROUP_READ] = "cgroup_read",
		[METRICS_ERR_RENDER] = "render",
		[METRICS_ERR_JOURNAL_SET_ASIDE] = "journal_set_aside",
		[METRICS_ERR_JOURNAL_WRITE] = "journal_write",
	};

	return e < METRICS_ERR_NR ? names[e] : "unknown";
}

/*
 * A label value as the exposition format wants it: \, " and newline
 * escaped. Written in runs between them: a locked fputc() per character
 * was most of the labels' cost at 500 pods.
 */
static void put_escaped(FILE *f, const char *value)
{
	for (const char *p = value; *p;) {
		size_t run = strcspn(p, "\\\"\n");

		fwrite(p, 1, run, f);
		p += run;
		if (!*p)
			break;
		fputs(*p == '\n' ? "\\n" : *p == '"' ? "\\\"" : "\\\\", f);
		p++;
	}
}

/* `,PREFIXname="value"`: every label but a set's first. */
static void put_label(FILE *f, const char *prefix, const char *name, const char *value)
{
	fprintf(f, ",%s%s=\"", prefix, name);
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

/* A gauge's value: +Inf, or the shortest text that reads back as (nearly) the same double. */
static void put_double(FILE *f, double v)
{
	if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else
		fprintf(f, "%.15g", v);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The family's HELP and TYPE before its first series: a family without series is left out. */
static void family_once(FILE *f, bool *done, const char *name, const char *type, const char *help)
{
	if (!*done)
		family(f, name, type, help);
	*done = true;
}

/*
 * A cgroup's labels: its path, its pod (uid, and namespace, name and
 * container when the pod list knows them) and its unit's class. PREFIX
 * names the culprit's labels of a blame pair apart from the victim's.
 */
static void put_cgroup_labels(FILE *f, const char *prefix, const struct metrics_cgroup *c,
			      const struct kube_pod_list *pods)
{
	const struct kube_pod *pod = NULL;
	const char *container = NULL;

	fprintf(f, "%scgroup=\"/", prefix); /* absolute, as people write cgroup paths */
	put_escaped(f, c->path);
	fputc('"', f);
	if (c->pod_uid && c->pod_uid[0])
		put_label(f, prefix, "pod_uid", c->pod_uid);
	if (pods && pods->n) {
		struct kube_ids ids;
		bool kube = kube_path_parse(c->path, &ids);

		pod = kube_pod_find(pods, kube ? ids.pod_uid : c->pod_uid ? c->pod_uid : "");
		if (pod && kube && ids.container_id[0])
			container = kube_pod_container_name(pod, ids.container_id);
	}
	if (pod) {
		put_label(f, prefix, "namespace", pod->ns);
		put_label(f, prefix, "pod", pod->name);
	}
	if (container)
		put_label(f, prefix, "container", container);
	if (c->qos)
		put_label(f, prefix, "qos", c->qos);
}

static int cmp_row_path(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int r = strcmp(a->c->path, b->c->path);

	if (r)
		return r;
	/* newest id first: it is the one kept */
	return a->c->s->id > b->c->s->id ? -1 : a->c->s->id < b->c->s->id;
}

static int cmp_row_id(const void *x, const void *y)
{
	const struct row *a = *(const struct row *const *)x, *b = *(const struct row *const *)y;

	return a->c->s->id < b->c->s->id ? -1 : a->c->s->id > b->c->s->id;
}

/* The shown row of cgroup id, or NULL (not in the input, or a path's older id). */
static const struct row *row_of(const struct render *r, uint64_t id)
{
	size_t lo = 0, hi = r->n_by_id;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->by_id[mid]->c->s->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n_by_id && r->by_id[lo]->c->s->id == id ? r->by_id[lo] : NULL;
}

/* Sorts the cgroups, keeps the newest id of each path, and writes their labels once. */
static int rows_build(struct render *r)
{
	const struct metrics_input *in = r->in;
	size_t arena_len = 0;
	FILE *a;

	r->rows = malloc((in->n_cgroups + 1) * sizeof(*r->rows));
	r->by_id = malloc((in->n_cgroups + 1) * sizeof(*r->by_id));
	a = open_memstream(&r->arena, &arena_len);
	if (!r->rows || !r->by_id || !a) {
		if (a)
			fclose(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < in->n_cgroups; i++)
		r->rows[i] = (struct row){.c = &in->cgroups[i]};
	r->n_rows = in->n_cgroups;
	qsort(r->rows, r->n_rows, sizeof(*r->rows), cmp_row_path);
	for (size_t i = 0; i < r->n_rows; i++) {
		struct row *w = &r->rows[i];

		w->shown = !i || strcmp(w->c->path, w[-1].c->path);
		if (!w->shown)
			continue;
		w->off = (size_t)ftell(a);
		put_cgroup_labels(a, "", w->c, in->pods);
		fputc('\0', a);
		r->by_id[r->n_by_id++] = w;
	}
	/* open_memstream() allocates while writing: fclose() reports a failure */
	if (fclose(a))
		return -ENOMEM;
	for (size_t i = 0; i < r->n_by_id; i++)
		r->by_id[i]->labels = r->arena + r->by_id[i]->off;
	qsort(r->by_id, r->n_by_id, sizeof(*r->by_id), cmp_row_id);
	return 0;
}

/* One histogram's series: cumulative buckets, _sum, and _count (= the +Inf bucket). */
static void histogram(struct render *r, const char *name, const char *labels, const char *extra,
		      const struct lat_hist *h)
{
	uint64_t cum = 0;
	char buf[32];

	for (int slot = 0; slot < QOSLET_LAT_SLOTS; slot++) {
		cum += h->slots[slot];
		fprintf(r->f, "%s_bucket{%s%s,le=\"%s\"} %" PRIu64 "\n", name, labels, extra,
			r->le[slot], cum);
	}
	fprintf(r->f, "%s_sum{%s%s} %s\n", name, labels, extra, seconds(buf, h->sum_ns));
	/*
	 * The +Inf bucket, not h->count: the probe bumps the two apart, and a
	 * reading between them must still be a consistent histogram.
	 */
	fprintf(r->f, "%s_count{%s%s} %" PRIu64 "\n", name, labels, extra, cum);
}

static void runqueue(struct render *r)
{
	static const char name[] = "qoslet_runqueue_wait_seconds";

	/* Always described: every agent has the sched probe in mind. */
	family(r->f, name, "histogram",
	       "Time tasks of the cgroup waited on a run queue before running, since the sched "
	       "probe started.");
	for (size_t i = 0; i < r->n_rows; i++)
		if (r->rows[i].shown && (r->rows[i].c->s->parts & CG_RQ))
			histogram(r, name, r->rows[i].labels, "", &r->rows[i].c->s->rq);
}

/* A blame pair with both cgroups known (culprit NULL: the CPU was idle). */
struct pair {
	uint64_t victim_id, culprit_id, wait_ns;
	const struct row *victim, *culprit;
};

static int cmp_pair_ids(const void *x, const void *y)
{
	const struct pair *a = x, *b = y;

	if (a->victim_id != b->victim_id)
		return a->victim_id < b->victim_id ? -1 : 1;
	return a->culprit_id < b->culprit_id ? -1 : a->culprit_id > b->culprit_id;
}

/* Largest wait first; ties by ids, so the choice of the top pairs is deterministic. */
static int cmp_pair_wait(const void *x, const void *y)
{
	const struct pair *a = x, *b = y;

	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns ? -1 : 1;
	return cmp_pair_ids(x, y);
}

static int cmp_pair_labels(const void *x, const void *y)
{
	const struct pair *a = x, *b = y;
	int r = strcmp(a->victim->c->path, b->victim->c->path);

	if (r)
		return r;
	/* the idle culprit first */
	if (!a->culprit || !b->culprit)
		return !!a->culprit - !!b->culprit;
	return strcmp(a->culprit->c->path, b->culprit->c->path);
}

/*
 * The blame_top pairs with the largest totals, one series each; the waits
 * of every other pair (beyond the top, or of a cgroup not published: removed,
 * or an older id of a path) are summed in one gauge, so nothing is dropped
 * silently. That sum is a gauge, not a counter: it falls when a pair enters
 * the top.
 */
static int blame(struct render *r)
{
	static const char name[] = "qoslet_blame_wait_seconds_total";
	const struct metrics_input *in = r->in;
	struct pair *v = malloc((in->n_blame + 1) * sizeof(*v));
	size_t n = 0, m = 0, top;
	uint64_t other = 0;
	char buf[32];

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_blame; i++)
		v[n++] = (struct pair){.victim_id = in->blame[i].victim,
				       .culprit_id = in->blame[i].culprit,
				       .wait_ns = in->blame[i].wait_ns};
	/* one series per pair, even if the input repeats one */
	qsort(v, n, sizeof(*v), cmp_pair_ids);
	for (size_t i = 0; i < n; i++) {
		if (m && !cmp_pair_ids(&v[i], &v[m - 1])) {
			v[m - 1].wait_ns += v[i].wait_ns;
			continue;
		}
		v[m++] = v[i];
	}
	n = m;
	m = 0;
	for (size_t i = 0; i < n; i++) {
		struct pair p = v[i];

		p.victim = row_of(r, p.victim_id);
		p.culprit = p.culprit_id == QOSLET_CULPRIT_IDLE ? NULL : row_of(r, p.culprit_id);
		if (!p.victim || (!p.culprit && p.culprit_id != QOSLET_CULPRIT_IDLE))
			other += p.wait_ns;
		else
			v[m++] = p;
	}
	qsort(v, m, sizeof(*v), cmp_pair_wait);
	top = m < in->blame_top ? m : in->blame_top;
	for (size_t i = top; i < m; i++)
		other += v[i].wait_ns;
	qsort(v, top, sizeof(*v), cmp_pair_labels);
	if (top)
		family(r->f, name, "counter",
		       "Run-queue wait of the victim cgroup's tasks charged to the culprit cgroup "
		       "(the task that ran before them), for the pairs with the largest totals.");
	for (size_t i = 0; i < top; i++) {
		fprintf(r->f, "%s{%s,", name, v[i].victim->labels);
		if (v[i].culprit)
			put_cgroup_labels(r->f, "culprit_", v[i].culprit->c, in->pods);
		else
			fputs("culprit_cgroup=\"(idle)\"", r->f);
		fprintf(r->f, "} %s\n", seconds(buf, v[i].wait_ns));
	}
	if (n) {
		family(r->f, "qoslet_blame_pairs", "gauge",
		       "Victim/culprit pairs the sched probe holds.");
		fprintf(r->f, "qoslet_blame_pairs %zu\n", n);
		family(r->f, "qoslet_blame_other_wait_seconds", "gauge",
		       "Run-queue wait of the pairs not published one by one.");
		fprintf(r->f, "qoslet_blame_other_wait_seconds %s\n", seconds(buf, other));
	}
	free(v);
	return 0;
}

enum unit { UNIT_COUNT, UNIT_NS, UNIT_US };

/* A family with one series per cgroup that has `part`: a uint64_t of the sample. */
struct cg_family {
	uint32_t part;
	bool hardware; /* only when the cpi probe counts real cycles/instructions */
	const char *name, *type, *help;
	size_t offset; /* of the value in struct cg_sample */
	enum unit unit;
};

static const struct cg_family cg_families[] = {
	{CG_CPU, false, "qoslet_cpu_usage_seconds_total", "counter",
	 "Time the cgroup's tasks ran on a CPU, as the cpi probe counts it.",
	 offsetof(struct cg_sample, cpu.cpu_ns), UNIT_NS},
	{CG_CPU, true, "qoslet_cpu_cycles_total", "counter",
	 "CPU cycles while the cgroup's tasks ran (hardware PMU).",
	 offsetof(struct cg_sample, cpu.numerator), UNIT_COUNT},
	{CG_CPU, true, "qoslet_cpu_instructions_total", "counter",
	 "Instructions retired while the cgroup's tasks ran (hardware PMU).",
	 offsetof(struct cg_sample, cpu.denominator), UNIT_COUNT},
	{CG_THROTTLE, false, "qoslet_cpu_cfs_periods_total", "counter",
	 "CFS bandwidth periods that elapsed while the cgroup had runnable tasks (cpu.stat "
	 "nr_periods).",
	 offsetof(struct cg_sample, throttle.nr_periods), UNIT_COUNT},
	{CG_THROTTLE, false, "qoslet_cpu_cfs_throttled_periods_total", "counter",
	 "CFS bandwidth periods in which the cgroup was throttled (cpu.stat nr_throttled).",
	 offsetof(struct cg_sample, throttle.nr_throttled), UNIT_COUNT},
	{CG_THROTTLE, false, "qoslet_cpu_cfs_throttled_seconds_total", "counter",
	 "Time the cgroup's run queues spent throttled (cpu.stat throttled time).",
	 offsetof(struct cg_sample, throttle.throttled_ns), UNIT_NS},
	{CG_THROTTLE, false, "qoslet_cpu_cfs_bursts_total", "counter",
	 "CFS bandwidth periods in which the cgroup used its burst (cpu.stat nr_bursts).",
	 offsetof(struct cg_sample, throttle.nr_bursts), UNIT_COUNT},
	{CG_THROTTLE, false, "qoslet_cpu_cfs_burst_seconds_total", "counter",
	 "CPU time the cgroup ran beyond its quota on its burst (cpu.stat burst time).",
	 offsetof(struct cg_sample, throttle.burst_ns), UNIT_NS},
};

static void put_value(FILE *f, uint64_t v, enum unit unit)
{
	char buf[32];

	if (unit == UNIT_COUNT)
		fprintf(f, "%" PRIu64 "\n", v);
	else
		fprintf(f, "%s\n", seconds(buf, unit == UNIT_US ? v * 1000 : v));
}

static void cg_family(struct render *r, const struct cg_family *fam)
{
	bool done = false;

	if (fam->hardware && !r->in->cpi_hardware)
		return; /* software stand-ins are no cycles/instructions */
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct row *w = &r->rows[i];
		uint64_t v;

		if (!w->shown || !(w->c->s->parts & fam->part))
			continue;
		family_once(r->f, &done, fam->name, fam->type, fam->help);
		memcpy(&v, (const char *)w->c->s + fam->offset, sizeof(v));
		fprintf(r->f, "%s{%s} ", fam->name, w->labels);
		put_value(r->f, v, fam->unit);
	}
}

/*
 * The memstall probe's PSI inputs (cgroup v1's stand-in for memory.pressure
 * and io.pressure): left out where the probe cannot trace them.
 */
static void stall_totals(struct render *r)
{
	static const char name[] = "qoslet_stall_seconds_total";
	bool done = false, io_done = false;
	char buf[32];

	for (size_t i = 0; r->in->memstall_psi && i < r->n_rows; i++) {
		const struct row *w = &r->rows[i];
		const struct memstall_sample *m = &w->c->s->mem;

		if (!w->shown || !(w->c->s->parts & CG_MEMSTALL))
			continue;
		family_once(
			r->f, &done, name, "counter",
			"Task time the cgroup's tasks lost as PSI counts it, measured by the "
			"memstall probe: memory (sleeps flagged in_memstall, and reclaim) and io "
			"(sleeps flagged in_iowait).");
		fprintf(r->f, "%s{%s,resource=\"memory\"} %s\n", name, w->labels,
			seconds(buf, m->stall.sum_ns + m->direct.sum_ns + m->memcg.sum_ns));
		fprintf(r->f, "%s{%s,resource=\"io\"} %s\n", name, w->labels,
			seconds(buf, m->iowait.sum_ns));
	}
	for (size_t i = 0; r->in->memstall_psi && i < r->n_rows; i++) {
		const struct row *w = &r->rows[i];

		if (!w->shown || !(w->c->s->parts & CG_MEMSTALL))
			continue;
		family_once(
			r->f, &io_done, "qoslet_block_io_bytes_total", "counter",
			"Bytes of the bios the cgroup's tasks submitted (writeback counts to the "
			"flusher threads).");
		fprintf(r->f, "qoslet_block_io_bytes_total{%s} %" PRIu64 "\n", w->labels,
			w->c->s->mem.io_bytes);
	}
}

static void memstall(struct render *r)
{
	static const char name[] = "qoslet_memory_reclaim_stall_seconds";
	bool done = false, oom_done = false;

	for (size_t i = 0; i < r->n_rows; i++) {
		const struct row *w = &r->rows[i];

		if (!w->shown || !(w->c->s->parts & CG_MEMSTALL))
			continue;
		family_once(r->f, &done, name, "histogram",
			    "Time the cgroup's tasks spent in one reclaim pass: direct (global) or "
			    "memcg (their memory cgroup's limit).");
		histogram(r, name, w->labels, ",reclaim=\"direct\"", &w->c->s->mem.direct);
		histogram(r, name, w->labels, ",reclaim=\"memcg\"", &w->c->s->mem.memcg);
	}
	stall_totals(r);
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct row *w = &r->rows[i];

		if (!w->shown || !(w->c->s->parts & CG_MEMSTALL))
			continue;
		family_once(r->f, &oom_done, "qoslet_oom_kills_total", "counter",
			    "Tasks of the cgroup the kernel chose as OOM victims.");
		fprintf(r->f, "qoslet_oom_kills_total{%s} %" PRIu64 "\n", w->labels,
			w->c->s->mem.oom_kills);
	}
}

static void pressure(struct render *r)
{
	static const char name[] = "qoslet_pressure_stall_seconds_total";
	static const char *const resources[PSI_NR] = {
		[PSI_CPU] = "cpu", [PSI_MEMORY] = "memory", [PSI_IO] = "io"};
	bool done = false;
	char buf[32];

	for (size_t i = 0; i < r->n_rows; i++) {
		const struct row *w = &r->rows[i];
		const struct psi_sample *p = &w->c->s->psi;

		if (!w->shown || !(w->c->s->parts & CG_PSI))
			continue;
		family_once(r->f, &done, name, "counter",
			    "Time some (at least one) or full (all non-idle) tasks of the cgroup "
			    "were stalled on the resource (PSI total).");
		for (int res = 0; res < PSI_NR; res++) {
			fprintf(r->f, "%s{%s,resource=\"%s\",kind=\"some\"} %s\n", name, w->labels,
				resources[res], seconds(buf, p->some[res].total_us * 1000));
			fprintf(r->f, "%s{%s,resource=\"%s\",kind=\"full\"} %s\n", name, w->labels,
				resources[res], seconds(buf, p->full[res].total_us * 1000));
		}
	}
}

static int cmp_setting(const void *x, const void *y)
{
	const struct metrics_setting *a = *(const struct metrics_setting *const *)x;
	const struct metrics_setting *b = *(const struct metrics_setting *const *)y;

	return a->knob != b->knob ? (a->knob < b->knob ? -1 : 1) : strcmp(a->path, b->path);
}

static int settings(struct render *r)
{
	static const struct {
		const char *name, *help;
	} fams[CG_KNOB_NR] = {
		[CG_KNOB_QUOTA] = {"qoslet_applied_cpu_quota_cores",
				   "CFS quota / period qoslet set on the unit, in CPUs (+Inf: "
				   "unlimited)."},
		[CG_KNOB_BURST] = {"qoslet_applied_cpu_burst_seconds",
				   "CFS burst qoslet set on the unit."},
		[CG_KNOB_IDLE] = {"qoslet_applied_cpu_idle", "cpu.idle qoslet set on the unit."},
		[CG_KNOB_CPUS] = {"qoslet_applied_cpuset_cpus",
				  "Number of CPUs in the cpuset qoslet set on the unit."},
		[CG_KNOB_IO_RBPS] = {"qoslet_applied_io_read_bytes_per_second",
				     "Block I/O read throttle qoslet set on the unit's disk (+Inf: "
				     "none)."},
		[CG_KNOB_IO_WBPS] =
			{"qoslet_applied_io_write_bytes_per_second",
			 "Block I/O write throttle qoslet set on the unit's disk (+Inf: "
			 "none)."},
	};
	const struct metrics_input *in = r->in;
	const struct metrics_setting **v = malloc((in->n_settings + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_settings; i++)
		if (in->settings[i].knob < CG_KNOB_NR && fams[in->settings[i].knob].name)
			v[n++] = &in->settings[i];
	qsort(v, n, sizeof(*v), cmp_setting);
	for (size_t i = 0; i < n; i++) {
		const struct metrics_setting *s = v[i];
		struct metrics_cgroup c = {.path = s->path, .pod_uid = s->pod_uid, .qos = s->qos};

		if (i && !cmp_setting(&v[i], &v[i - 1]))
			continue; /* one series per unit and knob */
		if (!i || s->knob != v[i - 1]->knob)
			family(r->f, fams[s->knob].name, "gauge", fams[s->knob].help);
		fprintf(r->f, "%s{", fams[s->knob].name);
		put_cgroup_labels(r->f, "", &c, in->pods);
		fputs("} ", r->f);
		put_double(r->f, s->value);
		fputc('\n', r->f);
	}
	free(v);
	return 0;
}

/*
 * Exclusive CPUs (the kubelet's static CPU manager): how many, and the pods
 * holding them, so that a query can tell pinned LS pods from shared ones
 * (docs/metrics/agent.md) without a label added to every family.
 */
static void pinned(struct render *r)
{
	const struct metrics_input *in = r->in;

	family(r->f, "qoslet_exclusive_cpus", "gauge",
	       "CPUs pods hold alone (the kubelet's static CPU manager); no BE and no moved LS "
	       "unit is placed on them.");
	fprintf(r->f, "qoslet_exclusive_cpus %u\n", in->exclusive_cpus);
	for (size_t i = 0; i < in->n_pinned; i++) {
		const struct metrics_pinned *p = &in->pinned[i];
		struct metrics_cgroup c = {.path = p->path, .pod_uid = p->pod_uid, .qos = p->qos};

		if (!i)
			family(r->f, "qoslet_pinned_cpus", "gauge",
			       "CPUs the pod holds alone (the kubelet's static CPU manager).");
		fputs("qoslet_pinned_cpus{", r->f);
		put_cgroup_labels(r->f, "", &c, in->pods);
		fprintf(r->f, "} %u\n", p->cpus);
	}
}

/* By label text: outcomes are declared in the order of their names. */
static int cmp_count(const void *x, const void *y)
{
	const struct decision_count *a = *(const struct decision_count *const *)x;
	const struct decision_count *b = *(const struct decision_count *const *)y;
	int by_name =
		strcmp(act_kind_name(a->kind), act_kind_name(b->kind))
			?: (int)a->rule -
				   (int)b->rule; /* rule ids are in the order of their names */

	return by_name ?: (int)a->outcome - (int)b->outcome;
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
		fprintf(f, "%s{kind=\"", name);
		put_escaped(f, act_kind_name(v[i]->kind));
		fputc('"', f);
		put_label(f, "", "rule", rule_name(v[i]->rule));
		put_label(f, "", "outcome", decision_outcome_name(v[i]->outcome));
		fprintf(f, "} %" PRIu64 "\n", v[i]->n);
	}
	free(v);
	return 0;
}

static int cmp_breach(const void *x, const void *y)
{
	const struct metrics_breach *a = *(const struct metrics_breach *const *)x;
	const struct metrics_breach *b = *(const struct metrics_breach *const *)y;

	return strcmp(a->path, b->path) ?: (int)a->cause - (int)b->cause;
}

/* Reports per victim and cause; left out while there is none. */
static int breaches(struct render *r)
{
	static const char name[] = "qoslet_interference_breaches_total";
	const struct metrics_input *in = r->in;
	const struct metrics_breach **v = malloc((in->n_breaches + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_breaches; i++)
		v[i] = &in->breaches[i];
	qsort(v, in->n_breaches, sizeof(*v), cmp_breach);
	for (size_t i = 0; i < in->n_breaches; i++) {
		struct metrics_cgroup c = {
			.path = v[i]->path, .pod_uid = v[i]->pod_uid, .qos = v[i]->qos};

		if (i && !cmp_breach(&v[i], &v[i - 1]))
			continue; /* one series per victim and cause */
		if (!i)
			family(r->f, name, "counter",
			       "Latency breaches of the victim unit the agent reported, by what "
			       "explains them best (cause).");
		fprintf(r->f, "%s{", name);
		put_cgroup_labels(r->f, "", &c, in->pods);
		put_label(r->f, "", "cause", interference_cause_name(v[i]->cause));
		fprintf(r->f, "} %" PRIu64 "\n", v[i]->n);
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
	       "Ticks outside the schedule: brought forward by a sched probe alert, "
	       "their follow-ups, a cgroup tree change, a retried write.");
	fprintf(f, "qoslet_agent_fast_path_ticks_total %" PRIu64 "\n", in->fast_ticks);
	family(f, "qoslet_agent_fast_path_alerts_total", "counter",
	       "Alerts from the sched probe, by kind: an LS wait over its threshold (wait), "
	       "an LS cgroup displaced by BE tasks (displaced).");
	fprintf(f, "qoslet_agent_fast_path_alerts_total{kind=\"wait\"} %" PRIu64 "\n",
		in->alerts_wait);
	fprintf(f, "qoslet_agent_fast_path_alerts_total{kind=\"displaced\"} %" PRIu64 "\n",
		in->alerts_displaced);
	family(f, "qoslet_agent_outside_writes_total", "counter",
	       "Changes another writer made to a cgroup file qoslet wrote, by the answer: "
	       "written back (reasserted), taken as the owner's new original (adopted), backed "
	       "off from a writer that keeps undoing the write-backs (contested).");
	fprintf(f, "qoslet_agent_outside_writes_total{answer=\"adopted\"} %" PRIu64 "\n",
		in->outside_adopted);
	fprintf(f, "qoslet_agent_outside_writes_total{answer=\"contested\"} %" PRIu64 "\n",
		in->outside_contested);
	fprintf(f, "qoslet_agent_outside_writes_total{answer=\"reasserted\"} %" PRIu64 "\n",
		in->outside_reasserted);
	family(f, "qoslet_agent_loop_duration_seconds", "gauge",
	       "How long the last tick of the agent loop took.");
	fprintf(f, "qoslet_agent_loop_duration_seconds %s\n", seconds(buf, in->loop_ns));
	family(f, "qoslet_agent_errors_total", "counter",
	       "Errors the agent met and went on after, by kind.");
	for (int e = 0; e < METRICS_ERR_NR; e++)
		fprintf(f, "qoslet_agent_errors_total{kind=\"%s\"} %" PRIu64 "\n",
			metrics_error_name(e), in->errors[e]);
	family(f, "qoslet_agent_probe_up", "gauge", "1 when the probe runs, 0 when it is off.");
	for (size_t i = 0; i < in->n_probes; i++) {
		fputs("qoslet_agent_probe_up{probe=\"", f);
		put_escaped(f, in->probes[i].name);
		fprintf(f, "\"} %d\n", in->probes[i].on);
	}
	family(f, "qoslet_agent_probe_info", "gauge",
	       "Always 1: the path a running probe takes its data by (hook, source).");
	for (size_t i = 0; i < in->n_probes; i++) {
		if (!in->probes[i].on || !in->probes[i].path)
			continue;
		fputs("qoslet_agent_probe_info{probe=\"", f);
		put_escaped(f, in->probes[i].name);
		fputc('"', f);
		put_label(f, "", "path", in->probes[i].path);
		fputs("} 1\n", f);
	}
}

/* The names and meanings Prometheus client libraries give these, so dashboards work as is. */
static void process(FILE *f, const struct metrics_process *p)
{
	static const struct {
		const char *name, *type, *help;
		size_t offset;
		enum unit unit;
	} fams[] = {
		{"process_cpu_seconds_total", "counter",
		 "User and system CPU time the agent spent, all threads.",
		 offsetof(struct metrics_process, cpu_ns), UNIT_NS},
		{"process_resident_memory_bytes", "gauge", "Resident memory of the agent.",
		 offsetof(struct metrics_process, rss_bytes), UNIT_COUNT},
		{"process_virtual_memory_bytes", "gauge", "Virtual memory of the agent.",
		 offsetof(struct metrics_process, vm_bytes), UNIT_COUNT},
		{"process_open_fds", "gauge", "File descriptors the agent has open.",
		 offsetof(struct metrics_process, open_fds), UNIT_COUNT},
		{"process_max_fds", "gauge", "The agent's limit of open file descriptors.",
		 offsetof(struct metrics_process, max_fds), UNIT_COUNT},
	};

	for (size_t i = 0; p && i < ARRAY_LEN(fams); i++) {
		int64_t v;

		memcpy(&v, (const char *)p + fams[i].offset, sizeof(v));
		if (v < 0)
			continue; /* unknown: no series rather than a made-up one */
		family(f, fams[i].name, fams[i].type, fams[i].help);
		fprintf(f, "%s ", fams[i].name);
		put_value(f, (uint64_t)v, fams[i].unit);
	}
}

static void refusals(FILE *f, const struct metrics_input *in)
{
	if (!in->kube || !in->n_refusals)
		return;
	family(f, "qoslet_pod_metadata_refused", "gauge",
	       "Pods whose own labels or annotations asked for what the config does not let "
	       "them decide, by input and reason.");
	for (size_t i = 0; i < in->n_refusals; i++)
		fprintf(f, "qoslet_pod_metadata_refused{input=\"%s\",reason=\"%s\"} %" PRIu64 "\n",
			in->refusals[i].input, in->refusals[i].reason, in->refusals[i].pods);
}

static void kube(FILE *f, const struct kube_link_stats *k)
{
	char buf[32];

	if (!k)
		return;
	family(f, "qoslet_kube_requests_total", "counter",
	       "Kubernetes API calls the agent made, by call.");
	for (int c = 0; c < KUBE_CALL_NR; c++)
		fprintf(f, "qoslet_kube_requests_total{call=\"%s\"} %" PRIu64 "\n",
			kube_call_name(c), k->requests[c]);
	family(f, "qoslet_kube_request_errors_total", "counter",
	       "Kubernetes API calls that got no answer or an error status, by call.");
	for (int c = 0; c < KUBE_CALL_NR; c++)
		fprintf(f, "qoslet_kube_request_errors_total{call=\"%s\"} %" PRIu64 "\n",
			kube_call_name(c), k->errors[c]);
	family(f, "qoslet_kube_events_aggregated_total", "counter",
	       "Occurrences folded into an existing Kubernetes Event's series.");
	fprintf(f, "qoslet_kube_events_aggregated_total %" PRIu64 "\n", k->events_aggregated);
	family(f, "qoslet_kube_events_dropped_total", "counter",
	       "Occurrences the Event rate limit dropped.");
	fprintf(f, "qoslet_kube_events_dropped_total %" PRIu64 "\n", k->events_dropped);
	family(f, "qoslet_kube_pods", "gauge", "Pods on this node as the pod watch knows them.");
	fprintf(f, "qoslet_kube_pods %" PRIu64 "\n", k->pods);
	family(f, "qoslet_kube_last_pod_list_timestamp_seconds", "gauge",
	       "Unix time the pod set was last known current (a list, a watch event or "
	       "bookmark, a watch's clean end); 0 before the first list.");
	fprintf(f, "qoslet_kube_last_pod_list_timestamp_seconds %s\n",
		seconds(buf, k->last_list_ns));
	family(f, "qoslet_kube_pod_lists_total", "counter",
	       "Complete pod lists: the first, then after a 410 Gone, a broken watch or a resync.");
	fprintf(f, "qoslet_kube_pod_lists_total %" PRIu64 "\n", k->pod_lists);
	family(f, "qoslet_kube_pod_watch_events_total", "counter",
	       "Pod watch events applied (ADDED, MODIFIED, DELETED).");
	fprintf(f, "qoslet_kube_pod_watch_events_total %" PRIu64 "\n", k->pod_events);
	family(f, "qoslet_kube_pod_expired_total", "counter",
	       "410 Gone answers to a pod list or watch: the version was compacted, listed again.");
	fprintf(f, "qoslet_kube_pod_expired_total %" PRIu64 "\n", k->pod_expired);
	family(f, "qoslet_kube_pod_watch_broken_total", "counter",
	       "Pod watches cut, refused or unreadable before their server timeout.");
	fprintf(f, "qoslet_kube_pod_watch_broken_total %" PRIu64 "\n", k->pod_watch_broken);
	family(f, "qoslet_kube_pod_oversize_total", "counter",
	       "Pod list answers over the response cap, or watch events over the per-pod bound.");
	fprintf(f, "qoslet_kube_pod_oversize_total %" PRIu64 "\n", k->pod_oversize);
	family(f, "qoslet_kube_pods_skipped_size_total", "counter",
	       "Pods skipped for their size (each logged): the others are kept.");
	fprintf(f, "qoslet_kube_pods_skipped_size_total %" PRIu64 "\n", k->pods_skipped_size);
	family(f, "qoslet_kube_pods_terminated_total", "counter",
	       "Succeeded or Failed pods seen in lists and events, not kept.");
	fprintf(f, "qoslet_kube_pods_terminated_total %" PRIu64 "\n", k->pods_terminated);
	family(f, "qoslet_kube_pod_etcd_lists_total", "counter",
	       "Pod list requests only etcd serves before Kubernetes 1.31: a quorum read after a "
	       "list from the last version was 410, or pages after an answer over the cap.");
	fprintf(f, "qoslet_kube_pod_etcd_lists_total %" PRIu64 "\n", k->pod_etcd_lists);
	family(f, "qoslet_kube_pods_degraded", "gauge",
	       "1 while no pod list fits the size cap, even in pages of one pod (/readyz says "
	       "why), else 0.");
	fprintf(f, "qoslet_kube_pods_degraded %d\n", k->pods_degraded[0] != '\0');
	if (k->condition_known) {
		family(f, "qoslet_kube_node_interference", "gauge",
		       "The node condition the agent last wrote: 1 interference, 0 none.");
		fprintf(f, "qoslet_kube_node_interference %d\n", k->condition);
	}
	if (k->batch_known) {
		family(f, "qoslet_kube_node_batch", "gauge",
		       "The node's batch resources the API last took from the agent: "
		       "kubernetes.io/batch-cpu in milli-CPUs, kubernetes.io/batch-memory in bytes.");
		fprintf(f,
			"qoslet_kube_node_batch{resource=\"kubernetes.io/batch-cpu\"} %" PRIu64
			"\n",
			k->batch_cpu_milli);
		fprintf(f,
			"qoslet_kube_node_batch{resource=\"kubernetes.io/batch-memory\"} %" PRIu64
			"\n",
			k->batch_mem_bytes);
	}
}

/* Batch capacity and the terms of its formula (docs/capacity.md), one family per unit. */
static void capacity(FILE *f, const struct capacity_result *c)
{
	static const struct {
		const char *name;
		size_t offset;
	} terms[] = {
		{"capacity", offsetof(struct capacity_terms, capacity)},
		{"ls", offsetof(struct capacity_terms, ls)},
		{"system", offsetof(struct capacity_terms, system)},
		{"percentile", offsetof(struct capacity_terms, pctl)},
		{"used", offsetof(struct capacity_terms, used)},
		{"reserve", offsetof(struct capacity_terms, reserve)},
	};
	static const struct {
		const char *resource, *batch, *formula, *unit;
	} res[CAP_NR] = {
		[CAP_CPU] = {"cpu", "qoslet_batch_allocatable_cpu_cores",
			     "qoslet_batch_formula_cpu_cores", "CPUs"},
		[CAP_MEM] = {"memory", "qoslet_batch_allocatable_memory_bytes",
			     "qoslet_batch_formula_memory_bytes", "bytes"},
	};
	char help[160];

	if (!c)
		return;
	for (int r = 0; r < CAP_NR; r++) {
		snprintf(help, sizeof(help),
			 "What BE pods may be given (%s): capacity x threshold - used - reserve, "
			 "never below 0; 0 while held.",
			 res[r].unit);
		family(f, res[r].batch, "gauge", help);
		fprintf(f, "%s ", res[r].batch);
		put_double(f, c->r[r].batch);
		fputc('\n', f);
	}
	for (int r = 0; r < CAP_NR; r++) {
		snprintf(help, sizeof(help),
			 "The terms of the batch %s formula (%s), by term; used = max(ls + system, "
			 "percentile).",
			 res[r].resource, res[r].unit);
		family(f, res[r].formula, "gauge", help);
		for (size_t t = 0; t < ARRAY_LEN(terms); t++) {
			double v;

			memcpy(&v, (const char *)&c->r[r] + terms[t].offset, sizeof(v));
			fprintf(f, "%s{term=\"%s\"} ", res[r].formula, terms[t].name);
			put_double(f, v);
			fputc('\n', f);
		}
	}
	family(f, "qoslet_batch_threshold_ratio", "gauge",
	       "The share of capacity LS, system and batch may use together, by resource.");
	for (int r = 0; r < CAP_NR; r++) {
		fprintf(f, "qoslet_batch_threshold_ratio{resource=\"%s\"} ", res[r].resource);
		put_double(f, c->r[r].threshold);
		fputc('\n', f);
	}
	family(f, "qoslet_batch_window_seconds", "gauge",
	       "How far back the usage window reaches (it must reach capacity.window_s).");
	fprintf(f, "qoslet_batch_window_seconds ");
	put_double(f, c->window_covered_s);
	fputc('\n', f);
	family(f, "qoslet_batch_held", "gauge",
	       "1 while batch capacity is held at 0 whatever the formula says, with the reason.");
	if (c->held) {
		fputs("qoslet_batch_held{reason=\"", f);
		put_escaped(f, c->held);
		fputs("\"} 1\n", f);
	} else {
		fputs("qoslet_batch_held{reason=\"\"} 0\n", f);
	}
}

/* What BE pods request of batch capacity (docs/batch-resources.md): one number per node. */
static void batch_requested(FILE *f, const struct metrics_input *in)
{
	static const char *const names[CAP_NR] = {"qoslet_batch_requested_cpu_cores",
						  "qoslet_batch_requested_memory_bytes"};
	static const char *const helps[CAP_NR] = {
		"What BE pods request of batch capacity: their kubernetes.io/batch-cpu, in CPUs.",
		"What BE pods request of batch capacity: their kubernetes.io/batch-memory, bytes."};

	if (!in->capacity)
		return;
	for (int r = 0; r < CAP_NR; r++) {
		family(f, names[r], "gauge", helps[r]);
		fprintf(f, "%s ", names[r]);
		put_double(f, in->batch_requested[r]);
		fputc('\n', f);
	}
}

static int render_all(struct render *r)
{
	int err = rows_build(r);

	if (err)
		return err;
	for (int slot = 0; slot < QOSLET_LAT_SLOTS; slot++) {
		uint64_t le = hist_slot_le_ns(slot);

		if (le == UINT64_MAX)
			snprintf(r->le[slot], sizeof(r->le[slot]), "+Inf");
		else
			seconds(r->le[slot], le);
	}
	runqueue(r);
	err = blame(r);
	if (err)
		return err;
	for (size_t i = 0; i < ARRAY_LEN(cg_families); i++)
		cg_family(r, &cg_families[i]);
	memstall(r);
	pressure(r);
	err = settings(r);
	if (err)
		return err;
	pinned(r);
	err = decisions(r->f, r->in->log) ?: breaches(r);
	if (err)
		return err;
	health(r->f, r->in);
	process(r->f, r->in->process);
	kube(r->f, r->in->kube);
	refusals(r->f, r->in);
	capacity(r->f, r->in->capacity);
	batch_requested(r->f, r->in);
	return 0;
}

int metrics_render(const struct metrics_input *in, char **text, size_t *len)
{
	struct render r = {.in = in, .f = open_memstream(text, len)};
	int err;

	if (!r.f)
		return -ENOMEM;
	err = render_all(&r);
	free(r.rows);
	free(r.by_id);
	free(r.arena);
	/* open_memstream() allocates while writing: fclose() reports a failure */
	if (fclose(r.f) || err) {
		free(*text);
		*text = NULL;
		return -ENOMEM;
	}
	return 0;
}
