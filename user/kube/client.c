// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/client.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/curl_dl.h"

#define KUBE_DEFAULT_CONNECT_MS 3000
#define KUBE_DEFAULT_TIMEOUT_MS 10000
/* A node's pod list is ~10 KB a pod at worst; 16 MiB covers a dense node with room. */
#define KUBE_DEFAULT_MAX_BODY (16u << 20)

struct body_buf {
	char *data;
	size_t len, cap, max;
	bool too_large;
};

int kube_client_init(struct kube_client *c, struct kube_config *cfg, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	/* Taken over: the caller's copy is emptied, so what it holds is freed once. */
	c->cfg = *cfg;
	explicit_bzero(cfg, sizeof(*cfg));
	c->connect_timeout_ms = KUBE_DEFAULT_CONNECT_MS;
	c->timeout_ms = KUBE_DEFAULT_TIMEOUT_MS;
	c->max_body = KUBE_DEFAULT_MAX_BODY;
	if (!c->cfg.server[0]) {
		snprintf(err, errlen, "no API server configured (a config handed over twice?)");
		return -EINVAL;
	}
	if (curl_dl_open(err, errlen)) {
		kube_config_free(&c->cfg);
		return -ELIBACC;
	}
	/* Reference-counted by libcurl, so several clients may each init and free. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		kube_config_free(&c->cfg);
		snprintf(err, errlen, "libcurl: global init failed");
		return -ENOMEM;
	}
	c->curl = curl_easy_init();
	if (!c->curl) {
		curl_global_cleanup();
		kube_config_free(&c->cfg);
		snprintf(err, errlen, "libcurl: cannot create a handle");
		return -ENOMEM;
	}
	return 0;
}

void kube_client_free(struct kube_client *c)
{
	if (!c->curl)
		return;
	curl_easy_cleanup(c->curl);
	curl_global_cleanup();
	c->curl = NULL;
	kube_config_free(&c->cfg);
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user)
{
	struct body_buf *b = user;
	size_t n = size * nmemb, cap;
	char *p;

	if (b->max < b->len || n > b->max - b->len) {
		b->too_large = true;
		return 0; /* makes libcurl stop with CURLE_WRITE_ERROR */
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 16384;
		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p)
			return 0;
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

static int curl_errno(CURLcode rc, const struct body_buf *b)
{
	if (b->too_large || rc == CURLE_FILESIZE_EXCEEDED)
		return -EFBIG;
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_ABORTED_BY_CALLBACK:
		return -ECANCELED;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
		return -EPERM;
	default:
		return -EIO;
	}
}

/* libcurl calls this during a transfer: nonzero abandons it. */
static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	const int *cancel = user;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return __atomic_load_n(cancel, __ATOMIC_RELAXED);
}

/* A blob option: libcurl copies the bytes, so the config may change them after. */
static CURLcode set_blob(CURL *h, CURLoption opt, const struct kube_blob *b)
{
	struct curl_blob blob = {.data = b->data, .len = b->len, .flags = CURL_BLOB_COPY};

	return curl_easy_setopt(h, opt, &blob);
}

/*
 * The server's CA and the client certificate, from files or memory: the
 * configured CA alone (no system store) when there is one, else the
 * system's, as kubectl does for a kubeconfig that names none.
 */
static bool set_tls(struct kube_client *c, CURL *h)
{
	const struct kube_config *cfg = &c->cfg;
	struct kube_client_cert cc;
	CURLcode rc = CURLE_OK;

	if (cfg->ca_data.len) {
		rc = set_blob(h, CURLOPT_CAINFO_BLOB, &cfg->ca_data);
		if (rc == CURLE_OK)
			rc = curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	} else if (cfg->ca_path[0]) {
		rc = curl_easy_setopt(h, CURLOPT_CAINFO, cfg->ca_path);
		if (rc == CURLE_OK)
			rc = curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	}
	kube_config_client_cert(cfg, &cc);
	if (rc == CURLE_OK && cc.cert)
		rc = set_blob(h, CURLOPT_SSLCERT_BLOB, cc.cert);
	if (rc == CURLE_OK && cc.cert_path)
		rc = curl_easy_setopt(h, CURLOPT_SSLCERT, cc.cert_path);
	if (rc == CURLE_OK && cc.key)
		rc = set_blob(h, CURLOPT_SSLKEY_BLOB, cc.key);
	if (rc == CURLE_OK && cc.key_path)
		rc = curl_easy_setopt(h, CURLOPT_SSLKEY, cc.key_path);
	return rc == CURLE_OK;
}

/* Sets every option of one request; false when libcurl refused one (then err says which). */
static bool set_options(struct kube_client *c, CURL *h, const char *url, const char *method,
			const char *payload, struct curl_slist *hdrs, curl_write_callback write,
			void *data)
{
	static const char agent[] = "qoslet/" QOSLET_VERSION;
	CURLcode rc = CURLE_OK;

	curl_easy_reset(h); /* options only: the connection cache survives */
#define SET(opt, val)                                                                              \
	do {                                                                                       \
		if (rc == CURLE_OK)                                                                \
			rc = curl_easy_setopt(h, opt, val);                                        \
	} while (0)
	SET(CURLOPT_URL, url);
	/* Only HTTPS, also after a redirect (which is not followed anyway). */
	SET(CURLOPT_PROTOCOLS_STR, "https");
	if (!set_tls(c, h))
		return false;
	SET(CURLOPT_SSL_VERIFYPEER, 1L);
	SET(CURLOPT_SSL_VERIFYHOST, 2L);
	SET(CURLOPT_NOSIGNAL, 1L); /* timeouts without SIGALRM, safe beside the agent's signals */
	SET(CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
	SET(CURLOPT_TIMEOUT_MS, c->timeout_ms);
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->max_body);
	SET(CURLOPT_USERAGENT, agent);
	SET(CURLOPT_HTTPHEADER, hdrs);
	SET(CURLOPT_WRITEFUNCTION, write);
	SET(CURLOPT_WRITEDATA, data);
	if (c->cancel) {
		SET(CURLOPT_NOPROGRESS, 0L);
		SET(CURLOPT_XFERINFOFUNCTION, on_progress);
		SET(CURLOPT_XFERINFODATA, (void *)c->cancel);
	}
	if (payload) {
		SET(CURLOPT_POSTFIELDS, payload);
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
	}
	if (strcmp(method, payload ? "POST" : "GET"))
		SET(CURLOPT_CUSTOMREQUEST, method);
	/* libcurl decodes it; the cap (on_body) counts decoded bytes, so no bomb gets past */
	if (!strcmp(method, "GET"))
		SET(CURLOPT_ACCEPT_ENCODING, "gzip");
#undef SET
	return rc == CURLE_OK;
}

/* Authorization, Accept and (with a body) Content-Type; NULL on error. */
static struct curl_slist *headers(const struct kube_config *cfg, const char *content_type,
				  char *err, size_t errlen)
{
	char token[KUBE_TOKEN_MAX], line[KUBE_TOKEN_MAX + 32], ctype[128];
	struct curl_slist *h = NULL, *n;

	if (kube_config_token(cfg, token, sizeof(token), err, errlen))
		return NULL;
	snprintf(line, sizeof(line), "Authorization: Bearer %s", token);
	n = h = curl_slist_append(NULL, "Accept: application/json");
	/* No token: the client certificate alone authenticates. */
	if (h && token[0])
		h = curl_slist_append(h, line);
	explicit_bzero(token, sizeof(token));
	explicit_bzero(line, sizeof(line));
	/* "Expect:" off: the API server answers at once, 100-continue only adds a round trip. */
	snprintf(ctype, sizeof(ctype), "Content-Type: %s", content_type ? content_type : "");
	if (h && content_type)
		h = curl_slist_append(h, ctype);
	if (h && content_type)
		h = curl_slist_append(h, "Expect:");
	if (!h) {
		curl_slist_free_all(n);
		snprintf(err, errlen, "out of memory for request headers");
	}
	return h;
}

static int do_request(struct kube_client *c, const char *method, const char *path,
		      const char *payload, const char *content_type, struct kube_response *resp,
		      char *err, size_t errlen)
{
	char url[sizeof(c->cfg.server) + 2048], cerr[CURL_ERROR_SIZE] = "";
	struct body_buf b = {.max = c->max_body};
	struct curl_slist *hdrs;
	json_error_t jerr;
	CURLcode rc;
	int ret = 0;

	if ((size_t)snprintf(url, sizeof(url), "%s%s", c->cfg.server, path) >= sizeof(url)) {
		snprintf(err, errlen, "%s %s: path too long", method, path);
		return -ENAMETOOLONG;
	}
	hdrs = headers(&c->cfg, payload ? content_type : NULL, err, errlen);
	if (!hdrs)
		return -EACCES;
	if (!set_options(c, c->curl, url, method, payload, hdrs, on_body, &b) ||
	    curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, cerr) != CURLE_OK) {
		curl_slist_free_all(hdrs);
		snprintf(err, errlen, "%s %s: libcurl refused an option", method, path);
		return -EINVAL;
	}
	rc = curl_easy_perform(c->curl);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		ret = curl_errno(rc, &b);
		if (ret == -EFBIG) {
			curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &resp->status);
			resp->head_len = b.len < sizeof(resp->head) ? b.len : sizeof(resp->head);
			memcpy(resp->head, b.data ? b.data : "", resp->head_len);
		}
		snprintf(err, errlen, "%s %s%s: %s", method, c->cfg.server, path,
			 ret == -EFBIG ? "response larger than the limit"
			 : cerr[0]     ? cerr
				       : curl_easy_strerror(rc));
	} else {
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &resp->status);
		/* As client-go: refused credentials are dropped; the next request re-runs exec. */
		if (resp->status == 401)
			kube_config_unauthorized(&c->cfg);
		if (b.len) {
			resp->body = json_loadb(b.data, b.len, 0, &jerr);
			if (!resp->body) {
				snprintf(err, errlen, "%s %s: status %ld, body is not JSON: %s",
					 method, path, resp->status, jerr.text);
				ret = -EBADMSG;
			}
		}
	}
	free(b.data);
	return ret;
}

int kube_request_as(struct kube_client *c, const char *method, const char *path, const json_t *body,
		    const char *content_type, struct kube_response *resp, char *err, size_t errlen)
{
	char *payload = NULL;
	int rc;

	resp->status = 0;
	resp->body = NULL;
	resp->head_len = 0;
	c->stats.requests++;
	if (body && !(payload = json_dumps(body, JSON_COMPACT))) {
		snprintf(err, errlen, "%s %s: cannot encode the body", method, path);
		c->stats.transport_errors++;
		return -ENOMEM;
	}
	rc = do_request(c, method, path, payload, content_type, resp, err, errlen);
	free(payload);
	if (rc == -EBADMSG || rc == -EFBIG)
		c->stats.parse_errors++;
	else if (rc)
		c->stats.transport_errors++;
	else if (resp->status >= 400)
		c->stats.http_errors++;
	return rc;
}

int kube_request(struct kube_client *c, const char *method, const char *path, const json_t *body,
		 struct kube_response *resp, char *err, size_t errlen)
{
	return kube_request_as(c, method, path, body, "application/json", resp, err, errlen);
}

int kube_call(struct kube_client *c, const char *method, const char *path, json_t *body,
	      const char *ctype, char *err, size_t errlen)
{
	struct kube_response r;
	int rc;

	if (!body) {
		snprintf(err, errlen, "%s %s: out of memory", method, path);
		return -ENOMEM;
	}
	rc = kube_request_as(c, method, path, body, ctype, &r, err, errlen);
	json_decref(body);
	if (rc)
		return rc;
	if (r.status < 200 || r.status > 299) {
		snprintf(err, errlen, "%s %s: status %ld %s", method, path, r.status,
			 kube_status_message(r.body));
		rc = r.status == 409   ? -EEXIST
		     : r.status == 404 ? -ENOENT
				       : kube_status_errno(r.status);
	}
	json_decref(r.body);
	return rc;
}

int kube_status_errno(long status)
{
	if (status == 401 || status == 403)
		return -EACCES;
	return status == 429 || status >= 500 ? -EAGAIN : -EPROTO;
}

const char *kube_status_message(const json_t *body)
{
	const char *m = json_string_value(json_object_get(body, "message"));

	return m ? m : "";
}

/* A streamed answer: 2xx bodies go to the caller as they come, others into err's Status. */
struct stream_ctx {
	CURL *h;
	long status; /* 0 until the first bytes */
	kube_stream_fn on_data;
	void *user;
	int rc; /* on_data's error, which stopped the transfer */
	struct body_buf error_body;
};

static size_t on_stream(char *ptr, size_t size, size_t nmemb, void *user)
{
	struct stream_ctx *s = user;
	size_t n = size * nmemb;

	if (!s->status)
		curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &s->status);
	if (s->status < 200 || s->status > 299)
		return on_body(ptr, size, nmemb, &s->error_body);
	s->rc = s->on_data(ptr, n, s->user);
	return s->rc ? 0 : n;
}

int kube_stream(struct kube_client *c, const char *path, long timeout_ms, kube_stream_fn on_data,
		void *user, long *status, char *err, size_t errlen)
{
	char url[sizeof(c->cfg.server) + 2048], cerr[CURL_ERROR_SIZE] = "";
	struct stream_ctx s = {
		.h = c->curl, .on_data = on_data, .user = user, .error_body = {.max = 64 * 1024}};
	struct curl_slist *hdrs;
	CURLcode rc;
	int ret = 0;

	*status = 0;
	c->stats.requests++;
	if ((size_t)snprintf(url, sizeof(url), "%s%s", c->cfg.server, path) >= sizeof(url)) {
		snprintf(err, errlen, "GET %s: path too long", path);
		return -ENAMETOOLONG;
	}
	hdrs = headers(&c->cfg, NULL, err, errlen);
	if (!hdrs)
		return -EACCES;
	/*
	 * The request's own bound is the watch's; keepalive probes find a peer
	 * that vanished without a word (a node cut off) long before that.
	 */
	/* A watch is not asked for gzip: its events come a few at a time, each flushed. */
	if (!set_options(c, c->curl, url, "GET", NULL, hdrs, on_stream, &s) ||
	    curl_easy_setopt(c->curl, CURLOPT_ACCEPT_ENCODING, NULL) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, timeout_ms) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)0) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_TCP_KEEPIDLE, 30L) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_TCP_KEEPINTVL, 10L) != CURLE_OK ||
	    curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, cerr) != CURLE_OK) {
		curl_slist_free_all(hdrs);
		snprintf(err, errlen, "GET %s: libcurl refused an option", path);
		return -EINVAL;
	}
	rc = curl_easy_perform(c->curl);
	curl_slist_free_all(hdrs);
	if (rc == CURLE_WRITE_ERROR && s.rc) {
		ret = s.rc; /* on_data set err */
	} else if (rc != CURLE_OK) {
		ret = curl_errno(rc, &s.error_body);
		snprintf(err, errlen, "GET %s%s: %s", c->cfg.server, path,
			 cerr[0] ? cerr : curl_easy_strerror(rc));
	} else {
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, status);
		if (*status < 200 || *status > 299) {
			json_t *body = s.error_body.len ? json_loadb(s.error_body.data,
								     s.error_body.len, 0, NULL)
							: NULL;

			snprintf(err, errlen, "status %ld %s", *status, kube_status_message(body));
			json_decref(body);
		}
	}
	free(s.error_body.data);
	if (ret == -EFBIG || ret == -EBADMSG)
		c->stats.parse_errors++;
	else if (ret)
		c->stats.transport_errors++;
	else if (*status >= 400)
		c->stats.http_errors++;
	return ret;
}
