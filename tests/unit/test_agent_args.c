// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* qoslet agent/record/replay command lines: the errors a person meets first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "config/agent_args.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct bad_case {
	enum agent_mode mode;
	const char *args[5];
	const char *mention; /* the one-line reason contains this */
} bad_cases[] = {
	{AGENT_RUN, {"--config", NULL}, "option '--config' needs a value"},
	{AGENT_RUN, {"--dry-run", "--record", NULL}, "option '--record' needs a value"},
	{AGENT_RUN, {"--duration", NULL}, "option '--duration' needs a value"},
	{AGENT_RUN, {"--log-format", NULL}, "option '--log-format' needs a value"},
	{AGENT_RECORD, {"-o", NULL}, "option '-o' needs a value"},
	{AGENT_RECORD, {"--output", NULL}, "option '--output' needs a value"},
	{AGENT_REPLAY, {"f", "--config", NULL}, "option '--config' needs a value"},
	{AGENT_RUN, {"--bogus", NULL}, "unknown option '--bogus'"},
	{AGENT_RUN, {"-Q", NULL}, "unknown option '-Q'"},
	{AGENT_RUN, {"--dry-run=yes", NULL}, "option '--dry-run' takes no value"},
	{AGENT_RECORD,
	 {"-o", "f", "--dry-run", NULL},
	 "option '--dry-run' is not for 'qoslet record'"},
	{AGENT_RUN, {"-o", "f", NULL}, "option '-o' is not for 'qoslet agent'"},
	{AGENT_RUN, {"-vj", NULL}, "option '-j' is not for 'qoslet agent'"},
	{AGENT_REPLAY, {"f", "--hook=tp_btf", NULL}, "option '--hook' is not for 'qoslet replay'"},
	{AGENT_RECORD, {NULL}, "-o FILE is required"},
};

/* Every case runs; each failure is reported, not just the first. */
static void test_bad(void **state)
{
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		char *argv[7] = {(char *)"cmd"}, err[256] = "";
		struct agent_args a;
		int argc = 1;

		for (const char *const *arg = c->args; *arg; arg++)
			argv[argc++] = (char *)*arg;
		if (agent_args_parse(&a, c->mode, argc, argv, err, sizeof(err)) != -1) {
			print_error("case %zu (%s): parsed, want an error\n", i, c->mention);
			failures++;
		} else if (!strstr(err, c->mention) || strchr(err, '\n')) {
			print_error("case %zu: \"%s\" is not one line naming \"%s\"\n", i, err,
				    c->mention);
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

static void test_ok(void **state)
{
	char *run[] = {"agent", "--config", "c.json", "--dry-run", "--duration=2.5", NULL};
	char *rec[] = {"record", "-o", "-", "--pin-dir", "/p", NULL};
	char *rep[] = {"replay", "-j", "r.jsonl", NULL};
	struct agent_args a;
	char err[256];

	(void)state;
	assert_int_equal(agent_args_parse(&a, AGENT_RUN, 5, run, err, sizeof(err)), 0);
	assert_string_equal(a.config, "c.json");
	assert_true(a.dry_run);
	assert_true(a.duration_s == 2.5);
	assert_int_equal(agent_args_parse(&a, AGENT_RECORD, 5, rec, err, sizeof(err)), 0);
	assert_string_equal(a.record, "-");
	assert_string_equal(a.probe.pin_dir, "/p");
	assert_int_equal(agent_args_parse(&a, AGENT_REPLAY, 3, rep, err, sizeof(err)), 0);
	assert_true(a.json);
	assert_string_equal(a.replay, "r.jsonl");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_ok),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
