/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One call to the Kubernetes API over libcurl: HTTPS only, the server
 * verified against the configured CA (and nothing else; the system's CAs
 * only for a kubeconfig that names none), the bearer token read fresh for
 * every request (kube/config.h: a file, inline, an exec plugin's) and/or a
 * client certificate, bounded in time and in response size. A
 * failure is returned and counted, never fatal: the agent keeps protecting
 * the node when the API is away.
 */
#ifndef QOSLET_KUBE_CLIENT_H
#define QOSLET_KUBE_CLIENT_H

#include <jansson.h>
#include <stddef.h>

#include "kube/json_head.h"
#include "kube/kubeconfig.h"

struct kube_client_stats {
	unsigned long requests;
	unsigned long transport_errors; /* no HTTP answer: DNS, connect, TLS, timeout, token */
	unsigned long http_errors;	/* answered with a status >= 400 */
	unsigned long parse_errors;	/* answered with a body that is not JSON or too large */
};

struct kube_client {
	struct kube_config cfg;
	void *curl;		 /* CURL *, kept so connections are reused */
	long connect_timeout_ms; /* default 3000 */
	long timeout_ms;	 /* whole request, default 10000 */
	size_t max_body;	 /* response body bound, default 16 MiB */
	/* When set and nonzero, a request in flight is abandoned (-ECANCELED): a clean stop
	 * must not wait out a slow API server. Read atomically from the transfer. */
	const int *cancel;
	struct kube_client_stats stats;
};

struct kube_response {
	long status;  /* HTTP status */
	json_t *body; /* parsed JSON body, or NULL when it was empty; caller json_decref()s it */
	/* -EFBIG: the body's first bytes (kube/json_head.h reads what is skipped from them) */
	size_t head_len;
	char head[JSON_HEAD_MAX];
};

/*
 * Takes cfg over (what it holds is the client's now, freed by
 * kube_client_free(); cfg is left empty), also when it fails. 0, or a
 * negative errno with err set: libcurl is not installed (-ELIBACC, err names
 * the package) or could not start.
 */
int kube_client_init(struct kube_client *c, struct kube_config *cfg, char *err, size_t errlen);
void kube_client_free(struct kube_client *c);

/*
 * method ("GET", "POST", ...) on path (starting with '/', query included),
 * with body sent as application/json when not NULL. Returns 0 when the server
 * answered (any status: resp filled), or a negative errno with err set: no
 * answer (-EIO, -ETIMEDOUT, -ECONNREFUSED), TLS verification failed
 * (-EPERM), response too large (-EFBIG: resp->head holds its start) or not
 * JSON (-EBADMSG). A GET asks for gzip (Accept-Encoding): a pod list
 * shrinks about tenfold on the wire; max_body bounds the decoded bytes.
 */
int kube_request(struct kube_client *c, const char *method, const char *path, const json_t *body,
		 struct kube_response *resp, char *err, size_t errlen);

/*
 * The same with the body sent as content_type: PATCH documents say how they
 * merge ("application/merge-patch+json", "application/strategic-merge-patch+json").
 */
int kube_request_as(struct kube_client *c, const char *method, const char *path, const json_t *body,
		    const char *content_type, struct kube_response *resp, char *err, size_t errlen);

/*
 * A call that only needs to succeed: sends body (taken: it is freed; NULL
 * means out of memory) as ctype. 0 for a 2xx answer, else a negative errno
 * with err set: the transport's, or for an error status -ENOENT (404),
 * -EEXIST (409), or kube_status_errno()'s, with the server's message.
 */
int kube_call(struct kube_client *c, const char *method, const char *path, json_t *body,
	      const char *ctype, char *err, size_t errlen);

/* Takes n bytes of a streamed body: 0 goes on, a negative errno stops the transfer. */
typedef int (*kube_stream_fn)(const char *data, size_t n, void *user);

/*
 * A GET whose body streams (a watch): 2xx bytes go to on_data as they
 * arrive, for up to timeout_ms, with no size bound here (on_data bounds what
 * it keeps). 0 when the server answered and ended the body (*status set; for
 * an error status err holds the Status message), on_data's error, or the
 * transport's (-EIO for a connection cut mid-body, -ETIMEDOUT, ...) with err.
 */
int kube_stream(struct kube_client *c, const char *path, long timeout_ms, kube_stream_fn on_data,
		void *user, long *status, char *err, size_t errlen);

/*
 * An error status as an errno: -EACCES for 401/403 (the credentials),
 * -EAGAIN for 429 and 5xx (the server's trouble: worth retrying later), else
 * -EPROTO (the request itself was refused).
 */
int kube_status_errno(long status);

/* The "message" of a Kubernetes Status body, or "" when there is none. */
const char *kube_status_message(const json_t *body);

#endif
