// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the agent's HTTP endpoint serves: the Prometheus text and the recent
 * decisions, rendered by the loop once per interval from its own state.
 *
 * The metrics' input: the probes' last (cumulative) snapshot, labelled with
 * the units the inventory found; for each unit, what no running probe reads
 * taken from its own cgroup files (CFS throttling from cpu.stat, and PSI on
 * cgroup v2), which costs one to four small reads per unit; the settings
 * qoslet changed, from the actuator's journal; and the process's own numbers.
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

#include "../actuate/actuator.h"
#include "../clock.h"
#include "../cpulist.h"
#include "../log.h"
#include "../probes/cpustat.h"
#include "../probes/psi.h"
#include "../readfile.h"
#include "../report/http.h"
#include "../report/metrics.h"
#include "agent_state.h"

/* The parts of a snapshot cgroup the metrics publish. */
#define PUBLISHED_PARTS (CG_RQ | CG_CPU | CG_THROTTLE | CG_MEMSTALL | CG_PSI)
/* The kernel's largest NR_CPUS: no cpuset names a CPU past it. */
#define CPUS_MAX 8192

struct inputs {
	struct metrics_cgroup *cgs; /* the snapshot's first (sorted by id), then units' own */
	size_t n_cgs, n_snap;
	struct cg_sample *unit_samples; /* a unit's snapshot record plus its files' parts */
	struct metrics_setting *settings;
	size_t n_settings;
	const struct pol_unit **by_path; /* the units, sorted by path */
};

/* A read that failed for another reason than the cgroup or the kernel feature being absent. */
static void count_read_error(struct agent *a, int err)
{
	if (err && err != -ENOENT && err != -EOPNOTSUPP)
		a->errors[METRICS_ERR_CGROUP_READ]++;
}

/* The labels of a snapshot cgroup: its path, and its unit's pod and class. */
static int label_cgroup(struct agent *a, const struct cg_sample *s, struct metrics_cgroup *out,
			uint64_t now)
{
	const char *path = cgroup_names_lookup(a->names, s->id, now);
	const struct inventory_member *m;
	const struct pol_unit *u;

	if (!path)
		return -ENOENT; /* removed: its counters stop with it */
	/* copied: the next lookup may rewalk and free the name */
	out->path = strdup(path);
	if (!out->path)
		return -ENOMEM;
	out->s = s;
	m = inventory_member_of(a->inv, s->id);
	u = m ? pol_input_find(&a->in, m->unit) : NULL;
	out->pod_uid = u ? u->pod_uid : NULL;
	out->qos = u ? qos_class_name(u->cls) : NULL;
	return 0;
}

static int cmp_cgroup_id(const void *key, const void *elem)
{
	uint64_t id = *(const uint64_t *)key, other = ((const struct metrics_cgroup *)elem)->s->id;

	return id < other ? -1 : id > other;
}

/*
 * CFS throttling (cpu.stat) and, where the cpu controller is on cgroup v2,
 * pressure (*.pressure) of a unit, for the parts no probe gave. These are
 * the very files the throttle probe's cpustat source and the psi reader read.
 */
static void read_unit_files(struct agent *a, const struct pol_unit *u, struct cg_sample *s)
{
	static const char *const psi_files[PSI_NR] = {[PSI_CPU] = "cpu.pressure",
						      [PSI_MEMORY] = "memory.pressure",
						      [PSI_IO] = "io.pressure"};
	char buf[1024];
	int err;

	if (!(s->parts & CG_THROTTLE)) {
		err = cg_read_file(&a->ctrls, CTRL_CPU, u->path, "cpu.stat", buf, sizeof(buf));
		/* no nr_periods line: the kernel has no CFS bandwidth control */
		if (!err && !cpustat_parse(buf, &s->throttle))
			s->parts |= CG_THROTTLE;
		count_read_error(a, err);
	}
	/* On v1 and hybrid nodes the unit has no cgroup2 directory of its own. */
	if ((s->parts & CG_PSI) || !a->ctrls.v2[CTRL_CPU])
		return;
	for (int r = 0; r < PSI_NR; r++) {
		err = cg_read_file(&a->ctrls, CTRL_CPU, u->path, psi_files[r], buf, sizeof(buf));
		if (!err && !psi_parse(buf, &s->psi.some[r], &s->psi.full[r]))
			s->parts |= CG_PSI;
		count_read_error(a, err);
	}
}

/* Every snapshot cgroup with something to publish, then the units' file parts. */
static int build_cgroups(struct agent *a, struct inputs *x, uint64_t now)
{
	size_t n_snap = a->have_before ? a->before.n_cgroups : 0;
	int err = 0;

	x->cgs = calloc(n_snap + a->in.n_units + 1, sizeof(*x->cgs));
	x->unit_samples = calloc(a->in.n_units + 1, sizeof(*x->unit_samples));
	if (!x->cgs || !x->unit_samples)
		return -ENOMEM;
	for (size_t i = 0; !err && i < n_snap; i++) {
		const struct cg_sample *s = &a->before.cgroups[i];

		if (s->parts & PUBLISHED_PARTS) {
			err = label_cgroup(a, s, &x->cgs[x->n_cgs], now);
			x->n_cgs += !err;
			err = err == -ENOENT ? 0 : err;
		}
	}
	x->n_snap = x->n_cgs; /* sorted by id, as the snapshot is */
	for (size_t i = 0; !err && i < a->in.n_units; i++) {
		const struct pol_unit *u = &a->in.units[i];
		const struct cg_sample *rec = n_snap ? snapshot_find(&a->before, u->id) : NULL;
		struct metrics_cgroup *c =
			bsearch(&u->id, x->cgs, x->n_snap, sizeof(*x->cgs), cmp_cgroup_id);
		struct cg_sample *s = &x->unit_samples[i];

		*s = rec ? *rec : (struct cg_sample){.id = u->id};
		read_unit_files(a, u, s);
		if (c) {
			c->s = s;
		} else if (s->parts) {
			c = &x->cgs[x->n_cgs++];
			*c = (struct metrics_cgroup){
				.s = s, .pod_uid = u->pod_uid, .qos = qos_class_name(u->cls)};
			c->path = strdup(u->path);
			err = c->path ? 0 : -ENOMEM;
		}
	}
	return err;
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

/* How many CPUs a kernel CPU list names; -EINVAL when it is not one. */
static int count_cpus(const char *list)
{
	bool *on = calloc(CPUS_MAX, sizeof(*on));
	int n = 0, err = on ? cpu_list_parse(list, on, CPUS_MAX) : -ENOMEM;

	for (int i = 0; !err && i < CPUS_MAX; i++)
		n += on[i];
	free(on);
	return err ? err : n;
}

/* The knob's value as the cgroup holds it now, in the metric's unit. */
static int read_setting(struct agent *a, const char *rel, enum cg_knob k, double *value)
{
	char cpus[POL_CPULIST_MAX];
	int64_t v;
	uint64_t period;
	int idle, err;

	switch (k) {
	case CG_KNOB_QUOTA:
		err = cg_read_quota(&a->ctrls, rel, &v, &period);
		*value = v < 0 ? INFINITY : period ? (double)v / (double)period : 0;
		return err;
	case CG_KNOB_BURST:
		err = cg_read_burst(&a->ctrls, rel, &v);
		*value = (double)v / 1e6;
		return err;
	case CG_KNOB_IDLE:
		err = cg_read_idle(&a->ctrls, rel, &idle);
		*value = idle;
		return err;
	case CG_KNOB_CPUS:
		err = cg_read_cpus(&a->ctrls, rel, cpus, sizeof(cpus));
		err = err ?: count_cpus(cpus);
		*value = err;
		return err < 0 ? err : 0;
	default:
		return -EINVAL;
	}
}

/*
 * The settings qoslet changed on a unit and has not restored: the actuator's
 * journal names them, the cgroup files give their values now. Descendants
 * it adjusted to keep a nested limit valid are not units: not listed.
 */
static int build_settings(struct agent *a, struct inputs *x)
{
	size_t n = 0;
	enum cg_knob k;
	const char *rel;

	while (a->act && actuator_changed(a->act, n, &k, &rel))
		n++;
	x->settings = calloc(n + 1, sizeof(*x->settings));
	x->by_path = malloc((a->in.n_units + 1) * sizeof(*x->by_path));
	if (!x->settings || !x->by_path)
		return -ENOMEM;
	for (size_t i = 0; i < a->in.n_units; i++)
		x->by_path[i] = &a->in.units[i];
	qsort(x->by_path, a->in.n_units, sizeof(*x->by_path), cmp_unit_path);
	for (size_t i = 0; i < n && actuator_changed(a->act, i, &k, &rel); i++) {
		const struct pol_unit *const *u;
		struct metrics_setting *s = &x->settings[x->n_settings];
		int err;

		if (k == CG_KNOB_WEIGHT)
			continue; /* journaled along with cpu.idle, never set for its own sake */
		u = bsearch(rel, x->by_path, a->in.n_units, sizeof(*x->by_path), cmp_path_unit);
		if (!u)
			continue;
		err = read_setting(a, rel, k, &s->value);
		count_read_error(a, err);
		if (err)
			continue;
		s->path = (*u)->path;
		s->pod_uid = (*u)->pod_uid;
		s->qos = qos_class_name((*u)->cls);
		s->knob = k;
		x->n_settings++;
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
	free(x->unit_samples);
	free(x->settings);
	free(x->by_path);
}

/* Renders what the HTTP endpoint serves: the loop's thread is the only one reading agent state. */
void agent_publish(struct agent *a, uint64_t loop_ns)
{
	struct metrics_probe probes[PROBE_NR] = {
		{.name = "sched"}}; /* no probe set: sched is off */
	struct inputs x = {0};
	struct metrics_process proc;
	struct kube_link_stats kube;
	struct metrics_input in = {.log = &a->log,
				   .ticks = a->ticks,
				   .fast_ticks = a->fast_ticks,
				   .loop_ns = loop_ns,
				   .probes = probes,
				   .n_probes = 1,
				   .blame_top = METRICS_BLAME_TOP,
				   .pods = &a->pods,
				   .process = &proc};
	char *metrics = NULL, *decisions = NULL;
	size_t metrics_len = 0, decisions_len = 0;
	int err = build_cgroups(a, &x, clock_ns(CLOCK_MONOTONIC)) ?: build_settings(a, &x);

	in.cgroups = x.cgs;
	in.n_cgroups = x.n_cgs;
	in.settings = x.settings;
	in.n_settings = x.n_settings;
	if (a->have_before) {
		in.cpi_hardware = a->before.cpi_hardware;
		in.blame = a->before.blame;
		in.n_blame = a->before.n_blame;
	}
	for (int id = 0; a->probes && id < PROBE_NR; id++) {
		struct probe_status st = probe_set_status(a->probes, id);

		probes[id] = (struct metrics_probe){st.name, st.on, st.on ? st.detail : NULL};
		in.n_probes = PROBE_NR;
	}
	read_process(&proc);
	if (a->kube) {
		kube_sync_stats(a->kube, &kube);
		in.kube = &kube;
	}
	memcpy(in.errors, a->errors, sizeof(in.errors));
	if (!err)
		err = metrics_render(&in, &metrics, &metrics_len);
	if (!err && (!a->published || a->log.seq != a->published_seq)) {
		decisions = decisions_json(&a->log, &decisions_len);
		err = decisions ? 0 : -ENOMEM;
		a->published_seq = a->log.seq;
	}
	inputs_free(&x);
	if (err) {
		/* the endpoint keeps serving the last tick's texts */
		a->errors[METRICS_ERR_RENDER]++;
		log_warn("agent: cannot render the metrics: %s", strerror(-err));
		free(metrics);
		return;
	}
	a->published = true;
	http_publish(a->http, metrics, metrics_len, decisions, decisions_len);
}
