/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A Kubernetes watch response, parsed as it arrives: the API server writes
 * one JSON object a line, {"type": ..., "object": ...}, over a chunked
 * response that stays open for minutes. Bytes are fed as libcurl hands them
 * over (a line may span many writes, a write may hold many lines); each
 * complete line is one event for the callback. One event may hold at most
 * max_event bytes: a longer one breaks the stream (-EFBIG) rather than
 * growing the buffer without bound, since pod owners control annotation
 * sizes.
 */
#ifndef QOSLET_KUBE_WATCH_STREAM_H
#define QOSLET_KUBE_WATCH_STREAM_H

#include <jansson.h>
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

struct watch_stream {
	char *buf; /* the line not yet complete */
	size_t len, cap;
	size_t max_event;
	watch_event_fn on_event;
	void *user;
	unsigned long events; /* complete events handed over */
};

void watch_stream_init(struct watch_stream *s, size_t max_event, watch_event_fn on_event,
		       void *user);

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
