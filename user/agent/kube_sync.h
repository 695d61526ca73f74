/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's link to the Kubernetes API, on a thread of its own so that a
 * slow or absent API server never delays the loop: it lists the pods on
 * this node every resync interval, sends the evictions, Events and node
 * condition the loop asks for, retries with backoff, and hands results back.
 * The loop only ever takes and puts under a short lock.
 */
#ifndef QOSLET_AGENT_KUBE_SYNC_H
#define QOSLET_AGENT_KUBE_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../kube/evict.h"
#include "../kube/pods.h"
#include "config.h"

/* The API calls the agent makes, for counting. */
enum kube_call {
	KUBE_CALL_LIST_PODS = 0,
	KUBE_CALL_EVICT,
	KUBE_CALL_EVENT_CREATE,
	KUBE_CALL_EVENT_PATCH,
	KUBE_CALL_NODE_STATUS,
	KUBE_CALL_NR,
};

struct kube_sync_stats {
	uint64_t requests[KUBE_CALL_NR]; /* calls made, by call */
	uint64_t errors[KUBE_CALL_NR];	 /* of those: no answer, or an error status */
	uint64_t events_aggregated;	 /* occurrences folded into an Event's series */
	uint64_t events_dropped;	 /* occurrences the rate limit dropped */
	uint64_t pods;			 /* pods in the last successful list */
	uint64_t last_list_ns;		 /* CLOCK_REALTIME of that list; 0 before the first */
	bool condition_known;		 /* the node condition was written at least once */
	bool condition;			 /* ... and says "interference" */
};

/* "list_pods", "evict", "event_create", "event_patch", "node_status". */
const char *kube_call_name(enum kube_call c);

struct kube_sync;

/* A copy of the counters (under the lock). */
void kube_sync_stats(struct kube_sync *ks, struct kube_sync_stats *out);

#endif
