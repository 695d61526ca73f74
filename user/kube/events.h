/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Events about pods (events.k8s.io/v1): what `kubectl describe pod` and
 * `kubectl events` show. A repeated occurrence is not a new Event: the
 * caller keeps the first one's name and updates its series (count and last
 * time), as the API intends, so a flapping condition costs one object.
 */
#ifndef QOSLET_KUBE_EVENTS_H
#define QOSLET_KUBE_EVENTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"

/* The API refuses a longer note; longer ones are cut, ending in "...". */
#define KUBE_EVENT_NOTE_MAX 1024
/* An Event's name: the pod's (cut to fit) and the time in hex. */
#define KUBE_EVENT_NAME_MAX 254

struct kube_event {
	const char *ns, *pod, *uid; /* the pod the Event is about ("regarding") */
	const char *type;	    /* "Normal" or "Warning" */
	const char *reason;	    /* CamelCase, why: "Interference", "Suppressed", ... */
	const char *action;	    /* CamelCase, what was done: "Detect", "Suppress", "Evict" */
	const char *note;	    /* for people */
	const char *controller;	    /* reportingController: "qoslet.io/agent" */
	const char *instance;	    /* reportingInstance: the agent on this node */
	uint64_t time_ns;	    /* CLOCK_REALTIME of the first occurrence */
};

/* MicroTime as the API writes it: "2026-11-22T07:30:40.123456Z". */
void kube_micro_time(uint64_t ns, char buf[32]);

/* Time (seconds): "2026-11-22T07:30:40Z". */
void kube_time(uint64_t ns, char buf[32]);

/* The Event's name for ev: unique per pod and nanosecond. */
void kube_event_name(const struct kube_event *ev, char name[KUBE_EVENT_NAME_MAX]);

/* The Event document; NULL when out of memory. */
json_t *kube_event_body(const struct kube_event *ev, const char *name);

/* The merge patch that makes an Event a series of count (>= 2) occurrences, the last at last_ns. */
json_t *kube_event_series_patch(uint32_t count, uint64_t last_ns);

/*
 * Creates the Event (POST .../namespaces/NS/events) named `name`. 0 when the
 * server created it, else a negative errno with err set: the transport's,
 * -EACCES (401/403), -EEXIST (409, the name is taken) or -EPROTO.
 */
int kube_event_create(struct kube_client *c, const struct kube_event *ev, const char *name,
		      char *err, size_t errlen);

/* Updates the series of the Event ns/name (PATCH, merge patch). 0 or a negative errno (-ENOENT:
 * gone). */
int kube_event_update_series(struct kube_client *c, const char *ns, const char *name,
			     uint32_t count, uint64_t last_ns, char *err, size_t errlen);

#endif
