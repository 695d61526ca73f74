// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The HTTP endpoint. Every request is answered on its first callback: the
 * endpoint is read-only, so a request with a body is refused before the
 * body is read, and headers are bounded by the per-connection memory limit.
 */
#include "report/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "confine.h"
#include "log.h"
#include "private_dir.h"
#include "report/mhd_dl.h"
#include "report/http_conns.h"

/* Request line and headers must fit here; MHD answers larger ones itself (431). */
#define HTTP_CONN_MEMORY (16 * 1024)
/* How long a scrape waits for the loop to render the last tick. */
#define HTTP_RENDER_WAIT_NS (2 * 1000000000ll)

/*
 * What one client may hold of a listener. The idle timeout is MHD's (any
 * byte renews it); the deadline is a request's whole life, from the
 * connection's start or the end of its last request, however it trickles
 * (http_conns.h). The per-IP limit applies to accepted connections only:
 * connections handed over with http_add_connection() all look like
 * loopback.
 */
struct limits {
	unsigned int conns, per_ip, idle_s;
	uint64_t deadline_ns;
};

/*
 * The scrape port: a scraper or two and a person with curl. A /metrics
 * request may wait 2 s for the render and then send megabytes to a slow
 * reader: 10 s covers both.
 */
static const struct limits scrape_limits = {32, 4, 10, 10 * 1000000000ull};
/*
 * The health port: the kubelet's two probes, from one address, each answered
 * at once from memory; nothing honest takes 2 s (the probes' timeout).
 */
static const struct limits health_limits = {16, 4, 2, 2 * 1000000000ull};
/*
 * The health socket: the exec probe (`qoslet health`), run by the kubelet in
 * the agent's container, once per probe. Only root can connect, so no
 * per-address limit (a UNIX socket's clients have no address anyway).
 */
static const struct limits socket_limits = {8, 0, 2, 2 * 1000000000ull};

#define METRICS_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define JSON_TYPE    "application/json"
#define TEXT_TYPE    "text/plain; charset=utf-8"

/*
 * A rendered text, shared by the server and the responses still sending
 * it, and freed by the last of them: no response copies it, and a text
 * the loop replaced lives only until its last reader is done.
 */
struct text {
	int refs; /* atomic */
	size_t len;
	char *data;
};

/* One listening socket and the MHD daemon (its own thread) serving it. */
struct listener {
	struct MHD_Daemon *d;
	int fd; /* the listening socket until MHD owns it (MHD_stop_daemon() closes it); -1 none */
	struct http_deadline deadline; /* the closure of its connection callbacks */
};

struct http_server {
	struct listener scrape;	     /* every path */
	struct listener health;	     /* /healthz and /readyz only (http_listen_health()) */
	struct listener health_unix; /* the same on a UNIX socket (http_listen_health_socket()) */
	char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* "" none */
	struct http_conns *conns;
	struct http_log_limit log;
	char address[64];
	int want_fd;	    /* eventfd: a request wants the last tick rendered; -1 off */
	pthread_mutex_t mu; /* guards everything below */
	pthread_cond_t published;
	/*
	 * The last tick's texts, once a request asked for them (indexed by
	 * enum http_text_id): dropped when the next tick ends, so between
	 * scrapes the agent holds none of its largest allocation.
	 */
	struct text *texts[HTTP_TEXT_NR];
	unsigned int want; /* HTTP_WANT() bits the loop has not taken yet */
	bool ready;
	/* health (http_health()): CLOCK_MONOTONIC of the last tick's end, else of the first call */
	uint64_t since_ns, stale_ns;
	char not_ready[256];
};

static void text_put(struct text *t)
{
	if (t && !__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL)) {
		free(t->data);
		free(t);
	}
}

/* MHD's callback when a response is done with its text (sent, or the connection gone). */
static void text_done(void *cls)
{
	text_put(cls);
}

/*
 * With the lock held: text `id` of the last tick, asking the loop for it
 * and waiting a while when it is not rendered yet; NULL when it did not
 * come (no tick yet, or the loop is stuck). A render the next tick's end
 * dropped before this thread woke is asked for again.
 */
static struct text *wait_text(struct http_server *s, enum http_text_id id)
{
	uint64_t one = 1;
	struct timespec until;
	long long ns;

	if (s->texts[id] || !s->ready || s->want_fd < 0)
		return s->texts[id];
	clock_gettime(CLOCK_MONOTONIC, &until);
	ns = until.tv_nsec + HTTP_RENDER_WAIT_NS;
	until.tv_sec += ns / 1000000000ll;
	until.tv_nsec = ns % 1000000000ll;
	while (!s->texts[id]) {
		if (!(s->want & HTTP_WANT(id))) {
			s->want |= HTTP_WANT(id);
			if (write(s->want_fd, &one, sizeof(one)) != sizeof(one))
				break;
		}
		if (pthread_cond_timedwait(&s->published, &s->mu, &until))
			break;
	}
	return s->texts[id];
}

static enum MHD_Result queue(struct MHD_Connection *c, unsigned int status, const char *type,
			     struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* The short fixed answers: string literals, which outlive every response. */
static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status, const char *s)
{
	return queue(c, status, TEXT_TYPE,
		     MHD_create_response_from_buffer(strlen(s), (void *)s, MHD_RESPMEM_PERSISTENT));
}

/* A rendered text: the response holds a reference to it until MHD is done sending. */
static enum MHD_Result reply_published(struct http_server *s, struct MHD_Connection *c,
				       enum http_text_id id)
{
	struct MHD_Response *r = NULL;
	struct text *t;
	bool ready;

	pthread_mutex_lock(&s->mu);
	t = wait_text(s, id);
	if (t)
		__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
	ready = s->ready;
	pthread_mutex_unlock(&s->mu);
	if (!t)
		return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				  ready ? "not rendered: the agent loop did not answer within 2 s\n"
					: "not ready: no tick yet\n");
	r = MHD_create_response_from_buffer_with_free_callback_cls(t->len, t->data, text_done, t);
	if (!r)
		text_put(t);
	return queue(c, MHD_HTTP_OK, id == HTTP_METRICS ? METRICS_TYPE : JSON_TYPE, r);
}

/* A one-line answer made for this request: MHD copies it. */
static enum MHD_Result reply_line(struct MHD_Connection *c, unsigned int status, const char *s)
{
	return queue(c, status, TEXT_TYPE,
		     MHD_create_response_from_buffer(strlen(s), (void *)s, MHD_RESPMEM_MUST_COPY));
}

/*
 * /healthz (readiness false) or /readyz (true): 200 "ok", or 503 with the
 * one-line reason. Both fail while the loop is stale; /readyz also before the
 * first tick and while the loop says why it is not ready.
 */
static enum MHD_Result reply_health(struct http_server *s, struct MHD_Connection *c, bool readiness)
{
	char line[384] = "";
	uint64_t age;

	pthread_mutex_lock(&s->mu);
	age = s->since_ns ? clock_ns(CLOCK_MONOTONIC) - s->since_ns : 0;
	if (s->stale_ns && age > s->stale_ns)
		snprintf(line, sizeof(line),
			 "%s: the agent loop is stale: no tick %s for %.1f s (limit %.1f s)\n",
			 readiness ? "not ready" : "unhealthy", s->ready ? "ended" : "yet",
			 (double)age / 1e9, (double)s->stale_ns / 1e9);
	else if (readiness && !s->ready)
		snprintf(line, sizeof(line), "not ready: no tick yet\n");
	else if (readiness && s->not_ready[0])
		snprintf(line, sizeof(line), "not ready: %s\n", s->not_ready);
	pthread_mutex_unlock(&s->mu);
	return line[0] ? reply_line(c, MHD_HTTP_SERVICE_UNAVAILABLE, line)
		       : reply_text(c, MHD_HTTP_OK, "ok\n");
}

static bool has_body(struct MHD_Connection *c)
{
	const char *len =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (len && strcmp(len, "0")) ||
	       MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

/* GET or HEAD without a body, as a read-only endpoint takes; else true with the refusal queued. */
static bool refused(struct MHD_Connection *c, const char *method, enum MHD_Result *ret)
{
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		*ret = reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET or HEAD\n");
	else if (has_body(c))
		*ret = reply_text(c, MHD_HTTP_CONTENT_TOO_LARGE, "requests take no body\n");
	else
		return false;
	return true;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct http_server *s = cls;
	enum MHD_Result ret;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	if (refused(c, method, &ret))
		return ret;
	if (!strcmp(url, "/metrics"))
		return reply_published(s, c, HTTP_METRICS);
	if (!strcmp(url, "/decisions"))
		return reply_published(s, c, HTTP_DECISIONS);
	if (!strcmp(url, "/healthz") || !strcmp(url, "/readyz"))
		return reply_health(s, c, !strcmp(url, "/readyz"));
	return reply_text(c, MHD_HTTP_NOT_FOUND,
			  "not found: /metrics, /healthz, /readyz, /decisions\n");
}

/* The health port: the probes' paths only, so that nothing there ever waits for the loop. */
static enum MHD_Result handle_health(void *cls, struct MHD_Connection *c, const char *url,
				     const char *method, const char *version,
				     const char *upload_data, size_t *upload_data_size,
				     void **con_cls)
{
	struct http_server *s = cls;
	enum MHD_Result ret;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	if (refused(c, method, &ret))
		return ret;
	if (!strcmp(url, "/healthz") || !strcmp(url, "/readyz"))
		return reply_health(s, c, !strcmp(url, "/readyz"));
	return reply_text(c, MHD_HTTP_NOT_FOUND,
			  "not found: the health port serves /healthz and /readyz\n");
}

/* MHD's warnings are mostly about clients (each refused connection): rate-limited. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http_server *s = cls;
	char msg[512];

	memcpy(msg, "http: ", 6);
	vsnprintf(msg + 6, sizeof(msg) - 6, fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	http_warn_limited(&s->log, msg);
}

/* "[::1]:9464" or "127.0.0.1:9464", for messages. */
static void name_address(char *buf, size_t size, const char *address, uint16_t port)
{
	bool v6 = strchr(address, ':');

	snprintf(buf, size, "%s%s%s:%u", v6 ? "[" : "", address, v6 ? "]" : "", port);
}

/* Our own socket, so a bind failure has its errno. Returns the fd or -errno. */
static int listen_on(const char *address, uint16_t port)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int one = 1, fd, err;

	if (inet_pton(AF_INET, address, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		len = sizeof(*in4);
	} else if (inet_pton(AF_INET6, address, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		len = sizeof(*in6);
	} else {
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a restarted agent must not wait for its old connections' TIME_WAIT */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 16)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Starts MHD on l with handler h and limits lim, listening on l->fd (MHD owns
 * it from here on), or with no listening socket when l->fd < 0. The
 * connection table (and its watchdog) comes first. Returns 0 or -EIO.
 */
static int start_daemon(struct http_server *s, struct listener *l, MHD_AccessHandlerCallback h,
			const struct limits *lim)
{
	/*
	 * poll(), not select(): select breaks on fds past 1024, and the collector
	 * keeps many open. Not epoll either: libmicrohttpd 0.9.75 in epoll mode
	 * missed a client that half-closed in the middle of a request (the fuzz
	 * corpus' "incomplete" stalled).
	 */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_POLL;
	/* The logger first: MHD prints what comes before it to stderr (and warns about that). */
	struct MHD_OptionItem opts[] = {
		{MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, s},
		{MHD_OPTION_CONNECTION_MEMORY_LIMIT, HTTP_CONN_MEMORY, NULL},
		{MHD_OPTION_CONNECTION_LIMIT, lim->conns, NULL},
		{MHD_OPTION_CONNECTION_TIMEOUT, lim->idle_s, NULL},
		{MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)http_conns_notify, &l->deadline},
		{MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)http_conns_completed, &l->deadline},
		/* MHD refuses MHD_OPTION_LISTEN_SOCKET (even -1) with MHD_USE_NO_LISTEN_SOCKET */
		{l->fd >= 0 ? MHD_OPTION_LISTEN_SOCKET : MHD_OPTION_END, l->fd, NULL},
		{l->fd >= 0 && lim->per_ip ? MHD_OPTION_PER_IP_CONNECTION_LIMIT : MHD_OPTION_END,
		 lim->per_ip, NULL},
		{MHD_OPTION_END, 0, NULL},
	};
	sigset_t all, old;

	if (!s->conns && !(s->conns = http_conns_new()))
		return -EIO;
	l->deadline = (struct http_deadline){.conns = s->conns, .ns = lim->deadline_ns};
	/* implies MHD_USE_ITC, which MHD_add_connection() needs to wake the server thread */
	if (l->fd < 0)
		flags |= MHD_USE_NO_LISTEN_SOCKET;
	/* The server thread inherits this mask: SIGTERM must reach the agent loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	l->d = MHD_start_daemon(flags, 0, NULL, NULL, h, s, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!l->d)
		return -EIO;
	l->fd = -1;
	return 0;
}

static struct http_server *server_new(void)
{
	struct http_server *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;

	if (!s)
		return NULL;
	s->scrape.fd = s->health.fd = s->health_unix.fd = s->want_fd = -1;
	s->log = (struct http_log_limit)HTTP_LOG_LIMIT_INIT;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->published, &ca);
	pthread_condattr_destroy(&ca);
	return s;
}

/* Binds l to address:port; err names the address on failure. 0 or -errno. */
static int listener_bind(struct listener *l, const char *address, uint16_t port, char *err,
			 size_t errlen)
{
	char name[96];
	int fd = listen_on(address, port);

	if (fd < 0) {
		name_address(name, sizeof(name), address, port);
		snprintf(err, errlen, "cannot listen on %s: %s", name, strerror(-fd));
		return fd;
	}
	l->fd = fd;
	return 0;
}

int http_listen(struct http_server **out, const char *address, uint16_t port, char *err,
		size_t errlen)
{
	struct http_server *s;
	int rc;

	*out = NULL;
	/* First: a missing library must fail before the port is taken. */
	rc = mhd_dl_open(err, errlen);
	if (rc)
		return rc;
	s = server_new();
	if (!s)
		return -ENOMEM;
	snprintf(s->address, sizeof(s->address), "%s", address);
	rc = listener_bind(&s->scrape, address, port, err, errlen);
	if (rc) {
		http_stop(s);
		return rc;
	}
	*out = s;
	return 0;
}

int http_listen_health(struct http_server *s, uint16_t port, char *err, size_t errlen)
{
	return listener_bind(&s->health, s->address, port, err, errlen);
}

/*
 * The directory of the health socket must be the agent user's alone
 * (private_dir.h, made 0700 when absent): whoever else may write it could
 * replace the socket with their own, and answer (or not) the kubelet's
 * probes. 0, or -errno with err naming the problem.
 */
static int check_socket_dir(const char *path, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], why[384];
	const char *slash = strrchr(path, '/');
	int fd;

	snprintf(dir, sizeof(dir), "%.*s", slash && slash != path ? (int)(slash - path) : 1, path);
	fd = private_dir_open(dir, why, sizeof(why));
	if (fd < 0) {
		snprintf(err, errlen, "health socket %s: %s", path, why);
		return fd;
	}
	close(fd);
	return 0;
}

/*
 * Clears the way for a socket at path: nothing there, or a socket no one
 * serves (a stopped agent's), which is removed. A socket that answers is
 * another agent's; anything else is not ours to remove.
 */
static int clear_socket_path(const struct sockaddr_un *sa, char *err, size_t errlen)
{
	struct stat st;
	int fd, served;

	if (lstat(sa->sun_path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "health socket %s: the path exists and is not a socket",
			 sa->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	served = !connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (served) {
		snprintf(err, errlen,
			 "health socket %s: another process serves it (a second agent?)",
			 sa->sun_path);
		return -EADDRINUSE;
	}
	return unlink(sa->sun_path) ? -errno : 0;
}

int http_listen_health_socket(struct http_server *s, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, rc;

	err[0] = '\0';
	if (path[0] != '/' || strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "health socket %s: not an absolute path of at most %zu bytes",
			 path, sizeof(sa.sun_path) - 1);
		return -EINVAL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	rc = check_socket_dir(path, err, errlen);
	if (!rc && (rc = clear_socket_path(&sa, err, errlen)) && !err[0])
		snprintf(err, errlen, "health socket %s: %s", path, strerror(-rc));
	if (rc)
		return rc;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/*
	 * bind() gives the new file the socket inode's mode (less the umask):
	 * 0600 before bind, so there is no moment in which others may connect.
	 */
	if (fchmod(fd, 0600) || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		rc = -errno;
		snprintf(err, errlen, "cannot listen on health socket %s: %s", path, strerror(-rc));
		close(fd);
		return rc;
	}
	s->health_unix.fd = fd;
	snprintf(s->socket_path, sizeof(s->socket_path), "%s", path);
	return 0;
}

/* Each listener that has a socket (the scrape one always: unbound, it is fed connections). */
static int start_daemons(struct http_server *s)
{
	return start_daemon(s, &s->scrape, handle, &scrape_limits) ||
	       (s->health.fd >= 0 && start_daemon(s, &s->health, handle_health, &health_limits)) ||
	       (s->health_unix.fd >= 0 &&
		start_daemon(s, &s->health_unix, handle_health, &socket_limits));
}

struct confined_start {
	struct http_server *s;
	int rc, landlock; /* start_daemons(); confine_thread_no_files() */
};

static void *start_confined(void *arg)
{
	struct confined_start *c = arg;

	c->landlock = confine_thread_no_files();
	c->rc = start_daemons(c->s);
	return NULL;
}

/*
 * Starts the daemons from a thread of its own that Landlock confines first
 * (confine.h): every server thread (MHD's, the deadline watchdog) is made
 * by it and inherits that, so no request can make the agent read a file,
 * whatever bug it finds. Where Landlock is missing the log says so once,
 * and the server runs as before. 0 or -EIO.
 */
static int start_confined_daemons(struct http_server *s)
{
	static bool said;
	struct confined_start c = {.s = s};
	pthread_t t;
	int err;

	/*
	 * glibc reads the time zone once per process, at its first use (MHD's
	 * Date header): here, not in a confined thread, which could not open
	 * /etc/localtime and would leave every thread on UTC.
	 */
	tzset();
	err = pthread_create(&t, NULL, start_confined, &c);

	if (err) {
		errno = err;
		return -EIO;
	}
	pthread_join(t, NULL);
	if (!said) {
		said = true;
		if (c.landlock > 0)
			log_info(
				"http: the server threads are confined (Landlock ABI %d): they open "
				"no file%s",
				c.landlock,
				c.landlock >= 4 ? " and bind or connect no TCP port" : "");
		else
			log_warn(
				"http: the server threads are not confined: Landlock: %s%s",
				strerror(-c.landlock),
				c.landlock == -ENOSYS || c.landlock == -EOPNOTSUPP
					? " (Linux 5.13 or later with landlock in its lsm= list has "
					  "it)"
					: "");
	}
	return c.rc ? -EIO : 0;
}

int http_serve(struct http_server *s, char *err, size_t errlen)
{
	if (start_confined_daemons(s)) {
		snprintf(err, errlen, "cannot start the HTTP server");
		return -EIO;
	}
	return 0;
}

int http_start(struct http_server **out, const char *address, uint16_t port, char *err,
	       size_t errlen)
{
	int rc = http_listen(out, address, port, err, errlen);

	if (!rc && (rc = http_serve(*out, err, errlen))) {
		http_stop(*out);
		*out = NULL;
	}
	return rc;
}

int http_start_unbound(struct http_server **out)
{
	struct http_server *s;
	char err[256];
	int rc;

	*out = NULL;
	rc = mhd_dl_open(err, sizeof(err));
	if (rc) {
		log_err("http: %s", err);
		return rc;
	}
	s = server_new();
	if (!s)
		return -ENOMEM;
	if (start_confined_daemons(s)) {
		http_stop(s);
		return -EIO;
	}
	*out = s;
	return 0;
}

int http_add_connection(struct http_server *s, int fd)
{
	/* MHD wants a peer address; a socketpair has none that MHD can use: loopback it is. */
	struct sockaddr_in peer = {.sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	if (MHD_add_connection(s->scrape.d, fd, (struct sockaddr *)&peer, sizeof(peer)) != MHD_YES)
		return errno ? -errno : -EIO;
	return 0;
}

int http_publish(struct http_server *s, enum http_text_id id, char *data, size_t len)
{
	struct text *t = malloc(sizeof(*t)), *old;

	if (!t) {
		free(data);
		return -ENOMEM;
	}
	*t = (struct text){.refs = 1, .len = len, .data = data};
	pthread_mutex_lock(&s->mu);
	old = s->texts[id];
	s->texts[id] = t;
	s->ready = true;
	pthread_cond_broadcast(&s->published);
	pthread_mutex_unlock(&s->mu);
	text_put(old);
	return 0;
}

int http_render_on_demand(struct http_server *s)
{
	if (s->want_fd < 0)
		s->want_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return s->want_fd < 0 ? -errno : s->want_fd;
}

unsigned int http_render_wanted(struct http_server *s)
{
	uint64_t n = 0;
	unsigned int want;

	if (s->want_fd < 0 || read(s->want_fd, &n, sizeof(n)) != sizeof(n) || !n)
		return 0;
	pthread_mutex_lock(&s->mu);
	want = s->want;
	s->want = 0;
	pthread_mutex_unlock(&s->mu);
	return want;
}

void http_tick_done(struct http_server *s)
{
	struct text *old[HTTP_TEXT_NR];

	pthread_mutex_lock(&s->mu);
	memcpy(old, s->texts, sizeof(old));
	memset(s->texts, 0, sizeof(s->texts));
	s->ready = true; /* /readyz: a tick completed, whether or not anyone scraped it */
	s->since_ns = clock_ns(CLOCK_MONOTONIC);
	pthread_mutex_unlock(&s->mu);
	/* outside the lock: freeing megabytes must not hold up a request */
	for (int i = 0; i < HTTP_TEXT_NR; i++)
		text_put(old[i]);
}

void http_health(struct http_server *s, const struct http_health *h)
{
	pthread_mutex_lock(&s->mu);
	if (!s->since_ns)
		s->since_ns = clock_ns(CLOCK_MONOTONIC);
	s->stale_ns = h->stale_ns;
	snprintf(s->not_ready, sizeof(s->not_ready), "%s", h->not_ready ? h->not_ready : "");
	pthread_mutex_unlock(&s->mu);
}

static void listener_stop(struct listener *l)
{
	if (l->d)
		MHD_stop_daemon(l->d);
	if (l->fd >= 0)
		close(l->fd);
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	/* the daemons first: their last connections leave the table as they close */
	listener_stop(&s->scrape);
	listener_stop(&s->health);
	listener_stop(&s->health_unix);
	if (s->socket_path[0])
		unlink(s->socket_path);
	http_conns_free(s->conns);
	if (s->want_fd >= 0)
		close(s->want_fd);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->published);
	for (int i = 0; i < HTTP_TEXT_NR; i++)
		text_put(s->texts[i]);
	free(s);
}
