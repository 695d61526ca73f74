// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * loadgen [-p http|redis] [-c CONNS] [-d SECS] [-w SECS] [-r RATE] [-u PATH] [-j] HOST PORT
 *
 * A load generator for the SLO benchmark (scripts/bench/slobench.sh): CONNS
 * keep-alive TCP connections to HOST:PORT, each with one request in flight,
 * sending HTTP/1.1 GET PATH or the RESP command GET of one key (set once per
 * connection before measuring), for SECS seconds, on one thread with epoll.
 *
 * Closed loop (no -r): a connection sends its next request as soon as the
 * last one is answered; latency runs from the send.
 * Open loop (-r RATE): requests are due at a fixed rate, RATE/CONNS per
 * connection, the connections' schedules staggered evenly. A request goes out
 * at its due time, or when its connection's previous answer arrives if that is
 * later, and its latency runs from the due time (the intended send time), so a
 * stalled server is charged for every request it kept waiting, not just one
 * (no coordinated omission; wrk2 does the same). Debian packages no open-loop
 * generator with percentiles: wrk and redis-benchmark are closed loop,
 * httperf has --rate but no percentiles.
 *
 * With -w WARM the load runs WARM seconds before the SECS that count: a
 * request whose latency origin falls in the warm-up is answered but counted
 * nowhere (not in the requests, errors, percentiles or seconds), so a
 * service can be measured from a moment its load has been steady for a while.
 * After SECS no new request is sent; those in flight get up to 2 s more and
 * count. Every latency is kept (CLOCK_MONOTONIC) and the percentiles are exact
 * (nearest rank), over the run and for each second of it (the requests whose
 * latency origin falls in that second): a transient, such as the seconds
 * before a controller acts, shows apart from the steady state. Output: a
 * text summary, or with -j one JSON object:
 *   {"proto","mode","conns","rate","warmup","secs","requests","errors","throughput",
 *    "latency_us":{"p50","p99","p999","max","mean"},"p99_per_s_us":[...]}
 * Exit 0 after the run, 1 on a failed connection or call, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_SEC 1000000000ULL
#define MAX_CONNS    1024
#define MAX_SECS     3600.0
#define MAX_RATE     1e7
#define DRAIN_NS     (2 * NSEC_PER_SEC)
/* A reply larger than this is an error: the benchmark serves a small page. */
#define BUF_SIZE  16384
#define REDIS_KEY "slobench:key"

enum proto { PROTO_HTTP, PROTO_REDIS };

struct conn {
	int fd;
	int busy;	  /* a request is in flight */
	uint64_t due;	  /* when the next request is due */
	uint64_t started; /* the latency's origin of the request in flight */
	size_t len;
	char buf[BUF_SIZE + 1];
};

struct samples {
	uint64_t *v;
	size_t n, cap;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static int push(struct samples *s, uint64_t v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 65536;
		uint64_t *p = realloc(s->v, cap * sizeof(*p));

		if (!p)
			return -1;
		s->v = p;
		s->cap = cap;
	}
	s->v[s->n++] = v;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest sample with at least q of them at or below it. */
static double quantile_us(const struct samples *s, double q)
{
	size_t i = (size_t)(q * (double)s->n);

	if (!s->n)
		return 0;
	if ((double)i < q * (double)s->n)
		i++;
	return (double)s->v[i ? i - 1 : 0] / 1e3;
}

/* Bytes of the complete reply at the start of buf (NUL-terminated), 0 while
 * incomplete, -1 when it cannot be one; *ok is 0 for an error reply. */
static long reply_len(enum proto p, const char *buf, size_t len, int *ok)
{
	const char *eol;

	if (p == PROTO_HTTP) {
		const char *end = strstr(buf, "\r\n\r\n"), *cl;
		char *rest;
		long body;

		if (!end)
			return len >= BUF_SIZE ? -1 : 0;
		if (strncmp(buf, "HTTP/1.", 7))
			return -1;
		*ok = !strncmp(buf + 8, " 200", 4);
		/* nginx sends Content-Length for a static file: no chunked bodies. */
		cl = strcasestr(buf, "\r\ncontent-length:");
		if (!cl || cl > end)
			return -1;
		body = strtol(cl + 17, &rest, 10);
		if (body < 0 || body > BUF_SIZE)
			return -1;
		body += end + 4 - buf;
		return (size_t)body <= len ? body : 0;
	}
	eol = strstr(buf, "\r\n");
	if (!eol)
		return len >= BUF_SIZE ? -1 : 0;
	*ok = buf[0] != '-';
	if (buf[0] == '+' || buf[0] == '-' || buf[0] == ':')
		return eol + 2 - buf;
	if (buf[0] == '$') {
		long n = strtol(buf + 1, NULL, 10);

		if (n < 0)
			return eol + 2 - buf; /* nil */
		if (n > BUF_SIZE)
			return -1;
		n += eol + 2 - buf + 2;
		return (size_t)n <= len ? n : 0;
	}
	return -1;
}

/* Reads what is there; returns the bytes of a complete reply (left at the
 * start of c->buf), 0 while incomplete, -1 on error or end of stream. */
static long conn_read(enum proto p, struct conn *c, int *ok)
{
	ssize_t n = read(c->fd, c->buf + c->len, BUF_SIZE - c->len);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	return reply_len(p, c->buf, c->len, ok);
}

static int send_all(int fd, const char *req, size_t len)
{
	/* A request of a few dozen bytes fits an empty socket buffer whole. */
	return write(fd, req, len) == (ssize_t)len ? 0 : -1;
}

/* Connects (blocking); for redis, sets the key the requests read, so that GET
 * answers a value rather than nil. */
static int conn_open(struct conn *c, const struct sockaddr_in *sa, enum proto p)
{
	static const char set[] = "*3\r\n$3\r\nSET\r\n$12\r\n" REDIS_KEY "\r\n$64\r\n"
				  "0123456789abcdef0123456789abcdef"
				  "0123456789abcdef0123456789abcdef\r\n";
	int one = 1, ok = 0;
	long n = 0;

	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (c->fd < 0 || connect(c->fd, (const struct sockaddr *)sa, sizeof(*sa)))
		return -1;
	/* Small requests and replies: no Nagle delay on either. */
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (p == PROTO_REDIS) {
		if (send_all(c->fd, set, sizeof(set) - 1))
			return -1;
		while ((n = conn_read(p, c, &ok)) == 0)
			;
		if (n < 0 || !ok)
			return -1;
		c->len = 0;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: loadgen [-p http|redis] [-c CONNS] [-d SECS] [-w SECS] [-r RATE] "
		   "[-u PATH] [-j] HOST PORT\n"
		   "  -p  protocol: http (GET PATH, HTTP/1.1 keep-alive; default) or redis\n"
		   "      (RESP GET of one 64-byte value)\n"
		   "  -c  connections, each with one request in flight (default 4, at most 1024)\n"
		   "  -d  seconds of sending that count (default 10, at most 3600)\n"
		   "  -w  seconds of sending before those, counted nowhere (default 0)\n"
		   "  -r  open loop at RATE requests/s in all, latency from each request's\n"
		   "      intended send time; without it, closed loop\n"
		   "  -u  the HTTP path (default /)\n"
		   "  -j  print one JSON object instead of text\n"
		   "HOST is an IPv4 address.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0}};
	enum proto proto = PROTO_HTTP;
	unsigned long nconns = 4;
	double secs = 10, warm = 0, rate = 0, elapsed;
	const char *path = "/";
	int json = 0, opt, ep;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct samples lat = {0}, *per_s;
	size_t n_per_s, sec;
	struct conn *conns;
	struct epoll_event ev, evs[64];
	uint64_t start, t0, end, interval = 0, errors = 0, sum = 0;
	char req[512], *rest;
	size_t reqlen;
	int inflight = 0;
	long port;

	while ((opt = getopt_long(argc, argv, "p:c:d:w:r:u:jh", longopts, NULL)) != -1) {
		errno = 0;
		rest = NULL;
		switch (opt) {
		case 'p':
			if (!strcmp(optarg, "http"))
				proto = PROTO_HTTP;
			else if (!strcmp(optarg, "redis"))
				proto = PROTO_REDIS;
			else
				rest = optarg; /* marks the error */
			break;
		case 'c':
			nconns = strtoul(optarg, &rest, 10);
			if (!*rest && *optarg >= '0' && *optarg <= '9' && nconns >= 1 &&
			    nconns <= MAX_CONNS)
				rest = NULL;
			break;
		case 'd':
			secs = strtod(optarg, &rest);
			if (!*rest && secs > 0 && secs <= MAX_SECS)
				rest = NULL;
			break;
		case 'w':
			warm = strtod(optarg, &rest);
			if (!*rest && warm >= 0 && warm <= MAX_SECS)
				rest = NULL;
			break;
		case 'r':
			rate = strtod(optarg, &rest);
			if (!*rest && rate > 0 && rate <= MAX_RATE)
				rest = NULL;
			break;
		case 'u':
			if (optarg[0] == '/' && strlen(optarg) < 256 && !strpbrk(optarg, " \r\n"))
				path = optarg;
			else
				rest = optarg;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (rest || errno) {
			fprintf(stderr, "loadgen: bad value for -%c: '%s'\n", opt, optarg);
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2 || inet_pton(AF_INET, argv[optind], &sa.sin_addr) != 1) {
		usage(stderr);
		return 2;
	}
	port = strtol(argv[optind + 1], &rest, 10);
	if (*rest || port < 1 || port > 65535) {
		fprintf(stderr, "loadgen: bad port '%s'\n", argv[optind + 1]);
		return 2;
	}
	sa.sin_port = htons((uint16_t)port);
	if (proto == PROTO_HTTP)
		reqlen = (size_t)snprintf(
			req, sizeof(req),
			"GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: loadgen\r\n\r\n", path,
			argv[optind]);
	else
		reqlen = (size_t)snprintf(req, sizeof(req), "*2\r\n$3\r\nGET\r\n$%zu\r\n%s\r\n",
					  strlen(REDIS_KEY), REDIS_KEY);

	conns = calloc(nconns, sizeof(*conns));
	n_per_s = (size_t)secs + ((double)(size_t)secs < secs);
	per_s = calloc(n_per_s, sizeof(*per_s));
	ep = epoll_create1(0);
	if (!conns || !per_s || ep < 0) {
		perror("loadgen: setup");
		return 1;
	}
	for (unsigned long i = 0; i < nconns; i++) {
		if (conn_open(&conns[i], &sa, proto)) {
			fprintf(stderr, "loadgen: connection %lu to %s:%ld: %s\n", i + 1,
				argv[optind], port, errno ? strerror(errno) : "bad reply");
			return 1;
		}
		ev.events = EPOLLIN;
		ev.data.u64 = i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev)) {
			perror("loadgen: epoll_ctl");
			return 1;
		}
	}

	start = now_ns();
	t0 = start + (uint64_t)(warm * 1e9); /* what counts starts here */
	end = t0 + (uint64_t)(secs * 1e9);
	if (rate > 0)
		interval = (uint64_t)((double)nconns * 1e9 / rate);
	for (unsigned long i = 0; i < nconns; i++)
		conns[i].due = start + (interval ? interval * i / nconns : 0);

	for (;;) {
		uint64_t now = now_ns(), next = UINT64_MAX;
		struct timespec ts;
		int n;

		if (now >= end + DRAIN_NS || (now >= end && !inflight))
			break;
		for (unsigned long i = 0; i < nconns; i++) {
			struct conn *c = &conns[i];

			if (c->busy || c->due >= end)
				continue;
			if (c->due <= now) {
				if (send_all(c->fd, req, reqlen)) {
					perror("loadgen: write");
					return 1;
				}
				/* Open loop: from the intended time, even when sent late. */
				c->started = interval ? c->due : now;
				c->busy = 1;
				inflight++;
			} else if (c->due < next) {
				next = c->due;
			}
		}
		if (next > end)
			next = now < end ? end : end + DRAIN_NS;
		ts.tv_sec = (time_t)((next - now) / NSEC_PER_SEC);
		ts.tv_nsec = (long)((next - now) % NSEC_PER_SEC);
		n = epoll_pwait2(ep, evs, 64, &ts, NULL);
		if (n < 0 && errno != EINTR) {
			perror("loadgen: epoll_pwait2");
			return 1;
		}
		for (int k = 0; k < n; k++) {
			struct conn *c = &conns[evs[k].data.u64];
			int ok = 0;
			long got = conn_read(proto, c, &ok);

			if (got == 0)
				continue;
			/* One request in flight: a reply must end the bytes read. */
			if (got < 0 || (size_t)got != c->len) {
				fprintf(stderr, "loadgen: %s\n",
					got < 0 ? "connection closed or bad reply"
						: "unexpected bytes after a reply");
				return 1;
			}
			now = now_ns();
			if (c->started >= t0) {
				errors += !ok;
				sec = (c->started - t0) / NSEC_PER_SEC;
				/* a closed-loop request sent during the drain counts in the last
				 * second */
				if (push(&lat, now - c->started) ||
				    push(&per_s[sec < n_per_s ? sec : n_per_s - 1],
					 now - c->started)) {
					perror("loadgen: realloc");
					return 1;
				}
				sum += now - c->started;
			}
			c->len = 0;
			c->busy = 0;
			inflight--;
			c->due = interval ? c->due + interval : now;
		}
	}
	elapsed = (double)(now_ns() - t0) / 1e9;
	if (elapsed > secs)
		elapsed = secs; /* the drain sends nothing new */

	qsort(lat.v, lat.n, sizeof(*lat.v), cmp_u64);
	if (json)
		printf("{\"proto\":\"%s\",\"mode\":\"%s\",\"conns\":%lu,\"rate\":%.1f,\"warmup\":%.3f,"
		       "\"secs\":%.3f,"
		       "\"requests\":%zu,\"errors\":%llu,\"throughput\":%.1f,\"latency_us\":{"
		       "\"p50\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f,\"mean\":%.1f},",
		       proto == PROTO_HTTP ? "http" : "redis", interval ? "open" : "closed", nconns,
		       rate, warm, elapsed, lat.n, (unsigned long long)errors,
		       (double)lat.n / elapsed, quantile_us(&lat, 0.5), quantile_us(&lat, 0.99),
		       quantile_us(&lat, 0.999), quantile_us(&lat, 1),
		       lat.n ? (double)sum / (double)lat.n / 1e3 : 0);
	else
		printf("%s, %s loop at %.1f/s (0: as fast as answered), %lu connections: %zu "
		       "requests in %.1f s (%.1f/s), %llu errors\n"
		       "latency us: p50 %.1f p99 %.1f p99.9 %.1f max %.1f\n",
		       proto == PROTO_HTTP ? "http" : "redis", interval ? "open" : "closed", rate,
		       nconns, lat.n, elapsed, (double)lat.n / elapsed, (unsigned long long)errors,
		       quantile_us(&lat, 0.5), quantile_us(&lat, 0.99), quantile_us(&lat, 0.999),
		       quantile_us(&lat, 1));
	printf(json ? "\"p99_per_s_us\":[" : "p99 us per second:");
	for (size_t i = 0; i < n_per_s; i++) {
		qsort(per_s[i].v, per_s[i].n, sizeof(*per_s[i].v), cmp_u64);
		printf(json ? "%s%.1f" : "%s %.1f", json && i ? "," : "",
		       quantile_us(&per_s[i], 0.99));
		free(per_s[i].v);
	}
	printf(json ? "]}\n" : "\n");
	free(per_s);
	free(lat.v);
	for (unsigned long i = 0; i < nconns; i++)
		close(conns[i].fd);
	free(conns);
	return fflush(stdout) ? 1 : 0;
}
