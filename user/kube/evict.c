// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/evict.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kube/pods.h"

enum kube_evict_outcome kube_evict_outcome(long status)
{
	switch (status) {
	case 200:
	case 201:
		return KUBE_EVICT_EVICTED;
	case 429:
		return KUBE_EVICT_RETRY;
	case 404:
		return KUBE_EVICT_GONE;
	default:
		return KUBE_EVICT_FAILED;
	}
}

const char *kube_evict_outcome_name(enum kube_evict_outcome o)
{
	static const char *const names[] = {"evicted", "retry", "gone", "failed"};

	return (unsigned)o < sizeof(names) / sizeof(names[0]) ? names[o] : "failed";
}

json_t *kube_evict_body(const char *ns, const char *name, const char *uid)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}}}", "apiVersion", "policy/v1", "kind",
			 "Eviction", "metadata", "name", name, "namespace", ns, "deleteOptions",
			 "preconditions", "uid", uid);
}

int kube_evict(struct kube_client *c, const char *ns, const char *name, const char *uid,
	       enum kube_evict_outcome *outcome, long *status, char *err, size_t errlen)
{
	struct kube_response r;
	char path[600];
	json_t *body;
	int rc;

	*outcome = KUBE_EVICT_FAILED;
	*status = 0;
	if (!kube_name_valid(ns) || !kube_name_valid(name) || !*uid) {
		snprintf(err, errlen, "evict \"%s/%s\": not a valid namespace/name/uid", ns, name);
		return -EINVAL;
	}
	body = kube_evict_body(ns, name, uid);
	if (!body) {
		snprintf(err, errlen, "evict %s/%s: out of memory", ns, name);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/eviction", ns, name);
	rc = kube_request(c, "POST", path, body, &r, err, errlen);
	json_decref(body);
	/* The outcome comes from the status alone: a Status body that is not JSON changes nothing.
	 */
	if (rc == 0 || rc == -EBADMSG) {
		*status = r.status;
		*outcome = kube_evict_outcome(r.status);
		if (*outcome != KUBE_EVICT_EVICTED)
			snprintf(err, errlen, "evict %s/%s: status %ld %s", ns, name, r.status,
				 kube_status_message(r.body));
		rc = 0;
	}
	json_decref(r.body);
	return rc;
}
