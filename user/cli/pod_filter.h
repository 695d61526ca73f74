/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The views' --pod NAME|UID and --namespace NS: resolved once, at start, into
 * the UIDs of the pods they name; a cgroup is then selected when its path
 * (kubelet layout, user/kube_path.h) holds one of those UIDs. A UID needs
 * nothing else; a name or a namespace needs the Kubernetes API ($KUBECONFIG,
 * ~/.kube/config, or the in-cluster service account), asked for the pods on
 * this node.
 */
#ifndef QOSLET_CLI_POD_FILTER_H
#define QOSLET_CLI_POD_FILTER_H

#include <stdbool.h>
#include <stddef.h>

struct pod_filter {
	bool active;	  /* --pod or --namespace was given */
	char (*uids)[40]; /* the pods selected */
	size_t n;
};

/*
 * Resolves pod (a name or a UID; NULL: any) and ns (NULL: any) for node.
 * Returns 0; -EINVAL when the input names nothing or needs the API and no
 * configuration for it exists (a usage error, err says which); another
 * negative errno when the API could not be asked (err says why).
 */
int pod_filter_resolve(struct pod_filter *f, const char *pod, const char *ns, const char *node,
		       char *err, size_t errlen);

/* Does the cgroup at rel (relative to the hierarchy root) belong to a selected pod? */
bool pod_filter_match(const struct pod_filter *f, const char *rel);

void pod_filter_free(struct pod_filter *f);

#endif
