/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Evicting a pod through the Eviction API (policy/v1), which honours
 * PodDisruptionBudgets, with a UID precondition so that a pod recreated
 * under the same name is never the one evicted.
 */
#ifndef QOSLET_KUBE_EVICT_H
#define QOSLET_KUBE_EVICT_H

#include <jansson.h>

#include "kube/client.h"

enum kube_evict_outcome {
	KUBE_EVICT_EVICTED = 0, /* 200/201: the API server accepted the eviction */
	KUBE_EVICT_RETRY,	/* 429: a disruption budget forbids it now; back off, retry */
	KUBE_EVICT_GONE,	/* 404: the pod no longer exists; counts as done */
	KUBE_EVICT_FAILED,	/* anything else, or no answer at all */
};

/* The outcome of an answered eviction request with HTTP status `status`. */
enum kube_evict_outcome kube_evict_outcome(long status);

/* "evicted", "retry", "gone", "failed". */
const char *kube_evict_outcome_name(enum kube_evict_outcome o);

/* The Eviction document for ns/name with the uid precondition; NULL when out of memory. */
json_t *kube_evict_body(const char *ns, const char *name, const char *uid);

/*
 * POSTs the eviction of ns/name (uid). Always sets *outcome and *status (0
 * when there was no answer); returns 0 when the server answered, else a
 * negative errno with err set (then *outcome is KUBE_EVICT_FAILED). For an
 * answered failure err holds the server's message.
 */
int kube_evict(struct kube_client *c, const char *ns, const char *name, const char *uid,
	       enum kube_evict_outcome *outcome, long *status, char *err, size_t errlen);

#endif
