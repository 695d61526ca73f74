// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/informer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/pod_set.h"
#include "log.h"
#include "str.h"

#define SEC 1000000000ull

static int on_event(void *user, enum watch_type type, json_t *object, char *err, size_t errlen);

void informer_init(struct informer *inf, const struct informer_ops *ops, void *ctx,
		   const char *node, double resync_s, size_t max_event)
{
	memset(inf, 0, sizeof(*inf));
	inf->ops = ops;
	inf->ctx = ctx;
	snprintf(inf->node, sizeof(inf->node), "%s", node);
	inf->resync_s = resync_s;
	inf->max_event = max_event;
	inf->page_limit = INFORMER_PAGE_LIMIT;
	inf->must_list = true;
	watch_stream_init(&inf->stream, max_event, on_event, inf);
}

void informer_free(struct informer *inf)
{
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
		if (kube_pod_parse(object, &p) && kube_pod_set_remove(&inf->pods, p.uid))
			inf->ops->changed(inf->ctx, &inf->pods);
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
		if (kube_pod_set_put(&inf->pods, &p)) {
			snprintf(err, errlen, "out of memory for a pod");
			return -ENOMEM;
		}
		inf->ops->changed(inf->ctx, &inf->pods);
		inf->ops->current(inf->ctx);
		return 0;
	}
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
	for (size_t i = 0; i < page.n; i++) {
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
 * Lists every page. 0 with the set replaced (*changed: it differs from the
 * old one), or: -ESTALE (a 410: the version or the continue token is gone),
 * -EFBIG (a page over the cap), another -errno.
 */
static int list_all(struct informer *inf, bool *changed, char *err, size_t errlen)
{
	char path[1024], cont[512] = "", esc[sizeof(path) / 2], rv[sizeof(inf->rv)] = "";
	struct kube_pod_list l = {0};
	int rc;

	do {
		struct kube_response r;
		int n = snprintf(path, sizeof(path),
				 "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s&limit=%zu",
				 inf->node, inf->page_limit);

		/* A continued page carries its version in the token; the API refuses both. */
		if (cont[0]) {
			if (escape(esc, sizeof(esc), cont)) {
				snprintf(err, errlen, "a continue token too long to send");
				rc = -ENAMETOOLONG;
				break;
			}
			snprintf(path + n, sizeof(path) - (size_t)n, "&continue=%s", esc);
		} else if (!inf->rv_gone) {
			/* "0": any version, the watch cache's; the last seen: not older than it */
			snprintf(path + n, sizeof(path) - (size_t)n, "&resourceVersion=%s",
				 inf->rv[0] ? inf->rv : "0");
		}
		inf->st.pages++;
		rc = inf->ops->list(inf->ctx, path, &r, err, errlen);
		if (!rc && r.status != 200) {
			snprintf(err, errlen, "list pods on %s: status %ld %s", inf->node, r.status,
				 kube_status_message(r.body));
			rc = r.status == 410 ? -ESTALE : kube_status_errno(r.status);
		} else if (!rc) {
			rc = take_page(inf, r.body, &l, rv, sizeof(rv), cont, sizeof(cont), err,
				       errlen);
		}
		json_decref(r.body);
		inf->ops->result(inf->ctx, KUBE_CALL_LIST_PODS, rc, err);
	} while (!rc && cont[0]);
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

static uint64_t do_list(struct informer *inf)
{
	char err[512] = "", why[600];
	bool changed = true;
	int rc = list_all(inf, &changed, err, sizeof(err));

	if (rc == -ESTALE && !inf->rv_gone) {
		/* The version (or a page's continue token) was compacted: from the newest, now. */
		inf->st.expired++;
		inf->rv_gone = true;
		log_info("kube: %s: listing again from the newest version", err);
		return 0;
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
	inf->rv_gone = false;
	inf->backoff_ns = 0;
	inf->listed_at = inf->ops->now(inf->ctx);
	set_degraded(inf, NULL);
	/* the first list always: the loop learns the set is known (maybe empty) */
	if (changed || inf->st.lists == 1)
		inf->ops->changed(inf->ctx, &inf->pods);
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
		inf->st.expired++;
		inf->must_list = true;
		inf->rv_gone = true;
		log_info("kube: pod watch from version %s: 410 Gone (%s); listing again", inf->rv,
			 err);
		return 0;
	case -EFBIG:
	case -EBADMSG:
	case -EPROTO:
	case -ENOMEM:
		/* the stream cannot be trusted past this point: list from the newest */
		if (rc == -EFBIG)
			inf->st.oversize++;
		inf->st.broken++;
		inf->must_list = true;
		inf->rv_gone = true;
		log_err("kube: pod watch broken: %s; listing again", err);
		return fail_wait(inf);
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
