// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "report/http_conns.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "clock.h"
#include "log.h"

#define LOG_GAP_NS (10 * 1000000000ull)

struct conn {
	struct conn *prev, *next;
	int fd;
	uint64_t deadline_ns, limit_ns; /* CLOCK_MONOTONIC; the listener's deadline */
	bool cut;			/* shut down: MHD closes it next */
};

struct http_conns {
	pthread_mutex_t mu; /* guards everything below */
	pthread_cond_t wake;
	struct conn *head;
	bool stop;
	uint64_t cut;
	pthread_t thread;
	struct http_log_limit log;
};

void http_warn_limited(struct http_log_limit *l, const char *msg)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	unsigned int n;

	pthread_mutex_lock(&l->mu);
	if (l->last_ns && now - l->last_ns < LOG_GAP_NS) {
		l->suppressed++;
		pthread_mutex_unlock(&l->mu);
		return;
	}
	n = l->suppressed;
	l->suppressed = 0;
	l->last_ns = now;
	pthread_mutex_unlock(&l->mu);
	if (n)
		log_warn("%s (and %u more such warnings in the last %llu s)", msg, n,
			 LOG_GAP_NS / 1000000000ull);
	else
		log_warn("%s", msg);
}

/* With the lock held: shuts down what is past its deadline; the next deadline, or 0. */
static uint64_t cut_late(struct http_conns *t, uint64_t now, unsigned int *cut, uint64_t *limit)
{
	uint64_t next = 0;

	for (struct conn *c = t->head; c; c = c->next) {
		if (c->cut)
			continue;
		if (c->deadline_ns <= now) {
			/* the fd is MHD's and open (the table drops it before MHD closes it) */
			shutdown(c->fd, SHUT_RDWR);
			c->cut = true;
			t->cut++;
			(*cut)++;
			*limit = c->limit_ns;
		} else if (!next || c->deadline_ns < next) {
			next = c->deadline_ns;
		}
	}
	return next;
}

static void *watchdog(void *arg)
{
	struct http_conns *t = arg;

	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		unsigned int cut = 0;
		uint64_t limit = 0, next = cut_late(t, clock_ns(CLOCK_MONOTONIC), &cut, &limit);

		if (cut) {
			char msg[160];

			pthread_mutex_unlock(&t->mu);
			snprintf(
				msg, sizeof(msg),
				"http: closed %u connection%s that did not finish a request within "
				"%.0f s (a slow or stalled client)",
				cut, cut == 1 ? "" : "s", (double)limit / 1e9);
			http_warn_limited(&t->log, msg);
			pthread_mutex_lock(&t->mu);
			continue;
		}
		if (!next) {
			pthread_cond_wait(&t->wake, &t->mu);
		} else {
			struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull),
					      .tv_nsec = (long)(next % 1000000000ull)};

			pthread_cond_timedwait(&t->wake, &t->mu, &ts);
		}
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

struct http_conns *http_conns_new(void)
{
	struct http_conns *t = calloc(1, sizeof(*t));
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (!t)
		return NULL;
	pthread_mutex_init(&t->mu, NULL);
	pthread_mutex_init(&t->log.mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* SIGTERM must reach the agent loop, not this thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&t->thread, NULL, watchdog, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_mutex_destroy(&t->mu);
		pthread_mutex_destroy(&t->log.mu);
		pthread_cond_destroy(&t->wake);
		free(t);
		errno = err;
		return NULL;
	}
	return t;
}

void http_conns_free(struct http_conns *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	/* MHD's daemons are stopped: every connection was closed and dropped */
	while (t->head) {
		struct conn *c = t->head;

		t->head = c->next;
		free(c);
	}
	pthread_mutex_destroy(&t->mu);
	pthread_mutex_destroy(&t->log.mu);
	pthread_cond_destroy(&t->wake);
	free(t);
}

uint64_t http_conns_cut(struct http_conns *t)
{
	uint64_t n;

	pthread_mutex_lock(&t->mu);
	n = t->cut;
	pthread_mutex_unlock(&t->mu);
	return n;
}

void http_conns_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
		       enum MHD_ConnectionNotificationCode toe)
{
	struct http_deadline *d = cls;
	struct http_conns *t = d->conns;
	struct conn *c = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *i =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);

		c = i ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			log_warn("http: a connection without a deadline (%s)",
				 i ? strerror(ENOMEM) : "no socket");
			return;
		}
		c->fd = i->connect_fd;
		c->limit_ns = d->ns;
		c->deadline_ns = clock_ns(CLOCK_MONOTONIC) + d->ns;
		pthread_mutex_lock(&t->mu);
		c->next = t->head;
		if (t->head)
			t->head->prev = c;
		t->head = c;
		pthread_cond_signal(&t->wake); /* it may be the earliest deadline */
		pthread_mutex_unlock(&t->mu);
		*socket_context = c;
		return;
	}
	if (!c)
		return;
	/* MHD_CONNECTION_NOTIFY_CLOSED: MHD closes the fd once this returns */
	pthread_mutex_lock(&t->mu);
	if (c->prev)
		c->prev->next = c->next;
	else
		t->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&t->mu);
	free(c);
	*socket_context = NULL;
}

void http_conns_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
			  enum MHD_RequestTerminationCode toe)
{
	struct http_deadline *d = cls;
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *c = i ? i->socket_context : NULL;

	(void)con_cls;
	(void)toe;
	if (!c)
		return;
	/* a kept-alive connection has the whole deadline again for its next request */
	pthread_mutex_lock(&d->conns->mu);
	if (!c->cut)
		c->deadline_ns = clock_ns(CLOCK_MONOTONIC) + c->limit_ns;
	pthread_mutex_unlock(&d->conns->mu);
}
