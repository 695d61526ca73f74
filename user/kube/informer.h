/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pods on this node kept current the way client-go's reflector keeps
 * them: one LIST (paginated with limit/continue; resourceVersion "0" at
 * start, so an API server may answer from its watch cache), then a WATCH
 * from the list's resourceVersion with bookmarks and a server timeout of 5
 * to 10 minutes at random (so a fleet's watches do not end together); the
 * next watch resumes from the last version seen (an event's or a
 * bookmark's). A 410 Gone (an HTTP status, or an ERROR event holding one)
 * means that version was compacted away: LIST again, without a
 * resourceVersion (the most recent, never older than what was seen). Every
 * failure backs off, doubling from 1 s to 30 s with jitter. A list page or
 * an event over the size cap breaks the watch and relists; when the list
 * itself is over the cap the pod data is degraded (ops->degraded) until a
 * list fits.
 *
 * The transport is the caller's (struct informer_ops), so the state
 * machine runs in unit tests without a network; informer_step() does one
 * list or one watch and says how long to wait before the next.
 */
#ifndef QOSLET_KUBE_INFORMER_H
#define QOSLET_KUBE_INFORMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/link.h"
#include "kube/pods.h"
#include "kube/watch_stream.h"

#define INFORMER_PAGE_LIMIT  500
#define INFORMER_BACKOFF_MIN 1000000000ull
#define INFORMER_BACKOFF_MAX 30000000000ull
#define INFORMER_WATCH_MIN_S 300 /* client-go's minimum watch timeout; up to twice that */

struct informer_ops {
	/* One GET of a list page: 0 with resp set (body NULL when empty), or -errno with err. */
	int (*list)(void *ctx, const char *path, struct kube_response *resp, char *err,
		    size_t errlen);
	/*
	 * One watch: the body fed to s until the server ends it (within about
	 * timeout_s). 0 when the server answered (*status: 200 streamed, else
	 * err holds its message), or -errno with err: no answer or a broken
	 * connection, or s's error (-EFBIG, -EBADMSG, -ESTALE for an ERROR 410).
	 */
	int (*watch)(void *ctx, const char *path, long timeout_s, struct watch_stream *s,
		     long *status, char *err, size_t errlen);
	/* The pod set changed; called on the informer's thread, pods borrowed. */
	void (*changed)(void *ctx, const struct kube_pod_list *pods);
	/* The set is known current (a list, an event, a bookmark, a watch's clean end). */
	void (*current)(void *ctx);
	/* Each call's outcome: call is KUBE_CALL_LIST_PODS or KUBE_CALL_WATCH_PODS. */
	void (*result)(void *ctx, enum kube_call call, int rc, const char *err);
	/* Pod data over the size cap: why; NULL when a list fitted again. */
	void (*degraded)(void *ctx, const char *why);
	double (*random)(void *ctx); /* [0, 1) */
	uint64_t (*now)(void *ctx);  /* CLOCK_MONOTONIC, ns */
};

struct informer_stats {
	uint64_t lists;	    /* complete lists (each one or more pages) */
	uint64_t pages;	    /* list requests */
	uint64_t watches;   /* watch requests */
	uint64_t expired;   /* 410s: relisted */
	uint64_t broken;    /* watches cut, refused or unreadable */
	uint64_t oversize;  /* list pages or events over the cap */
	uint64_t events;    /* ADDED, MODIFIED, DELETED applied */
	uint64_t bookmarks; /* BOOKMARKs */
	uint64_t skipped;   /* pods in events or lists that were not usable */
};

struct informer {
	const struct informer_ops *ops;
	void *ctx;
	char node[254];
	double resync_s;  /* > 0: a full relist at least this often; 0: none */
	size_t max_event; /* bytes of one event; lists are bounded by the transport */
	size_t page_limit;
	struct kube_pod_list pods; /* sorted by uid */
	char rv[128];		   /* the last resourceVersion seen; "" before the first list */
	bool must_list;		   /* the next step lists */
	bool rv_gone;		   /* a 410: the next list asks for the most recent */
	bool degraded;		   /* the last list was over the cap */
	uint64_t backoff_ns;	   /* the last failure's wait; 0 after a success */
	uint64_t listed_at;
	struct watch_stream stream;
	struct informer_stats st;
};

/* Set up for node (a valid name), resync_s and the event cap; the first step lists. */
void informer_init(struct informer *inf, const struct informer_ops *ops, void *ctx,
		   const char *node, double resync_s, size_t max_event);

/* One list (all its pages) or one watch; returns how long to wait before the next, ns. */
uint64_t informer_step(struct informer *inf);

void informer_free(struct informer *inf);

#endif
