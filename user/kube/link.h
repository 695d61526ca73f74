/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's link to the Kubernetes API as the rest of qoslet sees it: its
 * settings (the config's "kubernetes" object, docs/kubernetes.md) and the
 * counters /metrics reports. The link itself is a thread of the agent's
 * (user/kube/sync.h); this header keeps the config and the reporting
 * layer from depending on it.
 */
#ifndef QOSLET_KUBE_LINK_H
#define QOSLET_KUBE_LINK_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

struct kubernetes_config {
	bool enabled;		    /* false: no API calls at all */
	char kubeconfig[PATH_MAX];  /* "": in-cluster (service account) */
	char node_name[254];	    /* "": the NODE_NAME environment variable */
	double resync_s;	    /* > 0: a full relist at least this often; 0: none */
	double timeout_s;	    /* 10: one API call, connection included */
	bool events;		    /* true: Events on the pods the decisions concern */
	double event_interval_s;    /* 60: one API call per (pod, reason) at most this often */
	uint32_t events_per_minute; /* 30: all Events together, at most */
	bool event_name_culprits;   /* false: a victim's Event names no pod of another namespace */
	bool node_condition;	    /* true: the QoSletInterference node condition */
	double condition_hold_s;    /* 300: it stays True this long after the last interference */
	/* The config's capacity.node_status (docs/capacity.md): batch-cpu/batch-memory. */
	bool batch_status; /* true: the node's batch resources patched */
	/* 30: a rise is patched at most this often (a drop at once); the policy's published
	 * figure decides when a value changes at all (policy/capacity.h) */
	double batch_min_interval_s;
};

/* The API calls the agent makes, for counting. */
enum kube_call {
	KUBE_CALL_LIST_PODS = 0,
	KUBE_CALL_EVICT,
	KUBE_CALL_EVENT_CREATE,
	KUBE_CALL_EVENT_PATCH,
	KUBE_CALL_NODE_STATUS, /* one patch: the condition, the batch resources, or both */
	KUBE_CALL_GET_NODE,    /* this node's labels and status: at start and at each reload */
	KUBE_CALL_WATCH_PODS,  /* a watch of the pods on this node (it lasts minutes) */
	KUBE_CALL_NR,
};

/* "list_pods", "evict", "event_create", "event_patch", "node_status", "get_node",
 * "watch_pods". */
const char *kube_call_name(enum kube_call c);

struct kube_link_stats {
	uint64_t requests[KUBE_CALL_NR]; /* calls made, by call */
	uint64_t errors[KUBE_CALL_NR];	 /* of those: no answer, or an error status */
	uint64_t events_aggregated;	 /* occurrences folded into an Event's series */
	uint64_t events_dropped;	 /* occurrences the rate limit dropped */
	uint64_t pods;			 /* pods on this node as the informer knows them */
	/* CLOCK_REALTIME when the set was last known current (a list, a watch event, a
	 * bookmark, a watch's clean end); 0 before the first list */
	uint64_t last_list_ns;
	uint64_t pod_lists;	    /* complete pod lists: the first, then after a 410 or a break */
	uint64_t pod_expired;	    /* 410 Gone from a list or a watch */
	uint64_t pod_watch_broken;  /* watches cut, refused or unreadable */
	uint64_t pod_oversize;	    /* pod list pages or watch events over the size cap */
	uint64_t pod_events;	    /* watch events applied: ADDED, MODIFIED, DELETED */
	uint64_t pod_etcd_lists;    /* list requests only etcd serves before 1.31 (quorum, paged) */
	uint64_t pods_skipped_size; /* pods skipped for their size, over KUBE_POD_MAX_BYTES */
	uint64_t pods_terminated;   /* Succeeded or Failed pods seen, not kept */
	char pods_degraded[256];    /* why the pod data is degraded (a list over the cap); "" */
	bool condition_known;	    /* the node condition was written at least once */
	bool condition;		    /* ... and says "interference" */
	bool batch_known;	    /* the batch resources were written at least once */
	uint64_t batch_cpu_milli;   /* ... the last values the API took */
	uint64_t batch_mem_bytes;
};

#endif
