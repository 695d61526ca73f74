// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The Prometheus renderer: exact lines, label escaping, ordering, no duplicate series. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/metrics.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static char *render(const struct metrics_input *in)
{
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(metrics_render(in, &text, &len), 0);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	return text;
}

/* True when `line` is one whole line of text. */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Every sample line's series (name and labels: the text before the value)
 * is unique, and every sample's family has a TYPE line before it.
 */
static void assert_no_duplicate_series(const char *text)
{
	char *copy = strdup(text), *save = NULL, *v[4096];
	size_t n = 0;

	assert_non_null(copy);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp;

		if (line[0] == '#')
			continue;
		sp = strrchr(line, ' ');
		assert_non_null(sp);
		*sp = '\0';
		assert_true(n < ARRAY_LEN(v));
		v[n++] = line;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(v[i], v[i - 1]))
			fail_msg("duplicate series %s", v[i]);
	free(copy);
}

/* Nothing to report: the families are still described, health is zero. */
static void test_empty(void **state)
{
	static const char want[] =
		"# HELP qoslet_runqueue_wait_seconds Time tasks of the cgroup waited on a run queue "
		"before running, since the sched probe started.\n"
		"# TYPE qoslet_runqueue_wait_seconds histogram\n"
		"# HELP qoslet_decisions_total Decisions the agent made since it started, by action "
		"kind, policy rule and outcome.\n"
		"# TYPE qoslet_decisions_total counter\n"
		"# HELP qoslet_agent_ticks_total Ticks of the agent loop (read, decide, act) since it "
		"started.\n"
		"# TYPE qoslet_agent_ticks_total counter\n"
		"qoslet_agent_ticks_total 0\n"
		"# HELP qoslet_agent_fast_path_ticks_total Ticks an LS run-queue wait alert from the "
		"sched probe brought forward.\n"
		"# TYPE qoslet_agent_fast_path_ticks_total counter\n"
		"qoslet_agent_fast_path_ticks_total 0\n"
		"# HELP qoslet_agent_loop_duration_seconds How long the last tick of the agent loop "
		"took.\n"
		"# TYPE qoslet_agent_loop_duration_seconds gauge\n"
		"qoslet_agent_loop_duration_seconds 0\n"
		"# HELP qoslet_agent_probe_up 1 when the probe runs, 0 when it is off.\n"
		"# TYPE qoslet_agent_probe_up gauge\n"
		"# HELP qoslet_agent_probe_info Always 1: where a running probe's BPF maps are "
		"pinned.\n"
		"# TYPE qoslet_agent_probe_info gauge\n";
	struct metrics_input in = {0};
	char *text;

	(void)state;
	text = render(&in);
	assert_string_equal(text, want);
	free(text);
}

/* Buckets are cumulative with le in exact seconds; _count is the +Inf bucket. */
static void test_histogram_lines(void **state)
{
	struct cg_sample s = {.id = 7, .parts = CG_RQ};
	struct metrics_cgroup cg = {
		.s = &s, .path = "kubepods/besteffort/podab/c1", .pod_uid = "ab", .qos = "BE"};
	struct metrics_input in = {.cgroups = &cg, .n_cgroups = 1};
	static const char *const want[] = {
		"qoslet_runqueue_wait_seconds_bucket{cgroup=\"/kubepods/besteffort/podab/c1\","
		"pod_uid=\"ab\",qos=\"BE\",le=\"0.000001024\"} 3",
		"qoslet_runqueue_wait_seconds_bucket{cgroup=\"/kubepods/besteffort/podab/c1\","
		"pod_uid=\"ab\",qos=\"BE\",le=\"0.000002048\"} 3",
		"qoslet_runqueue_wait_seconds_bucket{cgroup=\"/kubepods/besteffort/podab/c1\","
		"pod_uid=\"ab\",qos=\"BE\",le=\"0.004194304\"} 5",
		"qoslet_runqueue_wait_seconds_bucket{cgroup=\"/kubepods/besteffort/podab/c1\","
		"pod_uid=\"ab\",qos=\"BE\",le=\"17.179869184\"} 5",
		"qoslet_runqueue_wait_seconds_bucket{cgroup=\"/kubepods/besteffort/podab/c1\","
		"pod_uid=\"ab\",qos=\"BE\",le=\"+Inf\"} 6",
		"qoslet_runqueue_wait_seconds_sum{cgroup=\"/kubepods/besteffort/podab/c1\","
		"pod_uid=\"ab\",qos=\"BE\"} 40.5",
		"qoslet_runqueue_wait_seconds_count{cgroup=\"/kubepods/besteffort/podab/c1\","
		"pod_uid=\"ab\",qos=\"BE\"} 6",
	};
	char *text;

	(void)state;
	s.rq.slots[0] = 3;
	s.rq.slots[12] = 2;		      /* <= 2^22 ns */
	s.rq.slots[QOSLET_LAT_SLOTS - 1] = 1; /* above 2^35 ns: only in +Inf */
	s.rq.count = 7;			      /* torn read: one wait counted, its bucket not yet */
	s.rq.sum_ns = 40500000000ull;
	text = render(&in);
	for (size_t i = 0; i < ARRAY_LEN(want); i++)
		if (!has_line(text, want[i]))
			fail_msg("missing line %s in\n%s", want[i], text);
	assert_no_duplicate_series(text);
	free(text);
}

/* Labels: root, no unit, escaping; cgroups without run-queue data are left out. */
static void test_labels(void **state)
{
	struct cg_sample s[] = {
		{.id = 1, .parts = CG_RQ},
		{.id = 2, .parts = CG_RQ},
		{.id = 3, .parts = CG_CPU},
	};
	struct metrics_cgroup cg[] = {
		{.s = &s[0], .path = ""},
		{.s = &s[1], .path = "we\"ir\\d\nname", .pod_uid = "", .qos = "LS"},
		{.s = &s[2], .path = "cpu-only"},
	};
	struct metrics_input in = {.cgroups = cg, .n_cgroups = ARRAY_LEN(cg)};
	char *text;

	(void)state;
	text = render(&in);
	assert_true(has_line(text, "qoslet_runqueue_wait_seconds_count{cgroup=\"/\"} 0"));
	assert_true(has_line(text,
			     "qoslet_runqueue_wait_seconds_count{cgroup=\"/we\\\"ir\\\\d\\nname\","
			     "qos=\"LS\"} 0"));
	assert_null(strstr(text, "cpu-only"));
	assert_no_duplicate_series(text);
	free(text);
}

/* Two ids with one path (one removed, its name not yet forgotten): the newer id alone. */
static void test_duplicate_path(void **state)
{
	struct cg_sample s[] = {
		{.id = 10, .parts = CG_RQ, .rq = {.slots = {1}}},
		{.id = 30, .parts = CG_RQ, .rq = {.slots = {3}}},
		{.id = 20, .parts = CG_RQ, .rq = {.slots = {2}}},
	};
	struct metrics_cgroup cg[] = {
		{.s = &s[0], .path = "a"},
		{.s = &s[1], .path = "a"},
		{.s = &s[2], .path = "b"},
	};
	struct metrics_input in = {.cgroups = cg, .n_cgroups = ARRAY_LEN(cg)};
	char *text;

	(void)state;
	text = render(&in);
	assert_true(has_line(text, "qoslet_runqueue_wait_seconds_count{cgroup=\"/a\"} 3"));
	assert_false(has_line(text, "qoslet_runqueue_wait_seconds_count{cgroup=\"/a\"} 1"));
	assert_true(has_line(text, "qoslet_runqueue_wait_seconds_count{cgroup=\"/b\"} 2"));
	/* sorted by path */
	assert_true(strstr(text, "cgroup=\"/a\"") < strstr(text, "cgroup=\"/b\""));
	assert_no_duplicate_series(text);
	free(text);
}

/* Decision counters, sorted by kind, rule and outcome; agent health; probes. */
static void test_decisions_and_health(void **state)
{
	struct decision_count counts[] = {
		{ACT_CPU_QUOTA, "suppress.cfs_quota", "dry_run", 2},
		{ACT_CPU_BURST, "burst.scale_up", "applied", 5},
		{ACT_CPU_QUOTA, "suppress.cfs_quota", "applied", 4},
	};
	struct decision_log log = {.counts = counts, .n_counts = ARRAY_LEN(counts)};
	struct metrics_probe probes[] = {
		{.name = "sched", .on = true, .path = "/sys/fs/bpf/qoslet"},
		{.name = "cpi", .on = false},
	};
	struct metrics_input in = {.log = &log,
				   .ticks = 12,
				   .fast_ticks = 3,
				   .loop_ns = 1500000,
				   .probes = probes,
				   .n_probes = ARRAY_LEN(probes)};
	static const char want[] =
		"qoslet_decisions_total{kind=\"cpu_burst\",rule=\"burst.scale_up\","
		"outcome=\"applied\"} 5\n"
		"qoslet_decisions_total{kind=\"cpu_quota\",rule=\"suppress.cfs_quota\","
		"outcome=\"applied\"} 4\n"
		"qoslet_decisions_total{kind=\"cpu_quota\",rule=\"suppress.cfs_quota\","
		"outcome=\"dry_run\"} 2\n";
	char *text;

	(void)state;
	text = render(&in);
	if (!strstr(text, want))
		fail_msg("decisions not as expected in\n%s", text);
	assert_true(has_line(text, "qoslet_agent_ticks_total 12"));
	assert_true(has_line(text, "qoslet_agent_fast_path_ticks_total 3"));
	assert_true(has_line(text, "qoslet_agent_loop_duration_seconds 0.0015"));
	assert_true(has_line(text, "qoslet_agent_probe_up{probe=\"sched\"} 1"));
	assert_true(has_line(text, "qoslet_agent_probe_up{probe=\"cpi\"} 0"));
	assert_true(has_line(
		text, "qoslet_agent_probe_info{probe=\"sched\",path=\"/sys/fs/bpf/qoslet\"} 1"));
	assert_null(strstr(text, "qoslet_agent_probe_info{probe=\"cpi\""));
	assert_no_duplicate_series(text);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_histogram_lines),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_duplicate_path),
		cmocka_unit_test(test_decisions_and_health),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
