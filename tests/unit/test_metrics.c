// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Prometheus renderer: each family's exact text for a fixed input,
 * label escaping and Kubernetes labels, ordering, absent parts, the blame
 * bound, and no duplicate series (also at the size of a busy node).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "report/metrics.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The families every render has: health, with nothing to report. */
static const char health_empty[] =
	"# HELP qoslet_agent_ticks_total Ticks of the agent loop (read, decide, act) since it "
	"started.\n"
	"# TYPE qoslet_agent_ticks_total counter\n"
	"qoslet_agent_ticks_total 0\n"
	"# HELP qoslet_agent_fast_path_ticks_total Ticks outside the schedule: brought forward "
	"by a sched probe alert, their follow-ups, a cgroup tree change, a retried write.\n"
	"# TYPE qoslet_agent_fast_path_ticks_total counter\n"
	"qoslet_agent_fast_path_ticks_total 0\n"
	"# HELP qoslet_agent_fast_path_alerts_total Alerts from the sched probe, by kind: an LS "
	"wait over its threshold (wait), an LS cgroup displaced by BE tasks (displaced).\n"
	"# TYPE qoslet_agent_fast_path_alerts_total counter\n"
	"qoslet_agent_fast_path_alerts_total{kind=\"wait\"} 0\n"
	"qoslet_agent_fast_path_alerts_total{kind=\"displaced\"} 0\n"
	"# HELP qoslet_agent_outside_writes_total Changes another writer made to a cgroup file "
	"qoslet wrote, by the answer: written back (reasserted), taken as the owner's new "
	"original (adopted), backed off from a writer that keeps undoing the write-backs "
	"(contested).\n"
	"# TYPE qoslet_agent_outside_writes_total counter\n"
	"qoslet_agent_outside_writes_total{answer=\"adopted\"} 0\n"
	"qoslet_agent_outside_writes_total{answer=\"contested\"} 0\n"
	"qoslet_agent_outside_writes_total{answer=\"reasserted\"} 0\n"
	"# HELP qoslet_agent_loop_duration_seconds How long the last tick of the agent loop "
	"took.\n"
	"# TYPE qoslet_agent_loop_duration_seconds gauge\n"
	"qoslet_agent_loop_duration_seconds 0\n"
	"# HELP qoslet_agent_errors_total Errors the agent met and went on after, by kind.\n"
	"# TYPE qoslet_agent_errors_total counter\n"
	"qoslet_agent_errors_total{kind=\"probe_read\"} 0\n"
	"qoslet_agent_errors_total{kind=\"subtree_read\"} 0\n"
	"qoslet_agent_errors_total{kind=\"cgroup_read\"} 0\n"
	"qoslet_agent_errors_total{kind=\"render\"} 0\n"
	"qoslet_agent_errors_total{kind=\"journal_set_aside\"} 0\n"
	"qoslet_agent_errors_total{kind=\"journal_write\"} 0\n"
	"# HELP qoslet_agent_probe_up 1 when the probe runs, 0 when it is off.\n"
	"# TYPE qoslet_agent_probe_up gauge\n"
	"# HELP qoslet_agent_probe_info Always 1: the path a running probe takes its data by "
	"(hook, source).\n"
	"# TYPE qoslet_agent_probe_info gauge\n";

static const char runqueue_head[] =
	"# HELP qoslet_runqueue_wait_seconds Time tasks of the cgroup waited on a run queue "
	"before running, since the sched probe started.\n"
	"# TYPE qoslet_runqueue_wait_seconds histogram\n";

static const char exclusive_empty[] =
	"# HELP qoslet_exclusive_cpus CPUs pods hold alone (the kubelet's static CPU manager); no "
	"BE and no moved LS unit is placed on them.\n"
	"# TYPE qoslet_exclusive_cpus gauge\n"
	"qoslet_exclusive_cpus 0\n";

static const char decisions_head[] =
	"# HELP qoslet_decisions_total Decisions the agent made since it started, by action "
	"kind, policy rule and outcome.\n"
	"# TYPE qoslet_decisions_total counter\n";

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

static void assert_line(const char *text, const char *line)
{
	if (!has_line(text, line))
		fail_msg("missing line\n%s\nin\n%s", line, text);
}

/*
 * The text between the run-queue family's header and the exclusive CPUs'
 * (the per-cgroup families, the settings and the pinned pods after them).
 */
static char *between_runqueue_and_decisions(const char *text)
{
	const char *from = strstr(text, runqueue_head),
		   *to = strstr(text, "# HELP qoslet_exclusive_cpus ");

	assert_non_null(from);
	assert_non_null(to);
	from += strlen(runqueue_head);
	assert_true(from <= to);
	return strndup(from, (size_t)(to - from));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is `name` a family TYPE'd earlier, or a histogram's _bucket/_sum/_count? */
static bool typed(char *const *types, size_t n, const char *name)
{
	static const char *const suffixes[] = {"_bucket", "_sum", "_count"};
	size_t len = strlen(name);

	for (size_t i = 0; i < n; i++) {
		size_t tlen = strcspn(types[i], " ");

		if (tlen == len && !strncmp(types[i], name, len))
			return true;
		for (size_t s = 0; s < ARRAY_LEN(suffixes); s++)
			if (tlen + strlen(suffixes[s]) == len && !strncmp(types[i], name, tlen) &&
			    !strcmp(name + tlen, suffixes[s]) &&
			    !strcmp(types[i] + tlen, " histogram"))
				return true;
	}
	return false;
}

/*
 * Every sample line's series (name and labels: the text before the value)
 * is unique, every sample's family has a TYPE line before it, and no family
 * is TYPE'd twice.
 */
static void assert_no_duplicate_series(const char *text)
{
	char *copy = strdup(text), *save = NULL;
	char **v = calloc(strlen(text) / 4 + 1, sizeof(*v)); /* a line has more than 4 bytes */
	char **types = calloc(strlen(text) / 4 + 1, sizeof(*types));
	size_t n = 0, n_types = 0;

	assert_non_null(copy);
	assert_non_null(v);
	assert_non_null(types);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t name_len;
		char *sp, brace;

		if (!strncmp(line, "# TYPE ", 7)) {
			types[n_types++] = line + 7;
			continue;
		}
		if (line[0] == '#')
			continue;
		sp = strrchr(line, ' ');
		assert_non_null(sp);
		*sp = '\0';
		v[n++] = line;
		name_len = strcspn(line, "{");
		brace = line[name_len];
		line[name_len] = '\0';
		if (!typed(types, n_types, line))
			fail_msg("sample of %s without a TYPE line before it", line);
		line[name_len] = brace;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(v[i], v[i - 1]))
			fail_msg("duplicate series %s", v[i]);
	for (size_t i = 0; i < n_types; i++)
		types[i][strcspn(types[i], " ")] = '\0';
	qsort(types, n_types, sizeof(*types), cmp_str);
	for (size_t i = 1; i < n_types; i++)
		if (!strcmp(types[i], types[i - 1]))
			fail_msg("family %s described twice", types[i]);
	free(types);
	free(v);
	free(copy);
}

/* Nothing to report: the run-queue and decision families are described, health is zero. */
static void test_empty(void **state)
{
	struct metrics_input in = {0};
	char *text, want[4096];

	(void)state;
	snprintf(want, sizeof(want), "%s%s%s%s", runqueue_head, exclusive_empty, decisions_head,
		 health_empty);
	text = render(&in);
	assert_string_equal(text, want);
	assert_no_duplicate_series(text);
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
		assert_line(text, want[i]);
	assert_no_duplicate_series(text);
	free(text);
}

/* One per-cgroup family: a cgroup with one part, and the exact text it renders to. */
struct family_case {
	const char *name;
	bool cpi_hardware;
	void (*fill)(struct cg_sample *s);
	const char *want; /* every line between the run-queue and decision families */
};

static void fill_cpu(struct cg_sample *s)
{
	s->parts = CG_CPU;
	s->cpu = (struct cpi_sample){
		.cpu_ns = 2500000000ull, .numerator = 9000, .denominator = 6000};
}

static void fill_throttle(struct cg_sample *s)
{
	s->parts = CG_THROTTLE;
	s->throttle = (struct throttle_sample){.nr_periods = 120,
					       .nr_throttled = 30,
					       .throttled_ns = 1250000000ull,
					       .nr_bursts = 4,
					       .burst_ns = 20000000,
					       .events = 99};
}

static void fill_psi(struct cg_sample *s)
{
	s->parts = CG_PSI;
	s->psi.some[PSI_CPU] = (struct psi_line){.avg10 = 1.5, .total_us = 1500000};
	s->psi.full[PSI_CPU] = (struct psi_line){.total_us = 250};
	s->psi.some[PSI_MEMORY] = (struct psi_line){.total_us = 2};
	s->psi.full[PSI_IO] = (struct psi_line){.total_us = 3000000};
}

static void fill_none(struct cg_sample *s)
{
	s->parts = 0; /* a culprit's labels only */
	s->throttle.nr_periods = 5;
}

#define LABELS "{cgroup=\"/kubepods/podu1/c1\",pod_uid=\"u1\",qos=\"LS\"}"

static const struct family_case family_cases[] = {
	{"cpu, software mode: CPU time only, no cycles/instructions", false, fill_cpu,
	 "# HELP qoslet_cpu_usage_seconds_total Time the cgroup's tasks ran on a CPU, as the cpi "
	 "probe counts it.\n"
	 "# TYPE qoslet_cpu_usage_seconds_total counter\n"
	 "qoslet_cpu_usage_seconds_total" LABELS " 2.5\n"},
	{"cpu, hardware mode: cycles and instructions too", true, fill_cpu,
	 "# HELP qoslet_cpu_usage_seconds_total Time the cgroup's tasks ran on a CPU, as the cpi "
	 "probe counts it.\n"
	 "# TYPE qoslet_cpu_usage_seconds_total counter\n"
	 "qoslet_cpu_usage_seconds_total" LABELS " 2.5\n"
	 "# HELP qoslet_cpu_cycles_total CPU cycles while the cgroup's tasks ran (hardware PMU).\n"
	 "# TYPE qoslet_cpu_cycles_total counter\n"
	 "qoslet_cpu_cycles_total" LABELS " 9000\n"
	 "# HELP qoslet_cpu_instructions_total Instructions retired while the cgroup's tasks ran "
	 "(hardware PMU).\n"
	 "# TYPE qoslet_cpu_instructions_total counter\n"
	 "qoslet_cpu_instructions_total" LABELS " 6000\n"},
	{"throttle", false, fill_throttle,
	 "# HELP qoslet_cpu_cfs_periods_total CFS bandwidth periods that elapsed while the cgroup "
	 "had runnable tasks (cpu.stat nr_periods).\n"
	 "# TYPE qoslet_cpu_cfs_periods_total counter\n"
	 "qoslet_cpu_cfs_periods_total" LABELS " 120\n"
	 "# HELP qoslet_cpu_cfs_throttled_periods_total CFS bandwidth periods in which the cgroup "
	 "was throttled (cpu.stat nr_throttled).\n"
	 "# TYPE qoslet_cpu_cfs_throttled_periods_total counter\n"
	 "qoslet_cpu_cfs_throttled_periods_total" LABELS " 30\n"
	 "# HELP qoslet_cpu_cfs_throttled_seconds_total Time the cgroup's run queues spent "
	 "throttled (cpu.stat throttled time).\n"
	 "# TYPE qoslet_cpu_cfs_throttled_seconds_total counter\n"
	 "qoslet_cpu_cfs_throttled_seconds_total" LABELS " 1.25\n"
	 "# HELP qoslet_cpu_cfs_bursts_total CFS bandwidth periods in which the cgroup used its "
	 "burst (cpu.stat nr_bursts).\n"
	 "# TYPE qoslet_cpu_cfs_bursts_total counter\n"
	 "qoslet_cpu_cfs_bursts_total" LABELS " 4\n"
	 "# HELP qoslet_cpu_cfs_burst_seconds_total CPU time the cgroup ran beyond its quota on "
	 "its burst (cpu.stat burst time).\n"
	 "# TYPE qoslet_cpu_cfs_burst_seconds_total counter\n"
	 "qoslet_cpu_cfs_burst_seconds_total" LABELS " 0.02\n"},
	{"psi: totals in seconds, no averages", false, fill_psi,
	 "# HELP qoslet_pressure_stall_seconds_total Time some (at least one) or full (all "
	 "non-idle) tasks of the cgroup were stalled on the resource (PSI total).\n"
	 "# TYPE qoslet_pressure_stall_seconds_total counter\n"
	 "qoslet_pressure_stall_seconds_total{cgroup=\"/kubepods/podu1/c1\",pod_uid=\"u1\","
	 "qos=\"LS\",resource=\"cpu\",kind=\"some\"} 1.5\n"
	 "qoslet_pressure_stall_seconds_total{cgroup=\"/kubepods/podu1/c1\",pod_uid=\"u1\","
	 "qos=\"LS\",resource=\"cpu\",kind=\"full\"} 0.00025\n"
	 "qoslet_pressure_stall_seconds_total{cgroup=\"/kubepods/podu1/c1\",pod_uid=\"u1\","
	 "qos=\"LS\",resource=\"memory\",kind=\"some\"} 0.000002\n"
	 "qoslet_pressure_stall_seconds_total{cgroup=\"/kubepods/podu1/c1\",pod_uid=\"u1\","
	 "qos=\"LS\",resource=\"memory\",kind=\"full\"} 0\n"
	 "qoslet_pressure_stall_seconds_total{cgroup=\"/kubepods/podu1/c1\",pod_uid=\"u1\","
	 "qos=\"LS\",resource=\"io\",kind=\"some\"} 0\n"
	 "qoslet_pressure_stall_seconds_total{cgroup=\"/kubepods/podu1/c1\",pod_uid=\"u1\","
	 "qos=\"LS\",resource=\"io\",kind=\"full\"} 3\n"},
	{"no part: no series, no family", true, fill_none, ""},
};

#undef LABELS

static void test_families(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(family_cases); i++) {
		const struct family_case *fc = &family_cases[i];
		struct cg_sample s = {.id = 5};
		struct metrics_cgroup cg = {
			.s = &s, .path = "kubepods/podu1/c1", .pod_uid = "u1", .qos = "LS"};
		struct metrics_input in = {
			.cgroups = &cg, .n_cgroups = 1, .cpi_hardware = fc->cpi_hardware};
		char *text, *got;

		print_message("%s\n", fc->name);
		fc->fill(&s);
		text = render(&in);
		got = between_runqueue_and_decisions(text);
		assert_string_equal(got, fc->want);
		assert_no_duplicate_series(text);
		free(got);
		free(text);
	}
}

/* Reclaim stalls: two histograms told apart by a label, and the OOM kill counter. */
static void test_memstall(void **state)
{
	struct cg_sample s = {.id = 5, .parts = CG_MEMSTALL};
	struct metrics_cgroup cg = {.s = &s, .path = "a"};
	struct metrics_input in = {.cgroups = &cg, .n_cgroups = 1};
	static const char *const want[] = {
		"# TYPE qoslet_memory_reclaim_stall_seconds histogram",
		"qoslet_memory_reclaim_stall_seconds_bucket{cgroup=\"/a\",reclaim=\"direct\","
		"le=\"0.000001024\"} 0",
		"qoslet_memory_reclaim_stall_seconds_bucket{cgroup=\"/a\",reclaim=\"direct\","
		"le=\"0.000002048\"} 2",
		"qoslet_memory_reclaim_stall_seconds_bucket{cgroup=\"/a\",reclaim=\"direct\","
		"le=\"+Inf\"} 2",
		"qoslet_memory_reclaim_stall_seconds_sum{cgroup=\"/a\",reclaim=\"direct\"} 0.000003",
		"qoslet_memory_reclaim_stall_seconds_count{cgroup=\"/a\",reclaim=\"direct\"} 2",
		"qoslet_memory_reclaim_stall_seconds_bucket{cgroup=\"/a\",reclaim=\"memcg\","
		"le=\"0.004194304\"} 0",
		"qoslet_memory_reclaim_stall_seconds_bucket{cgroup=\"/a\",reclaim=\"memcg\","
		"le=\"0.008388608\"} 1",
		"qoslet_memory_reclaim_stall_seconds_sum{cgroup=\"/a\",reclaim=\"memcg\"} 0.005",
		"qoslet_memory_reclaim_stall_seconds_count{cgroup=\"/a\",reclaim=\"memcg\"} 1",
		"# TYPE qoslet_oom_kills_total counter",
		"qoslet_oom_kills_total{cgroup=\"/a\"} 3",
	};
	char *text;

	(void)state;
	s.mem.direct.slots[1] = 2;
	s.mem.direct.sum_ns = 3000;
	s.mem.memcg.slots[13] = 1;
	s.mem.memcg.sum_ns = 5000000;
	s.mem.oom_kills = 3;
	text = render(&in);
	for (size_t i = 0; i < ARRAY_LEN(want); i++)
		assert_line(text, want[i]);
	/* direct before memcg, histograms before the counter */
	assert_true(strstr(text, "reclaim=\"direct\"") < strstr(text, "reclaim=\"memcg\""));
	assert_true(strstr(text, "reclaim=\"memcg\"") < strstr(text, "qoslet_oom_kills_total{"));
	assert_no_duplicate_series(text);
	free(text);
}

/* Labels: root, no unit, escaping; each family only for cgroups with its part. */
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
	assert_line(text, "qoslet_runqueue_wait_seconds_count{cgroup=\"/\"} 0");
	assert_line(text, "qoslet_runqueue_wait_seconds_count{cgroup=\"/we\\\"ir\\\\d\\nname\","
			  "qos=\"LS\"} 0");
	assert_null(strstr(text, "qoslet_runqueue_wait_seconds_count{cgroup=\"/cpu-only\""));
	assert_line(text, "qoslet_cpu_usage_seconds_total{cgroup=\"/cpu-only\"} 0");
	assert_null(strstr(text, "qoslet_cpu_usage_seconds_total{cgroup=\"/\"}"));
	assert_no_duplicate_series(text);
	free(text);
}

/* A node's pods: a pod and a container, and a pod the list does not know. */
static struct kube_container containers[] = {
	{.id = "abc123", .name = "app"},
	{.id = "def456", .name = "side\"car"},
};
static struct kube_pod pods[] = {
	{.uid = "1111-aa",
	 .ns = "batch",
	 .name = "job-x",
	 .containers = containers,
	 .n_containers = ARRAY_LEN(containers)},
	{.uid = "2222-bb", .ns = "web", .name = "api"},
};
static struct kube_pod_list pod_list = {.pods = pods, .n = ARRAY_LEN(pods)};

/* namespace, pod and container from the pod list, for both kubelet layouts. */
static void test_kube_labels(void **state)
{
	struct cg_sample s[] = {
		{.id = 1, .parts = CG_RQ}, {.id = 2, .parts = CG_RQ}, {.id = 3, .parts = CG_RQ},
		{.id = 4, .parts = CG_RQ}, {.id = 5, .parts = CG_RQ}, {.id = 6, .parts = CG_RQ},
	};
	struct metrics_cgroup cg[] = {
		{.s = &s[0],
		 .path = "kubepods/besteffort/pod1111-aa",
		 .pod_uid = "1111-aa",
		 .qos = "BE"},
		{.s = &s[1], .path = "kubepods/besteffort/pod1111-aa/abc123", .pod_uid = "1111-aa"},
		{.s = &s[2],
		 .path = "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1111_aa.slice/"
			 "cri-containerd-def456.scope"},
		{.s = &s[3], .path = "kubepods/besteffort/pod1111-aa/pause0"}, /* not started */
		{.s = &s[4], .path = "kubepods/pod3333-cc/abc123"},	       /* unknown pod */
		{.s = &s[5], .path = "system.slice/kubelet.service"},
	};
	struct metrics_input in = {.cgroups = cg, .n_cgroups = ARRAY_LEN(cg), .pods = &pod_list};
	static const char *const want[] = {
		"qoslet_runqueue_wait_seconds_count{cgroup=\"/kubepods/besteffort/pod1111-aa\","
		"pod_uid=\"1111-aa\",namespace=\"batch\",pod=\"job-x\",qos=\"BE\"} 0",
		"qoslet_runqueue_wait_seconds_count{cgroup=\"/kubepods/besteffort/pod1111-aa/abc123\","
		"pod_uid=\"1111-aa\",namespace=\"batch\",pod=\"job-x\",container=\"app\"} 0",
		"qoslet_runqueue_wait_seconds_count{cgroup=\"/kubepods.slice/kubepods-besteffort.slice/"
		"kubepods-besteffort-pod1111_aa.slice/cri-containerd-def456.scope\","
		"namespace=\"batch\",pod=\"job-x\",container=\"side\\\"car\"} 0",
		"qoslet_runqueue_wait_seconds_count{cgroup=\"/kubepods/besteffort/pod1111-aa/pause0\","
		"namespace=\"batch\",pod=\"job-x\"} 0",
		"qoslet_runqueue_wait_seconds_count{cgroup=\"/kubepods/pod3333-cc/abc123\"} 0",
		"qoslet_runqueue_wait_seconds_count{cgroup=\"/system.slice/kubelet.service\"} 0",
	};
	char *text;

	(void)state;
	text = render(&in);
	for (size_t i = 0; i < ARRAY_LEN(want); i++)
		assert_line(text, want[i]);
	assert_no_duplicate_series(text);
	free(text);
}

/* Two ids with one path (one removed, its name not yet forgotten): the newer id alone, everywhere.
 */
static void test_duplicate_path(void **state)
{
	struct cg_sample s[] = {
		{.id = 10, .parts = CG_RQ | CG_THROTTLE, .rq = {.slots = {1}}},
		{.id = 30, .parts = CG_RQ | CG_THROTTLE, .rq = {.slots = {3}}},
		{.id = 20, .parts = CG_RQ, .rq = {.slots = {2}}},
	};
	struct metrics_cgroup cg[] = {
		{.s = &s[0], .path = "a"},
		{.s = &s[1], .path = "a"},
		{.s = &s[2], .path = "b"},
	};
	struct blame_sample blame[] = {
		{.victim = 10, .culprit = 20, .wait_ns = 7}, /* the older id: not published */
		{.victim = 30, .culprit = 20, .wait_ns = 5},
	};
	struct metrics_input in = {.cgroups = cg,
				   .n_cgroups = ARRAY_LEN(cg),
				   .blame = blame,
				   .n_blame = ARRAY_LEN(blame),
				   .blame_top = 10};
	char *text;

	(void)state;
	s[0].throttle.nr_periods = 1;
	s[1].throttle.nr_periods = 3;
	text = render(&in);
	assert_line(text, "qoslet_runqueue_wait_seconds_count{cgroup=\"/a\"} 3");
	assert_false(has_line(text, "qoslet_runqueue_wait_seconds_count{cgroup=\"/a\"} 1"));
	assert_line(text, "qoslet_runqueue_wait_seconds_count{cgroup=\"/b\"} 2");
	assert_line(text, "qoslet_cpu_cfs_periods_total{cgroup=\"/a\"} 3");
	assert_line(text, "qoslet_blame_wait_seconds_total{cgroup=\"/a\",culprit_cgroup=\"/b\"} "
			  "0.000000005");
	assert_line(text, "qoslet_blame_other_wait_seconds 0.000000007");
	/* sorted by path */
	assert_true(strstr(text, "cgroup=\"/a\"") < strstr(text, "cgroup=\"/b\""));
	assert_no_duplicate_series(text);
	free(text);
}

/*
 * Blame: the top pairs by total, sorted by labels; the idle culprit; a pair
 * the input repeats is one series; the rest (beyond the top, unknown
 * cgroups) summed in the "other" gauge.
 */
static void test_blame(void **state)
{
	struct cg_sample s[] = {
		{.id = 1, .parts = CG_RQ}, {.id = 2, .parts = CG_RQ}, {.id = 3, .parts = 0}};
	struct metrics_cgroup cg[] = {
		{.s = &s[0],
		 .path = "kubepods/besteffort/pod2222-bb",
		 .pod_uid = "2222-bb",
		 .qos = "BE"},
		{.s = &s[1], .path = "ls", .qos = "LS"},
		{.s = &s[2], .path = "sys"}, /* no part: a culprit's name only */
	};
	struct blame_sample blame[] = {
		{.victim = 2, .culprit = 1, .wait_ns = 3000000000ull, .count = 9},
		{.victim = 2, .culprit = QOSLET_CULPRIT_IDLE, .wait_ns = 500000000},
		{.victim = 2, .culprit = 3, .wait_ns = 1000},		/* beyond the top 3 */
		{.victim = 1, .culprit = 1, .wait_ns = 700000000},	/* own tasks */
		{.victim = 2, .culprit = 99, .wait_ns = 5000000000ull}, /* culprit removed */
		{.victim = 98, .culprit = 1, .wait_ns = 20},		/* victim removed */
		{.victim = 2, .culprit = 1, .wait_ns = 1},		/* repeated pair */
	};
	struct metrics_input in = {.cgroups = cg,
				   .n_cgroups = ARRAY_LEN(cg),
				   .blame = blame,
				   .n_blame = ARRAY_LEN(blame),
				   .blame_top = 3,
				   .pods = &pod_list};
	static const char want[] =
		"# HELP qoslet_blame_wait_seconds_total Run-queue wait of the victim cgroup's tasks "
		"charged to the culprit cgroup (the task that ran before them), for the pairs with "
		"the largest totals.\n"
		"# TYPE qoslet_blame_wait_seconds_total counter\n"
		"qoslet_blame_wait_seconds_total{cgroup=\"/kubepods/besteffort/pod2222-bb\","
		"pod_uid=\"2222-bb\",namespace=\"web\",pod=\"api\",qos=\"BE\","
		"culprit_cgroup=\"/kubepods/besteffort/pod2222-bb\",culprit_pod_uid=\"2222-bb\","
		"culprit_namespace=\"web\",culprit_pod=\"api\",culprit_qos=\"BE\"} 0.7\n"
		"qoslet_blame_wait_seconds_total{cgroup=\"/ls\",qos=\"LS\",culprit_cgroup=\"(idle)\"} "
		"0.5\n"
		"qoslet_blame_wait_seconds_total{cgroup=\"/ls\",qos=\"LS\","
		"culprit_cgroup=\"/kubepods/besteffort/pod2222-bb\",culprit_pod_uid=\"2222-bb\","
		"culprit_namespace=\"web\",culprit_pod=\"api\",culprit_qos=\"BE\"} 3.000000001\n"
		"# HELP qoslet_blame_pairs Victim/culprit pairs the sched probe holds.\n"
		"# TYPE qoslet_blame_pairs gauge\n"
		"qoslet_blame_pairs 6\n"
		"# HELP qoslet_blame_other_wait_seconds Run-queue wait of the pairs not published one "
		"by one.\n"
		"# TYPE qoslet_blame_other_wait_seconds gauge\n"
		"qoslet_blame_other_wait_seconds 5.00000102\n";
	char *text, *from;

	(void)state;
	text = render(&in);
	from = strstr(text, "# HELP qoslet_blame_wait_seconds_total");
	assert_non_null(from);
	assert_memory_equal(from, want, strlen(want));
	assert_no_duplicate_series(text);
	free(text);

	/* a top of 0: every pair in "other" */
	in.blame_top = 0;
	text = render(&in);
	assert_null(strstr(text, "qoslet_blame_wait_seconds_total"));
	assert_line(text, "qoslet_blame_other_wait_seconds 9.200001021");
	free(text);
	/* no pair: no blame family at all */
	in.n_blame = 0;
	text = render(&in);
	assert_null(strstr(text, "qoslet_blame"));
	free(text);
}

/* Applied settings: a family per knob, units sorted by path, unlimited quota as +Inf. */
static void test_settings(void **state)
{
	struct metrics_setting set[] = {
		{.path = "kubepods/besteffort/pod2222-bb",
		 .pod_uid = "2222-bb",
		 .qos = "BE",
		 .knob = CG_KNOB_QUOTA,
		 .value = 0.25},
		{.path = "ls", .qos = "LS", .knob = CG_KNOB_QUOTA, .value = INFINITY},
		{.path = "ls", .qos = "LS", .knob = CG_KNOB_BURST, .value = 0.05},
		{.path = "kubepods/besteffort/pod2222-bb",
		 .pod_uid = "2222-bb",
		 .qos = "BE",
		 .knob = CG_KNOB_IDLE,
		 .value = 1},
		{.path = "kubepods/besteffort/pod2222-bb",
		 .pod_uid = "2222-bb",
		 .qos = "BE",
		 .knob = CG_KNOB_CPUS,
		 .value = 3},
		{.path = "ls", .qos = "LS", .knob = CG_KNOB_WEIGHT, .value = 7}, /* not published */
	};
	struct metrics_input in = {
		.settings = set, .n_settings = ARRAY_LEN(set), .pods = &pod_list};
	static const char want[] =
		"# HELP qoslet_applied_cpu_quota_cores CFS quota / period qoslet set on the unit, in "
		"CPUs (+Inf: unlimited).\n"
		"# TYPE qoslet_applied_cpu_quota_cores gauge\n"
		"qoslet_applied_cpu_quota_cores{cgroup=\"/kubepods/besteffort/pod2222-bb\","
		"pod_uid=\"2222-bb\",namespace=\"web\",pod=\"api\",qos=\"BE\"} 0.25\n"
		"qoslet_applied_cpu_quota_cores{cgroup=\"/ls\",qos=\"LS\"} +Inf\n"
		"# HELP qoslet_applied_cpu_burst_seconds CFS burst qoslet set on the unit.\n"
		"# TYPE qoslet_applied_cpu_burst_seconds gauge\n"
		"qoslet_applied_cpu_burst_seconds{cgroup=\"/ls\",qos=\"LS\"} 0.05\n"
		"# HELP qoslet_applied_cpu_idle cpu.idle qoslet set on the unit.\n"
		"# TYPE qoslet_applied_cpu_idle gauge\n"
		"qoslet_applied_cpu_idle{cgroup=\"/kubepods/besteffort/pod2222-bb\","
		"pod_uid=\"2222-bb\",namespace=\"web\",pod=\"api\",qos=\"BE\"} 1\n"
		"# HELP qoslet_applied_cpuset_cpus Number of CPUs in the cpuset qoslet set on the "
		"unit.\n"
		"# TYPE qoslet_applied_cpuset_cpus gauge\n"
		"qoslet_applied_cpuset_cpus{cgroup=\"/kubepods/besteffort/pod2222-bb\","
		"pod_uid=\"2222-bb\",namespace=\"web\",pod=\"api\",qos=\"BE\"} 3\n";
	char *text, *got;

	(void)state;
	text = render(&in);
	got = between_runqueue_and_decisions(text);
	assert_string_equal(got, want);
	assert_no_duplicate_series(text);
	free(got);
	free(text);
}

/* Decision counters, sorted by kind, rule and outcome; agent health; probes; process. */
static void test_decisions_and_health(void **state)
{
	struct decision_count counts[] = {
		{ACT_CPU_QUOTA, RULE_SUPPRESS_CFS_QUOTA, OUT_DRY_RUN, 2},
		{ACT_CPU_BURST, RULE_BURST_SCALE_UP, OUT_APPLIED, 5},
		{ACT_CPU_QUOTA, RULE_SUPPRESS_CFS_QUOTA, OUT_APPLIED, 4},
	};
	struct decision_log log = {.counts = counts, .n_counts = ARRAY_LEN(counts)};
	struct metrics_probe probes[] = {
		{.name = "sched", .on = true, .path = "tp_btf, sched_info"},
		{.name = "cpi", .on = false},
	};
	struct metrics_process proc = {.rss_bytes = 12582912,
				       .vm_bytes = -1, /* unknown: no series */
				       .open_fds = 17,
				       .max_fds = 1024,
				       .cpu_ns = 1500000000};
	struct metrics_input in = {
		.log = &log,
		.ticks = 12,
		.fast_ticks = 3,
		.alerts_wait = 5,
		.alerts_displaced = 2,
		.outside_reasserted = 4,
		.outside_contested = 1,
		.loop_ns = 1500000,
		.probes = probes,
		.n_probes = ARRAY_LEN(probes),
		.errors = {[METRICS_ERR_PROBE_READ] = 2, [METRICS_ERR_RENDER] = 1},
		.process = &proc};
	static const char want[] =
		"qoslet_decisions_total{kind=\"cpu_burst\",rule=\"burst.scale_up\","
		"outcome=\"applied\"} 5\n"
		"qoslet_decisions_total{kind=\"cpu_quota\",rule=\"suppress.cfs_quota\","
		"outcome=\"applied\"} 4\n"
		"qoslet_decisions_total{kind=\"cpu_quota\",rule=\"suppress.cfs_quota\","
		"outcome=\"dry_run\"} 2\n";
	static const char want_process[] =
		"# HELP process_cpu_seconds_total User and system CPU time the agent spent, all "
		"threads.\n"
		"# TYPE process_cpu_seconds_total counter\n"
		"process_cpu_seconds_total 1.5\n"
		"# HELP process_resident_memory_bytes Resident memory of the agent.\n"
		"# TYPE process_resident_memory_bytes gauge\n"
		"process_resident_memory_bytes 12582912\n"
		"# HELP process_open_fds File descriptors the agent has open.\n"
		"# TYPE process_open_fds gauge\n"
		"process_open_fds 17\n"
		"# HELP process_max_fds The agent's limit of open file descriptors.\n"
		"# TYPE process_max_fds gauge\n"
		"process_max_fds 1024\n";
	char *text;

	(void)state;
	text = render(&in);
	if (!strstr(text, want))
		fail_msg("decisions not as expected in\n%s", text);
	assert_line(text, "qoslet_agent_ticks_total 12");
	assert_line(text, "qoslet_agent_fast_path_ticks_total 3");
	assert_line(text, "qoslet_agent_fast_path_alerts_total{kind=\"wait\"} 5");
	assert_line(text, "qoslet_agent_fast_path_alerts_total{kind=\"displaced\"} 2");
	assert_line(text, "qoslet_agent_outside_writes_total{answer=\"reasserted\"} 4");
	assert_line(text, "qoslet_agent_outside_writes_total{answer=\"contested\"} 1");
	assert_line(text, "qoslet_agent_loop_duration_seconds 0.0015");
	assert_line(text, "qoslet_agent_errors_total{kind=\"probe_read\"} 2");
	assert_line(text, "qoslet_agent_errors_total{kind=\"cgroup_read\"} 0");
	assert_line(text, "qoslet_agent_errors_total{kind=\"render\"} 1");
	assert_line(text, "qoslet_agent_probe_up{probe=\"sched\"} 1");
	assert_line(text, "qoslet_agent_probe_up{probe=\"cpi\"} 0");
	assert_line(text, "qoslet_agent_probe_info{probe=\"sched\",path=\"tp_btf, sched_info\"} 1");
	assert_null(strstr(text, "qoslet_agent_probe_info{probe=\"cpi\""));
	/* the process families end the text when Kubernetes is off */
	assert_true(strlen(text) > strlen(want_process));
	assert_string_equal(text + strlen(text) - strlen(want_process), want_process);
	assert_null(strstr(text, "qoslet_kube_"));
	assert_no_duplicate_series(text);
	free(text);
}

/*
 * Breaches per victim and cause: one series each, sorted by victim path
 * then cause (in the order of enum interference_cause), with the victim's labels, right after the
 * decisions; none: no family at all.
 */
/* Pinned pods: how many CPUs each holds alone, labelled as its cgroup; the node's count. */
static void test_pinned(void **state)
{
	struct metrics_pinned p[] = {{"kubepods/pod2222-bb", "2222-bb", "LSR", 2}};
	struct metrics_input in = {
		.pinned = p, .n_pinned = ARRAY_LEN(p), .exclusive_cpus = 3, .pods = &pod_list};
	static const char *const want[] = {
		"qoslet_exclusive_cpus 3\n",
		"# TYPE qoslet_pinned_cpus gauge\n"
		"qoslet_pinned_cpus{cgroup=\"/kubepods/pod2222-bb\",pod_uid=\"2222-bb\","
		"namespace=\"web\",pod=\"api\",qos=\"LSR\"} 2\n",
	};
	char *text;

	(void)state;
	text = render(&in);
	for (size_t i = 0; i < ARRAY_LEN(want); i++)
		if (!strstr(text, want[i]))
			fail_msg("no %s in\n%s", want[i], text);
	assert_no_duplicate_series(text);
	free(text);
}

static void test_breaches(void **state)
{
	struct metrics_breach b[] = {
		{"ls", NULL, "LS", CAUSE_SELF, 1},
		{"kubepods/burstable/pod2222-bb", "2222-bb", "LS", CAUSE_OUTSIDE, 3},
		{"ls", NULL, "LS", CAUSE_IDLE, 2},
	};
	struct metrics_input in = {.breaches = b, .n_breaches = ARRAY_LEN(b), .pods = &pod_list};
	static const char want[] =
		"# HELP qoslet_interference_breaches_total Latency breaches of the victim unit the "
		"agent reported, by what explains them best (cause).\n"
		"# TYPE qoslet_interference_breaches_total counter\n"
		"qoslet_interference_breaches_total{cgroup=\"/kubepods/burstable/pod2222-bb\","
		"pod_uid=\"2222-bb\",namespace=\"web\",pod=\"api\",qos=\"LS\",cause=\"outside\"} 3\n"
		"qoslet_interference_breaches_total{cgroup=\"/ls\",qos=\"LS\",cause=\"self\"} 1\n"
		"qoslet_interference_breaches_total{cgroup=\"/ls\",qos=\"LS\",cause=\"idle\"} 2\n"
		"# HELP qoslet_agent_ticks_total";
	char *text;

	(void)state;
	text = render(&in);
	if (!strstr(text, want))
		fail_msg("breaches not as expected in\n%s", text);
	assert_no_duplicate_series(text);
	free(text);
	in.n_breaches = 0;
	text = render(&in);
	assert_null(strstr(text, "qoslet_interference_breaches_total"));
	free(text);
}

/* The Kubernetes client's counters, every call listed; the node condition once written. */
static void test_kube_stats(void **state)
{
	struct kube_link_stats k = {
		.requests = {[KUBE_CALL_LIST_PODS] = 40, [KUBE_CALL_EVICT] = 2},
		.errors = {[KUBE_CALL_LIST_PODS] = 1, [KUBE_CALL_NODE_STATUS] = 3},
		.events_aggregated = 5,
		.events_dropped = 6,
		.pods = 31,
		.last_list_ns = 1700000000250000000ull,
		.pod_lists = 2,
		.pod_events = 17,
		.pod_expired = 1,
		.pod_watch_broken = 3,
		.pod_oversize = 4,
		.pods_degraded = "pod list over the size cap: too large",
		.condition_known = true,
		.condition = true,
		.batch_known = true,
		.batch_cpu_milli = 1900,
		.batch_mem_bytes = 4096,
	};
	struct metrics_input in = {.kube = &k};
	static const char want[] =
		"# HELP qoslet_kube_requests_total Kubernetes API calls the agent made, by call.\n"
		"# TYPE qoslet_kube_requests_total counter\n"
		"qoslet_kube_requests_total{call=\"list_pods\"} 40\n"
		"qoslet_kube_requests_total{call=\"evict\"} 2\n"
		"qoslet_kube_requests_total{call=\"event_create\"} 0\n"
		"qoslet_kube_requests_total{call=\"event_patch\"} 0\n"
		"qoslet_kube_requests_total{call=\"node_status\"} 0\n"
		"qoslet_kube_requests_total{call=\"get_node\"} 0\n"
		"qoslet_kube_requests_total{call=\"watch_pods\"} 0\n"
		"# HELP qoslet_kube_request_errors_total Kubernetes API calls that got no answer or an "
		"error status, by call.\n"
		"# TYPE qoslet_kube_request_errors_total counter\n"
		"qoslet_kube_request_errors_total{call=\"list_pods\"} 1\n"
		"qoslet_kube_request_errors_total{call=\"evict\"} 0\n"
		"qoslet_kube_request_errors_total{call=\"event_create\"} 0\n"
		"qoslet_kube_request_errors_total{call=\"event_patch\"} 0\n"
		"qoslet_kube_request_errors_total{call=\"node_status\"} 3\n"
		"qoslet_kube_request_errors_total{call=\"get_node\"} 0\n"
		"qoslet_kube_request_errors_total{call=\"watch_pods\"} 0\n"
		"# HELP qoslet_kube_events_aggregated_total Occurrences folded into an existing "
		"Kubernetes Event's series.\n"
		"# TYPE qoslet_kube_events_aggregated_total counter\n"
		"qoslet_kube_events_aggregated_total 5\n"
		"# HELP qoslet_kube_events_dropped_total Occurrences the Event rate limit dropped.\n"
		"# TYPE qoslet_kube_events_dropped_total counter\n"
		"qoslet_kube_events_dropped_total 6\n"
		"# HELP qoslet_kube_pods Pods on this node as the pod watch knows them.\n"
		"# TYPE qoslet_kube_pods gauge\n"
		"qoslet_kube_pods 31\n"
		"# HELP qoslet_kube_last_pod_list_timestamp_seconds Unix time the pod set was last "
		"known current (a list, a watch event or bookmark, a watch's clean end); 0 before the "
		"first list.\n"
		"# TYPE qoslet_kube_last_pod_list_timestamp_seconds gauge\n"
		"qoslet_kube_last_pod_list_timestamp_seconds 1700000000.25\n"
		"# HELP qoslet_kube_pod_lists_total Complete pod lists: the first, then after a 410 "
		"Gone, a broken watch or a resync.\n"
		"# TYPE qoslet_kube_pod_lists_total counter\n"
		"qoslet_kube_pod_lists_total 2\n"
		"# HELP qoslet_kube_pod_watch_events_total Pod watch events applied (ADDED, MODIFIED, "
		"DELETED).\n"
		"# TYPE qoslet_kube_pod_watch_events_total counter\n"
		"qoslet_kube_pod_watch_events_total 17\n"
		"# HELP qoslet_kube_pod_expired_total 410 Gone answers to a pod list or watch: the "
		"version was compacted, listed again.\n"
		"# TYPE qoslet_kube_pod_expired_total counter\n"
		"qoslet_kube_pod_expired_total 1\n"
		"# HELP qoslet_kube_pod_watch_broken_total Pod watches cut, refused or unreadable "
		"before their server timeout.\n"
		"# TYPE qoslet_kube_pod_watch_broken_total counter\n"
		"qoslet_kube_pod_watch_broken_total 3\n"
		"# HELP qoslet_kube_pod_oversize_total Pod list pages or watch events over the size "
		"cap.\n"
		"# TYPE qoslet_kube_pod_oversize_total counter\n"
		"qoslet_kube_pod_oversize_total 4\n"
		"# HELP qoslet_kube_pods_degraded 1 while the pod list is over the size cap (/readyz "
		"says why), else 0.\n"
		"# TYPE qoslet_kube_pods_degraded gauge\n"
		"qoslet_kube_pods_degraded 1\n"
		"# HELP qoslet_kube_node_interference The node condition the agent last wrote: 1 "
		"interference, 0 none.\n"
		"# TYPE qoslet_kube_node_interference gauge\n"
		"qoslet_kube_node_interference 1\n"
		"# HELP qoslet_kube_node_batch The node's batch resources the API last took from the "
		"agent: kubernetes.io/batch-cpu in milli-CPUs, kubernetes.io/batch-memory in bytes.\n"
		"# TYPE qoslet_kube_node_batch gauge\n"
		"qoslet_kube_node_batch{resource=\"kubernetes.io/batch-cpu\"} 1900\n"
		"qoslet_kube_node_batch{resource=\"kubernetes.io/batch-memory\"} 4096\n";
	char *text, *from;

	(void)state;
	text = render(&in);
	from = strstr(text, "# HELP qoslet_kube_requests_total");
	assert_non_null(from);
	assert_string_equal(from, want);
	assert_no_duplicate_series(text);
	free(text);
	/* the condition was never written: no series for it */
	k.condition_known = false;
	text = render(&in);
	assert_null(strstr(text, "qoslet_kube_node_interference"));
	assert_line(text, "qoslet_kube_pods 31");
	free(text);
}

/* Pods whose own metadata was not taken as asked: every pair listed, in order; only with kube. */
static void test_pod_metadata_refused(void **state)
{
	static const struct metrics_refusal r[] = {
		{"eviction_opt_out", "namespace_not_allowed", 2},
		{"qos_label", "needs_guaranteed", 1},
		{"runq_target", "below_floor", 0},
	};
	struct kube_link_stats k = {0};
	struct metrics_input in = {.refusals = r, .n_refusals = 3};
	char *text;

	(void)state;
	text = render(&in);
	assert_null(strstr(text, "qoslet_pod_metadata_refused")); /* Kubernetes off */
	free(text);
	in.kube = &k;
	text = render(&in);
	assert_non_null(strstr(text, "# TYPE qoslet_pod_metadata_refused gauge\n"
				     "qoslet_pod_metadata_refused{input=\"eviction_opt_out\","
				     "reason=\"namespace_not_allowed\"} 2\n"
				     "qoslet_pod_metadata_refused{input=\"qos_label\","
				     "reason=\"needs_guaranteed\"} 1\n"
				     "qoslet_pod_metadata_refused{input=\"runq_target\","
				     "reason=\"below_floor\"} 0\n"));
	assert_no_duplicate_series(text);
	free(text);
}

/* Batch capacity: the two gauges, the terms by term, the threshold, the window, why held. */
static void test_capacity(void **state)
{
	struct capacity_result c = {
		.r = {[CAP_CPU] = {.capacity = 4,
				   .threshold = 0.6,
				   .ls = 0.8,
				   .system = 0.3,
				   .pctl = 1.2,
				   .used = 1.2,
				   .reserve = 0.1,
				   .batch = 1.1},
		      [CAP_MEM] = {.capacity = 8e9,
				   .threshold = 0.65,
				   .ls = 2e9,
				   .system = 5e8,
				   .pctl = 2.5e9,
				   .used = 2.5e9,
				   .reserve = 0,
				   .batch = 2.7e9}},
		.window_covered_s = 300,
	};
	struct metrics_input in = {.capacity = &c};
	char *text;

	(void)state;
	text = render(&in);
	assert_line(text, "qoslet_batch_allocatable_cpu_cores 1.1");
	assert_line(text, "qoslet_batch_allocatable_memory_bytes 2700000000");
	assert_line(text, "qoslet_batch_formula_cpu_cores{term=\"capacity\"} 4");
	assert_line(text, "qoslet_batch_formula_cpu_cores{term=\"ls\"} 0.8");
	assert_line(text, "qoslet_batch_formula_cpu_cores{term=\"system\"} 0.3");
	assert_line(text, "qoslet_batch_formula_cpu_cores{term=\"percentile\"} 1.2");
	assert_line(text, "qoslet_batch_formula_cpu_cores{term=\"used\"} 1.2");
	assert_line(text, "qoslet_batch_formula_cpu_cores{term=\"reserve\"} 0.1");
	assert_line(text, "qoslet_batch_formula_memory_bytes{term=\"ls\"} 2000000000");
	assert_line(text, "qoslet_batch_threshold_ratio{resource=\"cpu\"} 0.6");
	assert_line(text, "qoslet_batch_threshold_ratio{resource=\"memory\"} 0.65");
	assert_line(text, "qoslet_batch_window_seconds 300");
	assert_line(text, "qoslet_batch_held{reason=\"\"} 0");
	assert_no_duplicate_series(text);
	free(text);
	c.held = "cgroup reads \"failed\"";
	text = render(&in);
	assert_line(text, "qoslet_batch_held{reason=\"cgroup reads \\\"failed\\\"\"} 1");
	free(text);
	/* off: no batch families at all */
	in.capacity = NULL;
	text = render(&in);
	assert_null(strstr(text, "qoslet_batch_"));
	free(text);
}

/*
 * A busy node: 100 pods, each with every part, a blame pair for each of
 * them and more, applied settings. No duplicate series, the blame bound
 * holds, and the render time is printed (not asserted: the machine may be busy).
 */
static void test_node_scale(void **state)
{
	enum { N = 100 };
	struct cg_sample *s = calloc(N, sizeof(*s));
	struct metrics_cgroup *cg = calloc(N, sizeof(*cg));
	struct blame_sample *blame = calloc(N * 10, sizeof(*blame));
	struct metrics_setting set[N];
	char(*paths)[64] = calloc(N, sizeof(*paths));
	struct metrics_input in = {.cgroups = cg,
				   .n_cgroups = N,
				   .cpi_hardware = true,
				   .blame = blame,
				   .n_blame = N * 10,
				   .blame_top = METRICS_BLAME_TOP,
				   .settings = set,
				   .n_settings = N,
				   .pods = &pod_list};
	struct timespec t0, t1;
	size_t lines = 0, blame_lines = 0;
	char *text;

	(void)state;
	assert_non_null(s);
	assert_non_null(cg);
	assert_non_null(blame);
	assert_non_null(paths);
	for (int i = 0; i < N; i++) {
		snprintf(paths[i], sizeof(paths[i]), "kubepods/burstable/pod%04d-uid", i);
		s[i] = (struct cg_sample){.id = 1000 + i,
					  .parts = CG_RQ | CG_CPU | CG_THROTTLE | CG_MEMSTALL |
						   CG_PSI};
		s[i].rq.slots[i % QOSLET_LAT_SLOTS] = i;
		cg[i] = (struct metrics_cgroup){.s = &s[i], .path = paths[i], .qos = "LS"};
		set[i] = (struct metrics_setting){
			.path = paths[i], .qos = "LS", .knob = CG_KNOB_QUOTA, .value = 1.5};
		for (int j = 0; j < 10; j++)
			blame[i * 10 + j] = (struct blame_sample){.victim = 1000 + i,
								  .culprit = 1000 + (i + j) % N,
								  .wait_ns = i * 10 + j};
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	text = render(&in);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (const char *p = text; (p = strchr(p, '\n')); p++)
		lines++;
	for (const char *p = text; (p = strstr(p, "\nqoslet_blame_wait_seconds_total{")); p++)
		blame_lines++;
	print_message("%d cgroups: %zu lines, %zu bytes rendered in %.2f ms\n", N, lines,
		      strlen(text),
		      (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	assert_int_equal(blame_lines, METRICS_BLAME_TOP);
	assert_line(text, "qoslet_blame_pairs 1000");
	assert_no_duplicate_series(text);
	free(text);
	free(paths);
	free(blame);
	free(cg);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),	       cmocka_unit_test(test_histogram_lines),
		cmocka_unit_test(test_families),       cmocka_unit_test(test_memstall),
		cmocka_unit_test(test_labels),	       cmocka_unit_test(test_kube_labels),
		cmocka_unit_test(test_duplicate_path), cmocka_unit_test(test_blame),
		cmocka_unit_test(test_settings),       cmocka_unit_test(test_decisions_and_health),
		cmocka_unit_test(test_breaches),       cmocka_unit_test(test_pinned),
		cmocka_unit_test(test_kube_stats),     cmocka_unit_test(test_capacity),
		cmocka_unit_test(test_node_scale),     cmocka_unit_test(test_pod_metadata_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
