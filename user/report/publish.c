// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the agent's HTTP endpoint serves: the Prometheus text and the recent
 * decisions, rendered by the loop when a scrape asks for them, from the
 * collector's last record and nothing else: no cgroup file is read here.
 *
 * Per-cgroup series: by default (http.cgroups "units") one set per unit,
 * its cumulative totals; with "all", also every cgroup the probes saw
 * (containers, cgroups outside the units), as the probes count them. Blame
 * pairs name cgroups in either case.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "actuate/actuator.h"
#include "clock.h"
#include "cpulist.h"
#include "log.h"
#include "readfile.h"
#include "report/http.h"
#include "report/metrics.h"
#include "policy/batch_evict.h"
#include "report/publish.h"

/* The parts of a snapshot cgroup the metrics publish. */
#define PUBLISHED_PARTS (CG_RQ | CG_CPU | CG_THROTTLE | CG_MEMSTALL | CG_PSI)

struct inputs {
	struct metrics_cgroup *cgs;
	size_t n_cgs, cap_cgs;
	struct cg_sample *merged; /* "all": the units' records with their file parts */
	size_t n_merged;
	struct cg_sample *labels; /* label-only records of blame parties */
	size_t n_labels;
	struct metrics_setting *settings;
	size_t n_settings;
	const struct pol_unit **by_path; /* the units, sorted by path */
	struct metrics_breach *breaches;
	size_t n_breaches;
	struct metrics_pinned *pinned; /* sorted by path, as by_path */
	size_t n_pinned;
};

/* The path of a cgroup: the collector's for the subtree, the name cache's outside it. */
static const char *path_of(const struct publish_view *v, uint64_t id, uint64_t now)
{
	const char *p = collector_path_of(v->coll, id);

	return p ? p : v->names ? cgroup_names_lookup(v->names, id, now) : NULL;
}

static int cmp_cgroup_id(const void *x, const void *y)
{
	uint64_t a = ((const struct metrics_cgroup *)x)->s->id;
	uint64_t b = ((const struct metrics_cgroup *)y)->s->id;

	return a < b ? -1 : a > b;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Adds a published cgroup; its path is copied (the name cache may free it on the next lookup). */
static int add_cgroup(struct inputs *x, const struct cg_sample *s, const char *path,
		      const struct pol_unit *u)
{
	struct metrics_cgroup *c;

	if (x->n_cgs == x->cap_cgs)
		return -ENOMEM; /* sized up front: cannot happen */
	c = &x->cgs[x->n_cgs];
	*c = (struct metrics_cgroup){.s = s,
				     .path = strdup(path),
				     .pod_uid = u ? u->pod_uid : NULL,
				     .qos = u ? qos_class_name(u->cls) : NULL};
	if (!c->path)
		return -ENOMEM;
	x->n_cgs++;
	return 0;
}

/* The unit a cgroup of the subtree belongs to, or NULL. */
static const struct pol_unit *unit_of_cgroup(const struct publish_view *v, uint64_t id)
{
	const struct collect_member *m = collector_member_of(v->coll, id);

	return m ? pol_input_find(&v->rec->in, m->unit) : NULL;
}

/*
 * Blame names its parties by cgroup: each one not published gets a
 * label-only record (an id, no parts), whose paths are looked up only now.
 */
static int add_blame_labels(const struct publish_view *v, struct inputs *x, uint64_t now)
{
	const struct snapshot *snap = v->rec->probes;
	size_t n_blame = snap ? snap->n_blame : 0, n = 0;
	uint64_t *ids = malloc((2 * n_blame + 1) * sizeof(*ids));
	struct cg_sample key = {0};
	struct metrics_cgroup k = {.s = &key};
	int err;

	if (!ids)
		return -ENOMEM;
	qsort(x->cgs, x->n_cgs, sizeof(*x->cgs), cmp_cgroup_id);
	for (size_t i = 0; i < 2 * n_blame; i++) {
		const struct blame_sample *b = &snap->blame[i / 2];

		key.id = i % 2 ? b->culprit : b->victim;
		if (key.id != QOSLET_CULPRIT_IDLE &&
		    !bsearch(&k, x->cgs, x->n_cgs, sizeof(*x->cgs), cmp_cgroup_id))
			ids[n++] = key.id;
	}
	qsort(ids, n, sizeof(*ids), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!i || ids[i] != ids[i - 1])
			ids[x->n_labels++] = ids[i];
	x->labels = malloc((x->n_labels + 1) * sizeof(*x->labels));
	err = x->labels ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < x->n_labels; i++) {
		const char *path = path_of(v, ids[i], now);

		x->labels[i] = (struct cg_sample){.id = ids[i]};
		if (path)
			err = add_cgroup(x, &x->labels[i], path, unit_of_cgroup(v, ids[i]));
	}
	free(ids);
	return err;
}

/*
 * Every cgroup to publish: the units' totals, or ("all") every probe
 * record with the units' file parts merged in; then a label-only record
 * for each blame party not yet named. Only merged and label-only records
 * are copies (1.5 KB each): the units' totals are the record's own.
 */
static int build_cgroups(const struct publish_view *v, struct inputs *x, uint64_t now)
{
	const struct tick_record *r = v->rec;
	const struct snapshot *snap = r->probes;
	bool all = v->cgroups == METRICS_SCOPE_ALL;
	size_t n_snap = snap ? snap->n_cgroups : 0, n_blame = snap ? snap->n_blame : 0;
	int err = 0;

	x->cap_cgs = r->in.n_units + (all ? n_snap : 0) + 2 * n_blame + 1;
	x->cgs = calloc(x->cap_cgs, sizeof(*x->cgs));
	x->merged = malloc(((all ? r->in.n_units : 0) + 1) * sizeof(*x->merged));
	if (!x->cgs || !x->merged)
		return -ENOMEM;
	for (size_t i = 0; !err && i < r->in.n_units; i++) {
		const struct pol_unit *u = &r->in.units[i];
		const struct cg_sample *rec = all && snap ? snapshot_find(snap, u->id) : NULL;
		struct cg_sample *s;

		if (!all) {
			if (r->unit_totals[i]->parts)
				err = add_cgroup(x, r->unit_totals[i], u->path, u);
			continue;
		}
		/* the unit's own directory as the probes count it, plus its files */
		s = &x->merged[x->n_merged++];
		*s = rec ? *rec : (struct cg_sample){.id = u->id};
		s->parts &= ~(uint32_t)(CG_THROTTLE | CG_PSI);
		s->throttle = r->unit_totals[i]->throttle;
		s->psi = r->unit_totals[i]->psi;
		s->parts |= r->unit_totals[i]->parts & (CG_THROTTLE | CG_PSI);
		if (s->parts)
			err = add_cgroup(x, s, u->path, u);
	}
	for (size_t i = 0; all && !err && i < n_snap; i++) {
		const struct cg_sample *s = &snap->cgroups[i];
		const struct pol_unit *u = unit_of_cgroup(v, s->id);
		const char *path;

		if (!(s->parts & PUBLISHED_PARTS) || (u && u->id == s->id))
			continue; /* nothing to show, or a unit, published above */
		path = path_of(v, s->id, now);
		if (path) /* else removed: its counters stop with it */
			err = add_cgroup(x, s, path, u);
	}
	return err ?: add_blame_labels(v, x, now);
}

static int cmp_unit_path(const void *x, const void *y)
{
	const struct pol_unit *a = *(const struct pol_unit *const *)x;
	const struct pol_unit *b = *(const struct pol_unit *const *)y;

	return strcmp(a->path, b->path);
}

static int cmp_path_unit(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct pol_unit *const *)elem)->path);
}

/* The knob's value as the record holds it (read back after every write), in the metric's unit. */
static int setting_value(const struct pol_unit *u, enum cg_knob k, double *value)
{
	int n;

	switch (k) {
	case CG_KNOB_QUOTA:
		*value = u->quota_us < 0 ? INFINITY : (double)u->quota_us / pol_unit_period_us(u);
		return 0;
	case CG_KNOB_BURST:
		*value = (double)u->burst_us / 1e6;
		return u->burst_us < 0 ? -EOPNOTSUPP : 0;
	case CG_KNOB_IDLE:
		*value = u->idle;
		return u->idle < 0 ? -EOPNOTSUPP : 0;
	case CG_KNOB_CPUS:
		n = cpu_list_count(u->cpus);
		*value = n;
		return n < 0 ? n : 0;
	case CG_KNOB_IO_RBPS: /* read with the settings while I/O suppression is on */
	case CG_KNOB_IO_WBPS: {
		int64_t bps = k == CG_KNOB_IO_RBPS ? u->io_limit.rbps : u->io_limit.wbps;

		*value = bps < 0 ? INFINITY : (double)bps;
		return u->io_limit.has ? 0 : -EOPNOTSUPP;
	}
	default:
		return -EINVAL;
	}
}

/*
 * The settings qoslet changed on a unit and has not restored: the actuator's
 * journal names them, the record gives their values. Descendants it adjusted
 * to keep a nested limit valid are not units: not listed.
 */
static int build_settings(const struct publish_view *v, struct inputs *x)
{
	const struct pol_input *in = &v->rec->in;
	size_t n = 0;
	enum cg_knob k;
	const char *rel;

	while (v->act && actuator_changed(v->act, n, &k, &rel))
		n++;
	x->settings = calloc(n + 1, sizeof(*x->settings));
	x->by_path = malloc((in->n_units + 1) * sizeof(*x->by_path));
	if (!x->settings || !x->by_path)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_units; i++)
		x->by_path[i] = &in->units[i];
	qsort(x->by_path, in->n_units, sizeof(*x->by_path), cmp_unit_path);
	for (size_t i = 0; i < n && actuator_changed(v->act, i, &k, &rel); i++) {
		const struct pol_unit *const *u;
		struct metrics_setting *s = &x->settings[x->n_settings];

		/* the batch weight and memory limit: no per-pod families (batch-resources.md) */
		if (k == CG_KNOB_WEIGHT || k == CG_KNOB_MEM_MAX)
			continue;
		u = bsearch(rel, x->by_path, in->n_units, sizeof(*x->by_path), cmp_path_unit);
		if (!u || setting_value(*u, k, &s->value))
			continue;
		s->path = (*u)->path;
		s->pod_uid = (*u)->pod_uid;
		s->qos = qos_class_name((*u)->cls);
		s->knob = k;
		x->n_settings++;
	}
	return 0;
}

/* The pods the kubelet pinned, labelled as their units are (after build_settings: by_path). */
static int build_pinned(const struct publish_view *v, struct inputs *x)
{
	const struct pol_input *in = &v->rec->in;

	x->pinned = calloc(in->n_units + 1, sizeof(*x->pinned));
	if (!x->pinned)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = x->by_path[i];

		if (u->pinned_cpus)
			x->pinned[x->n_pinned++] = (struct metrics_pinned){
				u->path, u->pod_uid, qos_class_name(u->cls), u->pinned_cpus};
	}
	return 0;
}

/* The breaches reported per victim, labelled as the victim unit is. */
static int build_breaches(const struct publish_view *v, struct inputs *x)
{
	const struct breach_counts *b = v->breaches;

	x->breaches = calloc(b->n + 1, sizeof(*x->breaches));
	if (!x->breaches)
		return -ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		const struct pol_unit *u = pol_input_find(&v->rec->in, b->v[i].victim);

		if (u)
			x->breaches[x->n_breaches++] =
				(struct metrics_breach){u->path, u->pod_uid, qos_class_name(u->cls),
							b->v[i].cause, b->v[i].n};
	}
	return 0;
}

/* Open file descriptors, this directory's own excepted; -1 when /proc is unreadable. */
static int64_t count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	const struct dirent *e;
	int64_t n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

static void read_process(struct metrics_process *p)
{
	unsigned long long size, resident;
	long page = sysconf(_SC_PAGESIZE);
	struct rusage ru;
	struct rlimit rl;
	char buf[128];

	*p = (struct metrics_process){-1, -1, -1, -1, -1};
	if (!read_file_at(AT_FDCWD, "/proc/self/statm", buf, sizeof(buf)) &&
	    sscanf(buf, "%llu %llu", &size, &resident) == 2 && page > 0) {
		p->vm_bytes = (int64_t)(size * (unsigned long long)page);
		p->rss_bytes = (int64_t)(resident * (unsigned long long)page);
	}
	p->open_fds = count_fds();
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		p->max_fds = rl.rlim_cur == RLIM_INFINITY ? INT64_MAX : (int64_t)rl.rlim_cur;
	if (!getrusage(RUSAGE_SELF, &ru))
		p->cpu_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ll +
			    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ll;
}

/*
 * The recent decisions, oldest first, as one JSON array: the texts the log
 * keeps, joined with one allocation. NULL when out of memory.
 */
static char *decisions_json(const struct decision_log *l, size_t *len)
{
	size_t size = sizeof("[]"), off = 0;
	const char *s;
	char *text;

	for (size_t i = 0; i < l->n; i++)
		if ((s = decision_log_recent(l, i)))
			size += strlen(s) + 1;
	text = malloc(size);
	if (!text)
		return NULL;
	text[off++] = '[';
	for (size_t i = l->n; i-- > 0;) {
		if (!(s = decision_log_recent(l, i)))
			continue;
		if (off > 1)
			text[off++] = ',';
		memcpy(text + off, s, strlen(s));
		off += strlen(s);
	}
	text[off++] = ']';
	text[off] = '\0';
	*len = off;
	return text;
}

static void inputs_free(struct inputs *x)
{
	for (size_t i = 0; i < x->n_cgs; i++)
		free((char *)x->cgs[i].path);
	free(x->cgs);
	free(x->merged);
	free(x->labels);
	free(x->settings);
	free(x->by_path);
	free(x->breaches);
	free(x->pinned);
}

/* The metrics text, or NULL with the error counted and logged. */
static char *render_metrics(const struct publish_view *v, uint64_t loop_ns, size_t *len)
{
	struct metrics_probe probes[PROBE_NR] = {
		{.name = "sched"}}; /* no probe set: sched is off */
	struct inputs x = {0};
	struct metrics_process proc;
	struct kube_link_stats kube;
	uint32_t refused[POD_REFUSE_NR];
	struct metrics_refusal refusals[POD_REFUSE_NR - 1];
	struct metrics_input in = {.log = v->log,
				   .ticks = v->ticks,
				   .fast_ticks = v->fast_ticks,
				   .alerts_wait = v->alerts_wait,
				   .alerts_displaced = v->alerts_displaced,
				   .outside_reasserted = v->answers[ACT_ANSWER_REASSERTED],
				   .outside_adopted = v->answers[ACT_ANSWER_ADOPTED],
				   .outside_contested = v->answers[ACT_ANSWER_CONTESTED],
				   .loop_ns = loop_ns,
				   .probes = probes,
				   .n_probes = 1,
				   .blame_top = METRICS_BLAME_TOP,
				   .pods = v->pods,
				   .process = &proc};
	char *metrics = NULL;
	int n_excl;
	int err = build_cgroups(v, &x, clock_ns(CLOCK_MONOTONIC)) ?: build_settings(v, &x)
								     ?: build_breaches(v, &x)
									     ?: build_pinned(v, &x);

	in.cgroups = x.cgs;
	in.n_cgroups = x.n_cgs;
	in.settings = x.settings;
	in.n_settings = x.n_settings;
	in.breaches = x.breaches;
	in.n_breaches = x.n_breaches;
	in.pinned = x.pinned;
	in.n_pinned = x.n_pinned;
	n_excl = cpu_list_count(v->rec->in.exclusive_cpus);
	in.exclusive_cpus = n_excl > 0 ? (uint32_t)n_excl : 0;
	if (v->rec->probes) {
		in.cpi_hardware = v->rec->probes->cpi_hardware;
		in.memstall_psi = v->rec->probes->memstall_psi;
		in.blame = v->rec->probes->blame;
		in.n_blame = v->rec->probes->n_blame;
	}
	for (int id = 0; v->probes && id < PROBE_NR; id++) {
		struct probe_status st = probe_set_status(v->probes, id);

		probes[id] = (struct metrics_probe){st.name, st.on, st.on ? st.detail : NULL};
		in.n_probes = PROBE_NR;
	}
	read_process(&proc);
	if (v->kube) {
		kube_sync_stats(v->kube, &kube);
		in.kube = &kube;
		collector_refusals(v->coll, refused);
		for (int r = 1; r < POD_REFUSE_NR; r++)
			refusals[r - 1] = (struct metrics_refusal){
				pod_refusal_input(r), pod_refusal_reason(r), refused[r]};
		in.refusals = refusals;
		in.n_refusals = POD_REFUSE_NR - 1;
	}
	memcpy(in.errors, v->errors, sizeof(in.errors));
	if (v->act)
		actuator_journal_errors(v->act, &in.errors[METRICS_ERR_JOURNAL_SET_ASIDE],
					&in.errors[METRICS_ERR_JOURNAL_WRITE]);
	if (v->capacity) {
		in.capacity = v->capacity;
		for (int r = 0; r < CAP_NR; r++)
			in.batch_requested[r] = batch_requested(&v->rec->in, r);
	}
	if (!err)
		err = metrics_render(&in, &metrics, len);
	inputs_free(&x);
	if (err) {
		v->errors[METRICS_ERR_RENDER]++;
		log_warn("agent: cannot render the metrics: %s", strerror(-err));
		return NULL;
	}
	return metrics;
}

/* Renders what the HTTP endpoint asked for: the loop's thread is the only one reading agent state.
 */
void publish_render(const struct publish_view *v, uint64_t loop_ns, unsigned int want)
{
	size_t len = 0;
	char *text;

	if (want & HTTP_WANT(HTTP_METRICS)) {
		text = render_metrics(v, loop_ns, &len);
		if (text && http_publish(v->http, HTTP_METRICS, text, len))
			v->errors[METRICS_ERR_RENDER]++;
	}
	if (want & HTTP_WANT(HTTP_DECISIONS)) {
		text = decisions_json(v->log, &len);
		if (!text || http_publish(v->http, HTTP_DECISIONS, text, len))
			v->errors[METRICS_ERR_RENDER]++;
	}
}
