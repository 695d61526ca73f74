// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the cluster hears of the agent's decisions: an Event on the pod a
 * decision concerns (interference found, BE suppressed or capped, an
 * eviction), and the node condition that says whether this node currently
 * sees interference. Burst changes and hand-backs are routine and make no
 * Events; dry-run changes make none either, since nothing happened.
 */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "kube_path.h"
#include "kube/report.h"

struct rule_event kube_report_event(const struct decision *d)
{
	enum decision_outcome out = d->outcome;
	bool applied = out == OUT_APPLIED;

	/* Two writers fighting over the pod's setting: its owner should know (write-backs do not).
	 */
	if (out == OUT_CONTESTED)
		return (struct rule_event){"Warning", "SettingContested", "Reassert"};
	if (d->act.kind == ACT_EVICT) {
		if (out == OUT_REQUESTED)
			return (struct rule_event){"Warning", "Evicting", "Evict"};
		if (applied) /* evict.action "kill" */
			return (struct rule_event){"Warning", "Killed", "Evict"};
		if (out == OUT_REPORTED)
			return (struct rule_event){"Normal", "EvictionAdvised", "Evict"};
		if (out == OUT_FAILED)
			return (struct rule_event){"Warning", "EvictionFailed", "Evict"};
		return (struct rule_event){0};
	}
	if (d->act.kind == ACT_REPORT || (applied && !d->act.restore))
		return rule_info(d->act.rule)->event;
	return (struct rule_event){0};
}

/* "ns/name" of the pod a cgroup path belongs to, else the path itself. */
static void describe_path(const struct kube_report_view *v, const char *path, char *buf,
			  size_t size)
{
	const struct kube_pod *p;
	struct kube_ids ids;

	if (kube_path_parse(path, &ids) && (p = kube_pod_find(v->pods, ids.pod_uid)))
		snprintf(buf, size, "pod %s/%s", p->ns, p->name);
	else
		snprintf(buf, size, "cgroup /%s", path);
}

/*
 * Who the other party is, as people read it: "delayed by pod ns/name" for
 * a report (after its cause: the node condition's message starts with it),
 * "for ..." for an action taken for someone else.
 */
static void party_of(const struct kube_report_view *v, const struct decision *d, char *buf,
		     size_t size)
{
	char other[POL_PATH_MAX + 16] = "";
	const struct act_cause *c = &d->act.cause;
	bool mem;

	if (d->act.related[0])
		describe_path(v, d->act.related, other, sizeof(other));
	/* SLO control's floor report is about the BE pod it holds, for the LS pod */
	if (d->act.kind != ACT_REPORT || rule_info(d->act.rule)->family == RULE_FAMILY_SLO) {
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
		snprintf(buf, size, "cause own_limit: reclaim under its own memory limit");
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

/* The note: the rule, the change, the other party and the numbers it saw. */
static void note_of(const struct kube_report_view *v, const struct decision *d, char *buf,
		    size_t size)
{
	char party[POL_PATH_MAX + 80];
	/* "nothing to write" says nothing a reader of a finding does not know */
	const char *why = d->outcome == OUT_REPORTED ? "" : d->why;
	size_t n;

	party_of(v, d, party, sizeof(party));
	n = (size_t)snprintf(buf, size, "qoslet %s: %s%s%s%s%s%s%s", rule_name(d->act.rule),
			     d->before, d->before[0] && d->after[0] ? " -> " : "", d->after,
			     (d->before[0] || d->after[0]) && party[0] ? "; " : "", party,
			     why[0] ? "; " : "", why);
	for (size_t i = 0; i < d->act.n_ev && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s=%.6g", i ? ", " : " (",
				      d->act.ev[i].name, d->act.ev[i].value);
	if (d->act.n_ev && n + 1 < size)
		snprintf(buf + n, size - n, ")");
}

void kube_report(const struct kube_report_view *v, const struct decision *d)
{
	struct rule_event k = kube_report_event(d);
	const struct kube_pod *p;
	struct kube_event_req ev;

	if (rule_info(d->act.rule)->family == RULE_FAMILY_INTERFERENCE &&
	    (d->act.kind == ACT_REPORT || d->outcome == OUT_APPLIED)) {
		v->seen->interference_ns = clock_ns(CLOCK_MONOTONIC);
		note_of(v, d, v->seen->interference, sizeof(v->seen->interference));
	}
	if (!k.reason || !(p = kube_pod_find(v->pods, d->pod_uid)))
		return;
	ev = (struct kube_event_req){.type = k.type,
				     .reason = k.reason,
				     .action = k.action,
				     .ts_ns = clock_ns(CLOCK_REALTIME)};
	snprintf(ev.uid, sizeof(ev.uid), "%s", p->uid);
	snprintf(ev.ns, sizeof(ev.ns), "%s", p->ns);
	snprintf(ev.pod, sizeof(ev.pod), "%s", p->name);
	note_of(v, d, ev.note, sizeof(ev.note));
	kube_sync_event(v->kube, &ev);
}

void kube_report_condition(const struct kube_report_view *v)
{
	double hold = v->condition_hold_s;
	bool on = v->seen->interference_ns &&
		  clock_ns(CLOCK_MONOTONIC) - v->seen->interference_ns < (uint64_t)(hold * 1e9);
	char msg[sizeof(v->seen->interference) + 64];

	if (on)
		snprintf(msg, sizeof(msg), "%s", v->seen->interference);
	else
		snprintf(msg, sizeof(msg), "no interference seen in the last %g s", hold);
	kube_sync_condition(v->kube, on, msg);
}
