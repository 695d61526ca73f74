// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/watch_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/json_head.h"

static const char *const type_names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"};

const char *watch_type_name(enum watch_type t)
{
	return (size_t)t < sizeof(type_names) / sizeof(type_names[0]) ? type_names[t] : "?";
}

void watch_stream_init(struct watch_stream *s, size_t max_event, watch_event_fn on_event,
		       void *user)
{
	memset(s, 0, sizeof(*s));
	s->max_event = max_event;
	s->on_event = on_event;
	s->user = user;
}

/* One complete line (without its newline). Blank lines (keep-alives) are skipped. */
static int one_line(struct watch_stream *s, const char *line, size_t n, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *doc, *obj;
	const char *type;
	size_t t;
	int rc;

	while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
		n--;
	if (!n)
		return 0;
	doc = json_loadb(line, n, 0, &jerr);
	if (!doc) {
		snprintf(err, errlen, "watch event is not JSON: %s", jerr.text);
		return -EBADMSG;
	}
	type = json_string_value(json_object_get(doc, "type"));
	obj = json_object_get(doc, "object");
	for (t = 0; type && t < sizeof(type_names) / sizeof(type_names[0]); t++)
		if (!strcmp(type, type_names[t]))
			break;
	if (!type || t == sizeof(type_names) / sizeof(type_names[0]) || !json_is_object(obj)) {
		snprintf(err, errlen, "not a watch event (%s)",
			 !type			? "no type"
			 : !json_is_object(obj) ? "no object"
						: "unknown type");
		json_decref(doc);
		return -EBADMSG;
	}
	s->events++;
	rc = s->on_event(s->user, (enum watch_type)t, obj, err, errlen);
	json_decref(doc);
	return rc;
}

/* Room for need bytes in the buffer. */
static int reserve(struct watch_stream *s, size_t need, char *err, size_t errlen)
{
	size_t cap;
	char *p;

	if (need <= s->cap)
		return 0;
	cap = s->cap ? s->cap : 4096;
	while (cap < need)
		cap *= 2;
	p = realloc(s->buf, cap);
	if (!p) {
		snprintf(err, errlen, "out of memory for a watch event");
		return -ENOMEM;
	}
	s->buf = p;
	s->cap = cap;
	return 0;
}

/* Appends to the partial line (the caller checked it stays within max_event). */
static int keep(struct watch_stream *s, const char *data, size_t n, char *err, size_t errlen)
{
	int rc = reserve(s, s->len + n, err, errlen);

	if (rc)
		return rc;
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	return 0;
}

/* An event grew past max_event with n more bytes: keep its head, drop the rest as it comes. */
static int start_skip(struct watch_stream *s, const char *data, size_t n, char *err, size_t errlen)
{
	size_t room = s->len < JSON_HEAD_MAX ? JSON_HEAD_MAX - s->len : 0;
	int rc;

	if (!s->on_oversize) {
		snprintf(err, errlen, "a watch event is larger than %zu bytes", s->max_event);
		return -EFBIG;
	}
	rc = keep(s, data, n < room ? n : room, err, errlen);
	if (rc)
		return rc;
	s->skip_total = s->len - (n < room ? n : room) + n;
	if (s->len > JSON_HEAD_MAX)
		s->len = JSON_HEAD_MAX;
	s->skipping = true;
	return 0;
}

int watch_stream_feed(struct watch_stream *s, const char *data, size_t n, char *err, size_t errlen)
{
	while (n) {
		const char *nl = memchr(data, '\n', n);
		size_t part = nl ? (size_t)(nl - data) : n;
		int rc;

		if (s->skipping) {
			s->skip_total += part;
			rc = 0;
		} else if (part > s->max_event - s->len) {
			rc = start_skip(s, data, part, err, errlen);
		} else if (!nl) {
			return keep(s, data, n, err, errlen);
		} else if (!s->len) {
			/* A whole line in this write: parsed in place, without a copy. */
			rc = one_line(s, data, part, err, errlen);
		} else {
			rc = keep(s, data, part, err, errlen);
			if (!rc)
				rc = one_line(s, s->buf, s->len, err, errlen);
			s->len = 0;
		}
		if (!rc && nl && s->skipping) {
			s->events++;
			rc = s->on_oversize(s->user, s->buf, s->len, s->skip_total, err, errlen);
			s->skipping = false;
			s->len = 0;
		}
		if (rc || !nl)
			return rc;
		data += part + 1;
		n -= part + 1;
	}
	return 0;
}

size_t watch_stream_pending(const struct watch_stream *s)
{
	return s->skipping ? s->skip_total : s->len;
}

void watch_stream_reset(struct watch_stream *s)
{
	s->len = 0;
	s->skipping = false;
}

void watch_stream_on_oversize(struct watch_stream *s, watch_oversize_fn fn)
{
	s->on_oversize = fn;
}

void watch_stream_free(struct watch_stream *s)
{
	free(s->buf);
	s->buf = NULL;
	s->len = s->cap = 0;
}
