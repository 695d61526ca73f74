// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `qoslet agent` and `qoslet record`: the loop that reads the probes and
 * the managed cgroups, runs the policies, hands their actions to the
 * actuator and records the decisions.
 */
#include "agent/agent.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include "actuate/actuator.h"
#include "clock.h"
#include "log.h"
#include "policy/policy.h"
#include "probes/cpi_events.h"
#include "probes/cpi_mode.h"
#include "report/http.h"
#include "config/agent_args.h"
#include "agent/agent_state.h"
#include "config/agent_config.h"
#include "decision/decision.h"
#include "policy/alert_threshold.h"
#include "probes/fast_path.h"
#include "collect/memory_qos_check.h"
#include "agent/loop.h"
#include "agent/privileges.h"
#include "record/record.h"
#include "agent/summary.h"

/* One alert per watched cgroup per this long: the ring buffer cannot flood. */
#define ALERT_GAP_NS (100 * 1000000ull)
/* A one-line summary of what the agent sees, at the first tick and then this often. */
#define STATUS_EVERY_NS (60 * 1000000000ull)

static volatile sig_atomic_t stop, reload;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload = 1;
	else
		stop = 1;
}

static const struct kube_pod *pod_of(void *ctx, const char *uid)
{
	struct agent *a = ctx;

	return kube_pod_find(&a->pods, uid);
}

static bool original_quota(void *ctx, const char *rel, int64_t *quota_us)
{
	struct agent *a = ctx;

	return a->act && actuator_original_quota(a->act, rel, quota_us);
}

static bool memory_held(void *ctx, const char *rel)
{
	struct agent *a = ctx;

	return a->act && actuator_holds_memory(a->act, rel);
}

/* Config from --config (or the embedded defaults) and the command line; exit status 2 on error. */
static int load_config(struct agent *a)
{
	struct config_node node;
	char err[512];

	if (agent_config_read(a, &a->cfg, &node, err, sizeof(err))) {
		log_err("agent: %s", err);
		return 2;
	}
	/* they choose by the Node's labels, which only the API link reads */
	if (node.listed && !a->cfg.kube.enabled)
		log_warn("agent: the config's %zu overrides apply to no node without "
			 "kubernetes.enabled: the cluster-wide settings apply",
			 node.listed);
	return 0;
}

/*
 * The Node, once, before the threads: its labels choose the config's
 * overrides (which then apply from the first tick), its status what need
 * not be written again. An API that does not answer is no reason not to
 * protect the node: the cluster-wide settings apply until the API thread
 * reads the labels, and the loop reloads for them then.
 */
static void read_node(struct agent *a)
{
	struct agent_config *next;
	struct config_node node;
	char err[512];

	if (kube_sync_read_node(a->kube, &a->node_labels, err, sizeof(err))) {
		log_warn("agent: kubernetes: cannot read node %s (RBAC get on nodes): %s; the "
			 "config's cluster-wide settings apply until its labels are read",
			 kube_sync_node(a->kube), err);
		kube_sync_refresh_node(a->kube);
		return;
	}
	next = malloc(sizeof(*next));
	/* the file was valid a moment ago: a change meanwhile is the watch's to reload */
	if (!next || agent_config_read(a, next, &node, err, sizeof(err))) {
		log_warn("agent: %s; the cluster-wide settings apply until a reload",
			 next ? err : "out of memory reading the config for this node");
	} else {
		a->cfg = *next;
		log_info("agent: config overrides on this node: %s",
			 node.applied[0] ? node.applied : "none");
	}
	free(next);
}

/* The managed subtree: the config's, else the kubelet's pod root. */
static int resolve_subtree(struct agent *a)
{
	char rel[PATH_MAX];
	uint64_t id;

	if (a->cfg.cgroup_root[0]) {
		if (cgroup_path_normalize(a->fs.root, a->cfg.cgroup_root, rel, sizeof(rel)) ||
		    cgroup_id_of(&a->fs, rel, &id)) {
			log_err("agent: cgroup_root '%s': no such cgroup under %s; nothing was "
				"changed",
				a->cfg.cgroup_root, a->fs.root);
			return 2;
		}
		snprintf(a->subtree, sizeof(a->subtree), "%s", rel);
		return 0;
	}
	if (!collect_detect_kubepods(&a->ctrls, a->subtree, sizeof(a->subtree)))
		return 0;
	/* No pods here: watch the whole hierarchy, and touch nothing. */
	log_warn("agent: no kubepods cgroup under %s and no cgroup_root in the config: observing "
		 "only (dry-run), with the whole hierarchy as scope: top-level cgroups and the "
		 "children of top-level slices are SYSTEM units; a run-queue line every interval",
		 a->fs.root);
	a->subtree[0] = '\0';
	a->observe_only = true;
	a->cfg.dry_run = true;
	return 0;
}

static FILE *open_output(const char *path, const char *what)
{
	FILE *f;

	if (!strcmp(path, "-"))
		return stdout;
	f = fopen(path, "a");
	if (!f)
		log_err("agent: %s %s: %s", what, path, strerror(errno));
	return f;
}

static void sink_event(void *ks, const struct kube_event_req *ev)
{
	kube_sync_event(ks, ev);
}

static void sink_condition(void *ks, bool interference, const char *message)
{
	kube_sync_condition(ks, interference, message);
}

/* What the Kubernetes reports read of the agent (kube/report.h). */
static struct kube_report_view kube_view(struct agent *a)
{
	return (struct kube_report_view){
		.sink = {.event = sink_event, .condition = sink_condition, .ctx = a->kube},
		.pods = &a->pods,
		.condition_hold_s = a->cfg.kube.condition_hold_s,
		.name_culprits = a->cfg.kube.event_name_culprits,
		.now_ns = clock_ns(CLOCK_MONOTONIC),
		.seen = &a->kube_seen};
}

/* Records d, and tells the cluster about it when it is worth an Event. */
void agent_record_decision(struct agent *a, struct decision *d)
{
	if (d->outcome == OUT_FAILED || d->outcome == OUT_REFUSED)
		log_warn("agent: %s %s on /%s %s: %s", rule_name(d->act.rule),
			 act_kind_name(d->act.kind), d->act.path, decision_outcome_name(d->outcome),
			 d->why[0] ? d->why : strerror(d->err));
	if (decision_log_add(&a->log, d) ||
	    (d->act.cause.kind == ACT_CAUSE_INTERFERENCE &&
	     breach_counts_add(&a->breaches, d->act.id, d->act.cause.interference)))
		log_err("agent: out of memory counting decisions");
	if (a->kube) {
		struct kube_report_view v = kube_view(a);

		kube_report(&v, d);
	}
}

/* The actuator let an eviction through: the Eviction API does it, for pods of this node only. */
static void request_eviction(struct agent *a, struct decision *d)
{
	const struct kube_pod *p = kube_pod_find(&a->pods, d->pod_uid);
	struct kube_evict_req req = {.act = d->act, .ts_ns = d->ts_ns};
	int rc;

	if (!p) {
		d->outcome = OUT_FAILED;
		snprintf(d->why, sizeof(d->why), "%s",
			 d->pod_uid[0]
				 ? "the pod is not (yet) in the API's list of this node's pods"
				 : "not a pod: the Eviction API evicts pods only");
		return;
	}
	if (strcmp(p->node, kube_sync_node(a->kube))) {
		d->outcome = OUT_REFUSED;
		snprintf(d->why, sizeof(d->why),
			 "pod %.30s/%.50s runs on node \"%.40s\", not on this one", p->ns, p->name,
			 p->node);
		return;
	}
	snprintf(req.uid, sizeof(req.uid), "%s", p->uid);
	snprintf(req.ns, sizeof(req.ns), "%s", p->ns);
	snprintf(req.name, sizeof(req.name), "%s", p->name);
	snprintf(d->after, sizeof(d->after), "evict pod %.63s/%.150s through the Eviction API",
		 p->ns, p->name);
	rc = kube_sync_evict(a->kube, &req);
	if (rc == -EALREADY)
		d->outcome = OUT_PENDING; /* its earlier request is still being tried */
	else if (rc)
		d->outcome = OUT_FAILED, d->err = -rc;
}

/*
 * A write that lost a race with whoever is making the cgroup, so the loop
 * tries it again soon (loop_retry): on v1 the cgroup's directory in this
 * controller's hierarchy is not made yet (ENOENT), or a cpuset child made
 * meanwhile holds CPUs the unit is to give up (EBUSY: v1 refuses to narrow
 * a parent below a child; the next plan narrows the child first).
 */
static bool write_racing(const struct action *act, const struct act_result *r)
{
	return r->outcome == OUT_FAILED &&
	       (r->err == -ENOENT || (r->err == -EBUSY && act->kind == ACT_CPUSET));
}

/* Records act's decision with the actuator's result r. */
static void record(struct agent *a, const struct action *act, const struct act_result *r)
{
	/* a container target's pod names the decision's pod */
	const struct pol_unit *u = pol_input_owner(&a->rec->in, act->id);
	struct decision d = {.ts_ns = a->rec->in.ts_ns, .act = *act};

	if (u)
		snprintf(d.pod_uid, sizeof(d.pod_uid), "%s", u->pod_uid);
	d.outcome = r->outcome;
	d.err = -r->err;
	snprintf(d.before, sizeof(d.before), "%s", r->before);
	snprintf(d.after, sizeof(d.after), "%s", r->after);
	snprintf(d.why, sizeof(d.why), "%s", r->why);
	if (r->outcome == OUT_REQUESTED)
		request_eviction(a, &d);
	agent_record_decision(a, &d);
}

enum decision_outcome agent_decide(struct agent *a, const struct action *act)
{
	struct act_result r = {0};

	actuator_apply(a->act, act, &r);
	/* What the actuator wrote, the next tick reads back rather than waiting for the slow
	 * re-read. */
	if (r.outcome == OUT_APPLIED)
		collector_settings_changed(a->coll, act->id);
	else if (write_racing(act, &r)) {
		a->write_raced = true;
		collector_write_raced(a->coll);
	}
	record(a, act, &r);
	return r.outcome;
}

/*
 * The tick's actions in the order the policies list them, held where the
 * plan's ordering rule says (plan_held). Batch capacity's reports are
 * records only: before is the values decided at the last tick (NULL for
 * the first).
 */
static void apply_actions(struct agent *a, const uint64_t *cap_before)
{
	struct plan_progress progress = {0};

	for (size_t i = 0; i < a->actions.n; i++) {
		const struct action *act = &a->actions.v[i];
		const char *held = plan_held(&progress, act);

		if (act->kind == ACT_CAPACITY) {
			agent_record_capacity(a, act, cap_before);
		} else if (held) {
			struct act_result r = {.outcome = OUT_REFUSED};

			snprintf(r.why, sizeof(r.why), "%s", held);
			record(a, act, &r);
		} else {
			plan_progress_note(&progress, act, agent_decide(a, act) == OUT_FAILED);
		}
	}
}

/* Every attempt of an eviction through the API, as a decision record of its own. */
static void eviction_results(struct agent *a)
{
	struct kube_evict_result res[8];
	size_t n;

	while ((n = kube_sync_take_results(a->kube, res, 8)))
		for (size_t i = 0; i < n; i++) {
			const struct kube_evict_result *r = &res[i];
			struct decision d = {.ts_ns = r->ts_ns, .act = r->req.act};

			snprintf(d.pod_uid, sizeof(d.pod_uid), "%s", r->req.uid);
			d.outcome = r->outcome;
			snprintf(d.before, sizeof(d.before), "pod %s/%s, attempt %u", r->req.ns,
				 r->req.name, r->attempt);
			if (r->status)
				snprintf(d.after, sizeof(d.after), "HTTP %ld", r->status);
			else
				snprintf(d.after, sizeof(d.after), "no answer");
			snprintf(d.why, sizeof(d.why), "%s", r->why);
			agent_record_decision(a, &d);
		}
}

static void log_status(struct agent *a)
{
	const struct pol_input *in = &a->rec->in;
	size_t n[QOS_NR] = {0};

	if (a->last_status_ns && a->last_tick_ns - a->last_status_ns < STATUS_EVERY_NS)
		return;
	a->last_status_ns = a->last_tick_ns;
	for (size_t i = 0; i < in->n_units; i++)
		n[in->units[i].cls]++;
	log_info("agent: %zu units (LSE %zu, LSR %zu, LS %zu, BE %zu, SYSTEM %zu); CPUs %.2f of "
		 "%.2f busy; memory %.0f%% of %.1f GiB; %llu decisions so far",
		 in->n_units, n[QOS_LSE], n[QOS_LSR], n[QOS_LS], n[QOS_BE], n[QOS_SYSTEM],
		 in->node_cpu_used, in->cpus,
		 in->mem_capacity ? 100.0 * in->mem_used / in->mem_capacity : 0,
		 in->mem_capacity / 1073741824.0, (unsigned long long)a->log.seq);
}

/*
 * Off Kubernetes the agent only observes: a line per interval says what it
 * sees (the worst run-queue wait and behind whom), so that the log answers
 * "is anything waiting for a CPU here, and why" without a scrape.
 */
static void log_summary(struct agent *a)
{
	char line[POL_PATH_MAX * 2 + 128];

	summary_run_queue(&a->rec->in, a->parts & CG_RQ, a->cfg.policy.interference.rq_min_waits,
			  line, sizeof(line));
	log_info("agent: %s", line);
}

/*
 * Units gone since the last tick: the actuator and the breach counts drop
 * what they kept. Both lists are sorted by id: a merge, in which a path is
 * copied only for a unit new or renamed since the last tick (the first pass,
 * which can fail and then changes nothing); the second hands the kept paths
 * over and forgets the gone units.
 */
static int forget_gone(struct agent *a)
{
	const struct pol_input *in = &a->rec->in;
	struct unit_ref *now = calloc(in->n_units + 1, sizeof(*now));
	size_t i, k = 0;

	if (!now)
		return -ENOMEM;
	for (i = 0; i < in->n_units; i++) {
		now[i].id = in->units[i].id;
		while (k < a->n_known && a->known[k].id < now[i].id)
			k++;
		if (k < a->n_known && a->known[k].id == now[i].id &&
		    !strcmp(a->known[k].path, in->units[i].path))
			continue; /* NULL: the known path, handed over below */
		if (!(now[i].path = strdup(in->units[i].path))) {
			while (i-- > 0)
				free(now[i].path);
			free(now);
			return -ENOMEM;
		}
	}
	for (i = 0, k = 0; k < a->n_known; k++) {
		while (i < in->n_units && now[i].id < a->known[k].id)
			i++;
		if (i < in->n_units && now[i].id == a->known[k].id && !now[i].path) {
			now[i].path = a->known[k].path;
			continue;
		}
		if (i == in->n_units || now[i].id != a->known[k].id)
			actuator_forget(a->act, a->known[k].path);
		free(a->known[k].path);
	}
	free(a->known);
	a->known = now;
	a->n_known = in->n_units;
	breach_counts_keep(&a->breaches, in);
	return 0;
}

/*
 * The fast path watches the LS units' cgroups, each at its unit's threshold,
 * except while a unit's breach stays settled (the interference policy's last
 * run found it reported and its BE suspects capped): then its alerts would
 * only wake the agent for nothing, so it is unwatched until the policy finds
 * something new (the regular ticks keep judging it). The BE units' cgroups
 * are its displacers while SLO control would confine BE for an LS unit they
 * displace (slo_displacement_acts). Built anew each tick,
 * since members, annotations, the config and settled breaches all move it;
 * the map is written only where it changed.
 */
static void watch_sync(struct agent *a)
{
	const struct pol_input *in = &a->rec->in;
	const struct policy_config *p = &a->cfg.policy;
	const struct collect_member *m;
	struct fast_path_target *want;
	size_t n, n_want = 0, n_muted = 0;

	if (!a->fp)
		return;
	m = collector_members(a->coll, &n);
	want = malloc((n ? n : 1) * sizeof(*want));
	if (!want)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!qos_is_ls(m[i].cls))
			continue;
		if (fast_path_may_mute(p) &&
		    interference_settled(&a->pol.interference, m[i].unit)) {
			n_muted++;
			continue;
		}
		want[n_want++] = (struct fast_path_target){
			m[i].cgid,
			(uint64_t)(fast_path_threshold_us(p, pol_input_find(in, m[i].unit)) *
				   1000)};
	}
	if (n_muted != a->n_muted)
		log_debug("agent: fast path: %zu LS cgroups muted (breach settled)", n_muted);
	a->n_muted = n_muted;
	fast_path_watch(a->fp, want, n_want);
	/* The BE cgroups displace, while a displacement would still confine BE. */
	n_want = 0;
	if (slo_displacement_acts(in, &p->slo, &a->pol.slo, policy_slo_may_confine(p)))
		for (size_t i = 0; i < n; i++)
			if (m[i].cls == QOS_BE)
				want[n_want++] = (struct fast_path_target){m[i].cgid, 0};
	fast_path_displacers(a->fp, want, n_want);
	free(want);
}

/* A watched file read after a change: the actuator says whether another writer made it. */
static void on_file_read(void *ctx, enum cg_knob knob, const char *rel, const char *text)
{
	struct agent *a = ctx;

	if (actuator_note(a->act, knob, rel, text))
		a->outside_noted = a->outside_wake = true;
}

/*
 * The actuator's answer to another writer, as a decision of the action that
 * last wrote the file (its kind, rule and class), cause "outside_write".
 * The target is the file's cgroup; its cgroup_id is the unit's when that is
 * the unit itself, else 0 (an ancestor's protection sum, a container's
 * nested quota).
 */
static void on_answer(void *ctx, const struct act_answer *ans)
{
	struct agent *a = ctx;
	const struct pol_unit *u = pol_input_owner(&a->rec->in, ans->id);
	struct decision d = {.ts_ns = clock_ns(CLOCK_REALTIME), .outcome = ans->r.outcome};
	struct action *act = &d.act;

	act->kind = ans->act_kind;
	act->cls = ans->cls;
	act->rule = ans->rule;
	act->cause.kind = ACT_CAUSE_OUTSIDE_WRITE;
	snprintf(act->path, sizeof(act->path), "%s", ans->rel);
	act->id = u && !strcmp(u->path, ans->rel) ? ans->id : 0;
	if (ans->knob == CG_KNOB_CPUS)
		snprintf(act->cpus, sizeof(act->cpus), "%s", ans->r.after);
	else if (cg_knob_parse(&a->ctrls, ans->knob, ans->r.after, &act->value))
		act->value = 0;
	if (u)
		snprintf(d.pod_uid, sizeof(d.pod_uid), "%s", u->pod_uid);
	d.err = -ans->r.err;
	snprintf(d.before, sizeof(d.before), "%s", ans->r.before);
	snprintf(d.after, sizeof(d.after), "%s", ans->r.after);
	snprintf(d.why, sizeof(d.why), "%s", ans->r.why);
	a->answers[ans->kind]++;
	/* the owner's new limit: the policies decide from it at this tick */
	if (ans->kind == ACT_ANSWER_ADOPTED)
		collector_settings_changed(a->coll, ans->id);
	agent_record_decision(a, &d);
}

/* Before the tick reads the node: another writer's changes answered, ended holds written back. */
static void answer_outside(struct agent *a)
{
	if (!a->files)
		return;
	a->outside_noted = a->outside_wake = false;
	actuator_answer(a->act, clock_ns(CLOCK_MONOTONIC), on_answer, a);
}

static void want_file(void *ctx, enum cg_knob knob, const char *rel)
{
	file_watch_want(ctx, knob, rel);
}

/* After a tick: the watch follows the files the actuator holds (changed only when they did). */
static void watch_files(struct agent *a)
{
	uint64_t gen;

	if (!a->files)
		return;
	gen = actuator_watch_generation(a->act);
	if (gen == a->files_gen)
		return;
	a->files_gen = gen;
	file_watch_begin(a->files);
	actuator_watch_list(a->act, want_file, a->files);
	file_watch_end(a->files);
	/* The files newly watched: another writer may have come before the watch did. */
	file_watch_drain(a->files, on_file_read, a);
}

/*
 * One tick. The first one only primes the counters (there is no interval
 * yet to judge), so policies run from the second on.
 */
static int tick_once(struct agent *a, bool fast)
{
	const struct tick_record *rec;
	uint64_t cap_before[CAP_NR];
	bool had_capacity;
	int err = 0;

	a->last_tick_ns = clock_ns(CLOCK_MONOTONIC);
	if (a->kube)
		agent_take_labels(a);
	if (a->kube && kube_sync_take_pods(a->kube, &a->pods)) {
		log_debug("agent: %zu pods on this node from the API", a->pods.n);
		collector_reclassify(a->coll);
	}
	answer_outside(a);
	rec = collector_read(a->coll, clock_ns(CLOCK_REALTIME), a->last_tick_ns, &err);
	if (!rec) {
		a->errors[METRICS_ERR_SUBTREE_READ]++;
		log_err("agent: cannot read the managed subtree /%s: %s", a->subtree,
			strerror(-err));
		return err;
	}
	a->rec = rec;
	a->errors[METRICS_ERR_PROBE_READ] += rec->probe_read_failed;
	a->errors[METRICS_ERR_CGROUP_READ] += rec->cgroup_read_errors;
	watch_sync(a);
	if (a->ticks++ == 0)
		return 0;
	a->fast_ticks += fast;
	log_status(a);
	if (a->observe_only && !fast)
		log_summary(a);
	if (a->record && record_write_input(a->record, &rec->in))
		log_warn("agent: cannot write the recording: %s", strerror(errno));
	if (a->args.mode == AGENT_RECORD)
		return 0;
	/* capacity's records show the values of its last decision as before */
	had_capacity = a->pol.capacity.have_last;
	memcpy(cap_before, a->pol.capacity.decided, sizeof(cap_before));
	err = policy_tick(&rec->in, &a->cfg.policy, a->cfg.dry_run, &a->pol, &a->actions);
	if (err)
		return err;
	apply_actions(a, had_capacity ? cap_before : NULL);
	/* the published figure: each change of it has a record explaining it */
	if (a->kube && a->pol.have_capacity)
		kube_sync_batch(a->kube, a->pol.capacity.published[CAP_CPU],
				a->pol.capacity.published[CAP_MEM],
				(uint64_t)(a->cfg.policy.capacity.stale_s * 1e9));
	if (a->kube) {
		eviction_results(a);
		if (!fast) {
			struct kube_report_view v = kube_view(a);

			kube_report_condition(&v);
		}
	}
	watch_sync(a);
	return forget_gone(a);
}

/*
 * The loop counts as hung (/healthz fails, the kubelet restarts the agent)
 * after this many intervals without a completed tick, and never sooner than
 * HEALTH_STALE_MIN_NS: a tick can start an interval late on a saturated node
 * (the agent runs with a small CPU request) or take a while after a cgroup
 * storm, but a loop five intervals behind protects nothing.
 */
#define HEALTH_STALE_INTERVALS 5
#define HEALTH_STALE_MIN_NS    (5 * 1000000000ull)

/*
 * Why the agent is not ready although it ticks: the pod data is over its
 * size cap (new pods stay unknown, BE ones unmanaged), or a probe an enabled
 * policy needs is off.
 */
static const char *not_ready(const struct agent *a, char *buf, size_t size)
{
	const struct interference_config *in = &a->cfg.policy.interference;
	enum probe_id id;
	const char *policy;

	if (a->kube) {
		struct kube_link_stats k;

		kube_sync_stats(a->kube, &k);
		if (k.pods_degraded[0]) {
			snprintf(buf, size, "%s", k.pods_degraded);
			return buf;
		}
	}
	if (a->args.mode != AGENT_RUN || !in->enabled)
		return NULL;
	if (!(a->parts & CG_RQ))
		id = PROBE_SCHED, policy = "interference detection";
	else if (in->cpi_enabled && a->cpi_wanted && !(a->parts & CG_CPU))
		id = PROBE_CPI, policy = "CPI outlier detection";
	else
		return NULL;
	snprintf(buf, size, "the %s probe is off (%s), and %s needs it",
		 id == PROBE_SCHED ? "sched" : "cpi",
		 a->probes ? probe_set_status(a->probes, id).detail : "no probe could run", policy);
	return buf;
}

static void publish_health(struct agent *a)
{
	uint64_t stale = (uint64_t)(a->cfg.interval_s * 1e9) * HEALTH_STALE_INTERVALS;
	char why[256];
	struct http_health h = {.stale_ns =
					stale > HEALTH_STALE_MIN_NS ? stale : HEALTH_STALE_MIN_NS,
				.not_ready = not_ready(a, why, sizeof(why))};

	http_health(a->http, &h);
}

static int tick(struct agent *a, bool fast)
{
	int err = tick_once(a, fast);

	watch_files(a);
	/*
	 * Decided: the records keep what the actions said. Most ticks have
	 * none, and the first ones can have two per pod (1.5 KB each): not kept.
	 */
	action_list_free(&a->actions);
	a->loop_ns = clock_ns(CLOCK_MONOTONIC) - a->last_tick_ns;
	/* Rendered when a scrape asks (wait_for), not every tick whether or not anyone reads it. */
	if (a->http) {
		http_tick_done(a->http);
		publish_health(a); /* a reload may have changed the interval or the policies */
	}
	/*
	 * A tick's small allocations (and start-up's), freed by now, leave
	 * free pages inside the heap that glibc keeps: about 0.5 MiB at 500
	 * pods. Given back, the next tick faults them in again (~120 page
	 * faults), far cheaper than keeping them all the time.
	 */
	malloc_trim(0);
	return err;
}

/* Renders what the HTTP endpoint asked for, from what publishing reads of the agent. */
static void publish(struct agent *a)
{
	struct publish_view v = {.rec = a->rec,
				 .coll = a->coll,
				 .names = a->names,
				 .act = a->act,
				 .probes = a->probes,
				 .kube = a->kube,
				 .pods = &a->pods,
				 .log = &a->log,
				 .breaches = &a->breaches,
				 .capacity = a->pol.have_capacity ? &a->pol.capacity_result : NULL,
				 .cgroups = a->cfg.http.cgroups,
				 .ticks = a->ticks,
				 .fast_ticks = a->fast_ticks,
				 .alerts_wait = a->alerts.waits,
				 .alerts_displaced = a->alerts.displaced,
				 .answers = a->answers,
				 .errors = a->errors,
				 .http = a->http};

	publish_render(&v, a->loop_ns, http_render_wanted(a->http));
}

/*
 * Waits for the deadline, a fast-path alert, a change of the cgroup tree or
 * a stop, rendering for the HTTP endpoint meanwhile when a scrape asks.
 */
static enum loop_wake wait_for(void *ctx, uint64_t deadline_ns)
{
	struct agent *a = ctx;
	struct pollfd pfd[6];
	nfds_t n = 0;
	int fp = -1, render = -1, watch = -1, tree = -1, pods = -1, files = -1;

	if (a->fp) {
		fp = (int)n;
		pfd[n++] = (struct pollfd){.fd = fast_path_fd(a->fp), .events = POLLIN};
	}
	if (a->render_fd >= 0) {
		render = (int)n;
		pfd[n++] = (struct pollfd){.fd = a->render_fd, .events = POLLIN};
	}
	if (a->watch) {
		watch = (int)n;
		pfd[n++] = (struct pollfd){.fd = config_watch_fd(a->watch), .events = POLLIN};
	}
	if (collector_tree_fd(a->coll) >= 0) {
		tree = (int)n;
		pfd[n++] = (struct pollfd){.fd = collector_tree_fd(a->coll), .events = POLLIN};
	}
	if (a->kube) {
		pods = (int)n;
		pfd[n++] = (struct pollfd){.fd = kube_sync_fd(a->kube), .events = POLLIN};
	}
	/* Noted changes wait for their tick: a writer in a loop wakes it once, not per write. */
	if (a->files && !a->outside_noted) {
		files = (int)n;
		pfd[n++] = (struct pollfd){.fd = file_watch_fd(a->files), .events = POLLIN};
	}
	/* Noted while the watch was set (watch_files): wakes the loop once, as an event would. */
	if (a->outside_wake) {
		a->outside_wake = false;
		return LOOP_WAKE_WRITE;
	}
	while (!stop) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		int timeout =
			now >= deadline_ns ? 0 : (int)((deadline_ns - now + 999999) / 1000000);

		if (!n) {
			struct timespec ts = {deadline_ns / 1000000000ull,
					      deadline_ns % 1000000000ull};

			while (!stop &&
			       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			break;
		}
		if (poll(pfd, n, timeout) <= 0)
			break; /* the deadline, or a signal */
		if (render >= 0 && (pfd[render].revents & POLLIN))
			publish(a);
		/* back to the loop, whose next step between two ticks is the reload */
		if (watch >= 0 && (pfd[watch].revents & POLLIN) && config_watch_changed(a->watch)) {
			log_info("agent: %s changed", a->args.config);
			reload = 1;
			break;
		}
		if (fp >= 0 && (pfd[fp].revents & POLLIN)) {
			struct fast_path_alerts got = {0};

			fast_path_drain(a->fp, &got);
			a->alerts.waits += got.waits;
			a->alerts.displaced += got.displaced;
			/*
			 * A displacement serves a wait alert drained with it: its
			 * series ticks at once, or is held within 50 ms of the last
			 * one, whose ticks hold a wait alert's too (loop.h).
			 */
			return got.displaced ? LOOP_WAKE_DISPLACED
			       : got.waits   ? LOOP_WAKE_ALERT
					     : LOOP_WAKE_TIMEOUT;
		}
		/* The actuator's own writes wake this too: only another writer's wake the loop. */
		if (files >= 0 && (pfd[files].revents & POLLIN)) {
			if (file_watch_drain(a->files, on_file_read, a) < 0)
				pfd[files].fd = -1; /* not polled again now (no spin) */
			if (a->outside_wake) {
				a->outside_wake = false;
				return LOOP_WAKE_WRITE;
			}
		}
		/* Read now, so the fd stays quiet while the loop lets the gap pass. */
		if (tree >= 0 && (pfd[tree].revents & POLLIN)) {
			if (collector_tree_poll(a->coll, clock_ns(CLOCK_MONOTONIC)))
				return LOOP_WAKE_TREE;
			/* Nothing new, or a failed read: not polled again now (no spin). */
			pfd[tree].fd = -1;
		}
		/*
		 * A pod changed in the API: decided again at once, like a cgroup
		 * that came (the tick takes the set and reclasses the units; a gap
		 * bounds a burst of events to 10 ticks a second, loop.h).
		 */
		if (pods >= 0 && (pfd[pods].revents & POLLIN)) {
			kube_sync_drain(a->kube); /* quiet while the loop lets the gap pass */
			return LOOP_WAKE_PODS;
		}
	}
	return stop ? LOOP_WAKE_STOP : LOOP_WAKE_TIMEOUT;
}

static uint64_t loop_now(void *ctx)
{
	(void)ctx;
	return clock_ns(CLOCK_MONOTONIC);
}

static int loop_tick(void *ctx, bool fast)
{
	return tick(ctx, fast);
}

/* SLO control's displacement judges a new pod's effect on LS over short intervals. */
static bool loop_tree_follow_ups(void *ctx)
{
	const struct slo_config *slo = &((struct agent *)ctx)->cfg.policy.slo;

	return slo->enabled && slo->displaced_share > 0;
}

/* Taken once per tick: the loop asks right after each. */
static bool loop_retry(void *ctx)
{
	struct agent *a = ctx;
	bool raced = a->write_raced;

	a->write_raced = false;
	return raced;
}

static uint64_t loop_interval(void *ctx)
{
	return (uint64_t)(((struct agent *)ctx)->cfg.interval_s * 1e9);
}

/* Between ticks: a tick sees one config from start to end. */
static void loop_between(void *ctx)
{
	if (reload) {
		reload = 0;
		agent_reload(ctx, true);
	}
}

static int run_loop(struct agent *a)
{
	static const struct loop_ops ops = {.now = loop_now,
					    .wait = wait_for,
					    .tick = loop_tick,
					    .interval_ns = loop_interval,
					    .between = loop_between,
					    .retry = loop_retry,
					    .tree_follow_ups = loop_tree_follow_ups};

	return loop_run(&ops, a, (uint64_t)(a->args.duration_s * 1e9));
}

/*
 * CPI outliers need real cycles and instructions: without a PMU the cpi
 * probe would only add its switch step for numbers no policy reads.
 */
static bool pmu_counts_cycles(void)
{
	struct cpi_event ev[2];
	struct cpi_spec spec;
	char why[160] = "";

	if (!cpi_spec_parse("hardware", &spec) &&
	    !cpi_events_resolve(&spec, false, ev, why, sizeof(why)) &&
	    !cpi_events_try(ev, 0, why, sizeof(why)))
		return true;
	log_info("agent: CPI outlier detection off: no hardware cycles/instructions (%s)", why);
	return false;
}

static int open_probes(struct agent *a)
{
	/* memstall's tracepoints fire only in reclaim and OOM kills: free the rest of the time */
	unsigned int want = PROBE_BIT(PROBE_SCHED) | PROBE_BIT(PROBE_MEMSTALL);
	struct probe_status st;
	int err;

	a->args.probe.cpi_events = "hardware";
	/* The agent reads blame every tick: what changed, not every stale pair (probes.h). */
	a->args.probe.blame_fresh = true;
	if (a->cfg.policy.interference.enabled && a->cfg.policy.interference.cpi_enabled &&
	    pmu_counts_cycles())
		want |= PROBE_BIT(PROBE_CPI);
	a->cpi_wanted = want & PROBE_BIT(PROBE_CPI);
	err = probe_set_open(&a->probes, want, &a->args.probe, &a->fs);
	a->coll_opts.probes = err ? NULL : a->probes;
	if (err) {
		log_warn("agent: no probe could run (%s): the policies use the cgroup counters "
			 "only; interference detection and the fast path are off",
			 strerror(-err));
		a->probes = NULL;
		return 0;
	}
	st = probe_set_status(a->probes, PROBE_SCHED);
	if (st.on)
		a->parts |= CG_RQ;
	if (probe_set_status(a->probes, PROBE_CPI).on)
		a->parts |= CG_CPU;
	if (probe_set_status(a->probes, PROBE_MEMSTALL).on)
		a->parts |= CG_MEMSTALL;
	if (!st.on || !a->cfg.fast_path)
		return 0;
	err = fast_path_open(&a->fp, a->probes, ALERT_GAP_NS, SLO_DISPLACED_MIN);
	if (err)
		log_warn("agent: fast path off: the sched probe's alert maps are missing (%s)",
			 strerror(-err));
	return 0;
}

static int open_actuator(struct agent *a)
{
	struct actuator_opts o = {
		.ctrls = &a->ctrls,
		.subtree = a->subtree,
		.state_dir = a->cfg.state_dir,
		.dry_run = a->cfg.dry_run || a->args.mode == AGENT_RECORD,
		.evict = agent_evict_action(a, &a->cfg),
	};
	char err[256];

	if (actuator_open(&a->act, &o, err, sizeof(err))) {
		log_err("agent: %s", err);
		return -1;
	}
	if (o.evict != a->cfg.evict_action)
		log_info("agent: evict.nodes \"%s\" does not match node %s: evictions here are "
			 "reported only",
			 a->cfg.evict_nodes, kube_sync_node(a->kube));
	if (actuator_reconciled(a->act))
		log_info("agent: restored %zu cgroup settings a previous run left changed",
			 actuator_reconciled(a->act));
	return 0;
}

/* Everything privileged is done: keep only what the config and the kernel still need. */
static int drop_privileges(struct agent *a)
{
	struct privileges_kept keep;
	char release[65] = "", err[256], kept[64];
	struct utsname u;
	bool bounding;
	int disabled = 1; /* unknown: as if set */
	FILE *f;

	if (!uname(&u))
		snprintf(release, sizeof(release), "%s", u.release);
	f = fopen("/proc/sys/kernel/unprivileged_bpf_disabled", "r");
	if (f) {
		if (fscanf(f, "%d", &disabled) != 1)
			disabled = 1;
		fclose(f);
	}
	keep = privileges_needed(a->cfg.evict_action == EVICT_KILL && !a->cfg.dry_run, release,
				 disabled);
	privileges_describe(keep, kept, sizeof(kept));
	if (privileges_drop(keep, &bounding, err, sizeof(err))) {
		log_err("agent: %s", err);
		return -1;
	}
	log_info("agent: capabilities dropped; kept: %s%s", kept,
		 bounding ? "" : " (the bounding set stays: no CAP_SETPCAP)");
	return 0;
}

/* A change of the --config file reloads it as SIGHUP does; without the watch, SIGHUP still does. */
static void watch_config(struct agent *a)
{
	char err[PATH_MAX + 128];

	if (!a->args.config)
		return;
	if (config_watch_open(&a->watch, a->args.config, err, sizeof(err)))
		log_warn("agent: config changes are not picked up (SIGHUP reloads): %s", err);
}

/* The threads come after the drop: they inherit what is left, not what was. */
static int start_threads(struct agent *a)
{
	char err[256];

	if (a->http)
		publish_health(a); /* from here on, a start that never ticks is stale too */
	if (a->http && http_serve(a->http, err, sizeof(err))) {
		log_err("agent: %s (config http.address, http.port)", err);
		return -1;
	}
	if (a->http && (a->render_fd = http_render_on_demand(a->http)) < 0) {
		log_err("agent: cannot make the HTTP endpoint's eventfd: %s",
			strerror(-a->render_fd));
		return -1;
	}
	if (a->kube && kube_sync_start(a->kube, err, sizeof(err))) {
		log_err("agent: kubernetes: %s", err);
		return -1;
	}
	return 0;
}

/*
 * The collector keeps up to UF_NR files open per unit (4 on v1, 6 on v2): a
 * thousand pods need more than the common soft limit of 1024. The soft
 * limit may go up to the hard one without privilege; the select() limit
 * does not apply (libmicrohttpd and libcurl use poll()).
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		log_warn("agent: cannot raise the open-file limit: %s", strerror(errno));
}

static int setup(struct agent *a)
{
	raise_fd_limit();
	if (cgroup_fs_detect(&a->fs, "/proc/self/mountinfo") ||
	    cgroup_fs_read_hierarchy_id(&a->fs, "/proc/self/cgroup") ||
	    cgroup_ctrls_detect(&a->ctrls, "/proc/self/mountinfo")) {
		log_err("agent: no cgroup hierarchy with the cpu controller");
		return 1;
	}
	if (resolve_subtree(a))
		return 2;
	/* Before anything is opened or written: a taken port must change nothing. */
	if (a->cfg.http.enabled && a->args.mode == AGENT_RUN) {
		char err[256];

		int rc = http_listen(&a->http, a->cfg.http.address, (uint16_t)a->cfg.http.port, err,
				     sizeof(err));

		if (!rc && a->cfg.http.health_port)
			rc = http_listen_health(a->http, (uint16_t)a->cfg.http.health_port, err,
						sizeof(err));
		if (!rc && a->cfg.http.health_socket[0])
			rc = http_listen_health_socket(a->http, a->cfg.http.health_socket, err,
						       sizeof(err));
		if (rc) {
			log_err("agent: %s%s; nothing was changed", err,
				rc == -ELIBACC
					? ""
					: " (config http.address, http.port, http.health_port, "
					  "http.health_socket)");
			return 1;
		}
		log_info("agent: serving http://%s%s%s:%u/metrics",
			 strchr(a->cfg.http.address, ':') ? "[" : "", a->cfg.http.address,
			 strchr(a->cfg.http.address, ':') ? "]" : "", a->cfg.http.port);
		if (a->cfg.http.health_port)
			log_info("agent: health checks on their own port too: /healthz, /readyz "
				 "on port %u",
				 a->cfg.http.health_port);
		if (a->cfg.http.health_socket[0])
			log_info("agent: health checks on UNIX socket %s too (qoslet health)",
				 a->cfg.http.health_socket);
	}
	/* Also before any write: a missing token or node name is a configuration error. */
	if (a->cfg.kube.enabled && a->args.mode == AGENT_RUN) {
		char err[512];

		if (kube_sync_open(&a->kube, &a->cfg.kube, err, sizeof(err))) {
			log_err("agent: kubernetes: %s; nothing was changed", err);
			return 2;
		}
		log_info("agent: Kubernetes API link on for node %s (pods listed, then watched%s)",
			 kube_sync_node(a->kube),
			 a->cfg.kube.resync_s > 0 ? "; relisted every resync_s" : "");
		read_node(a);
	}
	if (a->cfg.decisions_file[0] && a->args.mode == AGENT_RUN) {
		a->decisions = open_output(a->cfg.decisions_file, "decisions file");
		if (!a->decisions)
			return 2;
	}
	if (a->args.record) {
		json_t *cfg = config_to_json(&a->cfg);

		a->record = open_output(a->args.record, "recording");
		if (!a->record || record_write_header(a->record, cfg)) {
			json_decref(cfg);
			return 2;
		}
		json_decref(cfg);
	}
	if (decision_log_init(&a->log, a->cfg.decisions_ring, a->decisions))
		return 1;
	log_hook_libbpf();
	if (open_actuator(a))
		return 1;
	/* Settings that stay applied: nothing to watch in dry-run, which writes nothing. */
	if (!a->cfg.dry_run && a->args.mode == AGENT_RUN)
		a->files = file_watch_new(&a->ctrls);
	/* Names blame culprits outside the units: for the metrics and the breach reports. */
	a->names = cgroup_names_new(&a->fs);
	if (!a->names)
		return 1;
	config_collect_wants(&a->cfg, &a->wants);
	agent_kube_label_keys(a);
	a->coll_opts = (struct collect_opts){.ctrls = &a->ctrls,
					     .fs = &a->fs,
					     .subtree = a->subtree,
					     .wants = &a->wants,
					     .original_quota = original_quota,
					     .memory_held = memory_held,
					     .pod = a->kube ? pod_of : NULL,
					     .ctx = a,
					     .names = a->names,
					     .system_units = a->observe_only};
	if (open_probes(a))
		return 1;
	a->coll_opts.parts = a->parts;
	a->coll = collector_new(&a->coll_opts);
	if (!a->coll || drop_privileges(a) || start_threads(a))
		return 1;
	a->rec = collector_record(a->coll);
	watch_config(a);
	if (a->cfg.policy.memory_qos.enabled)
		memory_qos_check(&a->ctrls, a->subtree, "/proc/self/mountinfo");
	if (a->cfg.policy.mem_suppress.enabled)
		mem_suppress_check(&a->ctrls, a->subtree);
	if (a->cfg.policy.io_suppress.enabled)
		io_suppress_check(&a->ctrls, a->subtree);
	log_info("agent: managing /%s (cgroup %s, cpu at %s)%s, every %.3g s%s", a->subtree,
		 a->ctrls.v2[CTRL_CPU] ? "v2" : "v1", a->ctrls.root[CTRL_CPU],
		 a->cfg.dry_run ? " in dry-run" : "", a->cfg.interval_s,
		 a->fp ? ", fast path on" : "");
	return 0;
}

static void teardown(struct agent *a)
{
	http_stop(a->http);
	config_watch_close(a->watch);
	cgroup_names_free(a->names);
	fast_path_close(a->fp);
	if (a->act) {
		int failed = a->cfg.dry_run ? 0 : actuator_restore(a->act);

		if (failed)
			log_warn("agent: %d cgroup settings could not be restored", failed);
		else if (a->kube && !a->cfg.dry_run) {
			struct kube_report_view v = kube_view(a);

			kube_report_stop(&v);
		}
		actuator_close(a->act);
	}
	file_watch_free(a->files);
	/*
	 * After the restore, which the API never holds up: a call in flight is
	 * abandoned, then the node's batch resources go to 0 (docs/capacity.md),
	 * bounded by kubernetes.timeout_s.
	 */
	kube_sync_stop(a->kube);
	kube_report_free(&a->kube_seen);
	json_decref(a->node_labels);
	collector_free(a->coll);
	probe_set_close(a->probes);
	policy_state_free(&a->pol);
	kube_pod_list_free(&a->pods);
	action_list_free(&a->actions);
	decision_log_free(&a->log);
	for (size_t i = 0; i < a->n_known; i++)
		free(a->known[i].path);
	free(a->known);
	breach_counts_free(&a->breaches);
	if (a->decisions && a->decisions != stdout)
		fclose(a->decisions);
	if (a->record && a->record != stdout)
		fclose(a->record);
}

/*
 * 15 digits keep 0.65 from printing as 0.65000000000000002; a value that
 * needs all 17 to read back (0.9999999999999999) gets them, so the output
 * is always a config that loads to the same values.
 */
static int print_config(const struct agent_config *cfg)
{
	const size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER;
	json_t *o = config_to_json(cfg), *back;
	char *text = o ? json_dumps(o, flags | JSON_REAL_PRECISION(15)) : NULL;
	int err;

	back = text ? json_loads(text, 0, NULL) : NULL;
	if (text && !json_equal(o, back)) {
		free(text);
		text = json_dumps(o, flags | JSON_REAL_PRECISION(17));
	}
	err = text ? puts(text) < 0 : 1;
	json_decref(back);
	json_decref(o);
	free(text);
	return err;
}

int agent_main(enum agent_mode mode, int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: poll returns */
	sigset_t mask;
	struct agent *a = calloc(1, sizeof(*a));
	const char *name = mode == AGENT_RECORD ? "record" : "agent";
	char err[256];
	int rc;

	if (!a)
		return 1;
	a->render_fd = -1;
	/* A daemon says what it does (start, restores, stop); -v adds debug. */
	log_max_level = LOG_INFO;
	if (agent_args_parse(&a->args, mode, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "qoslet %s: %s (see 'qoslet %s --help')\n", name, err, name);
		free(a);
		return 2;
	}
	if (a->args.help) {
		fputs(mode == AGENT_RECORD ? record_usage : agent_usage, stdout);
		free(a);
		return 0;
	}
	/* A running daemon's records carry their time; a one-shot check answers plainly. */
	if (!a->args.log_format)
		log_format =
			a->args.check_config || a->args.print_config ? LOG_TEXT : LOG_TEXT_TIME;
	rc = load_config(a);
	if (!rc && a->args.check_config)
		printf("%s: valid\n", a->args.config ? a->args.config : "embedded defaults");
	else if (!rc && a->args.print_config)
		rc = print_config(&a->cfg);
	else if (!rc) {
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		/*
		 * The threads setup starts (HTTP, the API link) inherit a mask
		 * without these: the signals reach this thread, whose poll they cut short.
		 */
		sigemptyset(&mask);
		sigaddset(&mask, SIGINT);
		sigaddset(&mask, SIGTERM);
		sigaddset(&mask, SIGHUP);
		pthread_sigmask(SIG_BLOCK, &mask, NULL);
		rc = setup(a);
		pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
		if (!rc) {
			/*
			 * main()'s fixed mmap threshold stays: the large allocations
			 * past start-up are the texts a scrape asks for (megabytes at
			 * a few hundred pods, freed when the next tick ends), which
			 * the heap would keep once it grew for them. The holes
			 * start-up's small allocations left in it go at the end of
			 * the first tick (tick()).
			 */
			rc = run_loop(a) ? 1 : 0;
			log_info("agent: stopping after %llu ticks (%llu on the fast path), %llu "
				 "decisions; fast-path alerts: %llu waits, %llu displacements",
				 (unsigned long long)a->ticks, (unsigned long long)a->fast_ticks,
				 (unsigned long long)a->log.seq,
				 (unsigned long long)a->alerts.waits,
				 (unsigned long long)a->alerts.displaced);
		}
		teardown(a);
	}
	free(a);
	return rc;
}
