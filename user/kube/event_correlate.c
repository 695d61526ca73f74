// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/event_correlate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

/*
 * Whether span has passed from `since` to `now`. The API thread
 * (kube/sync.c) reads its clock once a round, while the agent's loop adds
 * occurrences, with their own later readings, during that round: a stamp
 * newer than now has not aged at all, where the plain difference wraps to
 * a huge age. So it did: a series created in a round whose first
 * occurrence came after the round's clock read was forgotten at once, and
 * its repeat made a second Event.
 */
static bool aged(uint64_t since, uint64_t now, uint64_t span)
{
	return now >= since && now - since >= span;
}

void event_correlate_init(struct event_correlator *c, double interval_s, uint32_t events_per_minute,
			  uint64_t now)
{
	memset(c, 0, sizeof(*c));
	c->interval_ns = (uint64_t)(interval_s * 1e9);
	c->node_cap = events_per_minute;
	c->node_tokens = c->node_cap;
	c->node_at = now;
}

void event_correlate_free(struct event_correlator *c)
{
	free(c->series);
	free(c->buckets);
	free(c->windows);
	memset(c, 0, sizeof(*c));
}

/* The pod's bucket, made full when new; NULL when out of memory. */
static struct event_bucket *bucket_of(struct event_correlator *c, const char *uid, uint64_t now)
{
	struct event_bucket *b;

	for (size_t i = 0; i < c->n_buckets; i++)
		if (!strcmp(c->buckets[i].uid, uid))
			return &c->buckets[i];
	if (array_grow((void **)&c->buckets, &c->cap_buckets, c->n_buckets, sizeof(*b)))
		return NULL;
	b = &c->buckets[c->n_buckets++];
	*b = (struct event_bucket){.tokens = EVENT_SPAM_BURST, .at = now};
	snprintf(b->uid, sizeof(b->uid), "%s", uid);
	return b;
}

/* The pod's window of similar occurrences of ev's reason, opened anew when it closed. */
static struct event_window *window_of(struct event_correlator *c, const struct kube_event_req *ev,
				      uint64_t now)
{
	struct event_window *w = NULL;

	for (size_t i = 0; i < c->n_windows && !w; i++)
		if (!strcmp(c->windows[i].uid, ev->uid) &&
		    !strcmp(c->windows[i].reason, ev->reason))
			w = &c->windows[i];
	if (!w) {
		if (array_grow((void **)&c->windows, &c->cap_windows, c->n_windows, sizeof(*w)))
			return NULL;
		w = &c->windows[c->n_windows++];
		*w = (struct event_window){.reason = ev->reason, .start = now};
		snprintf(w->uid, sizeof(w->uid), "%s", ev->uid);
	}
	if (aged(w->start, now, EVENT_SIMILAR_WINDOW_NS)) {
		w->similar = 0;
		w->start = now;
	}
	return w;
}

static struct event_series *find_series(struct event_correlator *c, const struct kube_event_req *ev,
					bool combined)
{
	for (size_t i = 0; i < c->n_series; i++) {
		struct event_series *s = &c->series[i];

		if (strcmp(s->first.uid, ev->uid) || strcmp(s->first.reason, ev->reason) ||
		    s->combined != combined)
			continue;
		if (combined || !strcmp(s->first.note, ev->note))
			return s;
	}
	return NULL;
}

bool event_correlate_add(struct event_correlator *c, const struct kube_event_req *ev, uint64_t now)
{
	struct event_series *s = find_series(c, ev, false);
	struct event_window *w;
	bool combined = false;

	if (!s) {
		w = window_of(c, ev, now);
		if (!w) {
			c->dropped++;
			return false;
		}
		combined = w->similar >= EVENT_SIMILAR_MAX;
		if (combined)
			s = find_series(c, ev, true);
		else
			w->similar++;
	}
	if (s) {
		s->seen++;
		s->last_ns = ev->ts_ns;
		s->last_seen = now;
		c->aggregated++;
		return false;
	}
	if (array_grow((void **)&c->series, &c->cap_series, c->n_series, sizeof(*s))) {
		c->dropped++;
		return false;
	}
	s = &c->series[c->n_series++];
	*s = (struct event_series){.first = *ev,
				   .combined = combined,
				   .seen = 1,
				   .last_ns = ev->ts_ns,
				   .last_seen = now};
	if (combined) { /* the note's end is cut to fit; the first part says the most */
		size_t pre = strlen(EVENT_COMBINED_PREFIX);

		memcpy(s->first.note, EVENT_COMBINED_PREFIX, pre);
		snprintf(s->first.note + pre, sizeof(s->first.note) - pre, "%.*s",
			 (int)(sizeof(s->first.note) - pre - 1), ev->note);
	}
	return true;
}

/* A bucket of cap tokens refilled by one every refill_ns: takes one when there is one. */
static bool bucket_take(double *tokens, uint64_t *at, double cap, uint64_t refill_ns, uint64_t now,
			bool take)
{
	/* an older clock reading than the last (see aged()) neither refills nor moves it back */
	if (now > *at) {
		*tokens += (double)(now - *at) / (double)refill_ns;
		*at = now;
	}
	if (*tokens > cap)
		*tokens = cap;
	if (*tokens < 1)
		return false;
	if (take)
		*tokens -= 1;
	return true;
}

/* Both the pod's bucket and the node's have a token: both are taken. */
static bool take_tokens(struct event_correlator *c, const char *uid, uint64_t now)
{
	struct event_bucket *b = bucket_of(c, uid, now);
	uint64_t node_refill = (uint64_t)(60e9 / c->node_cap);

	if (!b ||
	    !bucket_take(&b->tokens, &b->at, EVENT_SPAM_BURST, EVENT_SPAM_REFILL_NS, now, false) ||
	    !bucket_take(&c->node_tokens, &c->node_at, c->node_cap, node_refill, now, true))
		return false;
	bucket_take(&b->tokens, &b->at, EVENT_SPAM_BURST, EVENT_SPAM_REFILL_NS, now, true);
	return true;
}

static void drop_series(struct event_correlator *c, size_t i)
{
	c->series[i] = c->series[--c->n_series];
}

bool event_correlate_next(struct event_correlator *c, uint64_t now, struct event_call *call)
{
	for (size_t i = 0; i < c->n_series;) {
		struct event_series *s = &c->series[i];

		if (s->created && !(s->seen > s->sent && aged(s->last_call, now, c->interval_ns))) {
			i++;
			continue;
		}
		if (!take_tokens(c, s->first.uid, now)) {
			if (s->created) {
				i++; /* the count waits for a token; nothing is lost */
				continue;
			}
			c->dropped += s->seen;
			drop_series(c, i);
			continue;
		}
		call->s = *s;
		call->create = !s->created;
		return true;
	}
	return false;
}

void event_correlate_done(struct event_correlator *c, const struct event_call *call, int rc,
			  bool transient, uint64_t now)
{
	/* The table may have changed meanwhile: the series again, by what it is. */
	for (size_t i = 0; i < c->n_series; i++) {
		struct event_series *p = &c->series[i];

		if (strcmp(p->first.uid, call->s.first.uid) ||
		    strcmp(p->first.reason, call->s.first.reason) ||
		    p->combined != call->s.combined || strcmp(p->first.note, call->s.first.note))
			continue;
		p->last_call = now;
		if (!rc) {
			p->created = true;
			memcpy(p->name, call->s.name, sizeof(p->name));
			p->sent = call->create ? 1 : call->s.seen;
		} else if (!call->create && rc == -ENOENT) {
			p->created = false; /* the Event expired or was deleted: a new one */
		} else if (call->create && !transient) {
			drop_series(c, i); /* refused: not again */
		}
		return; /* a transient failure: the same call after the backoff */
	}
}

void event_correlate_expire(struct event_correlator *c, uint64_t now, uint64_t idle_ns)
{
	for (size_t i = 0; i < c->n_series;) {
		struct event_series *p = &c->series[i];

		if (p->created && p->seen == p->sent && aged(p->last_seen, now, idle_ns))
			drop_series(c, i);
		else
			i++;
	}
	/* a full bucket and a closed window are what a new pod starts with: nothing to keep */
	for (size_t i = 0; i < c->n_buckets;) {
		struct event_bucket *b = &c->buckets[i];

		bucket_take(&b->tokens, &b->at, EVENT_SPAM_BURST, EVENT_SPAM_REFILL_NS, now, false);
		if (b->tokens >= EVENT_SPAM_BURST)
			*b = c->buckets[--c->n_buckets];
		else
			i++;
	}
	for (size_t i = 0; i < c->n_windows;) {
		if (aged(c->windows[i].start, now, EVENT_SIMILAR_WINDOW_NS))
			c->windows[i] = c->windows[--c->n_windows];
		else
			i++;
	}
}
