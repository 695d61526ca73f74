// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/events.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kube/pods.h"

static void format_time(uint64_t ns, char buf[32], bool micro)
{
	time_t s = (time_t)(ns / 1000000000u);
	struct tm tm;
	size_t n;

	gmtime_r(&s, &tm);
	n = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	if (micro)
		snprintf(buf + n, 32 - n, ".%06" PRIu64 "Z", ns % 1000000000u / 1000u);
	else
		snprintf(buf + n, 32 - n, "Z");
}

void kube_micro_time(uint64_t ns, char buf[32])
{
	format_time(ns, buf, true);
}

void kube_time(uint64_t ns, char buf[32])
{
	format_time(ns, buf, false);
}

void kube_event_name(const struct kube_event *ev, char name[KUBE_EVENT_NAME_MAX])
{
	/* 17 for ".<16 hex>": the pod's part is cut so the whole stays a valid name */
	int keep = (int)strnlen(ev->pod, KUBE_EVENT_NAME_MAX - 1 - 17);

	/* A DNS label ends in an alphanumeric: a cut after '-' or '.' would leave "-." or "..". */
	while (keep > 1 && (ev->pod[keep - 1] == '-' || ev->pod[keep - 1] == '.'))
		keep--;
	snprintf(name, KUBE_EVENT_NAME_MAX, "%.*s.%016" PRIx64, keep, ev->pod, ev->time_ns);
}

/* note cut to what the API accepts, on a UTF-8 character boundary. */
/* Length of the valid UTF-8 sequence at s (a code point, not overlong, no surrogate), else 0. */
static size_t utf8_len(const unsigned char *s)
{
	static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
	size_t len = s[0] < 0x80	     ? 1
		     : (s[0] & 0xe0) == 0xc0 ? 2
		     : (s[0] & 0xf0) == 0xe0 ? 3
		     : (s[0] & 0xf8) == 0xf0 ? 4
					     : 0;
	uint32_t cp = len == 1 ? s[0] : s[0] & (0x7f >> len);

	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (len > 1 && (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)))
		return 0;
	return len;
}

/*
 * A note is made of cgroup paths and snprintf cuts, so it may hold bytes that
 * are not UTF-8, which JSON cannot carry: each becomes '?', and the rest of
 * the note still gets through.
 */
static void utf8_fix(char *s)
{
	while (*s) {
		size_t n = utf8_len((const unsigned char *)s);

		if (!n)
			*s++ = '?';
		else
			s += n;
	}
}

static void cut_note(const char *note, char out[KUBE_EVENT_NOTE_MAX])
{
	size_t n = strlen(note);

	if (n < KUBE_EVENT_NOTE_MAX) {
		memcpy(out, note, n + 1);
		return;
	}
	n = KUBE_EVENT_NOTE_MAX - 4;
	while (n && ((unsigned char)note[n] & 0xc0) == 0x80)
		n--;
	memcpy(out, note, n);
	memcpy(out + n, "...", 4);
}

json_t *kube_event_body(const struct kube_event *ev, const char *name)
{
	char when[32], note[KUBE_EVENT_NOTE_MAX];

	kube_micro_time(ev->time_ns, when);
	cut_note(ev->note, note);
	utf8_fix(note);
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s, s:s, s:s, "
			 "s:{s:s, s:s, s:s, s:s, s:s}}",
			 "apiVersion", "events.k8s.io/v1", "kind", "Event", "metadata", "name",
			 name, "namespace", ev->ns, "eventTime", when, "reportingController",
			 ev->controller, "reportingInstance", ev->instance, "action", ev->action,
			 "reason", ev->reason, "type", ev->type, "note", note, "regarding",
			 "apiVersion", "v1", "kind", "Pod", "namespace", ev->ns, "name", ev->pod,
			 "uid", ev->uid);
}

json_t *kube_event_series_patch(uint32_t count, uint64_t last_ns)
{
	char when[32];

	kube_micro_time(last_ns, when);
	return json_pack("{s:{s:I, s:s}}", "series", "count", (json_int_t)count, "lastObservedTime",
			 when);
}

int kube_event_create(struct kube_client *c, const struct kube_event *ev, const char *name,
		      char *err, size_t errlen)
{
	char path[320];

	if (!kube_name_valid(ev->ns)) {
		snprintf(err, errlen, "namespace \"%s\" is not a valid name", ev->ns);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events", ev->ns);
	return kube_call(c, "POST", path, kube_event_body(ev, name), "application/json", err,
			 errlen);
}

int kube_event_update_series(struct kube_client *c, const char *ns, const char *name,
			     uint32_t count, uint64_t last_ns, char *err, size_t errlen)
{
	char path[640];

	if (!kube_name_valid(ns) || !kube_name_valid(name)) {
		snprintf(err, errlen, "event %s/%s: not a valid name", ns, name);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events/%s", ns, name);
	return kube_call(c, "PATCH", path, kube_event_series_patch(count, last_ns),
			 "application/merge-patch+json", err, errlen);
}
