/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's read-only HTTP endpoint (libmicrohttpd, one internal thread):
 * /metrics, /healthz, /readyz and /decisions; optionally a second port, with
 * its own thread and connection budget, that serves only /healthz and
 * /readyz (http_listen_health()), and a UNIX socket that does the same for
 * an exec probe (http_listen_health_socket()). Every connection has a hard deadline
 * (http_conns.h) and each client address a connection limit. The agent loop publishes
 * finished texts when a request asks; the HTTP thread serves them and never
 * touches agent state. Paths and statuses: docs/qoslet-agent.md, HTTP.
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
	bool enabled;		 /* true */
	char address[64];	 /* an IPv4 or IPv6 literal: "127.0.0.1" */
	uint32_t port;		 /* 9464 */
	uint32_t health_port;	 /* 0: none; else /healthz and /readyz alone there too */
	char health_socket[108]; /* "": none; else the same on this UNIX socket (sun_path's size) */
	enum metrics_scope cgroups; /* "units" */
};

struct http_server;

/* The texts the loop renders for the endpoint. */
enum http_text_id {
	HTTP_METRICS,	/* /metrics */
	HTTP_DECISIONS, /* /decisions */
	HTTP_TEXT_NR,
};
#define HTTP_WANT(id) (1u << (id))

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
 * Between http_listen() and http_serve(): also listen on port, on the same
 * address, for the health checks alone. No scrape, slow client or render
 * wait on the first port can hold up an answer there. 0, or -errno with err
 * naming the address.
 */
int http_listen_health(struct http_server *s, uint16_t port, char *err, size_t errlen);

/*
 * Between http_listen() and http_serve(): also serve /healthz and /readyz on
 * a UNIX socket at path (absolute), mode 0600, for an exec probe (`qoslet
 * health`). No local client but root can reach it, so none can starve the
 * kubelet's probes as one that holds a TCP port's connections from the
 * node's own address can (docs/security.md). The directory must be the
 * agent user's alone (private_dir.h: made 0700 when absent); a socket there
 * that no one serves is replaced, one that answers is refused (-EADDRINUSE).
 * The socket is removed at http_stop(). 0, or -errno with err naming the
 * problem.
 */
int http_listen_health_socket(struct http_server *s, const char *path, char *err, size_t errlen);

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
 * Serves data (malloc'd, len bytes; the server takes it over) as text id
 * until the next http_tick_done(), and marks the server ready: /readyz
 * answers 200 from the first call on. Returns 0, or -ENOMEM (data freed).
 */
int http_publish(struct http_server *s, enum http_text_id id, char *data, size_t len);

/*
 * Rendering on demand: the loop renders only what someone asks for, and
 * the server keeps it only for the tick it describes. After
 * http_render_on_demand() (which returns an fd to poll, or -errno), and once
 * the loop has called http_tick_done() after a tick (which drops the texts
 * and notes the tick's end for /healthz),
 * a request for /metrics or /decisions makes the fd readable and waits (2 s
 * at most) for the loop's http_publish(); the loop, woken, takes the
 * HTTP_WANT() bits of the texts asked for from http_render_wanted() and
 * renders them. A request that gets no text answers 503. With no scraper,
 * nothing is rendered at all.
 */
int http_render_on_demand(struct http_server *s);
unsigned int http_render_wanted(struct http_server *s);
void http_tick_done(struct http_server *s);

/*
 * What /healthz and /readyz judge besides the ticks themselves: the loop is
 * stale when no tick ended for stale_ns (0: never judged), counted from the
 * last http_tick_done(), or from the first call here before the first tick;
 * not_ready, when not NULL, is why the agent is not ready although it ticks
 * (copied). Called by the loop at start and after each tick.
 */
struct http_health {
	uint64_t stale_ns;
	const char *not_ready;
};
void http_health(struct http_server *s, const struct http_health *h);

/* Stops serving and frees everything; NULL is a no-op. */
void http_stop(struct http_server *s);

#endif
