// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The recording reader (user/record/record.h) on arbitrary files, followed
 * the way `qoslet replay` follows it: the recorded config is parsed, and
 * every tick that reads is run through the policies (policy_tick), which
 * must take whatever a damaged or hand-edited recording holds.
 *
 * Checks: record_open() and record_next() fail only with -EINVAL and a
 * message; a tick that reads survives a write/read round trip unchanged
 * (compared as its JSON: the writer is the reference).
 */
#include <errno.h>
#include <string.h>

#include "config/agent_config.h"
#include "record/record.h"
#include "fuzz.h"
#include "policy/policy.h"

/* One line as record_write_input() writes it (caller frees). */
static char *tick_line(const struct pol_input *in)
{
	json_t *o = record_input_to_json(in);
	char *s;

	FUZZ_CHECK(o, "record_input_to_json failed on a tick that was read");
	s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
	FUZZ_CHECK(s, "json_dumps failed");
	json_decref(o);
	return s;
}

static void check_round_trip(const struct pol_input *in)
{
	struct pol_input again = {0};
	char *line = tick_line(in), *line2, err[256];
	json_t *o = json_loads(line, 0, NULL);
	int r;

	FUZZ_CHECK(o, "the writer's line is not JSON: %s", line);
	r = record_input_from_json(o, &again, err, sizeof(err));
	FUZZ_CHECK(!r, "the writer's line does not read back: %s\n%s", err, line);
	line2 = tick_line(&again);
	FUZZ_CHECK(!strcmp(line, line2), "the round trip changed the tick:\n%s\n%s", line, line2);
	json_decref(o);
	free(line);
	free(line2);
	pol_input_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_state st = {0};
	struct action_list actions = {0};
	struct pol_input in = {0};
	struct record_reader rd;
	struct agent_config cfg;
	json_t *recorded;
	char err[512], *text;
	bool have_cfg;
	int r;

	r = record_open(&rd, fuzz_file(data, size), &recorded, err, sizeof(err));
	if (r) {
		FUZZ_CHECK(r == -EINVAL && err[0], "record_open returned %d (%s)", r, err);
		return 0;
	}
	/* replay's load_config(): the recorded document, through the config parser */
	text = json_dumps(recorded, JSON_COMPACT);
	have_cfg = text && !config_parse(&cfg, text, err, sizeof(err));
	free(text);
	while ((r = record_next(&rd, &in, err, sizeof(err))) > 0) {
		check_round_trip(&in);
		if (!have_cfg)
			continue;
		action_list_clear(&actions);
		FUZZ_CHECK(!policy_tick(&in, &cfg.policy, cfg.dry_run, &st, &actions),
			   "policy_tick failed");
	}
	FUZZ_CHECK(r == 0 || (r == -EINVAL && err[0]), "record_next returned %d (%s)", r, err);
	pol_input_free(&in);
	action_list_free(&actions);
	policy_state_free(&st);
	json_decref(recorded);
	record_close(&rd);
	return 0;
}
