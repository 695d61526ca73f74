// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/node_status.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kube/events.h"
#include "kube/pods.h"
#include "kube/quantity.h"

#define BATCH_CPU "kubernetes.io/batch-cpu"
#define BATCH_MEM "kubernetes.io/batch-memory"

json_t *kube_node_status_patch(const struct kube_node_status *st)
{
	json_t *status = json_object(), *doc = json_pack("{s:o}", "status", status);

	if (!doc)
		return NULL;
	if (st->cond) {
		const struct kube_condition *c = st->cond;
		char beat[32], change[32];

		kube_time(c->heartbeat_ns, beat);
		kube_time(c->transition_ns, change);
		if (json_object_set_new(status, "conditions",
					json_pack("[{s:s, s:s, s:s, s:s, s:s, s:s}]", "type",
						  c->type, "status", c->status, "reason", c->reason,
						  "message", c->message, "lastHeartbeatTime", beat,
						  "lastTransitionTime", change)))
			goto fail;
	}
	if (st->batch) {
		char cpu[24], mem[24];

		/* Quantities are strings; milli-CPUs as a plain integer, as Koordinator writes them
		 */
		snprintf(cpu, sizeof(cpu), "%" PRIu64, st->cpu_milli);
		snprintf(mem, sizeof(mem), "%" PRIu64, st->mem_bytes);
		if (json_object_set_new(status, "capacity",
					json_pack("{s:s, s:s}", BATCH_CPU, cpu, BATCH_MEM, mem)) ||
		    json_object_set_new(status, "allocatable",
					json_pack("{s:s, s:s}", BATCH_CPU, cpu, BATCH_MEM, mem)))
			goto fail;
	}
	return doc;
fail:
	json_decref(doc);
	return NULL;
}

int kube_node_patch_status(struct kube_client *c, const char *node,
			   const struct kube_node_status *st, char *err, size_t errlen)
{
	char path[320];

	if (!kube_name_valid(node)) {
		snprintf(err, errlen, "node name \"%s\" is not a valid Kubernetes name", node);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", node);
	return kube_call(c, "PATCH", path, kube_node_status_patch(st),
			 "application/strategic-merge-patch+json", err, errlen);
}

/* RFC 3339 seconds ("2026-11-22T07:30:40Z") as CLOCK_REALTIME ns; 0 when not that. */
static uint64_t parse_time(const char *s)
{
	struct tm tm = {0};
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
	time_t t;

	if (!end || *end)
		return 0;
	t = timegm(&tm);
	return t > 0 ? (uint64_t)t * 1000000000ull : 0;
}

/* The whole-number quantity under key (the agent writes milli-CPUs and bytes so). */
static bool quantity(const json_t *map, const char *key, uint64_t *out)
{
	const char *s = json_string_value(json_object_get(map, key));

	return s && !kube_quantity_parse(s, out);
}

int kube_node_parse(const json_t *node, struct kube_node_info *out)
{
	json_t *labels = json_object_get(json_object_get(node, "metadata"), "labels");
	json_t *status = json_object_get(node, "status"), *c, *v;
	json_t *alloc = json_object_get(status, "allocatable");
	const char *key;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(node) || (labels && !json_is_object(labels)))
		return -EBADMSG;
	json_object_foreach(labels, key, v) if (!json_is_string(v)) return -EBADMSG;
	out->labels = labels ? json_incref(labels) : json_object();
	if (!out->labels)
		return -ENOMEM;
	json_array_foreach(json_object_get(status, "conditions"), i, c)
	{
		const char *type = json_string_value(json_object_get(c, "type"));
		const char *st = json_string_value(json_object_get(c, "status"));

		/* "Unknown" (a stopped agent's) is no value of ours: it is written anew */
		if (!type || strcmp(type, KUBE_CONDITION_TYPE) || !st ||
		    (strcmp(st, "True") && strcmp(st, "False")))
			continue;
		out->has_condition = true;
		out->condition = !strcmp(st, "True");
		out->transition_ns =
			parse_time(json_string_value(json_object_get(c, "lastTransitionTime")));
	}
	out->has_batch = quantity(alloc, BATCH_CPU, &out->cpu_milli) &&
			 quantity(alloc, BATCH_MEM, &out->mem_bytes);
	return 0;
}

int kube_node_get(struct kube_client *c, const char *node, struct kube_node_info *out, char *err,
		  size_t errlen)
{
	struct kube_response resp = {0};
	char path[320];
	int rc;

	memset(out, 0, sizeof(*out));
	if (!kube_name_valid(node)) {
		snprintf(err, errlen, "node name \"%s\" is not a valid Kubernetes name", node);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/api/v1/nodes/%s?resourceVersion=0", node);
	rc = kube_request(c, "GET", path, NULL, &resp, err, errlen);
	if (rc)
		return rc;
	if (resp.status / 100 != 2) {
		rc = resp.status == 404 ? -ENOENT : kube_status_errno(resp.status);
		snprintf(err, errlen, "GET node %s: HTTP %ld: %s", node, resp.status,
			 kube_status_message(resp.body));
	} else if ((rc = kube_node_parse(resp.body, out))) {
		snprintf(err, errlen, "GET node %s: not a Node (labels that are not strings)",
			 node);
	}
	json_decref(resp.body);
	return rc;
}

void kube_node_info_free(struct kube_node_info *info)
{
	json_decref(info->labels);
	memset(info, 0, sizeof(*info));
}
