/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the agent reads and writes of its own Node. It reads the Node once
 * at start and at each config reload (its labels choose the config's
 * overrides; its status says what an earlier run left there). It writes the
 * status with one strategic merge patch per change, holding whatever
 * changed: its condition (conditions merge by type, so the kubelet's are
 * left alone) and its batch resources (kubernetes.io/batch-cpu in
 * milli-CPUs, kubernetes.io/batch-memory in bytes, in status.capacity and
 * status.allocatable, so the kubelet's resources stay as they are).
 */
#ifndef QOSLET_KUBE_NODE_STATUS_H
#define QOSLET_KUBE_NODE_STATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube/client.h"

#define KUBE_CONDITION_TYPE "QoSletInterference"

struct kube_condition {
	const char *type;	/* "QoSletInterference" */
	const char *status;	/* "True", "False" or "Unknown" */
	const char *reason;	/* CamelCase */
	const char *message;	/* for people */
	uint64_t heartbeat_ns;	/* CLOCK_REALTIME of this write */
	uint64_t transition_ns; /* ... of the last change of status */
};

/* One patch: the condition, the batch resources, or both. */
struct kube_node_status {
	const struct kube_condition *cond; /* NULL: not in this patch */
	bool batch;			   /* the batch resources are in it */
	uint64_t cpu_milli, mem_bytes;
};

/* The patch document; NULL when out of memory. */
json_t *kube_node_status_patch(const struct kube_node_status *st);

/* PATCHes /api/v1/nodes/NODE/status with it. 0 or a negative errno with err set (kube_call's). */
int kube_node_patch_status(struct kube_client *c, const char *node,
			   const struct kube_node_status *st, char *err, size_t errlen);

/* What the agent reads of its Node. */
struct kube_node_info {
	json_t *labels;		/* metadata.labels: an object of strings, maybe empty */
	bool has_condition;	/* status.conditions holds KUBE_CONDITION_TYPE, True or False */
	bool condition;		/* ... "True" */
	uint64_t transition_ns; /* ... its lastTransitionTime (CLOCK_REALTIME); 0 unreadable */
	bool has_batch;		/* status.allocatable holds both batch resources */
	uint64_t cpu_milli, mem_bytes;
};

/* Fills out from a Node document. 0, or -EBADMSG when it is no Node (labels not strings). */
int kube_node_parse(const json_t *node, struct kube_node_info *out);

/*
 * GETs /api/v1/nodes/NODE?resourceVersion=0 (the API server's cache: the
 * labels of a Node change seldom, and etcd is spared) and parses it. 0 or a
 * negative errno with err set (kube_call's errors).
 */
int kube_node_get(struct kube_client *c, const char *node, struct kube_node_info *out, char *err,
		  size_t errlen);

void kube_node_info_free(struct kube_node_info *info);

#endif
