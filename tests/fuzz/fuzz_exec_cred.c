// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What qoslet makes of an exec credential plugin's output (user/kube/
 * exec_cred.c, kube_exec_parse(), and the token check of kube_config_token()
 * that every request makes): each input is a plugin's stdout. The configured
 * apiVersion is client.authentication.k8s.io/v1, or v1beta1 when the input's
 * length is odd. The plugin is never run: the token is asked for only while
 * the credential is fresh, which needs no run.
 *
 * Checks: a refused output is -EBADMSG with a message and leaves no
 * credential; an accepted one has a token or a certificate with its key
 * (not both missing, the pair never half), an expiry given as RFC 3339 in
 * the future or none; a token handed to a request is visible ASCII.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"
#include "kube/exec_cred.h"
#include "kube/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[] = {"fuzz-plugin", NULL}, *env[] = {NULL};
	struct kube_exec e = {.argv = argv, .env = env};
	struct kube_config cfg = {0};
	char err[512] = "", token[4096];
	int rc;

	snprintf(e.api_version, sizeof(e.api_version), "client.authentication.k8s.io/%s",
		 size % 2 ? "v1beta1" : "v1");
	rc = kube_exec_parse(&e, (const char *)data, size, err, sizeof(err));
	if (rc) {
		FUZZ_CHECK(rc == -EBADMSG && err[0], "rc %d, err '%s'", rc, err);
		FUZZ_CHECK(!e.have && !e.token && !e.cert.len && !e.key.len,
			   "a refused output left a credential");
		return 0;
	}
	FUZZ_CHECK(e.have, "accepted but no credential");
	FUZZ_CHECK((e.token && e.token[0]) || (e.cert.len && e.key.len),
		   "neither a token nor a certificate and key");
	FUZZ_CHECK(!e.cert.len == !e.key.len, "a certificate without its key, or the reverse");
	FUZZ_CHECK(e.expiry >= 0, "expiry %lld", (long long)e.expiry);
	/* fresh: no expiry, or one past the refresh margin; else asking would run the plugin */
	if (!e.expiry || time(NULL) < e.expiry - KUBE_EXEC_REFRESH_S - 60) {
		cfg.exec = &e;
		rc = kube_config_token(&cfg, token, sizeof(token), err, sizeof(err));
		FUZZ_CHECK(!rc || (rc < 0 && err[0]), "token: rc %d without a reason", rc);
		for (size_t i = 0; !rc && token[i]; i++)
			FUZZ_CHECK(isgraph((unsigned char)token[i]), "token byte %zu is 0x%02x", i,
				   (unsigned char)token[i]);
		FUZZ_CHECK(e.have, "asking for the token dropped a fresh credential");
	}
	kube_exec_invalidate(&e);
	FUZZ_CHECK(!e.have && !e.token && !e.cert.data && !e.key.data, "invalidate kept something");
	return 0;
}
