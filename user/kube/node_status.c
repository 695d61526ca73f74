// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/node_status.h"

#include <errno.h>
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

int kube_node_set_condition(struct kube_client *c, const char *node,
			    const struct kube_condition *cond, char *err, size_t errlen)
{
	char path[320];

	if (!kube_name_valid(node)) {
		snprintf(err, errlen, "node name \"%s\" is not a valid Kubernetes name", node);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", node);
	return kube_call(c, "PATCH", path, kube_condition_patch(cond),
			 "application/strategic-merge-patch+json", err, errlen);
}
