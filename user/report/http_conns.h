/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A hard deadline for every connection of the HTTP endpoint. libmicrohttpd's
 * own timeout counts idle time only, so a client that sends one byte every
 * few seconds keeps its connection (and one of the server's few slots)
 * forever. Here each connection must finish a request within its listener's
 * deadline, counted from its start or from the end of its last request; a
 * watchdog thread shuts down (shutdown(2), never close) the socket of one
 * that did not, and libmicrohttpd's thread then closes it as a client that
 * hung up. The socket stays MHD's: the table drops a connection in MHD's
 * "closed" notification, which comes before MHD closes the fd, and the
 * watchdog only touches fds of the table under its lock, so it can never
 * shut down a reused fd.
 */
#ifndef QOSLET_REPORT_HTTP_CONNS_H
#define QOSLET_REPORT_HTTP_CONNS_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdint.h>

struct http_conns;

/* One listener's deadline: the closure of its MHD callbacks below. */
struct http_deadline {
	struct http_conns *conns;
	uint64_t ns;
};

/* The table and its watchdog thread (started here, with every signal blocked). NULL: no memory. */
struct http_conns *http_conns_new(void);
/* Stops the watchdog and frees; call after every MHD daemon using it stopped. NULL is a no-op. */
void http_conns_free(struct http_conns *t);
/* Connections closed at their deadline so far. */
uint64_t http_conns_cut(struct http_conns *t);

/* MHD_OPTION_NOTIFY_CONNECTION, closure a struct http_deadline: the table follows MHD's. */
void http_conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode toe);
/* MHD_OPTION_NOTIFY_COMPLETED, closure a struct http_deadline: a finished request renews it. */
void http_conns_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			  enum MHD_RequestTerminationCode toe);

/*
 * Warnings a client can cause (each refused connection, each cut) at most
 * once per 10 s: the rest are counted and the next warning says how many,
 * so that a flood of connections cannot flood the agent's log.
 */
struct http_log_limit {
	pthread_mutex_t mu;
	uint64_t last_ns;
	unsigned int suppressed;
};
#define HTTP_LOG_LIMIT_INIT                                                                        \
	{                                                                                          \
		PTHREAD_MUTEX_INITIALIZER, 0, 0                                                    \
	}
void http_warn_limited(struct http_log_limit *l, const char *msg);

#endif
