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
struct http_config {
	bool enabled;	  /* true */
	char address[64]; /* an IPv4 or IPv6 literal: "127.0.0.1" */
	uint32_t port;	  /* 9464 */
};

struct http_server;

/*
 * Listens on address (an IPv4 or IPv6 literal) and port, and serves from
 * another thread. Returns 0, or -errno with err set to a message naming the
 * address ("cannot listen on 127.0.0.1:9464: Address already in use").
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

/* Stops serving and frees everything; NULL is a no-op. */
void http_stop(struct http_server *s);

#endif
