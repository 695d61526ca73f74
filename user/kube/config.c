// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readfile.h"
#include "str.h"

__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen, int rc,
						      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

static int check_readable(const char *what, const char *path, char *err, size_t errlen)
{
	if (access(path, R_OK) == 0)
		return 0;
	snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
	return -errno;
}

int kube_config_in_cluster(struct kube_config *cfg, const char *token_path, const char *ca_path,
			   char *err, size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	int n, rc;

	memset(cfg, 0, sizeof(*cfg));
	if (!host || !*host)
		return fail(err, errlen, -ENOENT,
			    "not in a cluster: KUBERNETES_SERVICE_HOST is not set");
	if (!port || !*port)
		return fail(err, errlen, -ENOENT,
			    "not in a cluster: KUBERNETES_SERVICE_PORT is not set");
	if (strspn(port, "0123456789") != strlen(port) || atoi(port) < 1 || atoi(port) > 65535)
		return fail(err, errlen, -EINVAL, "KUBERNETES_SERVICE_PORT \"%s\" is not a port",
			    port);
	/* An IPv6 literal needs brackets in a URL, or its colons read as the port. */
	n = snprintf(cfg->server, sizeof(cfg->server),
		     strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
	if (n < 0 || (size_t)n >= sizeof(cfg->server))
		return fail(err, errlen, -ENAMETOOLONG, "KUBERNETES_SERVICE_HOST is too long");
	token_path = token_path ? token_path : KUBE_SA_TOKEN_PATH;
	ca_path = ca_path ? ca_path : KUBE_SA_CA_PATH;
	if (str_copy(cfg->token_path, sizeof(cfg->token_path), token_path) ||
	    str_copy(cfg->ca_path, sizeof(cfg->ca_path), ca_path))
		return fail(err, errlen, -ENAMETOOLONG, "service-account path is too long");
	rc = check_readable("service-account token", cfg->token_path, err, errlen);
	return rc ? rc : check_readable("service-account CA", cfg->ca_path, err, errlen);
}

/* One "key: value" line of YAML: key and value trimmed, quotes and list dash removed. */
static bool yaml_pair(char *line, char **key, char **val)
{
	char *colon, *end;

	line[strcspn(line, "\r\n")] = '\0';
	line += strspn(line, " \t");
	if (line[0] == '-' && line[1] == ' ')
		line += 2 + strspn(line + 2, " \t");
	if (*line == '#')
		return false;
	colon = strstr(line, ": ");
	end = line + strlen(line);
	/* "key:" alone opens a mapping (exec:, user:): a key with an empty value. */
	if (!colon && end > line && end[-1] == ':')
		colon = end - 1;
	if (!colon)
		return false;
	*colon = '\0';
	*key = line;
	*val = colon < end - 1 ? colon + 2 + strspn(colon + 2, " \t") : end;
	if ((**val == '"' || **val == '\'') && (end = strchr(*val + 1, **val))) {
		*end = '\0'; /* what follows the closing quote is a comment or nothing */
		(*val)++;
	} else if ((end = strstr(*val, " #"))) {
		*end = '\0';
	}
	for (end = *val + strlen(*val); end > *val && (end[-1] == ' ' || end[-1] == '\t'); end--)
		end[-1] = '\0';
	return true;
}

/* A file named in the kubeconfig: relative names are relative to its directory. */
static int kubeconfig_file(char *dst, size_t size, const char *kubeconfig, const char *file)
{
	const char *slash = strrchr(kubeconfig, '/');
	int n;

	if (file[0] == '/' || !slash)
		return str_copy(dst, size, file);
	n = snprintf(dst, size, "%.*s/%s", (int)(slash - kubeconfig), kubeconfig, file);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Stores the first value of each key the client uses; refuses what it cannot honour. */
static int kubeconfig_line(struct kube_config *cfg, const char *path, char *line, char *err,
			   size_t errlen)
{
	char *key, *val;
	int rc = 0;

	if (!yaml_pair(line, &key, &val))
		return 0;
	if (!strcmp(key, "certificate-authority-data") || !strcmp(key, "client-certificate") ||
	    !strcmp(key, "client-certificate-data") || !strcmp(key, "exec") ||
	    !strcmp(key, "auth-provider"))
		return fail(
			err, errlen, -ENOTSUP,
			"kubeconfig: \"%s\" is not supported (give certificate-authority as a file and a token or tokenFile)",
			key);
	if (!*val)
		return 0;
	if (!strcmp(key, "server") && !cfg->server[0])
		rc = str_copy(cfg->server, sizeof(cfg->server), val);
	else if (!strcmp(key, "certificate-authority") && !cfg->ca_path[0])
		rc = kubeconfig_file(cfg->ca_path, sizeof(cfg->ca_path), path, val);
	else if (!strcmp(key, "token") && !cfg->token[0] && !cfg->token_path[0])
		rc = str_copy(cfg->token, sizeof(cfg->token), val);
	else if (!strcmp(key, "tokenFile") && !cfg->token[0] && !cfg->token_path[0])
		rc = kubeconfig_file(cfg->token_path, sizeof(cfg->token_path), path, val);
	else if (!strcmp(key, "insecure-skip-tls-verify") && !strcmp(val, "true"))
		return fail(err, errlen, -ENOTSUP,
			    "kubeconfig: %s is refused: the API server must be verified", key);
	return rc ? fail(err, errlen, rc, "kubeconfig: value of \"%s\" is too long", key) : 0;
}

int kube_config_from_kubeconfig(struct kube_config *cfg, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char line[KUBE_TOKEN_MAX + 64];
	size_t n;
	int rc = 0;

	memset(cfg, 0, sizeof(*cfg));
	if (!f)
		return fail(err, errlen, -errno, "kubeconfig %s: cannot open it", path);
	while (!rc && fgets(line, sizeof(line), f))
		rc = kubeconfig_line(cfg, path, line, err, errlen);
	fclose(f);
	if (rc)
		return rc;
	if (!cfg->server[0])
		return fail(err, errlen, -EINVAL, "kubeconfig %s: no cluster server", path);
	/* Request paths start with '/': the base URL ends without one ("https://h//" too). */
	n = strlen(cfg->server);
	while (n > 8 && cfg->server[n - 1] == '/')
		cfg->server[--n] = '\0';
	if (strncmp(cfg->server, "https://", 8) || n == 8 || cfg->server[8] == '/')
		return fail(err, errlen, -EINVAL, "kubeconfig: server %s is not https://HOST",
			    cfg->server);
	if (!cfg->ca_path[0])
		return fail(err, errlen, -EINVAL, "kubeconfig %s: no certificate-authority file",
			    path);
	if (!cfg->token[0] && !cfg->token_path[0])
		return fail(err, errlen, -EINVAL, "kubeconfig %s: no user token or tokenFile",
			    path);
	rc = check_readable("kubeconfig certificate-authority", cfg->ca_path, err, errlen);
	if (!rc && cfg->token_path[0])
		rc = check_readable("kubeconfig tokenFile", cfg->token_path, err, errlen);
	return rc;
}

int kube_config_token(const struct kube_config *cfg, char *buf, size_t size, char *err,
		      size_t errlen)
{
	const char *what = cfg->token_path[0] ? cfg->token_path : "from the kubeconfig";
	size_t n;
	int rc;

	if (!cfg->token_path[0]) {
		rc = str_copy(buf, size, cfg->token);
	} else {
		rc = read_file_at(AT_FDCWD, cfg->token_path, buf, size);
		/* One read() of a full buffer may have cut the token: refuse, not send half. */
		if (!rc && strlen(buf) >= size - 1)
			rc = -E2BIG;
	}
	if (rc)
		return fail(err, errlen, rc, "token %s: cannot read it whole", what);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (!n)
		return fail(err, errlen, -ENODATA, "token %s is empty", what);
	/* It goes into a header line: anything but visible ASCII would corrupt the request. */
	for (size_t i = 0; i < n; i++)
		if (buf[i] <= ' ' || buf[i] > '~')
			return fail(err, errlen, -EINVAL, "token %s has invalid characters", what);
	return 0;
}
