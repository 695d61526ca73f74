/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Exec credential plugins (a kubeconfig user's exec:), as client-go runs
 * them: the command with its args, the caller's environment plus the
 * kubeconfig's env and KUBERNETES_EXEC_INFO (an ExecCredential of the
 * configured apiVersion, client.authentication.k8s.io/v1 or v1beta1, with
 * spec.interactive false: qoslet never gives a plugin its terminal, stdin
 * is /dev/null); its stdout is an ExecCredential whose status holds a token
 * or a client certificate and key, and maybe an expirationTimestamp. The
 * credential is cached and the plugin runs again KUBE_EXEC_REFRESH_S before
 * that expiry, and after the server answered 401 (kube_exec_invalidate).
 */
#ifndef QOSLET_KUBE_EXEC_CRED_H
#define QOSLET_KUBE_EXEC_CRED_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "kube/kubeconfig.h"

/* Re-run this long before the credential expires, so no request carries one about to lapse. */
#define KUBE_EXEC_REFRESH_S 10
/* A plugin that has not answered by then is killed: the API thread must not hang on it. */
#define KUBE_EXEC_TIMEOUT_S 30
/* Bound on what a plugin prints (a token, or a certificate and key, are a few KB). */
#define KUBE_EXEC_MAX_OUTPUT (1u << 20)

struct kube_exec {
	char **argv;	    /* command (resolved) and args, NULL-terminated */
	char **env;	    /* the kubeconfig's env, "NAME=value", NULL-terminated */
	char *exec_info;    /* "KUBERNETES_EXEC_INFO={...}" */
	char *install_hint; /* shown when the command cannot run, or NULL */
	char api_version[64];
	/* The cached credential: */
	bool have;
	char *token;		    /* NULL when the plugin gave a certificate */
	struct kube_blob cert, key; /* len 0 when it gave a token */
	time_t expiry;		    /* 0: none given, kept until a 401 */
};

/*
 * Makes e's cached credential current: runs the plugin when there is none
 * or it expires within KUBE_EXEC_REFRESH_S of now. 0, or a negative errno
 * with err naming the command and what went wrong (it could not start, it
 * failed or timed out, its output is not a valid ExecCredential).
 */
int kube_exec_refresh(struct kube_exec *e, char *err, size_t errlen);

/*
 * Parses a plugin's output into e's cache (the part of kube_exec_refresh
 * after the run; tests call it directly). 0 or -EBADMSG with err set; the
 * previous credential is dropped either way.
 */
int kube_exec_parse(struct kube_exec *e, const char *out, size_t len, char *err, size_t errlen);

/* Drops the cached credential (wiped). */
void kube_exec_invalidate(struct kube_exec *e);

/* Frees e (credential wiped) and everything it holds; NULL is fine. */
void kube_exec_free(struct kube_exec *e);

/* "2026-11-28T15:04:05Z", with optional fraction and numeric offset, as Unix time; -1 if not. */
time_t kube_rfc3339(const char *s);

#endif
