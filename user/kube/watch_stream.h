/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A Kubernetes watch response, parsed as it arrives: the API server writes
 * one JSON object a line, {"type": ..., "object": ...}, over a chunked
 * response that stays open for minutes. Bytes are fed as libcurl hands them
 * over (a line may span many writes, a write may hold many lines); each
 * complete line is one event for the callback. One event may hold at most
 * max_event bytes, since pod owners control annotation sizes: past that the
 * buffer does not grow. A longer event goes to the oversize callback, when
 * there is one, with its first bytes (kube/json_head.h), and the stream goes
 * on after it; without one it breaks the stream (-EFBIG).
 */
#ifndef QOSLET_KUBE_WATCH_STREAM_H
#define QOSLET_KUBE_WATCH_STREAM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum watch_type {
	WATCH_ADDED = 0,
	WATCH_MODIFIED,
	WATCH_DELETED,
	WATCH_BOOKMARK, /* only metadata.resourceVersion is meaningful */
	WATCH_ERROR,	/* object is a Status; code 410: the version is gone */
};

/* "ADDED", "MODIFIED", ... */
const char *watch_type_name(enum watch_type t);

/*
 * One event: object is borrowed for the call. 0 goes on; a negative errno
 * stops the stream and is what watch_stream_feed() returns (err set by the
 * callback).
 */
typedef int (*watch_event_fn)(void *user, enum watch_type type, json_t *object, char *err,
			      size_t errlen);

/*
 * An event over max_event, skipped: its first head_len bytes (at most
 * JSON_HEAD_MAX) and its whole length. 0 goes on; a negative errno stops
 * the stream as the event callback's does.
 */
typedef int (*watch_oversize_fn)(void *user, const char *head, size_t head_len, size_t total,
				 char *err, size_t errlen);

struct watch_stream {
	char *buf; /* the line not yet complete; while skipping, its head */
	size_t len, cap;
	size_t max_event;
	watch_event_fn on_event;
	watch_oversize_fn on_oversize; /* NULL: an oversized event is an error */
	void *user;
	bool skipping;	      /* inside an event over max_event */
	size_t skip_total;    /* ... of this many bytes so far */
	unsigned long events; /* complete events handed over (skipped ones too) */
};

void watch_stream_init(struct watch_stream *s, size_t max_event, watch_event_fn on_event,
		       void *user);

/* Oversized events go to fn (with the stream's user) instead of ending the stream. */
void watch_stream_on_oversize(struct watch_stream *s, watch_oversize_fn fn);

/*
 * Takes n more bytes. 0, or a negative errno with err set: -EFBIG (an event
 * over max_event), -EBADMSG (a line that is not a watch event), -ENOMEM, or
 * the callback's. After an error the stream is unusable until reset.
 */
int watch_stream_feed(struct watch_stream *s, const char *data, size_t n, char *err, size_t errlen);

/* Bytes of an event begun but not ended (a stream cut mid-event has some). */
size_t watch_stream_pending(const struct watch_stream *s);

/* Forgets a partial event, for the next watch. */
void watch_stream_reset(struct watch_stream *s);

void watch_stream_free(struct watch_stream *s);

#endif
