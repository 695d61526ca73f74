/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A condition on this node's status (`kubectl describe node` shows it), set
 * with a strategic merge patch: conditions merge by type, so the agent's one
 * condition is replaced and the kubelet's are left alone.
 */
#ifndef QOSLET_KUBE_NODE_STATUS_H
#define QOSLET_KUBE_NODE_STATUS_H

#include <jansson.h>
#include <stdint.h>

#include "kube/client.h"

struct kube_condition {
	const char *type;	/* "QoSletInterference" */
	const char *status;	/* "True", "False" or "Unknown" */
	const char *reason;	/* CamelCase */
	const char *message;	/* for people */
	uint64_t heartbeat_ns;	/* CLOCK_REALTIME of this write */
	uint64_t transition_ns; /* ... of the last change of status */
};

/* The patch document; NULL when out of memory. */
json_t *kube_condition_patch(const struct kube_condition *cond);

/* PATCHes /api/v1/nodes/NODE/status. 0 or a negative errno with err set (kube_call's). */
int kube_node_set_condition(struct kube_client *c, const char *node,
			    const struct kube_condition *cond, char *err, size_t errlen);

/*
 * The node's batch resources (kubernetes.io/batch-cpu in milli-CPUs,
 * kubernetes.io/batch-memory in bytes) in status.capacity and
 * status.allocatable: a strategic merge patch, so the kubelet's resources
 * stay as they are. NULL when out of memory.
 */
json_t *kube_batch_patch(uint64_t cpu_milli, uint64_t mem_bytes);

/* PATCHes /api/v1/nodes/NODE/status with it. 0 or a negative errno with err set. */
int kube_node_set_batch(struct kube_client *c, const char *node, uint64_t cpu_milli,
			uint64_t mem_bytes, char *err, size_t errlen);

#endif
