// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the cluster hears of the agent's decisions: Events on the pods
 * decisions concern, on transitions a person wants to see (a suppression or
 * a cap starts or ends, a breach is found or ends, an eviction), and the
 * node condition that says whether this node currently sees interference.
 * Each step of a quota is a decision record, not an Event: at 5,000 nodes
 * one Event per suppressed pod per minute is hundreds of API writes a
 * second (docs/kubernetes.md, "Events"). Burst changes and hand-backs of
 * routine settings make no Events; dry-run changes make none either, since
 * nothing happened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "grow.h"
#include "kube_path.h"
#include "kube/report.h"

struct rule_event kube_report_event(const struct decision *d)
{
	enum decision_outcome out = d->outcome;
	bool applied = out == OUT_APPLIED;

	/* Two writers fighting over the pod's setting: its owner should know (write-backs do not).
	 */
	if (out == OUT_CONTESTED)
		return (struct rule_event){"Warning", "SettingContested", "Reassert", NULL};
	if (d->act.kind == ACT_EVICT) {
		if (out == OUT_REQUESTED)
			return (struct rule_event){"Warning", "Evicting", "Evict", NULL};
		if (applied) /* evict.action "kill" */
			return (struct rule_event){"Warning", "Killed", "Evict", NULL};
		if (out == OUT_REPORTED)
			return (struct rule_event){"Normal", "EvictionAdvised", "Evict", NULL};
		if (out == OUT_FAILED)
			return (struct rule_event){"Warning", "EvictionFailed", "Evict", NULL};
		return (struct rule_event){0};
	}
	if (d->act.kind == ACT_REPORT || (applied && !d->act.restore))
		return rule_info(d->act.rule)->event;
	return (struct rule_event){0};
}

/*
 * The other party of d (its related path) as an Event on pod `on` may name
 * it: a cgroup outside the pods by its path; a pod of the same namespace
 * (the same tenant) by name; a pod of another namespace only in the
 * victim's Event with name_culprits, never in the Event of the pod acted on
 * for it, and then without the figures (*withhold). on NULL: the node
 * condition, which only those who may read the Node see: every name.
 */
static void describe_other(const struct kube_report_view *v, const struct decision *d,
			   const struct kube_pod *on, bool victim, char *buf, size_t size,
			   bool *withhold)
{
	const struct kube_pod *p = NULL;
	struct kube_ids ids;

	buf[0] = '\0';
	if (!d->act.related[0])
		return;
	if (!kube_path_parse(d->act.related, &ids)) {
		snprintf(buf, size, "cgroup /%s", d->act.related);
		return;
	}
	p = kube_pod_find(v->pods, ids.pod_uid);
	if (p && (!on || !strcmp(p->ns, on->ns) || (victim && v->name_culprits))) {
		snprintf(buf, size, "pod %s/%s", p->ns, p->name);
		return;
	}
	if (!on) {
		snprintf(buf, size, "a pod not in the API's list of this node's pods");
		return;
	}
	*withhold = !victim;
	snprintf(buf, size, "%s", p ? "a pod in another namespace" : "another pod");
}

/*
 * Who the other party is, as people read it: "delayed by pod ns/name" for
 * a report (after its cause: the node condition's message starts with it),
 * "for ..." for an action taken for someone else.
 */
static void party_of(const struct kube_report_view *v, const struct decision *d,
		     const struct kube_pod *on, char *buf, size_t size, bool *withhold)
{
	char other[POL_PATH_MAX + 16];
	const struct act_cause *c = &d->act.cause;
	bool mem;

	/* SLO control's floor report is about the BE pod it holds, for the LS pod */
	bool acted = d->act.kind != ACT_REPORT || rule_info(d->act.rule)->family == RULE_FAMILY_SLO;

	describe_other(v, d, on, !acted, other, sizeof(other), withhold);
	if (acted) {
		snprintf(buf, size, "%s%s", other[0] ? "for " : "", other);
		return;
	}
	if (c->kind == ACT_CAUSE_GUARD) {
		snprintf(buf, size, "not evicted: %s", evict_guard_name(c->guard));
		return;
	}
	if (c->kind != ACT_CAUSE_INTERFERENCE) {
		snprintf(buf, size, "delayed by %s", other);
		return;
	}
	mem = d->act.rule == RULE_INTERFERENCE_MEMORY || d->act.rule == RULE_INTERFERENCE_IO;
	switch (c->interference) {
	case CAUSE_SELF:
		snprintf(buf, size, "cause self: %s",
			 mem ? "its own charges or I/O drove the stall"
			     : "its own tasks queue behind each other");
		break;
	case CAUSE_LIMIT:
		snprintf(buf, size, "cause own_limit: %s",
			 d->act.rule == RULE_INTERFERENCE_IO
				 ? "it reads back pages its own memory limit evicted"
				 : "reclaim under its own memory limit");
		break;
	case CAUSE_ANCESTOR:
		snprintf(buf, size, "cause ancestor: %s at its memory limit", other);
		break;
	case CAUSE_NODE:
		snprintf(buf, size, "cause node: %s",
			 d->act.rule == RULE_INTERFERENCE_IO ? "the node's disks"
							     : "the node short of memory");
		break;
	case CAUSE_QUOTA:
		snprintf(buf, size, "cause quota: throttled by its own CPU limit");
		break;
	case CAUSE_IDLE:
		snprintf(buf, size, "cause idle: wake-up latency on idle CPUs");
		break;
	default:
		snprintf(buf, size, "cause %s: %s by %s", interference_cause_name(c->interference),
			 mem ? "stalled" : "delayed", other[0] ? other : "tasks outside the units");
	}
}

/* The note for pod `on` (NULL: the node condition): the rule, the change, the other party and
 * the numbers it saw. */
static void note_of(const struct kube_report_view *v, const struct decision *d,
		    const struct kube_pod *on, char *buf, size_t size)
{
	char party[POL_PATH_MAX + 80];
	/* "nothing to write" says nothing a reader of a finding does not know */
	const char *why = d->outcome == OUT_REPORTED ? "" : d->why;
	bool withhold = false;
	size_t n;

	party_of(v, d, on, party, sizeof(party), &withhold);
	n = (size_t)snprintf(buf, size, "qoslet %s: %s%s%s%s%s%s%s", rule_name(d->act.rule),
			     d->before, d->before[0] && d->after[0] ? " -> " : "", d->after,
			     (d->before[0] || d->after[0]) && party[0] ? "; " : "", party,
			     why[0] ? "; " : "", why);
	if (withhold) {
		if (n < size)
			snprintf(buf + n, size - n, " (figures withheld: another namespace's)");
		return;
	}
	for (size_t i = 0; i < d->act.n_ev && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s=%.6g", i ? ", " : " (",
				      d->act.ev[i].name, d->act.ev[i].value);
	if (d->act.n_ev && n + 1 < size)
		snprintf(buf + n, size - n, ")");
}

/* An Event on pod p, of ev's start (end false) or end. */
static void emit(const struct kube_report_view *v, const struct kube_pod *p,
		 const struct rule_event *ev, bool end, const char *note)
{
	struct kube_event_req req = {.type = end ? "Normal" : ev->type,
				     .reason = end ? ev->end_reason : ev->reason,
				     .action = end ? "Release" : ev->action,
				     .ts_ns = clock_ns(CLOCK_REALTIME)};

	snprintf(req.uid, sizeof(req.uid), "%s", p->uid);
	snprintf(req.ns, sizeof(req.ns), "%s", p->ns);
	snprintf(req.pod, sizeof(req.pod), "%s", p->name);
	snprintf(req.note, sizeof(req.note), "%s", note);
	v->sink.event(v->sink.ctx, &req);
}

static bool pod_held(const struct kube_report_seen *s, const char *uid, const char *reason)
{
	for (size_t i = 0; i < s->n_holds; i++)
		if (!strcmp(s->holds[i].uid, uid) && !strcmp(s->holds[i].ev.reason, reason))
			return true;
	return false;
}

/* Removes hold i; its end Event when it was the pod's last of its kind and the pod is known. */
static void unhold(const struct kube_report_view *v, size_t i, const char *how)
{
	struct kube_report_seen *s = v->seen;
	struct kube_report_hold h = s->holds[i];
	const struct kube_pod *p;
	char note[256];

	s->holds[i] = s->holds[--s->n_holds];
	if (!h.ev.end_reason || pod_held(s, h.uid, h.ev.reason) ||
	    !(p = kube_pod_find(v->pods, h.uid)))
		return;
	snprintf(note, sizeof(note), "qoslet: %s ended: %s", h.ev.reason, how);
	emit(v, p, &h.ev, true, note);
}

static ssize_t find_hold(const struct kube_report_seen *s, uint64_t unit, enum act_kind kind)
{
	for (size_t i = 0; i < s->n_holds; i++)
		if (s->holds[i].unit == unit && s->holds[i].kind == kind)
			return (ssize_t)i;
	return -1;
}

/* The setting d landed on pod p: true when it starts the pod's hold of its reason. */
static bool hold(const struct kube_report_view *v, const struct kube_pod *p,
		 const struct rule_event *ev, const struct decision *d)
{
	struct kube_report_seen *s = v->seen;
	ssize_t i = find_hold(s, d->act.id, d->act.kind);
	bool start;

	if (i >= 0 && !strcmp(s->holds[i].ev.reason, ev->reason))
		return false; /* a step of a quota already held */
	if (i >= 0)	      /* the setting changes hands: one hold may end as another starts */
		unhold(v, (size_t)i, rule_name(d->act.rule));
	start = !pod_held(s, p->uid, ev->reason);
	if (array_grow((void **)&s->holds, &s->cap_holds, s->n_holds, sizeof(*s->holds)))
		return start; /* out of memory: its end goes unsaid, its start is not lost */
	s->holds[s->n_holds] =
		(struct kube_report_hold){.ev = *ev, .unit = d->act.id, .kind = d->act.kind};
	snprintf(s->holds[s->n_holds].uid, sizeof(s->holds[0].uid), "%s", p->uid);
	s->n_holds++;
	return start;
}

/* A finding of ev on pod p: true when it is new (not seen within hold_s). */
static bool find_anew(const struct kube_report_view *v, const struct kube_pod *p,
		      const struct rule_event *ev)
{
	struct kube_report_seen *s = v->seen;
	struct kube_report_finding *f;

	for (size_t i = 0; i < s->n_findings; i++) {
		f = &s->findings[i];
		if (!strcmp(f->uid, p->uid) && !strcmp(f->ev.reason, ev->reason)) {
			f->last_ns = v->now_ns;
			return false;
		}
	}
	if (array_grow((void **)&s->findings, &s->cap_findings, s->n_findings, sizeof(*f)))
		return true;
	f = &s->findings[s->n_findings++];
	*f = (struct kube_report_finding){.ev = *ev, .last_ns = v->now_ns};
	snprintf(f->uid, sizeof(f->uid), "%s", p->uid);
	return true;
}

void kube_report(const struct kube_report_view *v, const struct decision *d)
{
	struct rule_event k = kube_report_event(d);
	const struct kube_pod *p;
	char note[sizeof(((struct kube_event_req *)0)->note)];
	bool event;

	if (rule_info(d->act.rule)->family == RULE_FAMILY_INTERFERENCE &&
	    (d->act.kind == ACT_REPORT || d->outcome == OUT_APPLIED)) {
		v->seen->interference_ns = v->now_ns;
		note_of(v, d, NULL, v->seen->interference, sizeof(v->seen->interference));
	}
	if (d->outcome == OUT_APPLIED && d->act.restore) {
		ssize_t i = find_hold(v->seen, d->act.id, d->act.kind);

		if (i >= 0)
			unhold(v, (size_t)i, "its settings handed back");
		return;
	}
	if (!k.reason || !(p = kube_pod_find(v->pods, d->pod_uid)))
		return;
	if (d->outcome == OUT_CONTESTED || d->act.kind == ACT_EVICT)
		event = true; /* each one is news: aggregation and the spam filter bound them */
	else if (d->act.kind == ACT_REPORT)
		event = find_anew(v, p, &k);
	else
		event = hold(v, p, &k, d);
	if (!event)
		return;
	note_of(v, d, p, note, sizeof(note));
	emit(v, p, &k, false, note);
}

void kube_report_condition(const struct kube_report_view *v)
{
	struct kube_report_seen *s = v->seen;
	double hold = v->condition_hold_s;
	uint64_t hold_ns = (uint64_t)(hold * 1e9);
	bool on = s->interference_ns && v->now_ns - s->interference_ns < hold_ns;
	char msg[sizeof(s->interference) + 64];

	for (size_t i = 0; i < s->n_findings;) {
		struct kube_report_finding f = s->findings[i];
		const struct kube_pod *p = kube_pod_find(v->pods, f.uid);

		if (p && v->now_ns - f.last_ns < hold_ns) {
			i++;
			continue;
		}
		s->findings[i] = s->findings[--s->n_findings];
		if (p && f.ev.end_reason) {
			snprintf(msg, sizeof(msg), "qoslet: no %s finding for %g s", f.ev.reason,
				 hold);
			emit(v, p, &f.ev, true, msg);
		}
	}
	/* a pod that is gone needs no end Event: its holds go quietly */
	for (size_t i = 0; i < s->n_holds;)
		if (!kube_pod_find(v->pods, s->holds[i].uid))
			s->holds[i] = s->holds[--s->n_holds];
		else
			i++;
	if (on)
		snprintf(msg, sizeof(msg), "%s", s->interference);
	else
		snprintf(msg, sizeof(msg), "no interference seen in the last %g s", hold);
	v->sink.condition(v->sink.ctx, on, msg);
}

void kube_report_stop(const struct kube_report_view *v)
{
	while (v->seen->n_holds)
		unhold(v, v->seen->n_holds - 1, "its settings handed back at the agent's stop");
}

void kube_report_free(struct kube_report_seen *seen)
{
	free(seen->holds);
	free(seen->findings);
	memset(seen, 0, sizeof(*seen));
}
