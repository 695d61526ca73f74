/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's read-only HTTP endpoint (libmicrohttpd, one internal thread):
 * /metrics, /healthz, /readyz and /decisions. The agent loop publishes
 * finished texts once per tick; the HTTP thread serves copies of them and
 * never touches agent state. Paths and statuses: docs/qoslet-agent.md, HTTP.
 */
#ifndef QOSLET_REPORT_HTTP_H
#define QOSLET_REPORT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The config's "http" object. */
/* Which cgroups /metrics carries per-cgroup series for (docs/metrics/agent.md). */
enum metrics_scope {
	METRICS_SCOPE_UNITS = 0, /* "units": one series set per pod (or unit), summed over it */
	METRICS_SCOPE_ALL,	 /* "all": also every container and cgroup outside the units */
};

struct http_config {
	bool enabled;		    /* true */
	char address[64];	    /* an IPv4 or IPv6 literal: "127.0.0.1" */
	uint32_t port;		    /* 9464 */
	enum metrics_scope cgroups; /* "units" */
};

struct http_server;

/*
 * Listens on address (an IPv4 or IPv6 literal) and port, and serves from
 * another thread. Returns 0, or -errno with err set to a message naming the
 * address ("cannot listen on 127.0.0.1:9464: Address already in use"), or
 * -ELIBACC when libmicrohttpd cannot be loaded (err names its package).
 */
int http_start(struct http_server **out, const char *address, uint16_t port, char *err,
	       size_t errlen);

/*
 * http_start() in two steps: bind and listen now (a taken port fails here,
 * with err naming it) and serve later, so that the server thread can start
 * after the caller dropped privileges it must not inherit. Connections that
 * come in between wait in the listen queue.
 */
int http_listen(struct http_server **out, const char *address, uint16_t port, char *err,
		size_t errlen);
int http_serve(struct http_server *s, char *err, size_t errlen);

/*
 * The same server without a listening socket, for tests and fuzzing: it
 * serves only the connections handed to it with http_add_connection().
 * Returns 0 or -errno.
 */
int http_start_unbound(struct http_server **out);

/*
 * Serves the connected stream socket fd (one end of a socketpair, say) as
 * if a client had connected. The server owns fd from here on and closes it,
 * also when this fails. Returns 0 or -errno.
 */
int http_add_connection(struct http_server *s, int fd);

/*
 * Replaces what is served (takes ownership of both malloc'd texts; NULL
 * keeps the current one) and marks the server ready: /readyz answers 200
 * from the first call on.
 */
void http_publish(struct http_server *s, char *metrics, size_t metrics_len, char *decisions,
		  size_t decisions_len);

/*
 * Rendering on demand: the loop renders only when someone asks. After
 * http_render_on_demand() (which returns an fd to poll, or -errno), and once
 * the loop has called http_tick_done() after a tick, a request for /metrics
 * or /decisions makes the fd readable and waits (2 s at most) for the loop's
 * http_publish(); the loop, woken, checks http_render_wanted() and renders.
 * With no scraper, nothing is rendered at all.
 */
int http_render_on_demand(struct http_server *s);
bool http_render_wanted(struct http_server *s);
void http_tick_done(struct http_server *s);

/* Stops serving and frees everything; NULL is a no-op. */
void http_stop(struct http_server *s);

#endif
