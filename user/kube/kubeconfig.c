// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/kubeconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "kube/base64.h"
#include "kube/exec_cred.h"
#include "readfile.h"
#include "str.h"

/* Bound on a kubeconfig (real ones are a few KB; CA bundles inline add tens). */
#define KUBECONFIG_MAX (4u << 20)
/* Bound on a CA file read to hand its data to an exec plugin (provideClusterInfo). */
#define CA_FILE_MAX (1u << 20)

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

static void blob_free(struct kube_blob *b)
{
	if (b->data)
		explicit_bzero(b->data, b->len);
	free(b->data);
	*b = (struct kube_blob){0};
}

void kube_config_free(struct kube_config *cfg)
{
	blob_free(&cfg->ca_data);
	blob_free(&cfg->cert_data);
	blob_free(&cfg->key_data);
	kube_exec_free(cfg->exec);
	explicit_bzero(cfg, sizeof(*cfg));
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

/* ---- the kubeconfig as a YAML document --------------------------------------------------- */

struct kc {
	yaml_document_t doc;
	const char *path; /* the kubeconfig: named in errors, base of relative file names */
	mode_t mode;	  /* its permissions, and group: */
	gid_t gid;
	char *err;
	size_t errlen;
};

#define KC_FAIL(kc, rc, ...) fail((kc)->err, (kc)->errlen, rc, __VA_ARGS__)

static yaml_node_t *node(struct kc *kc, int index)
{
	return yaml_document_get_node(&kc->doc, index);
}

/* The scalar's text, or NULL when it is not a scalar or holds a NUL (YAML's "\0"). */
static const char *scalar(const yaml_node_t *n)
{
	const char *s =
		n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;

	return s && strlen(s) == n->data.scalar.length ? s : NULL;
}

/* YAML's null: a plain "", "~" or null (YAML 1.1, as Kubernetes' YAML reader takes it). */
static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	return s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
		!strcmp(s, "NULL"));
}

/* The value of key in a mapping node; NULL when absent or null. */
static yaml_node_t *get(struct kc *kc, const yaml_node_t *map, const char *key)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const char *k = scalar(node(kc, p->key));
		yaml_node_t *v = node(kc, p->value);

		if (k && !strcmp(k, key))
			return is_null(v) ? NULL : v;
	}
	return NULL;
}

/*
 * A string field of the entry `what` (for errors: `user "admin"`): *out is
 * NULL when absent, "" never (an empty string counts as absent, as in
 * client-go). -EINVAL when the value is not a string.
 */
static int get_str(struct kc *kc, const yaml_node_t *map, const char *key, const char *what,
		   const char **out)
{
	yaml_node_t *v = get(kc, map, key);

	*out = v ? scalar(v) : NULL;
	if (v && !*out)
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s: %s is not a string", kc->path, what,
			       key);
	if (*out && !**out)
		*out = NULL;
	return 0;
}

/* A boolean field (YAML 1.1 plain true/false, yes/no, on/off in any usual case); absent: false. */
static int get_bool(struct kc *kc, const yaml_node_t *map, const char *key, const char *what,
		    bool *out)
{
	static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes",
					  "YES",  "on",	  "On",	  "ON"};
	static const char *const no[] = {"false", "False", "FALSE", "no", "No",
					 "NO",	  "off",   "Off",   "OFF"};
	yaml_node_t *v = get(kc, map, key);
	const char *s = scalar(v);

	*out = false;
	if (!v)
		return 0;
	for (size_t i = 0; s && v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && i < 9; i++) {
		if (!strcmp(s, yes[i]) || !strcmp(s, no[i])) {
			*out = !strcmp(s, yes[i]);
			return 0;
		}
	}
	return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s: %s is not true or false", kc->path, what,
		       key);
}

/*
 * The entry named name in the list key ("clusters") of the document, as
 * kubectl finds it: its mapping under field ("cluster"). Names must be
 * unique. -ENOENT when there is none.
 */
static int find_named(struct kc *kc, const char *key, const char *field, const char *name,
		      yaml_node_t **out)
{
	yaml_node_t *list = get(kc, yaml_document_get_root_node(&kc->doc), key);

	*out = NULL;
	if (list && list->type != YAML_SEQUENCE_NODE)
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s is not a list", kc->path, key);
	for (yaml_node_item_t *i = list ? list->data.sequence.items.start : NULL;
	     list && i < list->data.sequence.items.top; i++) {
		yaml_node_t *item = node(kc, *i);
		const char *n;

		if (!item || item->type != YAML_MAPPING_NODE)
			return KC_FAIL(kc, -EINVAL,
				       "kubeconfig %s: an entry of %s is not a mapping", kc->path,
				       key);
		if (get_str(kc, item, "name", key, &n))
			return -EINVAL;
		if (!n || strcmp(n, name))
			continue;
		if (*out)
			return KC_FAIL(kc, -EINVAL, "kubeconfig %s: two %s are named \"%s\"",
				       kc->path, key, name);
		*out = get(kc, item, field);
		if (!*out || (*out)->type != YAML_MAPPING_NODE)
			return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s \"%s\" has no %s mapping",
				       kc->path, field, name, field);
	}
	if (!*out)
		return KC_FAIL(kc, -ENOENT, "kubeconfig %s: no %s named \"%s\"", kc->path, field,
			       name);
	return 0;
}

/* A file named in the kubeconfig: relative names are relative to its directory. */
static int kc_file(struct kc *kc, char *dst, size_t size, const char *file, const char *what)
{
	const char *slash = strrchr(kc->path, '/');
	int n;

	if (file[0] == '/' || !slash)
		n = str_copy(dst, size, file) ? -1 : 0;
	else
		n = snprintf(dst, size, "%.*s/%s", (int)(slash - kc->path), kc->path, file);
	if (n < 0 || (size_t)n >= size)
		return KC_FAIL(kc, -ENAMETOOLONG, "kubeconfig %s: %s: the path is too long",
			       kc->path, what);
	return 0;
}

/* A file the kubeconfig names, readable now (what reads it later reports its own errors). */
static int kc_readable(struct kc *kc, const char *path, const char *what, const char *key)
{
	if (access(path, R_OK) == 0)
		return 0;
	return KC_FAIL(kc, -errno, "kubeconfig %s: %s: %s %s: %s", kc->path, what, key, path,
		       strerror(errno));
}

/* A *-data field: base64 of PEM, decoded into b. */
static int kc_pem_data(struct kc *kc, struct kube_blob *b, const char *text, const char *what)
{
	b->data = base64_decode(text, strlen(text), &b->len);
	if (!b->data)
		return KC_FAIL(kc, errno == ENOMEM ? -ENOMEM : -EINVAL,
			       "kubeconfig %s: %s is not base64", kc->path, what);
	if (!strstr(b->data, "-----BEGIN "))
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s is not PEM (no -----BEGIN)",
			       kc->path, what);
	return 0;
}

/* The fields of a cluster, a user or a context that the client cannot honour: present is refused.
 */
struct refused {
	const char *key;
	const char *why;
};

static int refuse(struct kc *kc, const yaml_node_t *map, const char *what,
		  const struct refused *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (get(kc, map, list[i].key))
			return KC_FAIL(kc, -ENOTSUP, "kubeconfig %s: %s: %s is not supported (%s)",
				       kc->path, what, list[i].key, list[i].why);
	return 0;
}

static int load_cluster(struct kc *kc, struct kube_config *cfg, const yaml_node_t *c,
			const char *what)
{
	static const struct refused refused[] = {
		{"tls-server-name", "the server is verified by the name in its URL"},
		{"proxy-url", "qoslet connects to the server directly"},
	};
	const char *server, *ca, *ca_data;
	bool insecure;
	size_t n;
	int rc;

	if ((rc = refuse(kc, c, what, refused, 2)) ||
	    (rc = get_bool(kc, c, "insecure-skip-tls-verify", what, &insecure)))
		return rc;
	/* Refused, not honoured: the agent evicts pods and patches the node with what it gets. */
	if (insecure)
		return KC_FAIL(kc, -ENOTSUP,
			       "kubeconfig %s: %s: insecure-skip-tls-verify is refused: the API "
			       "server must be verified (give certificate-authority or "
			       "certificate-authority-data)",
			       kc->path, what);
	if ((rc = get_str(kc, c, "server", what, &server)) ||
	    (rc = get_str(kc, c, "certificate-authority", what, &ca)) ||
	    (rc = get_str(kc, c, "certificate-authority-data", what, &ca_data)))
		return rc;
	if (!server)
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s has no server", kc->path, what);
	if (str_copy(cfg->server, sizeof(cfg->server), server))
		return KC_FAIL(kc, -ENAMETOOLONG, "kubeconfig %s: %s: server is too long", kc->path,
			       what);
	/* Request paths start with '/': the base URL ends without one ("https://h//" too). */
	n = strlen(cfg->server);
	while (n > 8 && cfg->server[n - 1] == '/')
		cfg->server[--n] = '\0';
	if (strncmp(cfg->server, "https://", 8) || n == 8 || cfg->server[8] == '/')
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s: server %s is not https://HOST",
			       kc->path, what, cfg->server);
	if (ca && ca_data)
		return KC_FAIL(kc, -EINVAL,
			       "kubeconfig %s: %s: both certificate-authority and "
			       "certificate-authority-data (give one)",
			       kc->path, what);
	if (ca_data)
		return kc_pem_data(kc, &cfg->ca_data, ca_data, "certificate-authority-data");
	if (!ca)
		return 0; /* the system's CAs, as kubectl does */
	if ((rc = kc_file(kc, cfg->ca_path, sizeof(cfg->ca_path), ca, "certificate-authority")))
		return rc;
	return kc_readable(kc, cfg->ca_path, what, "certificate-authority");
}

/* One client certificate or key: a file (checked readable) or data. */
static int load_pem(struct kc *kc, const yaml_node_t *u, const char *what, const char *key,
		    char *path, size_t size, struct kube_blob *data)
{
	char data_key[64];
	const char *file, *text;
	int rc;

	snprintf(data_key, sizeof(data_key), "%s-data", key);
	if ((rc = get_str(kc, u, key, what, &file)) || (rc = get_str(kc, u, data_key, what, &text)))
		return rc;
	if (file && text)
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s: both %s and %s (give one)",
			       kc->path, what, key, data_key);
	if (text)
		return kc_pem_data(kc, data, text, data_key);
	if (!file)
		return 0;
	if ((rc = kc_file(kc, path, size, file, key)))
		return rc;
	return kc_readable(kc, path, what, key);
}

/* The command, then the list of strings args, as a NULL-terminated vector into *out. */
static int exec_argv(struct kc *kc, char ***out, const char *cmd, const yaml_node_t *args,
		     const char *what)
{
	size_t n = args ? (size_t)(args->data.sequence.items.top - args->data.sequence.items.start)
			: 0;
	char **v = *out = calloc(n + 2, sizeof(*v));

	if (!v || !(v[0] = strdup(cmd)))
		return KC_FAIL(kc, -ENOMEM, "kubeconfig %s: out of memory", kc->path);
	for (size_t i = 0; i < n; i++) {
		const char *s = scalar(node(kc, args->data.sequence.items.start[i]));

		if (!s)
			return KC_FAIL(kc, -EINVAL,
				       "kubeconfig %s: %s: an entry of exec args is not a string",
				       kc->path, what);
		if (!(v[i + 1] = strdup(s)))
			return KC_FAIL(kc, -ENOMEM, "kubeconfig %s: out of memory", kc->path);
	}
	return 0;
}

/* The exec env: a list of {name, value}, as "NAME=value". */
static int exec_env(struct kc *kc, struct kube_exec *e, const yaml_node_t *list, const char *what)
{
	size_t n = list ? (size_t)(list->data.sequence.items.top - list->data.sequence.items.start)
			: 0;

	e->env = calloc(n + 1, sizeof(*e->env));
	if (!e->env)
		return KC_FAIL(kc, -ENOMEM, "kubeconfig %s: out of memory", kc->path);
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *item = node(kc, list->data.sequence.items.start[i]);
		const char *name, *value;
		int rc;

		if (!item || item->type != YAML_MAPPING_NODE)
			return KC_FAIL(kc, -EINVAL,
				       "kubeconfig %s: %s: an env entry is not a mapping", kc->path,
				       what);
		if ((rc = get_str(kc, item, "name", what, &name)) ||
		    (rc = get_str(kc, item, "value", what, &value)))
			return rc;
		if (!name || strchr(name, '='))
			return KC_FAIL(kc, -EINVAL,
				       "kubeconfig %s: %s: an env entry has no valid name",
				       kc->path, what);
		if (asprintf(&e->env[i], "%s=%s", name, value ? value : "") < 0) {
			e->env[i] = NULL;
			return KC_FAIL(kc, -ENOMEM, "kubeconfig %s: out of memory", kc->path);
		}
	}
	return 0;
}

/*
 * KUBERNETES_EXEC_INFO: an ExecCredential with spec.interactive false and,
 * with provideClusterInfo, the cluster's server and CA data (Go's []byte:
 * base64). The cluster's exec extension (config) is not passed: refused.
 */
static int exec_info(struct kc *kc, struct kube_config *cfg, struct kube_exec *e, bool cluster_info)
{
	json_t *doc = json_pack("{s:s, s:s, s:{s:b}}", "apiVersion", e->api_version, "kind",
				"ExecCredential", "spec", "interactive", 0);
	json_t *cluster = NULL;
	char *ca = NULL, *text = NULL, *buf = NULL;
	int rc = -ENOMEM;

	if (doc && cluster_info) {
		const struct kube_blob *pem = &cfg->ca_data;
		struct kube_blob file = {0};

		if (!pem->len && cfg->ca_path[0]) {
			if (!(buf = malloc(CA_FILE_MAX)))
				goto out;
			rc = read_file_at(AT_FDCWD, cfg->ca_path, buf, CA_FILE_MAX);
			if (rc) {
				KC_FAIL(kc, rc, "kubeconfig %s: certificate-authority %s: %s",
					kc->path, cfg->ca_path, strerror(-rc));
				goto out;
			}
			file = (struct kube_blob){buf, strlen(buf)};
			pem = &file;
			rc = -ENOMEM;
		}
		cluster = json_pack("{s:s}", "server", cfg->server);
		if (!cluster || (pem->len && !(ca = base64_encode(pem->data, pem->len))) ||
		    (ca &&
		     json_object_set_new(cluster, "certificate-authority-data", json_string(ca))) ||
		    json_object_set_new(json_object_get(doc, "spec"), "cluster", cluster))
			goto out;
		cluster = NULL;
	}
	if (doc && (text = json_dumps(doc, JSON_COMPACT)) &&
	    asprintf(&e->exec_info, "KUBERNETES_EXEC_INFO=%s", text) >= 0)
		rc = 0;
	else
		e->exec_info = NULL;
out:
	if (rc == -ENOMEM)
		KC_FAIL(kc, rc, "kubeconfig %s: out of memory", kc->path);
	json_decref(cluster);
	json_decref(doc);
	free(text);
	free(ca);
	free(buf);
	return rc;
}

/* Whether the entry's extensions (a list of {name, extension}) has one named name. */
static bool has_extension(struct kc *kc, const yaml_node_t *map, const char *name)
{
	yaml_node_t *list = get(kc, map, "extensions");

	for (yaml_node_item_t *i = list && list->type == YAML_SEQUENCE_NODE
					   ? list->data.sequence.items.start
					   : NULL;
	     i && i < list->data.sequence.items.top; i++) {
		const char *n = scalar(get(kc, node(kc, *i), "name"));

		if (n && !strcmp(n, name))
			return true;
	}
	return false;
}

static int load_exec(struct kc *kc, struct kube_config *cfg, const yaml_node_t *x,
		     const yaml_node_t *cluster, const char *what)
{
	const char *cmd, *version, *mode, *hint;
	char path[PATH_MAX];
	yaml_node_t *args = get(kc, x, "args"), *env = get(kc, x, "env");
	struct kube_exec *e;
	bool cluster_info;
	int rc;

	if (x->type != YAML_MAPPING_NODE)
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s: exec is not a mapping", kc->path,
			       what);
	/* The plugin runs as the agent (root): others who may write the file could run anything. */
	if ((kc->mode & S_IWOTH) || ((kc->mode & S_IWGRP) && kc->gid != 0))
		return KC_FAIL(kc, -EPERM,
			       "kubeconfig %s: %s has an exec plugin, and the file is writable by "
			       "%s (mode %04o): refused; chmod go-w it",
			       kc->path, what, kc->mode & S_IWOTH ? "others" : "its group",
			       (unsigned int)(kc->mode & 07777));
	if ((rc = get_str(kc, x, "command", what, &cmd)) ||
	    (rc = get_str(kc, x, "apiVersion", what, &version)) ||
	    (rc = get_str(kc, x, "interactiveMode", what, &mode)) ||
	    (rc = get_str(kc, x, "installHint", what, &hint)) ||
	    (rc = get_bool(kc, x, "provideClusterInfo", what, &cluster_info)))
		return rc;
	if (!cmd)
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s: exec has no command", kc->path,
			       what);
	if (!version || (strcmp(version, "client.authentication.k8s.io/v1") &&
			 strcmp(version, "client.authentication.k8s.io/v1beta1")))
		return KC_FAIL(kc, -ENOTSUP,
			       "kubeconfig %s: %s: exec apiVersion %s is not supported (give "
			       "client.authentication.k8s.io/v1 or v1beta1)",
			       kc->path, what, version ? version : "(none)");
	/* v1 makes interactiveMode required (client-go refuses it missing); v1beta1 defaults it. */
	if (!mode && !strcmp(version, "client.authentication.k8s.io/v1"))
		return KC_FAIL(
			kc, -EINVAL,
			"kubeconfig %s: %s: exec interactiveMode is required with apiVersion "
			"client.authentication.k8s.io/v1",
			kc->path, what);
	if (mode && strcmp(mode, "Never") && strcmp(mode, "IfAvailable"))
		return KC_FAIL(kc, -ENOTSUP,
			       "kubeconfig %s: %s: exec interactiveMode %s is not supported: "
			       "qoslet runs plugins without a terminal (Never or IfAvailable)",
			       kc->path, what, mode);
	if ((args && args->type != YAML_SEQUENCE_NODE) || (env && env->type != YAML_SEQUENCE_NODE))
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s: exec args and env must be lists",
			       kc->path, what);
	if (cluster_info && has_extension(kc, cluster, "client.authentication.k8s.io/exec"))
		return KC_FAIL(kc, -ENOTSUP,
			       "kubeconfig %s: the cluster's client.authentication.k8s.io/exec "
			       "extension is not supported",
			       kc->path);
	/* As kubectl: a command with a '/' is a path (relative to the kubeconfig), else in PATH. */
	if (strchr(cmd, '/') && (rc = kc_file(kc, path, sizeof(path), cmd, "exec command")))
		return rc;
	e = cfg->exec = calloc(1, sizeof(*cfg->exec));
	if (!e || (hint && !(e->install_hint = strdup(hint))))
		return KC_FAIL(kc, -ENOMEM, "kubeconfig %s: out of memory", kc->path);
	snprintf(e->api_version, sizeof(e->api_version), "%s", version);
	if ((rc = exec_argv(kc, &e->argv, strchr(cmd, '/') ? path : cmd, args, what)) ||
	    (rc = exec_env(kc, e, env, what)))
		return rc;
	return exec_info(kc, cfg, e, cluster_info);
}

static int load_user(struct kc *kc, struct kube_config *cfg, const yaml_node_t *u,
		     const yaml_node_t *cluster, const char *what)
{
	static const struct refused refused[] = {
		{"auth-provider", "its plugins are gone from client-go; use an exec plugin"},
		{"username", "basic authentication; use a token, a client certificate or exec"},
		{"password", "basic authentication; use a token, a client certificate or exec"},
		{"as", "impersonation"},
		{"as-uid", "impersonation"},
		{"as-groups", "impersonation"},
		{"as-user-extra", "impersonation"},
	};
	const char *token, *file;
	yaml_node_t *x = get(kc, u, "exec");
	bool cert;
	int rc;

	if ((rc = refuse(kc, u, what, refused, sizeof(refused) / sizeof(refused[0]))) ||
	    (rc = get_str(kc, u, "token", what, &token)) ||
	    (rc = get_str(kc, u, "tokenFile", what, &file)) ||
	    (rc = load_pem(kc, u, what, "client-certificate", cfg->cert_path,
			   sizeof(cfg->cert_path), &cfg->cert_data)) ||
	    (rc = load_pem(kc, u, what, "client-key", cfg->key_path, sizeof(cfg->key_path),
			   &cfg->key_data)))
		return rc;
	cert = cfg->cert_path[0] || cfg->cert_data.len;
	if (cert != (cfg->key_path[0] || cfg->key_data.len))
		return KC_FAIL(
			kc, -EINVAL,
			"kubeconfig %s: %s: a client certificate needs its key and a key its "
			"certificate",
			kc->path, what);
	if (token && file)
		return KC_FAIL(kc, -EINVAL,
			       "kubeconfig %s: %s: both token and tokenFile (give one)", kc->path,
			       what);
	if (x && (token || file || cert))
		return KC_FAIL(kc, -EINVAL,
			       "kubeconfig %s: %s: exec together with a token or client "
			       "certificate (give one way to authenticate)",
			       kc->path, what);
	if (x)
		return load_exec(kc, cfg, x, cluster, what);
	if (!token && !file && !cert)
		return KC_FAIL(kc, -EINVAL,
			       "kubeconfig %s: %s has no credentials (token, tokenFile, "
			       "client-certificate and client-key, or exec)",
			       kc->path, what);
	if (token && str_copy(cfg->token, sizeof(cfg->token), token))
		return KC_FAIL(kc, -E2BIG, "kubeconfig %s: %s: token is too long", kc->path, what);
	if (!file)
		return 0;
	if ((rc = kc_file(kc, cfg->token_path, sizeof(cfg->token_path), file, "tokenFile")))
		return rc;
	return kc_readable(kc, cfg->token_path, what, "tokenFile");
}

/* current-context -> its cluster, user and namespace. */
static int load_context(struct kc *kc, struct kube_config *cfg)
{
	yaml_node_t *root = yaml_document_get_root_node(&kc->doc), *ctx, *cluster, *user;
	const char *current, *cluster_name, *user_name, *ns;
	char what[300];
	int rc;

	if (!root || root->type != YAML_MAPPING_NODE)
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: not a YAML mapping", kc->path);
	if ((rc = get_str(kc, root, "current-context", "the file", &current)))
		return rc;
	if (!current)
		return KC_FAIL(
			kc, -EINVAL,
			"kubeconfig %s: no current-context (kubectl config use-context NAME)",
			kc->path);
	if ((rc = find_named(kc, "contexts", "context", current, &ctx)))
		return rc;
	snprintf(what, sizeof(what), "context \"%s\"", current);
	if ((rc = get_str(kc, ctx, "cluster", what, &cluster_name)) ||
	    (rc = get_str(kc, ctx, "user", what, &user_name)) ||
	    (rc = get_str(kc, ctx, "namespace", what, &ns)))
		return rc;
	if (!cluster_name || !user_name)
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s names no %s", kc->path, what,
			       cluster_name ? "user" : "cluster");
	if (ns && str_copy(cfg->ns, sizeof(cfg->ns), ns))
		return KC_FAIL(kc, -EINVAL, "kubeconfig %s: %s: namespace is too long", kc->path,
			       what);
	if ((rc = find_named(kc, "clusters", "cluster", cluster_name, &cluster)) ||
	    (rc = find_named(kc, "users", "user", user_name, &user)))
		return rc;
	snprintf(what, sizeof(what), "cluster \"%s\"", cluster_name);
	if ((rc = load_cluster(kc, cfg, cluster, what)))
		return rc;
	snprintf(what, sizeof(what), "user \"%s\"", user_name);
	return load_user(kc, cfg, user, cluster, what);
}

/*
 * The whole file, bounded, into *text (grown as it is read: a pipe such as
 * KUBECONFIG=<(...) has no size to ask), and its mode into st; 0 or -errno
 * with err set.
 */
static int slurp(const char *path, char **text, size_t *len, struct stat *st, char *err,
		 size_t errlen)
{
	FILE *f = fopen(path, "re");
	size_t cap = 0;
	int rc = 0;

	*text = NULL;
	*len = 0;
	if (!f)
		return fail(err, errlen, -errno, "kubeconfig %s: cannot open it: %s", path,
			    strerror(errno));
	if (fstat(fileno(f), st))
		rc = fail(err, errlen, -errno, "kubeconfig %s: %s", path, strerror(errno));
	while (!rc && !feof(f)) {
		char *grown;

		if (*len == cap) {
			cap = cap ? cap * 2 : (size_t)st->st_size + 4096;
			if (*len > KUBECONFIG_MAX) {
				rc = fail(err, errlen, -EFBIG, "kubeconfig %s: larger than %u MiB",
					  path, KUBECONFIG_MAX >> 20);
				break;
			}
			grown = realloc(*text, cap + 1);
			if (!grown) {
				rc = fail(err, errlen, -ENOMEM, "kubeconfig %s: out of memory",
					  path);
				break;
			}
			*text = grown;
		}
		*len += fread(*text + *len, 1, cap - *len, f);
		if (ferror(f))
			rc = fail(err, errlen, -EIO, "kubeconfig %s: cannot read it", path);
	}
	fclose(f);
	if (rc) {
		if (*text)
			explicit_bzero(*text, *len);
		free(*text);
		*text = NULL;
	}
	return rc;
}

int kube_config_from_kubeconfig(struct kube_config *cfg, const char *path, char *err, size_t errlen)
{
	struct kc kc = {.path = path, .err = err, .errlen = errlen};
	yaml_parser_t parser;
	struct stat st;
	size_t len = 0;
	char *text;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	rc = slurp(path, &text, &len, &st, err, errlen);
	if (rc)
		return rc;
	kc.mode = st.st_mode;
	kc.gid = st.st_gid;
	if (!yaml_parser_initialize(&parser)) {
		free(text);
		return fail(err, errlen, -ENOMEM, "kubeconfig %s: out of memory", path);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &kc.doc)) {
		rc = fail(err, errlen, -EINVAL, "kubeconfig %s: line %zu column %zu: %s", path,
			  parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			  parser.problem ? parser.problem : "not YAML");
	} else {
		rc = load_context(&kc, cfg);
		yaml_document_delete(&kc.doc);
	}
	yaml_parser_delete(&parser);
	explicit_bzero(text, len);
	free(text);
	if (rc)
		kube_config_free(cfg);
	return rc;
}

int kube_config_token(const struct kube_config *cfg, char *buf, size_t size, char *err,
		      size_t errlen)
{
	const char *what = cfg->token_path[0] ? cfg->token_path
			   : cfg->exec	      ? "from the exec plugin"
					      : "from the kubeconfig";
	size_t n;
	int rc;

	if (cfg->exec) {
		rc = kube_exec_refresh(cfg->exec, err, errlen);
		if (rc)
			return rc;
		rc = str_copy(buf, size, cfg->exec->token ? cfg->exec->token : "");
	} else if (!cfg->token_path[0]) {
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
	/* Certificate users have no token; a token file that is empty is a fault. */
	if (!n && (cfg->token_path[0] || !(cfg->cert_path[0] || cfg->cert_data.len ||
					   (cfg->exec && cfg->exec->cert.len))))
		return fail(err, errlen, -ENODATA, "token %s is empty", what);
	/* It goes into a header line: anything but visible ASCII would corrupt the request. */
	for (size_t i = 0; i < n; i++)
		if (buf[i] <= ' ' || buf[i] > '~')
			return fail(err, errlen, -EINVAL, "token %s has invalid characters", what);
	return 0;
}

void kube_config_client_cert(const struct kube_config *cfg, struct kube_client_cert *out)
{
	*out = (struct kube_client_cert){0};
	if (cfg->exec && cfg->exec->cert.len) {
		out->cert = &cfg->exec->cert;
		out->key = &cfg->exec->key;
		return;
	}
	if (cfg->cert_data.len)
		out->cert = &cfg->cert_data;
	else if (cfg->cert_path[0])
		out->cert_path = cfg->cert_path;
	if (cfg->key_data.len)
		out->key = &cfg->key_data;
	else if (cfg->key_path[0])
		out->key_path = cfg->key_path;
}

void kube_config_unauthorized(const struct kube_config *cfg)
{
	if (cfg->exec)
		kube_exec_invalidate(cfg->exec);
}
