// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kubernetes API configuration (user/kube/config.c, exec_cred.c, base64.c): in-cluster,
 * kubeconfigs in each YAML style and each refusal by name, token reads, exec plugins.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "kube/base64.h"
#include "kube/kubeconfig.h"
#include "kube/exec_cred.h"
#include "tmpdir.h"

static char dir[64];

static void put(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const char *at(const char *name)
{
	static char path[4][128];
	static int next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	return p;
}

static int setup(void **state)
{
	(void)state;
	if (tmpdir_make(dir, sizeof(dir), "kubecfg"))
		return -1;
	put("token", "tok-1\n");
	put("ca.crt", "not parsed here\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

static void test_in_cluster(void **state)
{
	static const struct {
		const char *host, *port;
		int rc;
		const char *server, *err;
	} cases[] = {
		{"10.96.0.1", "443", 0, "https://10.96.0.1:443", ""},
		{"fd00:10:96::1", "443", 0, "https://[fd00:10:96::1]:443", ""},
		{NULL, "443", -ENOENT, "", "KUBERNETES_SERVICE_HOST"},
		{"", "443", -ENOENT, "", "KUBERNETES_SERVICE_HOST"},
		{"10.96.0.1", NULL, -ENOENT, "", "KUBERNETES_SERVICE_PORT"},
		{"10.96.0.1", "https", -EINVAL, "", "not a port"},
		{"10.96.0.1", "70000", -EINVAL, "", "not a port"},
		{"10.96.0.1", "0", -EINVAL, "", "not a port"},
	};
	struct kube_config cfg;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		cases[i].host ? setenv("KUBERNETES_SERVICE_HOST", cases[i].host, 1)
			      : unsetenv("KUBERNETES_SERVICE_HOST");
		cases[i].port ? setenv("KUBERNETES_SERVICE_PORT", cases[i].port, 1)
			      : unsetenv("KUBERNETES_SERVICE_PORT");
		err[0] = '\0';
		rc = kube_config_in_cluster(&cfg, at("token"), at("ca.crt"), err, sizeof(err));
		if (rc != cases[i].rc || strcmp(cfg.server, cases[i].server) ||
		    !strstr(err, cases[i].err))
			fail_msg("case %zu: rc %d server '%s' err '%s'", i, rc, cfg.server, err);
	}
}

static void test_in_cluster_files(void **state)
{
	struct kube_config cfg;
	char err[256];

	(void)state;
	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
	assert_int_equal(kube_config_in_cluster(&cfg, at("nope"), at("ca.crt"), err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "service-account token"));
	assert_non_null(strstr(err, at("nope")));
	assert_int_equal(kube_config_in_cluster(&cfg, at("token"), at("nope"), err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "service-account CA"));
	/* NULL means the service-account defaults. */
	kube_config_in_cluster(&cfg, NULL, NULL, err, sizeof(err));
	assert_string_equal(cfg.token_path, KUBE_SA_TOKEN_PATH);
	assert_string_equal(cfg.ca_path, KUBE_SA_CA_PATH);
}

static void test_token_reread(void **state)
{
	struct kube_config cfg = {0};
	char tok[KUBE_TOKEN_MAX], err[256];

	(void)state;
	snprintf(cfg.token_path, sizeof(cfg.token_path), "%s", at("token"));
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "tok-1");
	put("token", "tok-2"); /* rotated: the next request sees it */
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "tok-2");
	put("token", "\n");
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), -ENODATA);
	put("token", "two\nlines");
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), -EINVAL);
	put("token", "0123456789");
	assert_int_equal(kube_config_token(&cfg, tok, 8, err, sizeof(err)), -E2BIG);
	put("token", "tok-1\n");
	cfg.token_path[0] = '\0';
	snprintf(cfg.token, sizeof(cfg.token), "inline");
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "inline");
}

/* Loads text as the kubeconfig; the rc, and err containing want. */
static int load(struct kube_config *cfg, const char *text, char *err, size_t errlen)
{
	put("kubeconfig", text);
	err[0] = '\0';
	return kube_config_from_kubeconfig(cfg, at("kubeconfig"), err, errlen);
}

/* The preamble every case shares: one context "c" for cluster "k" and user "u". */
#define HEAD                                                                                       \
	"apiVersion: v1\nkind: Config\ncurrent-context: c\n"                                       \
	"contexts:\n- name: c\n  context: {cluster: k, user: u, namespace: web}\n"
#define CLUSTER(body) "clusters:\n- name: k\n  cluster:\n" body
#define USER(body)    "users:\n- name: u\n  user:\n" body
#define GOOD_CLUSTER                                                                               \
	CLUSTER("    server: https://api.example:6443/\n    certificate-authority: ca.crt\n")
#define GOOD_USER USER("    token: abc\n")

static void test_kubeconfig_block(void **state)
{
	struct kube_config cfg;
	char err[512], tok[KUBE_TOKEN_MAX];

	(void)state;
	assert_int_equal(
		load(&cfg, HEAD GOOD_CLUSTER USER("    tokenFile: token\n"), err, sizeof(err)), 0);
	assert_string_equal(cfg.server, "https://api.example:6443");
	assert_string_equal(cfg.ca_path, at("ca.crt")); /* relative to the kubeconfig */
	assert_string_equal(cfg.token_path, at("token"));
	assert_string_equal(cfg.ns, "web");
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "tok-1");
	kube_config_free(&cfg);
	/* Quotes, comments, a document marker, and keys in another order. */
	assert_int_equal(
		load(&cfg,
		     "---\n# made by hand\nusers:\n- user:\n    token: \"abc\" # inline\n"
		     "  name: u\nclusters:\n- cluster:\n    server: 'https://api.example:6443'\n"
		     "    certificate-authority: \"ca.crt\"\n  name: k\n"
		     "contexts:\n- context:\n    user: u\n    cluster: k\n  name: c\n"
		     "current-context: \"c\"\n",
		     err, sizeof(err)),
		0);
	assert_string_equal(cfg.token, "abc");
	assert_string_equal(cfg.ns, "");
	kube_config_free(&cfg);
}

/* The case: a flow mapping, once read as "no cluster server". */
static void test_kubeconfig_flow(void **state)
{
	struct kube_config cfg;
	char err[512];

	(void)state;
	assert_int_equal(
		load(&cfg,
		     "{apiVersion: v1, kind: Config, current-context: c,\n"
		     " contexts: [{name: c, context: {cluster: k, user: u}}],\n"
		     " clusters: [{name: k, cluster: {server: \"https://api.example:6443\",\n"
		     "   certificate-authority: ca.crt}}],\n"
		     " users: [{name: u, user: {token: abc}}]}\n",
		     err, sizeof(err)),
		0);
	assert_string_equal(cfg.server, "https://api.example:6443");
	assert_string_equal(cfg.ca_path, at("ca.crt"));
	assert_string_equal(cfg.token, "abc");
	kube_config_free(&cfg);
	/* Block with a flow mapping inside, as the issue quotes it. */
	assert_int_equal(load(&cfg,
			      HEAD "clusters:\n- name: k\n  cluster: {server: https://h:1, "
				   "certificate-authority: ca.crt}\n" GOOD_USER,
			      err, sizeof(err)),
			 0);
	assert_string_equal(cfg.server, "https://h:1");
	kube_config_free(&cfg);
}

/* Two clusters and users: only current-context's are taken, wherever they are in the file. */
static void test_kubeconfig_current_context(void **state)
{
	static const char text[] =
		"current-context: second\n"
		"contexts:\n- name: first\n  context: {cluster: one, user: alice}\n"
		"- name: second\n  context: {cluster: two, user: bob, namespace: batch}\n"
		"clusters:\n- name: one\n  cluster: {server: https://one:6443, certificate-authority: ca.crt}\n"
		"- name: two\n  cluster: {server: https://two:6443, certificate-authority: ca.crt}\n"
		"users:\n- name: alice\n  user: {token: alice-token}\n"
		"- name: bob\n  user: {token: bob-token}\n";
	struct kube_config cfg;
	char err[512];

	(void)state;
	assert_int_equal(load(&cfg, text, err, sizeof(err)), 0);
	assert_string_equal(cfg.server, "https://two:6443");
	assert_string_equal(cfg.token, "bob-token");
	assert_string_equal(cfg.ns, "batch");
	kube_config_free(&cfg);
}

static char pem_b64[256], key_b64[256];
static const char pem[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
static const char key[] = "-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\n";

/* kind and kubeadm write the CA and the client certificate and key as data. */
static void test_kubeconfig_data(void **state)
{
	char text[2048], err[512], tok[64];
	struct kube_config cfg;
	struct kube_client_cert cc;
	char *b;

	(void)state;
	b = base64_encode(pem, strlen(pem));
	snprintf(pem_b64, sizeof(pem_b64), "%s", b);
	free(b);
	b = base64_encode(key, strlen(key));
	snprintf(key_b64, sizeof(key_b64), "%s", b);
	free(b);
	snprintf(text, sizeof(text),
		 HEAD CLUSTER("    server: https://127.0.0.1:40000\n"
			      "    certificate-authority-data: %s\n")
			 USER("    client-certificate-data: %s\n    client-key-data: %s\n"),
		 pem_b64, pem_b64, key_b64);
	assert_int_equal(load(&cfg, text, err, sizeof(err)), 0);
	assert_int_equal(cfg.ca_data.len, strlen(pem));
	assert_memory_equal(cfg.ca_data.data, pem, strlen(pem));
	assert_string_equal(cfg.ca_path, "");
	kube_config_client_cert(&cfg, &cc);
	assert_non_null(cc.cert);
	assert_non_null(cc.key);
	assert_null(cc.cert_path);
	assert_memory_equal(cc.key->data, key, strlen(key));
	/* A certificate user sends no token, and that is no error. */
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "");
	kube_config_free(&cfg);
	/* The same as files, relative to the kubeconfig; no CA at all: the system's. */
	put("client.crt", pem);
	put("client.key", key);
	assert_int_equal(load(&cfg,
			      HEAD CLUSTER("    server: https://h\n")
				      USER("    client-certificate: client.crt\n"
					   "    client-key: client.key\n"),
			      err, sizeof(err)),
			 0);
	kube_config_client_cert(&cfg, &cc);
	assert_string_equal(cc.cert_path, at("client.crt"));
	assert_string_equal(cc.key_path, at("client.key"));
	assert_string_equal(cfg.ca_path, "");
	assert_int_equal(cfg.ca_data.len, 0);
	kube_config_free(&cfg);
}

/* Every refusal names what it refuses, and leaves nothing to free. */
static void test_kubeconfig_errors(void **state)
{
	static const struct {
		const char *text;
		int rc;
		const char *err;
	} cases[] = {
		{"clusters: [", -EINVAL, "line 2"},
		{"- a\n- b\n", -EINVAL, "not a YAML mapping"},
		{"", -EINVAL, "not a YAML mapping"},
		{GOOD_CLUSTER GOOD_USER, -EINVAL, "no current-context"},
		{"current-context: x\n" GOOD_CLUSTER GOOD_USER, -ENOENT, "no context named \"x\""},
		{HEAD GOOD_USER, -ENOENT, "no cluster named \"k\""},
		{HEAD GOOD_CLUSTER, -ENOENT, "no user named \"u\""},
		{HEAD "clusters: {k: 1}\n" GOOD_USER, -EINVAL, "clusters is not a list"},
		{HEAD "clusters:\n- k\n" GOOD_USER, -EINVAL,
		 "an entry of clusters is not a mapping"},
		{HEAD GOOD_CLUSTER "- name: k\n  cluster: {server: https://b}\n" GOOD_USER, -EINVAL,
		 "two clusters are named \"k\""},
		{HEAD "clusters:\n- name: k\n" GOOD_USER, -EINVAL, "cluster \"k\" has no cluster"},
		{"current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n" GOOD_CLUSTER
			 GOOD_USER,
		 -EINVAL, "names no user"},
		{HEAD CLUSTER("    server: http://api.example\n") GOOD_USER, -EINVAL,
		 "not https://HOST"},
		{HEAD CLUSTER("    server: [https://a]\n") GOOD_USER, -EINVAL,
		 "server is not a string"},
		{HEAD CLUSTER("    certificate-authority: ca.crt\n") GOOD_USER, -EINVAL,
		 "cluster \"k\" has no server"},
		{HEAD CLUSTER("    server: https://a\n    certificate-authority: missing.crt\n")
			 GOOD_USER,
		 -ENOENT, "missing.crt"},
		{HEAD CLUSTER("    server: https://a\n    insecure-skip-tls-verify: true\n")
			 GOOD_USER,
		 -ENOTSUP, "insecure-skip-tls-verify is refused"},
		{HEAD CLUSTER("    server: https://a\n    insecure-skip-tls-verify: maybe\n")
			 GOOD_USER,
		 -EINVAL, "insecure-skip-tls-verify is not true or false"},
		{HEAD CLUSTER("    server: https://a\n    tls-server-name: b\n") GOOD_USER,
		 -ENOTSUP, "tls-server-name is not supported"},
		{HEAD CLUSTER("    server: https://a\n    proxy-url: http://p:3128\n") GOOD_USER,
		 -ENOTSUP, "proxy-url is not supported"},
		{HEAD CLUSTER("    server: https://a\n    certificate-authority: ca.crt\n"
			      "    certificate-authority-data: AAAA\n") GOOD_USER,
		 -EINVAL, "both certificate-authority and certificate-authority-data"},
		{HEAD CLUSTER("    server: https://a\n    certificate-authority-data: '%%%%'\n")
			 GOOD_USER,
		 -EINVAL, "certificate-authority-data is not base64"},
		{HEAD CLUSTER("    server: https://a\n    certificate-authority-data: aGVsbG8=\n")
			 GOOD_USER,
		 -EINVAL, "certificate-authority-data is not PEM"},
		{HEAD GOOD_CLUSTER USER("    auth-provider: {name: oidc}\n"), -ENOTSUP,
		 "user \"u\": auth-provider is not supported"},
		{HEAD GOOD_CLUSTER USER("    username: admin\n    password: x\n"), -ENOTSUP,
		 "username is not supported (basic authentication"},
		{HEAD GOOD_CLUSTER USER("    token: t\n    as: someone\n"), -ENOTSUP,
		 "as is not supported (impersonation)"},
		{HEAD GOOD_CLUSTER USER("    token: t\n    tokenFile: token\n"), -EINVAL,
		 "both token and tokenFile"},
		{HEAD GOOD_CLUSTER USER("    client-certificate: ca.crt\n"), -EINVAL,
		 "needs its key"},
		{HEAD GOOD_CLUSTER USER(
			 "    client-certificate: ca.crt\n"
			 "    client-certificate-data: AAAA\n    client-key: ca.crt\n"),
		 -EINVAL, "both client-certificate and client-certificate-data"},
		{HEAD GOOD_CLUSTER USER(
			 "    client-key: nope.key\n    client-certificate: ca.crt\n"),
		 -ENOENT, "nope.key"},
		{HEAD GOOD_CLUSTER USER("    {}\n"), -EINVAL, "user \"u\" has no credentials"},
		{HEAD GOOD_CLUSTER USER("    token: t\n    exec: {command: x}\n"), -EINVAL,
		 "exec together with a token"},
		{HEAD GOOD_CLUSTER USER("    exec: {command: x}\n"), -ENOTSUP,
		 "exec apiVersion (none) is not supported"},
		{HEAD GOOD_CLUSTER USER("    exec: {command: x, apiVersion: "
					"client.authentication.k8s.io/v1alpha1}\n"),
		 -ENOTSUP, "v1alpha1 is not supported"},
		{HEAD GOOD_CLUSTER USER("    exec: {command: x, apiVersion: "
					"client.authentication.k8s.io/v1}\n"),
		 -EINVAL, "interactiveMode is required"},
		{HEAD GOOD_CLUSTER USER(
			 "    exec: {command: x, interactiveMode: Always, apiVersion: "
			 "client.authentication.k8s.io/v1}\n"),
		 -ENOTSUP, "interactiveMode Always is not supported"},
		{HEAD GOOD_CLUSTER USER(
			 "    exec: {apiVersion: client.authentication.k8s.io/v1beta1}\n"),
		 -EINVAL, "exec has no command"},
		{HEAD GOOD_CLUSTER USER("    exec: {command: x, args: a, apiVersion: "
					"client.authentication.k8s.io/v1beta1}\n"),
		 -EINVAL, "args and env must be lists"},
		{HEAD GOOD_CLUSTER USER("    exec: {command: x, env: [{value: v}], apiVersion: "
					"client.authentication.k8s.io/v1beta1}\n"),
		 -EINVAL, "env entry has no valid name"},
		{HEAD GOOD_CLUSTER USER("    token: \"a\\0b\"\n"), -EINVAL,
		 "token is not a string"},
		{HEAD CLUSTER("    server: https://a\n    extensions:\n"
			      "    - name: client.authentication.k8s.io/exec\n"
			      "      extension: {audience: x}\n")
			 USER("    exec: {command: x, provideClusterInfo: true, apiVersion: "
			      "client.authentication.k8s.io/v1beta1}\n"),
		 -ENOTSUP, "client.authentication.k8s.io/exec extension is not supported"},
	};
	struct kube_config cfg;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = load(&cfg, cases[i].text, err, sizeof(err));

		if (rc != cases[i].rc || !strstr(err, cases[i].err) ||
		    !strstr(err, at("kubeconfig")))
			fail_msg("case %zu: rc %d err '%s'", i, rc, err);
		/* Nothing left allocated (LeakSanitizer checks under make asan), and zeroed. */
		assert_null(cfg.exec);
		assert_null(cfg.ca_data.data);
	}
	assert_int_equal(kube_config_from_kubeconfig(&cfg, at("absent"), err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "absent"));
}

static void test_kubeconfig_exec(void **state)
{
	struct kube_config cfg;
	char err[512];
	json_t *info;

	(void)state;
	assert_int_equal(
		load(&cfg,
		     HEAD GOOD_CLUSTER USER(
			     "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
			     "      command: bin/plugin\n      args: [get-token, --cluster, k]\n"
			     "      env:\n      - name: REGION\n        value: eu\n"
			     "      interactiveMode: Never\n      provideClusterInfo: true\n"
			     "      installHint: install it from example.org\n"),
		     err, sizeof(err)),
		0);
	assert_non_null(cfg.exec);
	/* A command with a '/' is relative to the kubeconfig's directory; a bare name stays. */
	assert_string_equal(cfg.exec->argv[0], at("bin/plugin"));
	assert_string_equal(cfg.exec->argv[1], "get-token");
	assert_string_equal(cfg.exec->argv[3], "k");
	assert_null(cfg.exec->argv[4]);
	assert_string_equal(cfg.exec->env[0], "REGION=eu");
	assert_string_equal(cfg.exec->install_hint, "install it from example.org");
	assert_int_equal(strncmp(cfg.exec->exec_info, "KUBERNETES_EXEC_INFO=", 21), 0);
	info = json_loads(cfg.exec->exec_info + 21, 0, NULL);
	assert_non_null(info);
	assert_string_equal(json_string_value(json_object_get(info, "apiVersion")),
			    "client.authentication.k8s.io/v1");
	assert_string_equal(json_string_value(json_object_get(info, "kind")), "ExecCredential");
	assert_true(json_is_false(json_object_get(json_object_get(info, "spec"), "interactive")));
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_object_get(info, "spec"), "cluster"), "server")),
		"https://api.example:6443");
	/* ca.crt's bytes, base64 as Go writes []byte */
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(info, "spec"), "cluster"),
				    "certificate-authority-data")),
			    "bm90IHBhcnNlZCBoZXJlCg==");
	json_decref(info);
	kube_config_free(&cfg);
	/* v1beta1 defaults interactiveMode; without provideClusterInfo no cluster is sent. */
	assert_int_equal(load(&cfg,
			      HEAD GOOD_CLUSTER USER("    exec: {command: aws, apiVersion: "
						     "client.authentication.k8s.io/v1beta1}\n"),
			      err, sizeof(err)),
			 0);
	assert_string_equal(cfg.exec->argv[0], "aws");
	assert_null(strstr(cfg.exec->exec_info, "cluster"));
	kube_config_free(&cfg);
	/* As `aws eks update-kubeconfig` writes it: env null, IfAvailable, no cluster info. */
	assert_int_equal(load(&cfg,
			      HEAD GOOD_CLUSTER USER(
				      "    exec:\n"
				      "      apiVersion: client.authentication.k8s.io/v1beta1\n"
				      "      args: [--region, eu-west-1, eks, get-token]\n"
				      "      command: aws\n      env: null\n"
				      "      interactiveMode: IfAvailable\n"
				      "      provideClusterInfo: false\n"),
			      err, sizeof(err)),
			 0);
	assert_null(cfg.exec->env[0]);
	assert_string_equal(cfg.exec->argv[4], "get-token");
	kube_config_free(&cfg);
	/* The plugin runs as the agent: a kubeconfig others may write may not name one. */
	assert_int_equal(chmod(at("kubeconfig"), 0666), 0);
	assert_int_equal(kube_config_from_kubeconfig(&cfg, at("kubeconfig"), err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "writable by others (mode 0666): refused"));
	assert_int_equal(chmod(at("kubeconfig"), 0644), 0);
}

static void test_exec_parse(void **state)
{
	static const struct {
		const char *out;
		int rc;
		const char *err;
	} cases[] = {
		{"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		 "\"status\":{\"token\":\"t1\",\"expirationTimestamp\":\"2026-11-28T10:00:00Z\"}}",
		 0, ""},
		{"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		 "\"status\":{\"clientCertificateData\":\"C\",\"clientKeyData\":\"K\"}}",
		 0, ""},
		{"not json", -EBADMSG, "refused"},
		{"{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\","
		 "\"status\":{\"token\":\"t\"}}",
		 -EBADMSG, "apiVersion"},
		{"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"Pod\"}", -EBADMSG,
		 "kind"},
		{"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\"}",
		 -EBADMSG, "no status"},
		{"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		 "\"status\":{}}",
		 -EBADMSG, "neither a token"},
		{"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		 "\"status\":{\"clientCertificateData\":\"C\"}}",
		 -EBADMSG, "must come together"},
		{"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		 "\"status\":{\"token\":7}}",
		 -EBADMSG, "not a string"},
		{"{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
		 "\"status\":{\"token\":\"t\",\"expirationTimestamp\":\"tomorrow\"}}",
		 -EBADMSG, "RFC 3339"},
	};
	char *argv[] = {"plugin", NULL};
	struct kube_exec e = {.argv = argv, .api_version = "client.authentication.k8s.io/v1"};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		err[0] = '\0';
		rc = kube_exec_parse(&e, cases[i].out, strlen(cases[i].out), err, sizeof(err));
		if (rc != cases[i].rc || !strstr(err, cases[i].err) || e.have != !rc)
			fail_msg("case %zu: rc %d err '%s'", i, rc, err);
		if (i == 0) {
			assert_string_equal(e.token, "t1");
			assert_int_equal(e.expiry, 1795860000);
		}
		if (i == 1) {
			assert_null(e.token);
			assert_string_equal(e.cert.data, "C");
			assert_int_equal(e.expiry, 0);
		}
	}
	kube_exec_invalidate(&e);
}

static void test_rfc3339(void **state)
{
	(void)state;
	assert_int_equal(kube_rfc3339("2026-11-28T10:00:00Z"), 1795860000);
	assert_int_equal(kube_rfc3339("2026-11-28T10:00:00.123456Z"), 1795860000);
	assert_int_equal(kube_rfc3339("2026-11-28T11:30:00+01:30"), 1795860000);
	assert_int_equal(kube_rfc3339("2026-11-28T08:00:00-02:00"), 1795860000);
	assert_int_equal(kube_rfc3339("2026-11-28T10:00:00"), -1);
	assert_int_equal(kube_rfc3339("2026-11-28 10:00:00Z"), -1);
	assert_int_equal(kube_rfc3339("2026-11-28T10:00:00Zjunk"), -1);
	assert_int_equal(kube_rfc3339(""), -1);
}

static void test_base64(void **state)
{
	size_t len;
	char *s;

	(void)state;
	s = base64_encode("hello!?", 7);
	assert_string_equal(s, "aGVsbG8hPw==");
	free(s);
	s = base64_decode("aGVs\nbG8h Pw==", 14, &len);
	assert_non_null(s);
	assert_int_equal(len, 7);
	assert_string_equal(s, "hello!?");
	free(s);
	assert_null(base64_decode("aGVsbG8", 7, &len));	 /* not a whole group */
	assert_null(base64_decode("aGVs=G8h", 8, &len)); /* data after padding */
	assert_null(base64_decode("aGV$bG8h", 8, &len)); /* not the alphabet */
	assert_null(base64_decode("a===", 4, &len));	 /* three pads */
}

/* A real plugin: cached, re-run near expiry, after a 401, and its failures named. */
static void test_exec_run(void **state)
{
	char text[1024], err[512], tok[64], log[64];
	struct kube_config cfg;
	time_t soon = time(NULL) + KUBE_EXEC_REFRESH_S + 60;
	struct tm tm;
	char when[32];

	(void)state;
	gmtime_r(&soon, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(text, sizeof(text),
		 "#!/bin/sh\necho \"$1 $REGION $KUBERNETES_EXEC_INFO\" >> %s\n"
		 "n=$(wc -l < %s)\n"
		 "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
		 "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"run-%%s\","
		 "\"expirationTimestamp\":\"%%s\"}}' $n \"$EXPIRY\"\n",
		 at("plugin.log"), at("plugin.log"));
	put("plugin.sh", text);
	snprintf(log, sizeof(log), "%s", at("plugin.sh"));
	assert_int_equal(chmod(log, 0755), 0);
	snprintf(text, sizeof(text),
		 HEAD GOOD_CLUSTER USER("    exec:\n      command: ./plugin.sh\n      args: [one]\n"
					"      env: [{name: REGION, value: eu}, {name: EXPIRY, "
					"value: '%s'}]\n"
					"      apiVersion: client.authentication.k8s.io/v1beta1\n"),
		 when);
	assert_int_equal(load(&cfg, text, err, sizeof(err)), 0);
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "run-1");
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "run-1"); /* cached */
	kube_config_unauthorized(&cfg);
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "run-2"); /* a 401 dropped it */
	/* Expiring within the refresh margin: re-run at once. */
	cfg.exec->expiry = time(NULL) + KUBE_EXEC_REFRESH_S - 1;
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), 0);
	assert_string_equal(tok, "run-3");
	kube_config_free(&cfg);
	/* What it ran with: its argument, the kubeconfig's env, the exec info. */
	{
		char got[1024];
		FILE *f = fopen(at("plugin.log"), "r");

		assert_non_null(f);
		assert_non_null(fgets(got, sizeof(got), f));
		fclose(f);
		assert_non_null(strstr(got, "one eu {\"apiVersion\":"));
		assert_non_null(strstr(got, "\"interactive\":false"));
	}
	/* Failures, each named. */
	put("fail.sh", "#!/bin/sh\nexit 3\n");
	snprintf(log, sizeof(log), "%s", at("fail.sh"));
	assert_int_equal(chmod(log, 0755), 0);
	assert_int_equal(load(&cfg,
			      HEAD GOOD_CLUSTER USER("    exec: {command: ./fail.sh, apiVersion: "
						     "client.authentication.k8s.io/v1beta1}\n"),
			      err, sizeof(err)),
			 0);
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "exited with status 3"));
	kube_config_free(&cfg);
	assert_int_equal(load(&cfg,
			      HEAD GOOD_CLUSTER USER("    exec: {command: qoslet-no-such-plugin, "
						     "installHint: get it somewhere, apiVersion: "
						     "client.authentication.k8s.io/v1beta1}\n"),
			      err, sizeof(err)),
			 0);
	assert_int_equal(kube_config_token(&cfg, tok, sizeof(tok), err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "qoslet-no-such-plugin: cannot run it"));
	assert_non_null(strstr(err, "get it somewhere"));
	kube_config_free(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_cluster),
		cmocka_unit_test(test_in_cluster_files),
		cmocka_unit_test(test_token_reread),
		cmocka_unit_test(test_kubeconfig_block),
		cmocka_unit_test(test_kubeconfig_flow),
		cmocka_unit_test(test_kubeconfig_current_context),
		cmocka_unit_test(test_kubeconfig_data),
		cmocka_unit_test(test_kubeconfig_errors),
		cmocka_unit_test(test_kubeconfig_exec),
		cmocka_unit_test(test_exec_parse),
		cmocka_unit_test(test_rfc3339),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_exec_run),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
