/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's link to the Kubernetes API as the rest of qoslet sees it: the
 * counters /metrics reports. The link itself is a thread of the agent's
 * (user/agent/kube_sync.h); this header keeps the reporting layer from
 * depending on it.
 */
#ifndef QOSLET_KUBE_LINK_H
#define QOSLET_KUBE_LINK_H

#include <stdbool.h>
#include <stdint.h>

/* The API calls the agent makes, for counting. */
enum kube_call {
	KUBE_CALL_LIST_PODS = 0,
	KUBE_CALL_EVICT,
	KUBE_CALL_EVENT_CREATE,
	KUBE_CALL_EVENT_PATCH,
	KUBE_CALL_NODE_STATUS,
	KUBE_CALL_NR,
};

/* "list_pods", "evict", "event_create", "event_patch", "node_status". */
const char *kube_call_name(enum kube_call c);

struct kube_link_stats {
	uint64_t requests[KUBE_CALL_NR]; /* calls made, by call */
	uint64_t errors[KUBE_CALL_NR];	 /* of those: no answer, or an error status */
	uint64_t events_aggregated;	 /* occurrences folded into an Event's series */
	uint64_t events_dropped;	 /* occurrences the rate limit dropped */
	uint64_t pods;			 /* pods in the last successful list */
	uint64_t last_list_ns;		 /* CLOCK_REALTIME of that list; 0 before the first */
	bool condition_known;		 /* the node condition was written at least once */
	bool condition;			 /* ... and says "interference" */
};

#endif
