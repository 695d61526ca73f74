// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/node_status.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "kube/events.h"
#include "kube/pods.h"

json_t *kube_condition_patch(const struct kube_condition *cond)
{
	char beat[32], change[32];

	kube_time(cond->heartbeat_ns, beat);
	kube_time(cond->transition_ns, change);
	return json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s, s:s}]}}", "status", "conditions", "type",
			 cond->type, "status", cond->status, "reason", cond->reason, "message",
			 cond->message, "lastHeartbeatTime", beat, "lastTransitionTime", change);
}

/* One PATCH of this node's status; takes the document. */
static int patch_status(struct kube_client *c, const char *node, json_t *doc, char *err,
			size_t errlen)
{
	char path[320];

	if (!kube_name_valid(node)) {
		json_decref(doc);
		snprintf(err, errlen, "node name \"%s\" is not a valid Kubernetes name", node);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", node);
	return kube_call(c, "PATCH", path, doc, "application/strategic-merge-patch+json", err,
			 errlen);
}

int kube_node_set_condition(struct kube_client *c, const char *node,
			    const struct kube_condition *cond, char *err, size_t errlen)
{
	return patch_status(c, node, kube_condition_patch(cond), err, errlen);
}

json_t *kube_batch_patch(uint64_t cpu_milli, uint64_t mem_bytes)
{
	char cpu[24], mem[24];

	/* Quantities are strings; milli-CPUs as a plain integer, the way Koordinator writes them */
	snprintf(cpu, sizeof(cpu), "%" PRIu64, cpu_milli);
	snprintf(mem, sizeof(mem), "%" PRIu64, mem_bytes);
	return json_pack("{s:{s:{s:s, s:s}, s:{s:s, s:s}}}", "status", "capacity",
			 "kubernetes.io/batch-cpu", cpu, "kubernetes.io/batch-memory", mem,
			 "allocatable", "kubernetes.io/batch-cpu", cpu,
			 "kubernetes.io/batch-memory", mem);
}

int kube_node_set_batch(struct kube_client *c, const char *node, uint64_t cpu_milli,
			uint64_t mem_bytes, char *err, size_t errlen)
{
	return patch_status(c, node, kube_batch_patch(cpu_milli, mem_bytes), err, errlen);
}
