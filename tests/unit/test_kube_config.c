// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kubernetes API configuration (user/kube/config.c): in-cluster, kubeconfig, token reads. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kube/config.h"

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
	snprintf(dir, sizeof(dir), "/tmp/qoslet-kubecfg.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	put("token", "tok-1\n");
	put("ca.crt", "not parsed here\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
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

static void test_kubeconfig(void **state)
{
	static const struct {
		const char *text;
		int rc;
		const char *err;
	} cases[] = {
		{"clusters:\n- cluster:\n    server: https://api.example:6443/\n"
		 "    certificate-authority: ca.crt\nusers:\n- user:\n    tokenFile: token\n",
		 0, ""},
		{"clusters:\n- cluster:\n    server: 'https://api.example:6443' # prod\n"
		 "    certificate-authority: \"ca.crt\"\nusers:\n- user:\n    token: abc\n",
		 0, ""},
		{"clusters:\n- cluster:\n    server: http://api.example\n    certificate-authority: ca.crt\n"
		 "users:\n- user:\n    token: abc\n",
		 -EINVAL, "not https://"},
		{"clusters:\n- cluster:\n    certificate-authority: ca.crt\n", -EINVAL,
		 "no cluster server"},
		{"clusters:\n- cluster:\n    server: https://a\nusers:\n- user:\n    token: t\n",
		 -EINVAL, "certificate-authority"},
		{"clusters:\n- cluster:\n    server: https://a\n    certificate-authority: ca.crt\n",
		 -EINVAL, "no user token"},
		{"clusters:\n- cluster:\n    server: https://a\n    certificate-authority-data: AAAA\n",
		 -ENOTSUP, "certificate-authority-data"},
		{"users:\n- user:\n    exec:\n      command: aws\n", -ENOTSUP, "\"exec\""},
		{"clusters:\n- cluster:\n    server: https://a\n    insecure-skip-tls-verify: true\n",
		 -ENOTSUP, "insecure-skip-tls-verify"},
		{"clusters:\n- cluster:\n    server: https://a\n    certificate-authority: missing.crt\n"
		 "users:\n- user:\n    token: t\n",
		 -ENOENT, "missing.crt"},
	};
	struct kube_config cfg;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc;

		put("kubeconfig", cases[i].text);
		err[0] = '\0';
		rc = kube_config_from_kubeconfig(&cfg, at("kubeconfig"), err, sizeof(err));
		if (rc != cases[i].rc || !strstr(err, cases[i].err))
			fail_msg("case %zu: rc %d err '%s'", i, rc, err);
		if (rc)
			continue;
		assert_string_equal(cfg.server, "https://api.example:6443");
		assert_string_equal(cfg.ca_path, at("ca.crt")); /* relative to the kubeconfig */
	}
	assert_int_equal(kube_config_from_kubeconfig(&cfg, at("absent"), err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "absent"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_cluster),
		cmocka_unit_test(test_in_cluster_files),
		cmocka_unit_test(test_token_reread),
		cmocka_unit_test(test_kubeconfig),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
