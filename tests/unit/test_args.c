// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/args.h"
#include "log.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_ARGS     (2 * VIEW_MAX_CGROUPS + 8)

/* Runs the parser on a fresh, writable argv: {"view", args..., NULL}. */
static int parse(struct view_args *a, const char *const *args, char *err, size_t errlen)
{
	char *argv[MAX_ARGS + 2];
	int argc = 0;

	argv[argc++] = (char *)"view";
	for (; *args; args++) {
		assert_true(argc <= MAX_ARGS);
		argv[argc++] = (char *)*args;
	}
	argv[argc] = NULL;
	memset(a, 0xa5, sizeof(*a));
	memset(err, 0, errlen);
	return view_args_parse(a, VIEW_OPT_ALL, argc, argv, err, errlen);
}

static void test_defaults(void **state)
{
	const char *const args[] = {NULL};
	struct view_args a;
	char err[256];

	(void)state;
	assert_int_equal(parse(&a, args, err, sizeof(err)), 0);
	assert_int_equal(a.n_cgroups, 0);
	assert_false(a.json);
	assert_false(a.help);
	assert_true(a.interval_s > 0);
	assert_int_equal(a.count, 0);
	assert_int_equal(a.probe.hook, PROBE_HOOK_AUTO);
	assert_int_equal(a.probe.wait, SCHED_WAIT_AUTO);
	assert_null(a.probe.pin_dir);
}

/* What a successful parse must yield; fields left zero keep their default. */
static const struct ok_case {
	const char *name;
	const char *args[10];
	const char *cgroups[4];
	size_t n_cgroups;
	bool json, help;
	double interval_s; /* 0: the default */
	long count, top;
	const char *pod, *ns;
	enum probe_hook hook;
	enum sched_wait wait;
	const char *pin_dir;
} ok_cases[] = {
	{"one -c", {"-c", "a", NULL}, .cgroups = {"a"}, .n_cgroups = 1},
	{"repeated -c",
	 {"-c", "a", "-c", "/sys/fs/cgroup/b", "-c", "c/d", NULL},
	 .cgroups = {"a", "/sys/fs/cgroup/b", "c/d"},
	 .n_cgroups = 3},
	{"attached -c", {"-cfoo", NULL}, .cgroups = {"foo"}, .n_cgroups = 1},
	{"-j", {"-j", NULL}, .json = true},
	{"-h", {"-h", NULL}, .help = true},
	{"--help", {"--help", NULL}, .help = true},
	{"--hook auto", {"--hook", "auto", NULL}, .hook = PROBE_HOOK_AUTO},
	{"--hook tp_btf", {"--hook", "tp_btf", NULL}, .hook = PROBE_HOOK_TP_BTF},
	{"--hook raw_tp", {"--hook", "raw_tp", NULL}, .hook = PROBE_HOOK_RAW_TP},
	{"--hook=raw_tp", {"--hook=raw_tp", NULL}, .hook = PROBE_HOOK_RAW_TP},
	{"--wait-source auto", {"--wait-source", "auto", NULL}, .wait = SCHED_WAIT_AUTO},
	{"--wait-source sched_info",
	 {"--wait-source", "sched_info", NULL},
	 .wait = SCHED_WAIT_SCHED_INFO},
	{"--wait-source=stamp", {"--wait-source=stamp", NULL}, .wait = SCHED_WAIT_STAMP},
	{"--pin-dir", {"--pin-dir", "/tmp/pins", NULL}, .pin_dir = "/tmp/pins"},
	{"--pin-dir=", {"--pin-dir=/x/y", NULL}, .pin_dir = "/x/y"},
	{"interval", {"2", NULL}, .interval_s = 2},
	{"fractional interval", {"0.5", NULL}, .interval_s = 0.5},
	{"interval and count", {"3", "10", NULL}, .interval_s = 3, .count = 10},
	{"--top", {"--top", "5", NULL}, .top = 5},
	{"--pod and --namespace",
	 {"--pod", "web-0", "--namespace", "prod", NULL},
	 .pod = "web-0",
	 .ns = "prod"},
	{"--top=", {"--top=1", "2", NULL}, .interval_s = 2, .top = 1},
	{"large count", {"1", "1000000", NULL}, .interval_s = 1, .count = 1000000},
	{"everything",
	 {"-j", "-c", "x", "--hook", "tp_btf", "--pin-dir", "/p", "0.25", "4", NULL},
	 .cgroups = {"x"},
	 .n_cgroups = 1,
	 .json = true,
	 .interval_s = 0.25,
	 .count = 4,
	 .hook = PROBE_HOOK_TP_BTF,
	 .pin_dir = "/p"},
};

static void test_ok_table(void **state)
{
	double default_interval;
	struct view_args a;
	char err[256];

	(void)state;
	assert_int_equal(parse(&a, (const char *const[]){NULL}, err, sizeof(err)), 0);
	default_interval = a.interval_s;

	for (size_t i = 0; i < ARRAY_LEN(ok_cases); i++) {
		const struct ok_case *c = &ok_cases[i];
		double interval = c->interval_s ? c->interval_s : default_interval;
		int rc = parse(&a, c->args, err, sizeof(err));

		if (rc != 0)
			fail_msg("%s: rc %d (%s)", c->name, rc, err);
		if (a.n_cgroups != c->n_cgroups)
			fail_msg("%s: %zu cgroups, want %zu", c->name, a.n_cgroups, c->n_cgroups);
		for (size_t j = 0; j < c->n_cgroups; j++)
			if (strcmp(a.cgroups[j], c->cgroups[j]) != 0)
				fail_msg("%s: cgroup %zu \"%s\", want \"%s\"", c->name, j,
					 a.cgroups[j], c->cgroups[j]);
		if (a.json != c->json || a.help != c->help)
			fail_msg("%s: json %d help %d, want %d %d", c->name, a.json, a.help,
				 c->json, c->help);
		if (a.interval_s != interval || a.count != c->count)
			fail_msg("%s: interval %g count %ld, want %g %ld", c->name, a.interval_s,
				 a.count, interval, c->count);
		if (a.top != c->top)
			fail_msg("%s: top %ld, want %ld", c->name, a.top, c->top);
		if ((c->pod ? !a.pod || strcmp(a.pod, c->pod) : a.pod != NULL) ||
		    (c->ns ? !a.ns || strcmp(a.ns, c->ns) : a.ns != NULL))
			fail_msg("%s: pod %s ns %s", c->name, a.pod ? a.pod : "NULL",
				 a.ns ? a.ns : "NULL");
		if (a.probe.hook != c->hook || a.probe.wait != c->wait)
			fail_msg("%s: hook %d wait %d, want %d %d", c->name, a.probe.hook,
				 a.probe.wait, c->hook, c->wait);
		if (c->pin_dir ? !a.probe.pin_dir || strcmp(a.probe.pin_dir, c->pin_dir) != 0
			       : a.probe.pin_dir != NULL)
			fail_msg("%s: pin_dir %s, want %s", c->name,
				 a.probe.pin_dir ? a.probe.pin_dir : "NULL",
				 c->pin_dir ? c->pin_dir : "NULL");
	}
}

static void test_verbose(void **state)
{
	enum log_level saved = log_max_level;
	struct view_args a;
	char err[256];

	(void)state;
	assert_int_equal(parse(&a, (const char *const[]){"-v", NULL}, err, sizeof(err)), 0);
	/* log.h: -v raises log_max_level */
	assert_true(log_max_level > saved);
	log_max_level = saved;
}

/* mention: a token the one-line reason must name; NULL: not checked */
static const struct bad_case {
	const char *name;
	const char *args[6];
	const char *mention;
} bad_cases[] = {
	{"interval 0", {"0", NULL}, NULL},
	{"interval 0.0", {"0.0", NULL}, NULL},
	{"interval -1", {"-1", NULL}, NULL},
	{"interval -- -1", {"--", "-1", NULL}, NULL},
	{"interval abc", {"abc", NULL}, "abc"},
	{"interval 1x", {"1x", NULL}, "1x"},
	{"interval empty", {"", NULL}, NULL},
	{"interval nan", {"nan", NULL}, "nan"},
	{"count abc", {"1", "abc", NULL}, "abc"},
	{"count 1.5", {"1", "1.5", NULL}, "1.5"},
	{"count 5x", {"1", "5x", NULL}, "5x"},
	{"count -- -3", {"--", "1", "-3", NULL}, NULL},
	{"count empty", {"1", "", NULL}, NULL},
	{"count overflow", {"1", "99999999999999999999999", NULL}, NULL},
	{"too many positionals", {"1", "2", "extra", NULL}, "extra"},
	{"unknown short flag", {"-Q", NULL}, "Q"},
	{"unknown flag grouped before a known one", {"-Qj", NULL}, "Q"},
	{"unknown flag grouped after a known one", {"-jQ", NULL}, "Q"},
	{"unknown long flag", {"--bogus", NULL}, "bogus"},
	{"invalid hook", {"--hook", "kprobe", NULL}, "kprobe"},
	{"empty hook", {"--hook", "", NULL}, NULL},
	{"invalid wait source", {"--wait-source", "rdtsc", NULL}, "rdtsc"},
	{"-c without value", {"-c", NULL}, NULL},
	{"-c without value names it", {"-c", NULL}, "option '-c' needs a value"},
	{"grouped -c without value", {"-jc", NULL}, "option '-c' needs a value"},
	{"--cgroup without value", {"--cgroup", NULL}, "option '--cgroup' needs a value"},
	{"--hook without value", {"--hook", NULL}, "option '--hook' needs a value"},
	{"--pin-dir without value", {"--pin-dir", NULL}, "option '--pin-dir' needs a value"},
	{"--top without value", {"--top", NULL}, "option '--top' needs a value"},
	{"--json with a value", {"--json=1", NULL}, "option '--json' takes no value"},
	{"--top 0", {"--top", "0", NULL}, "'0'"},
	{"--top abc", {"--top", "abc", NULL}, "abc"},
	{"--pod upper case", {"--pod", "Web-0", NULL}, "invalid --pod 'Web-0'"},
	{"--pod with a slash", {"--pod", "a/b", NULL}, "'a/b'"},
	{"--namespace empty", {"--namespace", "", NULL}, "invalid --namespace"},
	{"--namespace without value", {"--namespace", NULL}, "option '--namespace' needs a value"},
	{"--cpi-events one name",
	 {"--cpi-events", "cycles", NULL},
	 "invalid --cpi-events 'cycles'"},
	{"--cpi-events three names", {"--cpi-events", "a,b,c", NULL}, "'a,b,c'"},
};

static void assert_one_line(const char *name, const char *err)
{
	if (!err[0])
		fail_msg("%s: empty error message", name);
	if (strchr(err, '\n'))
		fail_msg("%s: error message spans lines: \"%s\"", name, err);
}

/* Reports every failing case, not just the first. */
static void test_bad_table(void **state)
{
	int failures = 0;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct view_args a;
		char err[256];
		int rc = parse(&a, c->args, err, sizeof(err));

		if (rc != -1) {
			print_error("%s: rc %d, want -1\n", c->name, rc);
			failures++;
		} else if (!err[0] || strchr(err, '\n')) {
			print_error("%s: not a one-line message: \"%s\"\n", c->name, err);
			failures++;
		} else if (c->mention && !strstr(err, c->mention)) {
			print_error("%s: \"%s\" does not name \"%s\"\n", c->name, err, c->mention);
			failures++;
		}
	}
	assert_int_equal(failures, 0);
}

/* -c as many times as fit, and once more. */
static void test_max_cgroups(void **state)
{
	static char names[VIEW_MAX_CGROUPS + 1][16];
	const char *args[2 * (VIEW_MAX_CGROUPS + 1) + 1];
	struct view_args a;
	char err[256];
	size_t n = 0;

	(void)state;
	for (int i = 0; i < VIEW_MAX_CGROUPS; i++) {
		snprintf(names[i], sizeof(names[i]), "cg%d", i);
		args[n++] = "-c";
		args[n++] = names[i];
	}
	args[n] = NULL;
	assert_int_equal(parse(&a, args, err, sizeof(err)), 0);
	assert_int_equal(a.n_cgroups, VIEW_MAX_CGROUPS);
	assert_string_equal(a.cgroups[VIEW_MAX_CGROUPS - 1], names[VIEW_MAX_CGROUPS - 1]);

	snprintf(names[VIEW_MAX_CGROUPS], sizeof(names[0]), "one-too-many");
	args[n++] = "-c";
	args[n++] = names[VIEW_MAX_CGROUPS];
	args[n] = NULL;
	assert_int_equal(parse(&a, args, err, sizeof(err)), -1);
	assert_one_line("65 cgroups", err);
}

/* A short err buffer still gets a terminated (truncated) message. */
static void test_short_err_buffer(void **state)
{
	struct view_args a;
	char err[16];

	(void)state;
	memset(err, 'Z', sizeof(err));
	assert_int_equal(parse(&a, (const char *const[]){"--hook", "nope", NULL}, err, 8), -1);
	assert_true(strnlen(err, 8) < 8);
	assert_true(err[0] != '\0');
	assert_int_equal(err[8], 'Z'); /* nothing past errlen */
}

/* Failures and successes interleave without getopt state leaking between calls. */
static void test_repeated_calls(void **state)
{
	struct view_args a;
	char err[256];

	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(
			parse(&a, (const char *const[]){"-x", "2", NULL}, err, sizeof(err)), -1);
		assert_int_equal(
			parse(&a, (const char *const[]){"-j", "2", "7", NULL}, err, sizeof(err)),
			0);
		assert_true(a.json);
		assert_true(a.interval_s == 2);
		assert_int_equal(a.count, 7);
		assert_int_equal(
			parse(&a, (const char *const[]){"-c", "z", "5", NULL}, err, sizeof(err)),
			0);
		assert_int_equal(a.n_cgroups, 1);
		assert_string_equal(a.cgroups[0], "z");
		assert_true(a.interval_s == 5);
		assert_false(a.json);
	}
}

/* The --help lines a view gets: the shared ones always, the others only with their bit. */
static void test_help_text(void **state)
{
	char *text;
	size_t len;
	FILE *f;

	(void)state;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	view_args_usage(0, f);
	fclose(f);
	assert_non_null(strstr(text, "--hook"));
	assert_non_null(strstr(text, "--pin-dir"));
	assert_null(strstr(text, "--wait-source"));
	assert_null(strstr(text, "--cpi-events"));
	assert_null(strstr(text, "--throttle-source"));
	assert_null(strstr(text, "--top"));
	free(text);

	f = open_memstream(&text, &len);
	assert_non_null(f);
	view_args_usage(VIEW_OPT_WAIT_SOURCE | VIEW_OPT_TOP, f);
	fclose(f);
	assert_non_null(strstr(text, "--wait-source"));
	assert_non_null(strstr(text, "--top"));
	assert_null(strstr(text, "--cpi-events"));
	free(text);
}

/* An option of another view is refused by name, and the same option parses where taken. */
static void test_options_not_taken(void **state)
{
	static const struct {
		const char *args[4];
		unsigned int options;
		const char *mention;
	} cases[] = {
		{{"--top", "3", NULL},
		 VIEW_OPT_WAIT_SOURCE,
		 "option '--top' is not for 'qoslet view'"},
		{{"--cpi-events", "software", NULL},
		 VIEW_OPT_TOP,
		 "option '--cpi-events' is not for 'qoslet view'"},
		{{"--wait-source=stamp", NULL}, 0, "option '--wait-source' is not for"},
		{{"--throttle-source", "cpustat", NULL}, 0, "option '--throttle-source' is not"},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		char *argv[5] = {(char *)"view"};
		struct view_args a;
		char err[256] = "";
		int argc = 1;

		for (const char *const *arg = cases[i].args; *arg; arg++)
			argv[argc++] = (char *)*arg;
		assert_int_equal(
			view_args_parse(&a, cases[i].options, argc, argv, err, sizeof(err)), -1);
		if (!strstr(err, cases[i].mention))
			fail_msg("%s: \"%s\" does not say \"%s\"", cases[i].args[0], err,
				 cases[i].mention);
		assert_int_equal(view_args_parse(&a, VIEW_OPT_ALL, argc, argv, err, sizeof(err)),
				 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),	  cmocka_unit_test(test_ok_table),
		cmocka_unit_test(test_verbose),		  cmocka_unit_test(test_bad_table),
		cmocka_unit_test(test_max_cgroups),	  cmocka_unit_test(test_short_err_buffer),
		cmocka_unit_test(test_repeated_calls),	  cmocka_unit_test(test_help_text),
		cmocka_unit_test(test_options_not_taken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
