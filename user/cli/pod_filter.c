// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cli/pod_filter.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/kubeconfig.h"
#include "kube/pods.h"
#include "kube_path.h"

/* A pod UID as the API shows it: 8-4-4-4-12 lowercase hex digits. */
static bool is_uid(const char *s)
{
	if (strlen(s) != 36)
		return false;
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !strchr("0123456789abcdef", s[i]))
			return false;
	}
	return true;
}

static int add_uid(struct pod_filter *f, const char *uid)
{
	char(*grown)[40] = realloc(f->uids, (f->n + 1) * sizeof(*f->uids));

	if (!grown)
		return -ENOMEM;
	f->uids = grown;
	snprintf(f->uids[f->n++], sizeof(*f->uids), "%s", uid);
	return 0;
}

/*
 * As kubectl looks: the first file of $KUBECONFIG, else ~/.kube/config, else
 * the in-cluster service account. Sets *none (and returns -ENOENT) when there
 * is none of them; else returns what reading the one found gave.
 */
static int api_config(struct kube_config *cfg, bool *none, char *err, size_t errlen)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	char path[PATH_MAX];

	if (env && *env) {
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(env, ":"), env);
		return kube_config_from_kubeconfig(cfg, path, err, errlen);
	}
	if (home && *home) {
		snprintf(path, sizeof(path), "%s/.kube/config", home);
		if (!access(path, R_OK))
			return kube_config_from_kubeconfig(cfg, path, err, errlen);
	}
	if (getenv("KUBERNETES_SERVICE_HOST"))
		return kube_config_in_cluster(cfg, NULL, NULL, err, errlen);
	*none = true;
	return -ENOENT;
}

static int list_pods(const char *node, struct kube_pod_list *pods, char *err, size_t errlen)
{
	struct kube_config cfg;
	struct kube_client client;
	char why[256] = "";
	bool none = false;
	int rc = api_config(&cfg, &none, why, sizeof(why));

	if (none) {
		snprintf(err, errlen,
			 "a pod name or --namespace needs the Kubernetes API, and there is no "
			 "kubeconfig ($KUBECONFIG, ~/.kube/config) nor in-cluster config; pod "
			 "UIDs (--pod UID) and cgroup paths (-c) work without it");
		return -EINVAL;
	}
	if (!rc)
		rc = kube_client_init(&client, &cfg, why, sizeof(why));
	explicit_bzero(&cfg, sizeof(cfg));
	if (rc) {
		snprintf(err, errlen, "Kubernetes API configuration: %s", why);
		return rc;
	}
	rc = kube_pods_list(&client, node, pods, why, sizeof(why));
	kube_client_free(&client);
	if (rc)
		snprintf(err, errlen, "listing the pods on node '%s': %s", node, why);
	return rc;
}

int pod_filter_resolve(struct pod_filter *f, const char *pod, const char *ns, const char *node,
		       char *err, size_t errlen)
{
	struct kube_pod_list pods = {0};
	int rc = 0;

	memset(f, 0, sizeof(*f));
	if (!pod && !ns)
		return 0;
	f->active = true;
	/* A UID is in the cgroup paths already: no API, no namespace to check it against. */
	if (pod && !ns && is_uid(pod))
		rc = add_uid(f, pod);
	else
		rc = list_pods(node, &pods, err, errlen);
	for (size_t i = 0; !rc && i < pods.n; i++) {
		const struct kube_pod *p = &pods.pods[i];

		if ((!pod || !strcmp(p->name, pod) || !strcmp(p->uid, pod)) &&
		    (!ns || !strcmp(p->ns, ns)))
			rc = add_uid(f, p->uid);
	}
	if (!rc && !f->n) {
		char what[512];
		int len = snprintf(what, sizeof(what), "no pod");

		if (pod)
			len += snprintf(what + len, sizeof(what) - len, " named '%s'", pod);
		if (ns)
			snprintf(what + len, sizeof(what) - len, " in namespace '%s'", ns);
		snprintf(err, errlen, "%s on node '%s' (%zu pods there)", what, node, pods.n);
		rc = -EINVAL;
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	kube_pod_list_free(&pods);
	return rc;
}

bool pod_filter_match(const struct pod_filter *f, const char *rel)
{
	struct kube_ids k;

	if (!f->active)
		return true;
	if (!rel || !kube_path_parse(rel, &k))
		return false;
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->uids[i], k.pod_uid))
			return true;
	return false;
}

void pod_filter_free(struct pod_filter *f)
{
	free(f->uids);
	memset(f, 0, sizeof(*f));
}
