/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the cluster hears of the agent's decisions (report.c): Events on
 * their pods and the node condition, sent through the API link (sync.h).
 */
#ifndef QOSLET_KUBE_REPORT_H
#define QOSLET_KUBE_REPORT_H

#include <stdint.h>

#include "decision/decision.h"
#include "kube/pods.h"
#include "kube/sync.h"

/* The interference last decided on, kept for the node condition. */
struct kube_report_seen {
	uint64_t interference_ns; /* CLOCK_MONOTONIC of the last interference decision; 0 none */
	char interference[512];	  /* ... what it said */
};

/* What the reports read of the agent: filled by the agent for each call. */
struct kube_report_view {
	struct kube_sync *kube;		  /* where the Events and the condition go */
	const struct kube_pod_list *pods; /* the node's pods, to name a decision's parties */
	double condition_hold_s;	  /* kubernetes.condition_hold_s */
	struct kube_report_seen *seen;	  /* updated by kube_report() */
};

/*
 * The Event a decision makes on its pod; reason NULL for none. Evictions
 * and contested settings make theirs by outcome; the rest make their rule's
 * (policy/rule.c) when they land: a finding reported, or a write applied
 * that is not a hand-back.
 */
struct rule_event kube_report_event(const struct decision *d);

/* Tells the cluster about a decision: an Event on its pod, the node condition. */
void kube_report(const struct kube_report_view *v, const struct decision *d);

/* Once per interval: the node condition the loop currently wants. */
void kube_report_condition(const struct kube_report_view *v);

#endif
