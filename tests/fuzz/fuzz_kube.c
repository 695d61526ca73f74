// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the Kubernetes client makes of a response body (user/kube): each
 * input is a body as the API server (or anything posing as it) could send
 * it. It goes through json_loadb() as kube_request() calls it; a body that
 * is not JSON leaves no document, which the callers still hand to
 * kube_status_message(). The document is then taken as a pod list
 * (kube_pods_parse, sorted and searched as the agent does) and as an error
 * Status; the eviction outcome of every status is checked once at start.
 *
 * Checks: a refused document is an error with a message and an empty list;
 * an accepted one accounts for every item (parsed or skipped), its pods have
 * their required fields, kube_pod_find() finds each by uid and
 * kube_pod_container_name() names each container.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "fuzz.h"
#include "kube/client.h"
#include "kube/evict.h"
#include "kube/pods.h"

/*
 * The eviction outcome depends on the status alone, so every status is
 * checked once, not per input: each maps to an outcome with a name, and the
 * ones the Eviction API documents map as user/kube/evict.h says.
 */
static void check_outcomes(void)
{
	static const long edges[] = {LONG_MIN, -1, LONG_MAX};

	for (long s = 0; s < 1000 + (long)(sizeof(edges) / sizeof(edges[0])); s++) {
		long status = s < 1000 ? s : edges[s - 1000];
		enum kube_evict_outcome o = kube_evict_outcome(status);
		const char *name = kube_evict_outcome_name(o);

		FUZZ_CHECK(o >= KUBE_EVICT_EVICTED && o <= KUBE_EVICT_FAILED, "status %ld: %d",
			   status, o);
		FUZZ_CHECK(name && name[0], "status %ld: no outcome name", status);
		FUZZ_CHECK(o == (status == 200 || status == 201 ? KUBE_EVICT_EVICTED
				 : status == 429		? KUBE_EVICT_RETRY
				 : status == 404		? KUBE_EVICT_GONE
								: KUBE_EVICT_FAILED),
			   "status %ld maps to %s", status, name);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	check_outcomes();
	return 0;
}

/* A fixed-size string member is terminated inside its array. */
#define TERMINATED(s) (strnlen((s), sizeof(s)) < sizeof(s))

static void check_pod(const struct kube_pod_list *list, const struct kube_pod *p)
{
	const struct kube_pod *found;

	FUZZ_CHECK(TERMINATED(p->uid) && TERMINATED(p->ns) && TERMINATED(p->name) &&
			   TERMINATED(p->koord_qos) && TERMINATED(p->qos_class) &&
			   TERMINATED(p->owner_kind) && TERMINATED(p->owner_name) &&
			   TERMINATED(p->node),
		   "an unterminated field");
	FUZZ_CHECK(p->uid[0] && p->ns[0] && p->name[0], "a pod without uid, namespace or name");
	FUZZ_CHECK(!p->owner_kind[0] == !p->owner_name[0], "an owner kind without a name");
	found = kube_pod_find(list, p->uid);
	FUZZ_CHECK(found && !strcmp(found->uid, p->uid), "uid %s not found", p->uid);
	for (size_t i = 0; i < p->n_containers; i++) {
		const struct kube_container *c = &p->containers[i];

		FUZZ_CHECK(TERMINATED(c->id) && TERMINATED(c->name) && c->name[0],
			   "a bad container name");
		FUZZ_CHECK(kube_pod_container_name(p, c->id), "container %s not found", c->id);
	}
}

static void check_pods(const json_t *doc)
{
	struct kube_pod_list list;
	char err[256] = "";
	int r = kube_pods_parse(doc, &list, err, sizeof(err));

	if (r) {
		FUZZ_CHECK(r == -EBADMSG && err[0], "kube_pods_parse returned %d (%s)", r, err);
		FUZZ_CHECK(!list.pods && !list.n && !list.skipped, "a refused list is not empty");
		return;
	}
	FUZZ_CHECK(list.n + list.skipped == json_array_size(json_object_get(doc, "items")),
		   "%zu parsed + %zu skipped is not every item", list.n, list.skipped);
	kube_pod_list_sort(&list);
	for (size_t i = 0; i < list.n; i++)
		check_pod(&list, &list.pods[i]);
	kube_pod_list_free(&list);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t jerr;
	json_t *doc = json_loadb((const char *)data, size, 0, &jerr);
	const char *msg = kube_status_message(doc);

	/* the callers print it in their error message: a string from the body (or "") */
	FUZZ_CHECK(msg && strlen(msg) <= size, "a status message that is not from the body");
	if (!doc) {
		FUZZ_CHECK(jerr.text[0], "json_loadb failed without a reason");
		return 0;
	}
	check_pods(doc);
	json_decref(doc);
	return 0;
}
