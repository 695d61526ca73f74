/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where the Kubernetes API is and how to authenticate to it: in-cluster
 * (service-account token and CA, address from KUBERNETES_SERVICE_HOST/PORT)
 * or from a minimal kubeconfig (server, certificate-authority, token or
 * tokenFile). The token is read from its file on every request, so a rotated
 * service-account token keeps working without a restart.
 */
#ifndef QOSLET_KUBE_CONFIG_H
#define QOSLET_KUBE_CONFIG_H

#include <limits.h>
#include <stddef.h>

#define KUBE_SA_TOKEN_PATH "/var/run/secrets/kubernetes.io/serviceaccount/token"
#define KUBE_SA_CA_PATH	   "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"

/* Bound on a bearer token (projected tokens are ~1 KB; this leaves room). */
#define KUBE_TOKEN_MAX 8192

struct kube_config {
	char server[512];	    /* "https://host:port", no trailing slash */
	char ca_path[PATH_MAX];	    /* PEM bundle the server's certificate must chain to */
	char token_path[PATH_MAX];  /* re-read per request; "" when token is inline */
	char token[KUBE_TOKEN_MAX]; /* inline kubeconfig token; "" when token_path is used */
};

/*
 * In-cluster configuration. token_path and ca_path default (NULL) to the
 * service-account files; tests pass their own. Returns 0, or a negative errno
 * with err naming what is missing (an unset variable, an unreadable file).
 */
int kube_config_in_cluster(struct kube_config *cfg, const char *token_path, const char *ca_path,
			   char *err, size_t errlen);

/*
 * Out of cluster: reads the first cluster's server and certificate-authority
 * and the first user's token or tokenFile from a kubeconfig file (a relative
 * file path is taken relative to the kubeconfig's directory, as kubectl does).
 * Returns 0 or a negative errno with err set.
 */
int kube_config_from_kubeconfig(struct kube_config *cfg, const char *path, char *err,
				size_t errlen);

/* The current bearer token into buf[size] (trailing newline removed). 0 or -errno, err set. */
int kube_config_token(const struct kube_config *cfg, char *buf, size_t size, char *err,
		      size_t errlen);

#endif
