// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kubeconfig reader (kube_config_from_kubeconfig, user/kube/config.h)
 * on arbitrary file contents, and then, for a config it accepts, the token
 * the client would put in its Authorization header (kube_config_token).
 *
 * The file is a memfd under /proc/self/fd, so relative file names in it
 * resolve there (and do not exist); absolute ones (the seeds use /dev/null)
 * reach the accepting paths.
 *
 * Checks: an error is a negative errno with a message; an accepted config
 * has an https:// server without a trailing slash, a CA file, and a token or
 * a token file (not both); a token that is handed out is non-empty visible
 * ASCII, which is what keeps it from splitting the request's header lines.
 */
#include <string.h>

#include "fuzz.h"
#include "kube/config.h"

static void check_token(const struct kube_config *cfg)
{
	char tok[KUBE_TOKEN_MAX], err[256] = "";
	int r = kube_config_token(cfg, tok, sizeof(tok), err, sizeof(err));

	if (r) {
		FUZZ_CHECK(r < 0 && err[0], "kube_config_token returned %d (%s)", r, err);
		return;
	}
	FUZZ_CHECK(tok[0], "an empty token");
	for (const char *p = tok; *p; p++)
		FUZZ_CHECK(*p > ' ' && *p <= '~', "token byte 0x%02x", (unsigned char)*p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kube_config cfg; /* ~20 KB: not on the stack */
	char err[512] = "";
	size_t n;
	int r;

	r = kube_config_from_kubeconfig(&cfg, fuzz_file(data, size), err, sizeof(err));
	if (r) {
		FUZZ_CHECK(r < 0 && err[0], "kube_config_from_kubeconfig returned %d (%s)", r, err);
		return 0;
	}
	n = strlen(cfg.server);
	FUZZ_CHECK(!strncmp(cfg.server, "https://", 8) && cfg.server[n - 1] != '/', "server \"%s\"",
		   cfg.server);
	FUZZ_CHECK(cfg.ca_path[0], "no CA file");
	FUZZ_CHECK(!cfg.token[0] != !cfg.token_path[0], "token \"%s\", token file \"%s\"",
		   cfg.token, cfg.token_path);
	check_token(&cfg);
	return 0;
}
