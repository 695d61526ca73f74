/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the cluster hears of the agent's decisions (report.c): Events on
 * their pods and the node condition, sent through the API link (sync.h).
 */
#ifndef QOSLET_KUBE_REPORT_H
#define QOSLET_KUBE_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "decision/decision.h"
#include "kube/pods.h"
#include "kube/sync.h"

/* A setting that holds a pod (a suppression, a cap): its Event is made when the first starts. */
struct kube_report_hold {
	char uid[40];	      /* the pod */
	struct rule_event ev; /* the rule's: its reason names the hold */
	uint64_t unit;	      /* the unit the setting is on (the pod's cgroup or a container's) */
	enum act_kind kind;   /* ... and which setting */
};

/* A finding on a pod (a breach): its Event when first seen, its end when unseen for hold_s. */
struct kube_report_finding {
	char uid[40];
	struct rule_event ev;
	uint64_t last_ns; /* CLOCK_MONOTONIC of the last finding */
};

/* What the reports remember between decisions (kube_report_free() frees it). */
struct kube_report_seen {
	uint64_t interference_ns; /* CLOCK_MONOTONIC of the last interference decision; 0 none */
	char interference[512];	  /* ... what it said */
	struct kube_report_hold *holds;
	size_t n_holds, cap_holds;
	struct kube_report_finding *findings;
	size_t n_findings, cap_findings;
};

/* Where the reports go: the agent's API link (kube_sync_event, kube_sync_condition). */
struct kube_report_sink {
	void (*event)(void *ctx, const struct kube_event_req *ev);
	void (*condition)(void *ctx, bool interference, const char *message);
	void *ctx;
};

/* What the reports read of the agent: filled by the agent for each call. */
struct kube_report_view {
	struct kube_report_sink sink;	  /* where the Events and the condition go */
	const struct kube_pod_list *pods; /* the node's pods, to name a decision's parties */
	/*
	 * kubernetes.node_condition.hold_s: the condition stays True this long
	 * after the last interference, and a finding on a pod ends after it
	 */
	double condition_hold_s;
	/* kubernetes.events.name_culprits: a victim's Event may name a pod of another namespace */
	bool name_culprits;
	uint64_t now_ns;	       /* CLOCK_MONOTONIC */
	struct kube_report_seen *seen; /* updated by kube_report() */
};

/*
 * The Event a decision may make on its pod; reason NULL for none. Evictions
 * and contested settings make theirs by outcome; the rest make their rule's
 * (policy/rule.c) when they land: a finding reported, or a write applied
 * that is not a hand-back. Whether it is made is kube_report()'s choice.
 */
struct rule_event kube_report_event(const struct decision *d);

/*
 * Tells the cluster about a decision, on transitions only: an eviction or a
 * contested setting is an Event each time; a hold (suppression, cap, SLO
 * throttle) makes one when the pod's first setting of it lands and one when
 * its last is handed back; a finding (a breach) makes one when first seen.
 * The node condition notes interference. Tenant privacy: an Event stays in
 * its pod's namespace and names a pod of another namespace only on the
 * victim's side, and only with name_culprits; on the other side neither
 * its name nor the figures.
 */
void kube_report(const struct kube_report_view *v, const struct decision *d);

/*
 * Once per interval: the node condition the loop currently wants; findings
 * unseen for condition_hold_s end (their end Event); what is kept of pods
 * that are gone is forgotten.
 */
void kube_report_condition(const struct kube_report_view *v);

/*
 * The agent's stop handed every setting back: each hold ends, with its end
 * Event (the same transition a hand-back in the loop makes), before the
 * link sends what is left (kube_sync_stop()).
 */
void kube_report_stop(const struct kube_report_view *v);

void kube_report_free(struct kube_report_seen *seen);

#endif
