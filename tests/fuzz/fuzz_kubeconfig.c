// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kubeconfig reader (kube_config_from_kubeconfig, user/kube/config.h)
 * on arbitrary file contents, and then, for a config it accepts, the token
 * the client would put in its Authorization header (kube_config_token) and
 * the client certificate it would present; then kube_config_free.
 *
 * The file is a memfd under /proc/self/fd, so relative file names in it
 * resolve there (and do not exist); absolute ones (the seeds use /dev/null)
 * reach the accepting paths.
 *
 * The file is made 0600, as a kubeconfig with an exec plugin must not be
 * writable by others. Exec plugins are never run: for a config with one,
 * the checks stop at
 * what loading built (the command, KUBERNETES_EXEC_INFO as JSON), since
 * kube_config_token would run the command the input names.
 *
 * Checks: an error is a negative errno with a message and leaves nothing
 * allocated; an accepted config has an https:// server without a trailing
 * slash, at most one CA source, and exactly one way to authenticate (a
 * token, a token file, an exec plugin), or a client certificate with its
 * key; a token that is handed out is visible ASCII, which is what keeps it
 * from splitting the request's header lines.
 */
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "kube/kubeconfig.h"
#include "kube/exec_cred.h"

static void check_token(const struct kube_config *cfg)
{
	char tok[KUBE_TOKEN_MAX], err[256] = "";
	int r = kube_config_token(cfg, tok, sizeof(tok), err, sizeof(err));

	if (r) {
		FUZZ_CHECK(r < 0 && err[0], "kube_config_token returned %d (%s)", r, err);
		return;
	}
	FUZZ_CHECK(tok[0] || cfg->cert_path[0] || cfg->cert_data.len, "an empty token");
	for (const char *p = tok; *p; p++)
		FUZZ_CHECK(*p > ' ' && *p <= '~', "token byte 0x%02x", (unsigned char)*p);
}

static void check_exec(const struct kube_exec *e)
{
	const char *info = e->exec_info;
	json_t *doc;

	FUZZ_CHECK(e->argv && e->argv[0] && e->argv[0][0], "an exec plugin without a command");
	FUZZ_CHECK(e->env, "an exec plugin without its env vector");
	FUZZ_CHECK(info && !strncmp(info, "KUBERNETES_EXEC_INFO=", 21), "exec info \"%s\"",
		   info ? info : "(null)");
	doc = json_loads(info + 21, 0, NULL);
	FUZZ_CHECK(json_is_object(doc), "exec info is not a JSON object: %s", info);
	json_decref(doc);
	FUZZ_CHECK(!e->have, "a credential before any run");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kube_config cfg; /* ~30 KB: not on the stack */
	struct kube_client_cert cc;
	char err[512] = "";
	size_t n;
	int r, ways;

	const char *path = fuzz_file(data, size);

	/* A memfd is 0777; a kubeconfig others may write is refused an exec plugin. */
	FUZZ_CHECK(!chmod(path, 0600), "chmod %s: %m", path);
	r = kube_config_from_kubeconfig(&cfg, path, err, sizeof(err));
	if (r) {
		FUZZ_CHECK(r < 0 && err[0], "kube_config_from_kubeconfig returned %d (%s)", r, err);
		FUZZ_CHECK(!cfg.exec && !cfg.ca_data.data && !cfg.cert_data.data &&
				   !cfg.key_data.data,
			   "a refused config kept allocations");
		return 0;
	}
	n = strlen(cfg.server);
	FUZZ_CHECK(!strncmp(cfg.server, "https://", 8) && cfg.server[n - 1] != '/', "server \"%s\"",
		   cfg.server);
	FUZZ_CHECK(!(cfg.ca_path[0] && cfg.ca_data.len), "two CA sources");
	ways = !!cfg.token[0] + !!cfg.token_path[0] + !!cfg.exec;
	kube_config_client_cert(&cfg, &cc);
	FUZZ_CHECK(!(cc.cert || cc.cert_path) == !(cc.key || cc.key_path) &&
			   !(cc.cert && cc.cert_path) && !(cc.key && cc.key_path),
		   "a client certificate without its key, or two of them");
	FUZZ_CHECK(ways == 1 || (ways == 0 && (cc.cert || cc.cert_path)),
		   "token \"%s\", token file \"%s\", exec %p, no certificate", cfg.token,
		   cfg.token_path, (void *)cfg.exec);
	if (cfg.exec)
		check_exec(cfg.exec);
	else
		check_token(&cfg);
	kube_config_free(&cfg);
	return 0;
}
