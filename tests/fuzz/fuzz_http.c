// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's HTTP endpoint (user/report/http.c) as a client reaches it:
 * each input is the raw bytes a client sends on one connection. The real
 * server (libmicrohttpd on its own thread, with the agent's limits) runs
 * without a listening socket; every input gets a new socketpair, one end
 * handed to the server with http_add_connection(). The input is written,
 * the writing side shut down, and the answer read until the server closes.
 *
 * Checks: the server answers or closes within STALL_S seconds while other
 * clients come and go (see NUDGE_MS); the answer is empty (an incomplete
 * request) or a sequence of whole HTTP/1.x responses, each with a status
 * this endpoint gives; a 405 names the allowed methods; a 200 with a body
 * carries exactly one of the published texts.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "fuzz.h"
#include "log.h"
#include "report/http.h"

/* Inputs are cut here: the server's header limit is 16 KiB, this is past it. */
#define INPUT_MAX (64 * 1024)

/*
 * libmicrohttpd 0.9.75 gives up on a request line with a query string that
 * fits its connection memory (HTTP_CONN_MEMORY, 16 KiB) but leaves no room
 * to parse the arguments (inputs of about 16.3-16.4 KB): it sends nothing
 * and closes the connection only when its thread next wakes up, for another
 * connection or at its 10 s timeout. So while the harness waits it adds an
 * empty connection every NUDGE_MS (any client could): the server must then
 * answer or close within STALL_S.
 */
#define NUDGE_MS 2
#define STALL_S	 2

static const char metrics[] = "# HELP qoslet_up 1 while the agent runs.\n"
			      "# TYPE qoslet_up gauge\nqoslet_up 1\n";
static const char decisions[] = "[{\"seq\":1,\"kind\":\"report\"}]";
static struct http_server *srv;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* libmicrohttpd logs every malformed request as a warning: millions of lines here */
	log_max_level = LOG_ERROR;
	FUZZ_CHECK(!http_start_unbound(&srv), "cannot start the server");
	/* ready from the start: /metrics and /decisions answer 200 */
	http_publish(srv, HTTP_METRICS, strdup(metrics), strlen(metrics));
	http_publish(srv, HTTP_DECISIONS, strdup(decisions), strlen(decisions));
	return 0;
}

static void send_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		/* the server may answer (400, 431) and close before reading everything */
		if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
			return;
		FUZZ_CHECK(w > 0, "send: %m");
		p += w;
		n -= (size_t)w;
	}
}

/*
 * Another client connects and hangs up at once: the server's thread wakes up.
 * A server that does not run piles these up to its connection limit and then
 * refuses them: the caller's stall check reports that, not this.
 */
static void nudge(void)
{
	int sv[2];

	FUZZ_CHECK(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "socketpair: %m");
	http_add_connection(srv, sv[1]); /* closes sv[1] also when it fails */
	close(sv[0]);
}

/* Everything the server sends until it closes (caller frees); *len is its size. */
static char *recv_all(int fd, size_t *len)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	int idle = 0;

	FUZZ_CHECK(buf, "out of memory");
	for (;;) {
		ssize_t r;

		if (!poll(&p, 1, NUDGE_MS)) {
			FUZZ_CHECK(++idle < STALL_S * 1000 / NUDGE_MS,
				   "the server neither answered nor closed in %d s", STALL_S);
			nudge();
			continue;
		}
		r = recv(fd, buf + n, cap - n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == ECONNRESET)
			break;
		FUZZ_CHECK(r >= 0, "recv: %m");
		if (!r)
			break;
		idle = 0;
		n += (size_t)r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			FUZZ_CHECK(buf, "out of memory");
		}
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The statuses this endpoint answers with: its own and libmicrohttpd's for malformed requests. */
static bool status_known(int status)
{
	switch (status) {
	case 200: /* /metrics, /decisions, /healthz, /readyz */
	case 400: /* MHD: malformed request */
	case 404: /* another path */
	case 405: /* another method */
	case 413: /* a request with a body */
	case 414: /* MHD: request line over the memory limit */
	case 431: /* MHD: headers over the memory limit */
	case 501: /* MHD: a transfer encoding it does not know */
	case 505: /* MHD: an HTTP version it does not speak */
		return true;
	default:
		return false;
	}
}

/* The value of header name in the header block hdr[0..end) (from the status line on), or NULL. */
static const char *header(const char *hdr, const char *end, const char *name)
{
	size_t len = strlen(name);
	const char *p = hdr;

	while ((p = memmem(p, end - p, "\r\n", 2))) {
		p += 2; /* a header line starts after each line end */
		if (end - p > (ptrdiff_t)len && !strncasecmp(p, name, len) && p[len] == ':')
			return p + len + 1 + strspn(p + len + 1, " ");
	}
	return NULL;
}

/* Checks one response at buf[0..n); returns its length. */
static size_t check_response(const char *buf, size_t n)
{
	const char *end = memmem(buf, n, "\r\n\r\n", 4), *cl, *body;
	size_t body_len = 0;
	int status;

	FUZZ_CHECK(n >= 12 && !memcmp(buf, "HTTP/1.", 7) && (buf[7] == '0' || buf[7] == '1') &&
			   buf[8] == ' ',
		   "not a status line: %.40s", buf);
	status = atoi(buf + 9);
	FUZZ_CHECK(status_known(status), "status %d", status);
	FUZZ_CHECK(end, "the headers do not end: %.200s", buf);
	cl = header(buf, end, "Content-Length");
	body = end + 4;
	/* A HEAD response announces a length and sends no body: the next response or the
	 * end follows (the server answers no more requests once the client shut down). */
	if (cl && body < buf + n && !(buf + n - body >= 7 && !memcmp(body, "HTTP/1.", 7)))
		body_len = strtoul(cl, NULL, 10);
	FUZZ_CHECK(body_len <= (size_t)(buf + n - body), "a cut body: %zu of %zu bytes", body_len,
		   (size_t)(buf + n - body));
	if (status == 405)
		FUZZ_CHECK(header(buf, end, "Allow"), "405 without Allow");
	if (status == 200 && body_len)
		FUZZ_CHECK((body_len == strlen(metrics) && !memcmp(body, metrics, body_len)) ||
				   (body_len == strlen(decisions) &&
				    !memcmp(body, decisions, body_len)) ||
				   (body_len == 3 && !memcmp(body, "ok\n", 3)),
			   "200 with a body that was not published: %.*s", (int)body_len, body);
	return (size_t)(body - buf) + body_len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n, off = 0;
	char *answer;
	int sv[2];

	FUZZ_CHECK(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), "socketpair: %m");
	FUZZ_CHECK(!http_add_connection(srv, sv[1]), "the server refused a connection");
	send_all(sv[0], data, size < INPUT_MAX ? size : INPUT_MAX);
	shutdown(sv[0], SHUT_WR);
	answer = recv_all(sv[0], &n);
	close(sv[0]);
	while (off < n)
		off += check_response(answer + off, n - off);
	free(answer);
	return 0;
}
