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

#endif
