/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the agent's HTTP endpoint serves (publish.c): the Prometheus text
 * and the recent decisions, rendered on the loop's thread from what the
 * agent hands over in a struct publish_view.
 */
#ifndef QOSLET_REPORT_PUBLISH_H
#define QOSLET_REPORT_PUBLISH_H

#include <stdint.h>

#include "actuate/actuator.h"
#include "cgroup/path.h"
#include "collect/collect.h"
#include "decision/decision.h"
#include "kube/pods.h"
#include "kube/sync.h"
#include "policy/capacity.h"
#include "probes/probes.h"
#include "report/breaches.h"
#include "report/http.h"
#include "report/metrics.h"

/* What publishing reads of the agent: filled by the agent for each render. */
struct publish_view {
	const struct tick_record *rec;		/* the collector's last record */
	const struct collector *coll;		/* cgroup paths, unit members, pod refusals */
	struct cgroup_names *names;		/* names of cgroups outside the units; NULL none */
	const struct actuator *act;		/* the settings it changed; NULL in dry-run */
	const struct probe_set *probes;		/* NULL: no probe runs */
	struct kube_sync *kube;			/* NULL: kubernetes.enabled is false */
	const struct kube_pod_list *pods;	/* the node's pods, sorted by uid */
	const struct decision_log *log;		/* the recent decisions */
	const struct breach_counts *breaches;	/* reports per victim and cause */
	const struct capacity_result *capacity; /* batch capacity; NULL: no tick's result yet */
	enum metrics_scope cgroups;		/* http.cgroups */
	uint64_t ticks, fast_ticks;
	uint64_t alerts_wait, alerts_displaced; /* fast path alerts drained since the start */
	const uint64_t *answers;		/* [ACT_ANSWER_NR]: outside writes, by answer */
	uint64_t *errors; /* [METRICS_ERR_NR]: a failed render counts in METRICS_ERR_RENDER */
	struct http_server *http;
};

/*
 * Renders the texts the HTTP endpoint asked for (HTTP_WANT() bits of
 * http_render_wanted()) and hands them to the server; loop_ns is how long
 * the last tick took.
 */
void publish_render(const struct publish_view *v, uint64_t loop_ns, unsigned int want);

#endif
