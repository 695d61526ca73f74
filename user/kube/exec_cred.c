// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/exec_cred.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"

extern char **environ;

static void blob_wipe(struct kube_blob *b)
{
	if (b->data)
		explicit_bzero(b->data, b->len);
	free(b->data);
	*b = (struct kube_blob){0};
}

void kube_exec_invalidate(struct kube_exec *e)
{
	if (e->token)
		explicit_bzero(e->token, strlen(e->token));
	free(e->token);
	e->token = NULL;
	blob_wipe(&e->cert);
	blob_wipe(&e->key);
	e->expiry = 0;
	e->have = false;
}

static void free_strv(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

void kube_exec_free(struct kube_exec *e)
{
	if (!e)
		return;
	kube_exec_invalidate(e);
	free_strv(e->argv);
	free_strv(e->env);
	free(e->exec_info);
	free(e->install_hint);
	free(e);
}

time_t kube_rfc3339(const char *s)
{
	struct tm tm = {0};
	const char *p = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	long off = 0;
	time_t t;

	if (!p || !strchr("0123456789", s[0]))
		return -1;
	if (*p == '.') /* a fraction of a second: the whole second is close enough */
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if ((*p == 'Z' || *p == 'z') && !p[1]) {
		off = 0;
	} else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':' &&
		   strspn(p + 1, "0123456789") == 2 && strspn(p + 4, "0123456789") == 2) {
		off = ((p[1] - '0') * 10 + p[2] - '0') * 3600 +
		      ((p[4] - '0') * 10 + p[5] - '0') * 60;
		off = *p == '-' ? -off : off;
	} else {
		return -1;
	}
	t = timegm(&tm);
	return t == -1 ? -1 : t - off;
}

/* A string member of status, "" when absent; false when present but not a string. */
static bool status_str(const json_t *status, const char *key, const char **out)
{
	const json_t *v = json_object_get(status, key);

	*out = v ? json_string_value(v) : "";
	return *out != NULL;
}

static int blob_dup(struct kube_blob *b, const char *s)
{
	b->len = strlen(s);
	b->data = strdup(s);
	return b->data ? 0 : -ENOMEM;
}

int kube_exec_parse(struct kube_exec *e, const char *out, size_t len, char *err, size_t errlen)
{
	const char *cmd = e->argv[0], *tok, *cert, *key, *exp, *why = NULL;
	json_error_t jerr;
	json_t *doc = json_loadb(out, len, 0, &jerr);
	const json_t *status = json_object_get(doc, "status");
	time_t expiry = 0;

	kube_exec_invalidate(e);
	if (!doc)
		why = jerr.text;
	else if (!json_is_object(doc) ||
		 strcmp(json_string_value(json_object_get(doc, "kind")) ?: "", "ExecCredential"))
		why = "not an ExecCredential (kind)";
	else if (strcmp(json_string_value(json_object_get(doc, "apiVersion")) ?: "",
			e->api_version))
		why = "its apiVersion is not the configured one";
	else if (!json_is_object(status))
		why = "no status";
	else if (!status_str(status, "token", &tok) ||
		 !status_str(status, "clientCertificateData", &cert) ||
		 !status_str(status, "clientKeyData", &key) ||
		 !status_str(status, "expirationTimestamp", &exp))
		why = "a status field is not a string";
	else if (!*cert != !*key)
		why = "clientCertificateData and clientKeyData must come together";
	else if (!*tok && !*cert)
		why = "neither a token nor a client certificate and key";
	else if (*exp && (expiry = kube_rfc3339(exp)) <= 0)
		why = "expirationTimestamp is not an RFC 3339 time";
	if (why) {
		snprintf(err, errlen, "exec plugin %s: its output is refused: %s", cmd, why);
		json_decref(doc);
		return -EBADMSG;
	}
	if ((*tok && !(e->token = strdup(tok))) || (*cert && blob_dup(&e->cert, cert)) ||
	    (*key && blob_dup(&e->key, key))) {
		kube_exec_invalidate(e);
		json_decref(doc);
		snprintf(err, errlen, "exec plugin %s: out of memory", cmd);
		return -ENOMEM;
	}
	/* The document held the secrets too: wipe its copies. */
	if (*tok)
		explicit_bzero((char *)tok, strlen(tok));
	if (*key)
		explicit_bzero((char *)key, strlen(key));
	json_decref(doc);
	e->expiry = expiry;
	e->have = true;
	return 0;
}

/* environ, less the names the kubeconfig sets, then its env, then KUBERNETES_EXEC_INFO. */
static char **plugin_env(const struct kube_exec *e)
{
	size_t n = 0, k = 0;
	char **env;

	for (char **p = environ; p && *p; p++)
		n++;
	for (char **p = e->env; *p; p++)
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (char **p = environ; p && *p; p++) {
		size_t len = strcspn(*p, "=");
		bool overridden = !strncmp(*p, "KUBERNETES_EXEC_INFO=", 21);

		for (char **q = e->env; *q && !overridden; q++)
			overridden = !strncmp(*p, *q, len + 1);
		if (!overridden)
			env[k++] = *p;
	}
	for (char **p = e->env; *p; p++)
		env[k++] = *p;
	env[k] = e->exec_info;
	return env;
}

/* Reads the child's stdout until EOF, the bound, or the deadline (CLOCK_MONOTONIC ns). */
static int read_output(int fd, char *buf, size_t max, size_t *len, uint64_t deadline)
{
	*len = 0;
	for (;;) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;
		int n;

		if (now >= deadline)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)((deadline - now) / 1000000 + 1));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			continue;
		if (*len == max)
			return -EFBIG;
		r = read(fd, buf + *len, max - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return 0;
		*len += (size_t)r;
	}
}

static int run_plugin(struct kube_exec *e, char *out, size_t *len, char *err, size_t errlen)
{
	const char *cmd = e->argv[0];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	char **env = plugin_env(e);
	int fds[2], rc, status;
	pid_t pid;

	if (!env || pipe2(fds, O_CLOEXEC)) {
		free(env);
		snprintf(err, errlen, "exec plugin %s: %s", cmd,
			 env ? strerror(errno) : "out of memory");
		return env ? -errno : -ENOMEM;
	}
	/* stdin /dev/null (interactiveMode Never); stderr stays ours, as client-go leaves it. */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	/* The agent's API thread blocks SIGINT/SIGTERM/SIGHUP: the plugin must not inherit that. */
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawnp(&pid, cmd, &fa, &attr, e->argv, env);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	close(fds[1]);
	if (rc) {
		close(fds[0]);
		snprintf(err, errlen, "exec plugin %s: cannot run it: %s%s%s", cmd, strerror(rc),
			 e->install_hint ? "; " : "", e->install_hint ? e->install_hint : "");
		return -rc;
	}
	rc = read_output(fds[0], out, KUBE_EXEC_MAX_OUTPUT, len,
			 clock_ns(CLOCK_MONOTONIC) + KUBE_EXEC_TIMEOUT_S * 1000000000ULL);
	close(fds[0]);
	if (rc)
		kill(pid, SIGKILL); /* our own child, by pid */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == -ETIMEDOUT)
		snprintf(err, errlen, "exec plugin %s: no answer within %d s: killed", cmd,
			 KUBE_EXEC_TIMEOUT_S);
	else if (rc == -EFBIG)
		snprintf(err, errlen, "exec plugin %s: printed more than %u bytes", cmd,
			 KUBE_EXEC_MAX_OUTPUT);
	else if (rc)
		snprintf(err, errlen, "exec plugin %s: reading its output: %s", cmd, strerror(-rc));
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		rc = -EIO, snprintf(err, errlen, "exec plugin %s: %s %d", cmd,
				    WIFEXITED(status) ? "exited with status" : "killed by signal",
				    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return rc;
}

int kube_exec_refresh(struct kube_exec *e, char *err, size_t errlen)
{
	time_t now = time(NULL);
	size_t len = 0;
	char *out;
	int rc;

	if (e->have && (!e->expiry || now < e->expiry - KUBE_EXEC_REFRESH_S))
		return 0;
	kube_exec_invalidate(e);
	out = malloc(KUBE_EXEC_MAX_OUTPUT);
	if (!out) {
		snprintf(err, errlen, "exec plugin %s: out of memory", e->argv[0]);
		return -ENOMEM;
	}
	rc = run_plugin(e, out, &len, err, errlen);
	if (!rc)
		rc = kube_exec_parse(e, out, len, err, errlen);
	explicit_bzero(out, KUBE_EXEC_MAX_OUTPUT);
	free(out);
	return rc;
}
