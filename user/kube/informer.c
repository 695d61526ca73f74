// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/informer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json_head.h"
#include "kube/pod_set.h"
#include "log.h"
#include "str.h"

#define SEC 1000000000ull

static int on_event(void *user, enum watch_type type, json_t *object, char *err, size_t errlen);
static int on_oversize(void *user, const char *head, size_t n, size_t total, char *err,
		       size_t errlen);

void informer_init(struct informer *inf, const struct informer_ops *ops, void *ctx,
		   const char *node, double resync_s, size_t max_event)
{
	memset(inf, 0, sizeof(*inf));
	inf->ops = ops;
	inf->ctx = ctx;
	snprintf(inf->node, sizeof(inf->node), "%s", node);
	inf->resync_s = resync_s;
	inf->max_event = max_event;
	inf->must_list = true;
	watch_stream_init(&inf->stream, max_event, on_event, inf);
	watch_stream_on_oversize(&inf->stream, on_oversize);
}

/* The size of "k\0k\0\0", its last NUL included. */
static size_t keys_size(const char *keys)
{
	const char *k = keys;

	while (*k)
		k += strlen(k) + 1;
	return (size_t)(k - keys) + 1;
}

int informer_set_label_keys(struct informer *inf, const char *keys)
{
	char *copy = NULL;

	if (keys && inf->label_keys && keys_size(keys) == keys_size(inf->label_keys) &&
	    !memcmp(keys, inf->label_keys, keys_size(keys)))
		return 0;
	if (!keys && !inf->label_keys)
		return 0;
	if (keys && !(copy = malloc(keys_size(keys))))
		return -ENOMEM;
	if (keys)
		memcpy(copy, keys, keys_size(keys));
	free(inf->label_keys);
	inf->label_keys = copy;
	if (inf->st.lists)
		inf->must_list = inf->relabel = true;
	return 0;
}

void informer_free(struct informer *inf)
{
	free(inf->label_keys);
	inf->label_keys = NULL;
	kube_pod_list_free(&inf->pods);
	watch_stream_free(&inf->stream);
}

/*
 * Percent-encodes a continue token (base64: '+', '/', '=') for the query.
 * By hand rather than curl_easy_escape() so the informer needs no libcurl
 * (its tests run without one); RFC 3986's unreserved set passes as is.
 */
static int escape(char *dst, size_t size, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t at = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || strchr("-._~", c);

		if (at + (plain ? 1 : 3) >= size)
			return -ENAMETOOLONG;
		if (plain) {
			dst[at++] = (char)c;
		} else {
			dst[at++] = '%';
			dst[at++] = hex[c >> 4];
			dst[at++] = hex[c & 15];
		}
	}
	dst[at] = '\0';
	return 0;
}

/* The wait after a failure: doubling from 1 s to 30 s, then a random part of it (0.5-1x). */
static uint64_t fail_wait(struct informer *inf)
{
	uint64_t d = inf->backoff_ns ? 2 * inf->backoff_ns : INFORMER_BACKOFF_MIN;

	if (d > INFORMER_BACKOFF_MAX)
		d = INFORMER_BACKOFF_MAX;
	inf->backoff_ns = d;
	/* jitter: a fleet that lost the API together does not come back together */
	return d / 2 + (uint64_t)((double)(d / 2) * inf->ops->random(inf->ctx));
}

static void set_degraded(struct informer *inf, const char *why)
{
	if (!why && !inf->degraded)
		return;
	inf->degraded = why != NULL;
	inf->ops->degraded(inf->ctx, why);
}

/* Takes the version an object carries (metadata.resourceVersion), when it has one. */
static void note_version(struct informer *inf, const json_t *obj)
{
	const char *rv = json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));

	if (rv && rv[0] && strlen(rv) < sizeof(inf->rv))
		snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
}

/* A pod gone from the set (deleted, terminated, or skipped): the loop hears of it. */
static void forget(struct informer *inf, const char *uid)
{
	if (kube_pod_set_remove(&inf->pods, uid))
		inf->ops->changed(inf->ctx, &inf->pods);
}

/* Applies one watch event to the set; an ERROR with 410 ends the watch with -ESTALE. */
static int on_event(void *user, enum watch_type type, json_t *object, char *err, size_t errlen)
{
	struct informer *inf = user;
	struct kube_pod p;
	long code;

	switch (type) {
	case WATCH_ERROR:
		code = (long)json_integer_value(json_object_get(object, "code"));
		snprintf(err, errlen, "watch ERROR %ld: %s", code, kube_status_message(object));
		return code == 410 ? -ESTALE : -EPROTO;
	case WATCH_BOOKMARK:
		inf->st.bookmarks++;
		note_version(inf, object);
		inf->ops->current(inf->ctx);
		return 0;
	case WATCH_DELETED:
		inf->st.events++;
		note_version(inf, object);
		if (kube_pod_parse(object, &p))
			forget(inf, p.uid);
		kube_pod_free(&p);
		inf->ops->current(inf->ctx);
		return 0;
	case WATCH_ADDED:
	case WATCH_MODIFIED:
		inf->st.events++;
		note_version(inf, object);
		if (!kube_pod_parse(object, &p)) {
			kube_pod_free(&p);
			inf->st.skipped++;
			log_warn("kube: a %s pod in the watch is not usable: skipped",
				 watch_type_name(type));
			return 0;
		}
		kube_pod_keep_labels(&p, inf->label_keys);
		if (p.terminated) { /* its containers are gone: nothing left to manage */
			inf->st.terminated++;
			forget(inf, p.uid);
			kube_pod_free(&p);
		} else if (kube_pod_set_put(&inf->pods, &p)) {
			snprintf(err, errlen, "out of memory for a pod");
			return -ENOMEM;
		} else {
			inf->ops->changed(inf->ctx, &inf->pods);
		}
		inf->ops->current(inf->ctx);
		return 0;
	}
	return 0;
}

/* What an oversized object's head names: the pod's uid, namespace and name, its version. */
struct head_pod {
	char uid[40], ns[64], name[254], rv[128];
};

/* Reads them from the first "metadata":{ of head: false without a uid and version. */
static bool head_pod(const char *head, size_t n, struct head_pod *hp)
{
	static const char meta[] = "\"metadata\":{";

	if (!json_head_string(head, n, meta, "namespace", hp->ns, sizeof(hp->ns)))
		snprintf(hp->ns, sizeof(hp->ns), "?");
	if (!json_head_string(head, n, meta, "name", hp->name, sizeof(hp->name)))
		snprintf(hp->name, sizeof(hp->name), "?");
	return json_head_string(head, n, meta, "uid", hp->uid, sizeof(hp->uid)) &&
	       json_head_string(head, n, meta, "resourceVersion", hp->rv, sizeof(hp->rv));
}

/*
 * A watch event over the per-pod bound: the pod it names is forgotten (its
 * new state is unknown) and the watch goes on from its version. Without a
 * readable uid the stream cannot be followed: -EFBIG, and a relist.
 */
static int on_oversize(void *user, const char *head, size_t n, size_t total, char *err,
		       size_t errlen)
{
	struct informer *inf = user;
	char type[16] = "?";
	struct head_pod hp;

	inf->st.oversize++;
	json_head_string(head, n, NULL, "type", type, sizeof(type));
	if (!head_pod(head, n, &hp)) {
		snprintf(err, errlen,
			 "a watch event of %zu bytes, over the %zu-byte bound, names no pod", total,
			 inf->max_event);
		return -EFBIG;
	}
	inf->st.pods_oversize++;
	log_warn("kube: pod %s/%s (uid %s): a %s event of %zu bytes, over the %zu-byte bound for "
		 "one pod: skipped, the pod forgotten until it fits",
		 hp.ns, hp.name, hp.uid, type, total, inf->max_event);
	snprintf(inf->rv, sizeof(inf->rv), "%s", hp.rv);
	forget(inf, hp.uid);
	inf->ops->current(inf->ctx);
	return 0;
}

/* Appends a page's pods to l; the page's continue token into cont ("" at the end). */
static int take_page(struct informer *inf, const json_t *doc, struct kube_pod_list *l, char *rv,
		     size_t rv_size, char *cont, size_t cont_size, char *err, size_t errlen)
{
	const json_t *meta = json_object_get(doc, "metadata");
	const char *v = json_string_value(json_object_get(meta, "resourceVersion"));
	const char *c = json_string_value(json_object_get(meta, "continue"));
	struct kube_pod_list page;
	int rc = kube_pods_parse(doc, &page, err, errlen);

	if (rc)
		return rc;
	if (!v || !v[0] || str_copy(rv, rv_size, v) || str_copy(cont, cont_size, c ? c : "")) {
		kube_pod_list_free(&page);
		snprintf(err, errlen, "a pod list without a usable resourceVersion or continue");
		return -EBADMSG;
	}
	inf->st.skipped += page.skipped;
	inf->st.pods_oversize += page.oversize;
	inf->st.terminated += page.terminated;
	for (size_t i = 0; i < page.n; i++) {
		kube_pod_keep_labels(&page.pods[i], inf->label_keys);
		if (rc)
			kube_pod_free(&page.pods[i]);
		else if (kube_pod_set_put(l, &page.pods[i])) /* frees the pod when it fails */
			rc = -ENOMEM;
	}
	free(page.pods);
	if (rc)
		snprintf(err, errlen, "out of memory for the pod list");
	return rc;
}

/*
 * A page of one pod over the cap: that pod is skipped, read from the
 * page's head: the list's version and continue token (before "items"), the
 * pod's names. -EFBIG when the head does not hold them (the caller's err
 * already says the page was over the cap).
 */
static int skip_page(struct informer *inf, const struct kube_response *r, char *rv, size_t rv_size,
		     char *cont, size_t cont_size)
{
	const char *items = memmem(r->head, r->head_len, "\"items\":[", 9);
	size_t meta_len = items ? (size_t)(items - r->head) : 0;
	struct head_pod hp;

	if (!items || !json_head_string(r->head, meta_len, NULL, "resourceVersion", rv, rv_size) ||
	    !head_pod(items, r->head_len - meta_len, &hp))
		return -EFBIG; /* err still says why: over the cap */
	if (!json_head_string(r->head, meta_len, NULL, "continue", cont, cont_size))
		cont[0] = '\0'; /* the last page */
	inf->st.pods_oversize++;
	log_warn("kube: pod %s/%s (uid %s) alone is over the response cap: skipped (the others "
		 "are kept)",
		 hp.ns, hp.name, hp.uid);
	return 0;
}

/* The same pods at the same versions: a relist that changed nothing. */
static bool same_versions(const struct kube_pod_list *a, const struct kube_pod_list *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->pods[i].uid, b->pods[i].uid) || !a->pods[i].rv[0] ||
		    strcmp(a->pods[i].rv, b->pods[i].rv))
			return false;
	return true;
}

/*
 * The version is gone: a 410, or a 504 whose cause is ResourceVersionTooLarge
 * (a watch cache behind the version asked for). client-go's reflector takes
 * both as "read the newest".
 */
static bool version_unavailable(long status, const json_t *body)
{
	const json_t *causes = json_object_get(json_object_get(body, "details"), "causes"), *c;
	size_t i;

	if (status == 410)
		return true;
	json_array_foreach(causes, i, c)
	{
		const char *why = json_string_value(json_object_get(c, "reason"));

		if (status == 504 && why && !strcmp(why, "ResourceVersionTooLarge"))
			return true;
	}
	return false;
}

/*
 * One list request: a page of limit pods (0: all of them at once) from
 * version from ("0": any, the watch cache's; another: not older than it;
 * "": the newest, a quorum read) or continuing cont.
 */
static int list_page(struct informer *inf, const char *from, size_t limit, const char *cont,
		     struct kube_response *r, char *err, size_t errlen)
{
	char path[1024], esc[512];
	int n = snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s",
			 inf->node);
	int rc;

	if (limit)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "&limit=%zu", limit);
	/* A continued page carries its version in the token; the API refuses both. */
	if (cont[0]) {
		if (escape(esc, sizeof(esc), cont)) {
			snprintf(err, errlen, "a continue token too long to send");
			return -ENAMETOOLONG;
		}
		snprintf(path + n, sizeof(path) - (size_t)n, "&continue=%s", esc);
	} else if (from[0]) {
		snprintf(path + n, sizeof(path) - (size_t)n, "&resourceVersion=%s", from);
	}
	inf->st.pages++;
	/* what only etcd serves before 1.31: no version, a limit with one, a continue token */
	if (cont[0] || !from[0] || (limit && strcmp(from, "0")))
		inf->st.etcd_lists++;
	rc = inf->ops->list(inf->ctx, path, r, err, errlen);
	if (!rc && r->status != 200) {
		snprintf(err, errlen, "list pods on %s: status %ld %s", inf->node, r->status,
			 kube_status_message(r->body));
		rc = version_unavailable(r->status, r->body) ? -ESTALE
							     : kube_status_errno(r->status);
	}
	return rc;
}

/*
 * Lists the node's pods: whole, from the watch cache. Only when that answer
 * is over the response cap does it page, halving the page until one fits,
 * down to one pod; a single pod over the cap is skipped. 0 with the set
 * replaced (*changed: it differs from the old one), or: -ESTALE (a 410: the
 * version or the continue token is gone), -EFBIG, another -errno.
 */
static int list_all(struct informer *inf, bool *changed, char *err, size_t errlen)
{
	char cont[512] = "", rv[sizeof(inf->rv)] = "", from[sizeof(inf->rv)];
	struct kube_pod_list l = {0};
	size_t limit = 0;
	bool more = true;
	int rc = 0;

	/* "0" first; then the last version seen (not older than it); none after that was gone */
	snprintf(from, sizeof(from), "%s", inf->quorum ? "" : inf->rv[0] ? inf->rv : "0");
	while (!rc && more) {
		struct kube_response r = {.head_len = 0};

		rc = list_page(inf, from, limit, cont, &r, err, errlen);
		if (!rc)
			rc = take_page(inf, r.body, &l, rv, sizeof(rv), cont, sizeof(cont), err,
				       errlen);
		else if (rc == -EFBIG && limit == 1)
			rc = skip_page(inf, &r, rv, sizeof(rv), cont, sizeof(cont));
		json_decref(r.body);
		inf->ops->result(inf->ctx, KUBE_CALL_LIST_PODS, rc, err);
		if (rc == -EFBIG && limit != 1) {
			/* The same page again, smaller. The watch cache ignores a limit with
			 * "0": a page needs a version it would serve whole, or none. */
			inf->st.oversize++;
			limit = limit ? limit / 2 : INFORMER_PAGE_LIMIT;
			if (!strcmp(from, "0"))
				from[0] = '\0';
			log_warn("kube: %s; listing again in pages of %zu pods", err, limit);
			rc = 0;
			continue;
		}
		more = cont[0] != '\0';
	}
	if (rc) {
		kube_pod_list_free(&l);
		return rc;
	}
	*changed = !same_versions(&inf->pods, &l);
	kube_pod_list_free(&inf->pods);
	inf->pods = l;
	snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
	return 0;
}

/*
 * The wait before a relist after a watch ended (a 410, an unreadable
 * stream): the failure backoff plus up to INFORMER_RELIST_SPREAD_NS more,
 * so that a fleet whose watches a compaction ended together does not list
 * together.
 */
static uint64_t relist_wait(struct informer *inf)
{
	uint64_t w = fail_wait(inf);

	return w + (uint64_t)((double)INFORMER_RELIST_SPREAD_NS * inf->ops->random(inf->ctx));
}

static uint64_t do_list(struct informer *inf)
{
	char err[512] = "", why[600];
	bool changed = true;
	int rc = list_all(inf, &changed, err, sizeof(err));

	if (rc == -ESTALE) {
		/* Even the last version (or a page's continue token) is gone: the newest. */
		inf->st.expired++;
		if (!inf->quorum)
			log_info("kube: %s: listing again from the newest version", err);
		inf->quorum = true;
		return fail_wait(inf);
	}
	if (rc == -EFBIG) {
		inf->st.oversize++;
		snprintf(why, sizeof(why), "pod list over the size cap: %s", err);
		log_err("kube: %s; the pods it holds stay unknown (unmanaged if BE), retrying",
			why);
		set_degraded(inf, why);
	}
	if (rc)
		return fail_wait(inf);
	inf->st.lists++;
	inf->must_list = false;
	inf->quorum = false;
	inf->backoff_ns = 0;
	inf->listed_at = inf->ops->now(inf->ctx);
	set_degraded(inf, NULL);
	/* the first list always: the loop learns the set is known (maybe empty); new label
	 * keys change the pods it holds, not their versions */
	if (changed || inf->st.lists == 1 || inf->relabel)
		inf->ops->changed(inf->ctx, &inf->pods);
	inf->relabel = false;
	inf->ops->current(inf->ctx);
	return 0;
}

/* The watch's server timeout: 5 to 10 minutes at random, cut to the next resync. */
static long watch_timeout(struct informer *inf)
{
	long t = INFORMER_WATCH_MIN_S + (long)(INFORMER_WATCH_MIN_S * inf->ops->random(inf->ctx));
	uint64_t now = inf->ops->now(inf->ctx), due;

	if (inf->resync_s > 0) {
		due = inf->listed_at + (uint64_t)(inf->resync_s * SEC);
		if (due <= now)
			return 0;
		if ((due - now + SEC - 1) / SEC < (uint64_t)t)
			t = (long)((due - now + SEC - 1) / SEC);
	}
	return t;
}

static uint64_t do_watch(struct informer *inf)
{
	char path[1024], err[512] = "";
	long timeout = watch_timeout(inf), status = 0;
	unsigned long events;
	int rc;

	if (!timeout) { /* the periodic relist is due */
		inf->must_list = true;
		return 0;
	}
	snprintf(path, sizeof(path),
		 "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s&resourceVersion=%s"
		 "&allowWatchBookmarks=true&timeoutSeconds=%ld&watch=true",
		 inf->node, inf->rv, timeout);
	inf->st.watches++;
	events = inf->stream.events;
	watch_stream_reset(&inf->stream);
	rc = inf->ops->watch(inf->ctx, path, timeout, &inf->stream, &status, err, sizeof(err));
	if (!rc && status == 410)
		rc = -ESTALE;
	else if (!rc && status != 200)
		rc = kube_status_errno(status);
	if (!rc && watch_stream_pending(&inf->stream)) {
		snprintf(err, sizeof(err), "the watch ended inside an event");
		rc = -EIO;
	}
	/* A 410 is the protocol working, not a failed call. */
	inf->ops->result(inf->ctx, KUBE_CALL_WATCH_PODS, rc == -ESTALE ? 0 : rc, err);
	switch (rc) {
	case 0: /* the server's timeout: watch on from the last version */
		inf->backoff_ns = 0;
		inf->ops->current(inf->ctx);
		return 0;
	case -ESTALE:
		/* As client-go: a list not older than the last version, from the watch cache */
		inf->st.expired++;
		inf->must_list = true;
		log_info("kube: pod watch from version %s: 410 Gone (%s); listing again", inf->rv,
			 err);
		return relist_wait(inf);
	case -EFBIG:
	case -EBADMSG:
	case -EPROTO:
	case -ENOMEM:
		/* the stream cannot be trusted past this point: list from the last version */
		inf->st.broken++;
		inf->must_list = true;
		log_err("kube: pod watch broken: %s; listing again", err);
		return relist_wait(inf);
	default:
		/* No answer, a cut, or an error status: the same watch after a wait. */
		inf->st.broken++;
		if (inf->stream.events > events)
			inf->backoff_ns = 0; /* it worked for a while: start the backoff over */
		return fail_wait(inf);
	}
}

uint64_t informer_step(struct informer *inf)
{
	return inf->must_list ? do_list(inf) : do_watch(inf);
}
