/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where the Kubernetes API is and how to authenticate to it: in-cluster
 * (service-account token and CA, address from KUBERNETES_SERVICE_HOST/PORT)
 * or from a kubeconfig's current-context (read with libyaml: any YAML
 * style): the server, its CA (file or data), and the user's token, token
 * file, client certificate and key (files or data) or exec credential plugin
 * (kube/exec_cred.h). What the client cannot honour (auth-provider, basic
 * auth, impersonation, insecure-skip-tls-verify, ...) is refused by name.
 *
 * Files are read when used: a token file on every request (a rotated
 * service-account token keeps working without a restart), certificate and
 * key files by libcurl on every new connection (the kubelet's rotated client
 * certificate too).
 *
 * A config holds allocations (data read from the kubeconfig, the exec plugin
 * and its cached credential): kube_client_init() takes them over, else
 * kube_config_free() releases them. Never copy one by assignment.
 */
#ifndef QOSLET_KUBE_KUBECONFIG_H
#define QOSLET_KUBE_KUBECONFIG_H

#include <limits.h>
#include <stddef.h>

#define KUBE_SA_TOKEN_PATH "/var/run/secrets/kubernetes.io/serviceaccount/token"
#define KUBE_SA_CA_PATH	   "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"

/* Bound on a bearer token (projected tokens are ~1 KB; this leaves room). */
#define KUBE_TOKEN_MAX 8192

/* PEM bytes held in memory (from *-data fields or an exec plugin); len 0: none. */
struct kube_blob {
	char *data;
	size_t len;
};

struct kube_exec;

struct kube_config {
	char server[512];	    /* "https://host:port", no trailing slash */
	char ca_path[PATH_MAX];	    /* PEM bundle the server's certificate must chain to, or "" */
	struct kube_blob ca_data;   /* the same given inline; neither: the system's CAs */
	char token_path[PATH_MAX];  /* re-read per request; "" when token is inline */
	char token[KUBE_TOKEN_MAX]; /* inline kubeconfig token; "" when token_path is used */
	char cert_path[PATH_MAX];   /* client certificate (PEM file), or "" */
	char key_path[PATH_MAX];    /* its private key (PEM file), or "" */
	struct kube_blob cert_data, key_data; /* the same given inline */
	struct kube_exec *exec;		      /* the user's credential plugin, or NULL */
	char ns[254];			      /* the context's namespace, "" when it names none */
};

/* The client certificate one request presents: a file pair, a blob pair, or none. */
struct kube_client_cert {
	const char *cert_path, *key_path;   /* NULL when not files */
	const struct kube_blob *cert, *key; /* NULL when not in memory */
};

/*
 * In-cluster configuration. token_path and ca_path default (NULL) to the
 * service-account files; tests pass their own. Returns 0, or a negative errno
 * with err naming what is missing (an unset variable, an unreadable file).
 */
int kube_config_in_cluster(struct kube_config *cfg, const char *token_path, const char *ca_path,
			   char *err, size_t errlen);

/*
 * Out of cluster: the current-context of the kubeconfig at path (its cluster,
 * user and namespace). Relative file names (and an exec command with a '/')
 * are taken relative to the kubeconfig's directory, as kubectl does. Nothing
 * is run here: an exec plugin runs at the first request. Returns 0, or a
 * negative errno with err naming the file, the entry and the problem
 * (-ENOTSUP for what is refused); cfg then holds nothing to free.
 */
int kube_config_from_kubeconfig(struct kube_config *cfg, const char *path, char *err,
				size_t errlen);

/* Releases what cfg holds (keys and tokens wiped first); cfg is then empty. */
void kube_config_free(struct kube_config *cfg);

/*
 * The bearer token for the next request into buf[size] (trailing newline
 * removed): the token file read now, the inline token, or the exec plugin's
 * (run when none is cached or the cached one expires within
 * KUBE_EXEC_REFRESH_S). buf is "" when the user authenticates by client
 * certificate alone. 0 or -errno, err set. Not thread-safe for one cfg (the
 * plugin's cache): each client has its own.
 */
int kube_config_token(const struct kube_config *cfg, char *buf, size_t size, char *err,
		      size_t errlen);

/* The client certificate to present, as the last kube_config_token() left it. */
void kube_config_client_cert(const struct kube_config *cfg, struct kube_client_cert *out);

/* The server answered 401: drop the plugin's cached credential, so the next request re-runs it. */
void kube_config_unauthorized(const struct kube_config *cfg);

#endif
