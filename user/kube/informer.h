/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pods on this node kept current the way client-go's reflector keeps
 * them, and as cheaply for the API server as that allows
 * (docs/kubernetes.md, "What each agent costs the API server"):
 *
 * - The first LIST asks for resourceVersion "0": any version, which the API
 *   server answers from its watch cache, never from etcd. No limit: the
 *   cache ignores one with "0", and the node's pods are one answer.
 * - Then a WATCH from the list's version, with bookmarks and a server
 *   timeout of 5 to 10 minutes at random (so a fleet's watches do not end
 *   together); the next watch resumes from the last version seen (an
 *   event's or a bookmark's). A cut watch resumes so, after a backoff.
 * - A 410 Gone (an HTTP status, or an ERROR event holding one), or a stream
 *   that cannot be read, ends the watch: after a jittered wait, LIST again
 *   with the last version seen ("not older than": the watch cache again).
 *   Only when that LIST is itself 410 (or a 504 ResourceVersionTooLarge)
 *   does the next one read the newest version, a quorum read.
 * - A LIST answer over the client's size cap is read again in pages
 *   (limit 500, halved at each overflow down to 1: such pages are what only
 *   etcd serves before Kubernetes 1.31, counted in etcd_lists); a single pod
 *   over the cap is skipped, named from the page's first bytes. A watch
 *   event over max_event (one pod's bound) is skipped the same way, the pod
 *   forgotten, and the watch goes on. Terminated pods are not kept.
 * - Every failure backs off, doubling from 1 s to 30 s with jitter. When no
 *   list fits even so, the pod data is degraded (ops->degraded) until one does.
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

#define INFORMER_PAGE_LIMIT  500 /* the first page after a whole list overflowed */
#define INFORMER_BACKOFF_MIN 1000000000ull
#define INFORMER_BACKOFF_MAX 30000000000ull
/* A relist after a watch ended waits the backoff and up to this much more, at random. */
#define INFORMER_RELIST_SPREAD_NS 2000000000ull
#define INFORMER_WATCH_MIN_S	  300 /* client-go's minimum watch timeout; up to twice that */

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
	uint64_t lists;		/* complete lists (each one or more pages) */
	uint64_t pages;		/* list requests */
	uint64_t etcd_lists;	/* of those, what only etcd serves before 1.31 (quorum, paged) */
	uint64_t watches;	/* watch requests */
	uint64_t expired;	/* 410s: relisted */
	uint64_t broken;	/* watches cut, refused or unreadable */
	uint64_t oversize;	/* list pages or events over the cap */
	uint64_t pods_oversize; /* pods skipped for their size (each logged) */
	uint64_t terminated;	/* Succeeded or Failed pods seen, not kept */
	uint64_t events;	/* ADDED, MODIFIED, DELETED applied */
	uint64_t bookmarks;	/* BOOKMARKs */
	uint64_t skipped;	/* pods in events or lists that were not usable */
};

struct informer {
	const struct informer_ops *ops;
	void *ctx;
	char node[254];
	double resync_s;	   /* > 0: a full relist at least this often; 0: none */
	size_t max_event;	   /* bytes of one event; lists are bounded by the transport */
	struct kube_pod_list pods; /* sorted by uid */
	char rv[128];		   /* the last resourceVersion seen; "" before the first list */
	bool must_list;		   /* the next step lists */
	bool quorum;		   /* a LIST from rv was 410: the next reads the newest */
	bool degraded;		   /* the last list was over the cap */
	bool relabel;		   /* new label keys: the next list changes the set */
	uint64_t backoff_ns;	   /* the last failure's wait; 0 after a success */
	uint64_t listed_at;
	struct watch_stream stream;
	struct informer_stats st;
	char *label_keys; /* the labels kept ("k\0k\0\0"); NULL: all */
};

/* Set up for node (a valid name), resync_s and the per-pod event bound; the first step lists. */
void informer_init(struct informer *inf, const struct informer_ops *ops, void *ctx,
		   const char *node, double resync_s, size_t max_event);

/*
 * The label keys to keep (kube_pod_keep_labels(); copied; NULL: all). After
 * the first list a change relists (from the watch cache) so that pods carry
 * the labels newly asked for. 0 or -ENOMEM (the old keys stay).
 */
int informer_set_label_keys(struct informer *inf, const char *keys);

/* One list (all its pages) or one watch; returns how long to wait before the next, ns. */
uint64_t informer_step(struct informer *inf);

void informer_free(struct informer *inf);

#endif
