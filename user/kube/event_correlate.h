/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What becomes of the occurrences the agent reports, as client-go's
 * EventCorrelator does it, so the API server sees few writes however often
 * something happens (docs/kubernetes.md, "Events"):
 *   - the same occurrence again (pod, reason and note) joins its Event's
 *     series: one object, its count patched at most once per interval;
 *   - similar occurrences (pod and reason, another note): the first 10 in
 *     10 minutes are Events of their own, the rest join one Event whose note
 *     starts "(combined from similar events): ";
 *   - a spam filter per pod (the source is always this agent): a bucket of
 *     25 writes, refilled by one every 5 minutes, and one for the node
 *     (events_per_minute). A new Event with no token is dropped; a series
 *     count waits for one (nothing of it is lost).
 * Pure: the caller gives the time (CLOCK_MONOTONIC) and makes the calls;
 * not thread-safe (the caller holds its lock).
 */
#ifndef QOSLET_KUBE_EVENT_CORRELATE_H
#define QOSLET_KUBE_EVENT_CORRELATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/events.h"
#include "kube/sync.h"

/* client-go's: 10 similar Events in 10 minutes, then they are combined. */
#define EVENT_SIMILAR_MAX	10
#define EVENT_SIMILAR_WINDOW_NS (600 * 1000000000ull)
/* client-go's spam filter: a burst of 25 per object, then one every 5 minutes. */
#define EVENT_SPAM_BURST     25
#define EVENT_SPAM_REFILL_NS (300 * 1000000000ull)
/* The prefix of a combined Event's note, as client-go writes it. */
#define EVENT_COMBINED_PREFIX "(combined from similar events): "

/* One Event and its series. */
struct event_series {
	struct kube_event_req first; /* what the Event says (a combined one: its prefixed note) */
	char name[KUBE_EVENT_NAME_MAX];
	bool created;
	bool combined;		       /* the Event of the similar occurrences past the 10th */
	uint32_t seen, sent;	       /* occurrences, and the count the API has */
	uint64_t last_ns;	       /* CLOCK_REALTIME of the last occurrence */
	uint64_t last_seen, last_call; /* CLOCK_MONOTONIC */
};

/* A pod's spam-filter bucket. */
struct event_bucket {
	char uid[40];
	double tokens;
	uint64_t at;
};

/* A window of similar occurrences: a pod's distinct notes of one reason. */
struct event_window {
	char uid[40];
	const char *reason;
	uint32_t similar;
	uint64_t start;
};

struct event_correlator {
	uint64_t interval_ns; /* a series count is patched at most this often */
	double node_cap;      /* events_per_minute */
	double node_tokens;
	uint64_t node_at;
	struct event_series *series;
	size_t n_series, cap_series;
	struct event_bucket *buckets;
	size_t n_buckets, cap_buckets;
	struct event_window *windows;
	size_t n_windows, cap_windows;
	uint64_t aggregated; /* occurrences that joined a series */
	uint64_t dropped;    /* occurrences the spam filter (or memory) dropped */
};

/* One API call to make: a new Event, or its series' count. */
struct event_call {
	struct event_series s; /* a copy: the call is made without the caller's lock */
	bool create;
};

void event_correlate_init(struct event_correlator *c, double interval_s, uint32_t events_per_minute,
			  uint64_t now);
void event_correlate_free(struct event_correlator *c);

/* Notes an occurrence. True when it is a new Event (a call is due at once). */
bool event_correlate_add(struct event_correlator *c, const struct kube_event_req *ev, uint64_t now);

/*
 * The next call due, if any: a new Event, or a series count unsent for an
 * interval. Takes its spam-filter tokens; a new Event without one is dropped
 * (and the next one looked at). False when none is due.
 */
bool event_correlate_next(struct event_correlator *c, uint64_t now, struct event_call *call);

/*
 * What the call came to: rc 0 done; -ENOENT on a series: the Event is gone,
 * a new one is made; another failure of a new Event that is not transient:
 * dropped; a transient one: the same call after the caller's backoff.
 */
void event_correlate_done(struct event_correlator *c, const struct event_call *call, int rc,
			  bool transient, uint64_t now);

/* Forgets series quiet for idle_ns with nothing left to send, and pods' state gone back to
 * rest. */
void event_correlate_expire(struct event_correlator *c, uint64_t now, uint64_t idle_ns);

#endif
