/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's link to the Kubernetes API, on threads of its own so that a
 * slow or absent API server never delays the loop: a pod informer lists
 * the pods on this node once and then watches them (user/kube/informer.h),
 * so the loop knows a pod when the scheduler binds it, before the kubelet
 * makes its cgroup; the other thread sends the evictions, Events and node
 * status the loop asks for. Both back off when the API fails and hand the
 * results back. The loop only ever takes and puts under a short lock.
 */
#ifndef QOSLET_KUBE_SYNC_H
#define QOSLET_KUBE_SYNC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decision/outcome.h"
#include "kube/kubeconfig.h"
#include "kube/evict.h"
#include "kube/link.h"
#include "kube/pods.h"
#include "policy/action.h"

/* A pod to evict, with the decision that asked for it. */
struct kube_evict_req {
	struct action act;
	char uid[40], ns[64], name[254];
	uint64_t ts_ns; /* CLOCK_REALTIME of the decision */
};

/* What one attempt came to: each becomes a decision record. */
struct kube_evict_result {
	struct kube_evict_req req;
	enum decision_outcome outcome; /* OUT_EVICTED, _GONE, _RETRY (tried again later), _FAILED */
	unsigned int attempt;	       /* 1, 2, ... */
	long status;		       /* HTTP status, 0 when there was no answer */
	uint64_t ts_ns;		       /* CLOCK_REALTIME of the attempt */
	char why[160];		       /* the server's message, or the transport's error */
};

/* An occurrence worth an Event on a pod (kube/event_correlate.h: series, combining, spam filter).
 */
struct kube_event_req {
	char uid[40], ns[64], pod[254];
	const char *type;   /* static: "Normal", "Warning" */
	const char *reason; /* static, CamelCase */
	const char *action; /* static, CamelCase */
	char note[512];
	uint64_t ts_ns; /* CLOCK_REALTIME */
};

struct kube_sync;

/*
 * Resolves where the API is (cfg->kubeconfig, else in-cluster) and this
 * node's name (cfg->node_name, else $NODE_NAME). Returns 0, or a negative
 * errno with err saying what is missing. Nothing is called yet: requests
 * queue until kube_sync_start().
 */
int kube_sync_open(struct kube_sync **out, const struct kubernetes_config *cfg, char *err,
		   size_t errlen);

/* Starts the thread (after start-up dropped the privileges it must not inherit). */
int kube_sync_start(struct kube_sync *ks, char *err, size_t errlen);

/* Abandons calls in flight, stops the thread and frees. NULL is fine. */
void kube_sync_stop(struct kube_sync *ks);

/* This node's name. */
const char *kube_sync_node(const struct kube_sync *ks);

/* A copy of the counters (under the lock). */
void kube_sync_stats(struct kube_sync *ks, struct kube_link_stats *out);

/*
 * A descriptor that polls readable when the pod set changed (an event, a
 * list): the loop wakes and re-decides at once. kube_sync_drain() quiets it
 * (the set itself waits for kube_sync_take_pods()).
 */
int kube_sync_fd(const struct kube_sync *ks);
void kube_sync_drain(struct kube_sync *ks);

/* When a newer pod set came, frees *pods and puts it there (sorted by uid); true then. */
bool kube_sync_take_pods(struct kube_sync *ks, struct kube_pod_list *pods);

/*
 * The pod label keys the config matches on ("key\0key\0\0"; NULL: all):
 * the informer keeps only these (and relists once, from the watch cache,
 * when they changed after its first list). Copied.
 */
void kube_sync_label_keys(struct kube_sync *ks, const char *keys);

/* Queues an eviction. -EALREADY when that pod's eviction is still being tried, -ENOMEM. */
int kube_sync_evict(struct kube_sync *ks, const struct kube_evict_req *req);

/* Moves up to max results into out; returns how many. */
size_t kube_sync_take_results(struct kube_sync *ks, struct kube_evict_result *out, size_t max);

/* Notes an occurrence for an Event (aggregated and rate-limited by the thread). */
void kube_sync_event(struct kube_sync *ks, const struct kube_event_req *ev);

/*
 * Reads this node's Node once, before kube_sync_start(), waiting at most
 * 2 s (the start waits for it): its labels in
 * *labels (a new reference: the config's overrides choose by them), and
 * its status, so that a value an earlier run left there is not written
 * again. 0, or a negative errno with err set (the API's answer: -EACCES
 * without RBAC get on nodes, -ENOENT no such Node, a transport error).
 */
int kube_sync_read_node(struct kube_sync *ks, json_t **labels, char *err, size_t errlen);

/* Asks the API thread to read the Node's labels again (a reload): kube_sync_take_labels(). */
void kube_sync_refresh_node(struct kube_sync *ks);

/* When the labels were read again, replaces *labels (decref'd) with them; true then. */
bool kube_sync_take_labels(struct kube_sync *ks, json_t **labels);

/*
 * The node condition the loop wants: interference seen or not, and why.
 * Written when it changes (kube/node_writer.h), with whatever else of the
 * node's status changed, in one patch.
 */
void kube_sync_condition(struct kube_sync *ks, bool interference, const char *message);

/*
 * The node's batch resources the loop decided (milli-CPUs, bytes), good for
 * valid_ns: when no newer value came by then (the loop stopped ticking), the
 * thread writes 0. The loop hands over the capacity policy's published
 * figure (policy/capacity.h: it moves by its step, grows back after its
 * hold). The thread patches the node when a value differs from what the API
 * has: a drop at once, a rise at most once per batch_min_interval_s, in the
 * same patch as the condition when both changed. kube_sync_stop() writes 0
 * when the API holds anything else (docs/capacity.md).
 */
void kube_sync_batch(struct kube_sync *ks, uint64_t cpu_milli, uint64_t mem_bytes,
		     uint64_t valid_ns);

#endif
