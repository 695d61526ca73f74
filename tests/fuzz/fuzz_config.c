// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's config parser (user/config/agent_config.h) on arbitrary file
 * contents, read the way `qoslet agent --config FILE` reads them.
 *
 * Checks what config.h promises: an error is -EINVAL with a message and
 * leaves the defaults (never half-applied); a config that parses turns back
 * into the same struct through config_to_json() and a JSON dump at full
 * precision (what `qoslet record` writes and `qoslet replay` reads).
 */
#include <errno.h>
#include <string.h>

#include "config/agent_config.h"
#include "fuzz.h"

static struct agent_config defaults;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	config_defaults(&defaults);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_config c, again;
	char err[1024], err2[1024];
	json_t *doc;
	char *text;
	int r;

	r = config_load(&c, fuzz_file(data, size), err, sizeof(err));
	if (r) {
		FUZZ_CHECK(r == -EINVAL, "config_load returned %d (%s)", r, err);
		FUZZ_CHECK(err[0], "an error without a message");
		FUZZ_CHECK(!memcmp(&c, &defaults, sizeof(c)),
			   "a refused config is not the defaults");
		return 0;
	}
	doc = config_to_json(&c);
	FUZZ_CHECK(doc, "config_to_json failed");
	/* The default precision (17 digits) is the exact one. */
	text = json_dumps(doc, JSON_COMPACT);
	FUZZ_CHECK(text, "json_dumps failed");
	r = config_parse(&again, text, err2, sizeof(err2));
	FUZZ_CHECK(!r, "the config's own dump does not parse: %s\n%s", err2, text);
	FUZZ_CHECK(!memcmp(&c, &again, sizeof(c)), "the round trip changed the config:\n%s", text);
	free(text);
	json_decref(doc);
	return 0;
}
