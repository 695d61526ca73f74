// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Publishing (report/publish.c): a publish_view built from a small record
 * (an LS, a BE and a SYSTEM unit, one unit with nothing measured), a
 * decision log, breach counts and a capacity result is rendered, and what
 * the HTTP server then serves is read back as a scraper would: the server
 * runs without a listener and each request comes over a socketpair
 * (http_start_unbound(), http_add_connection()). Checked: the metric
 * families and the units' labels, breaches per victim and cause, the
 * decisions as JSON in order, that `want` picks the texts rendered, and
 * that a failed render is counted and served as 503.
 */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"
#include "report/publish.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Out of memory, on demand: publish.c copies every published cgroup's
 * path with strdup(), so while this is set the metrics render fails the
 * way it does when the heap runs out. The test binary's strdup() takes
 * precedence over the C library's (and ASan's interceptor, a weak symbol)
 * for every caller; glibc's own callers use an internal alias.
 */
static int fail_strdup;

char *strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p;

	if (__atomic_load_n(&fail_strdup, __ATOMIC_RELAXED))
		return NULL;
	p = malloc(n);
	return p ? memcpy(p, s, n) : NULL;
}

enum { U_LS, U_BE, U_SYSTEM, U_IDLE, N_UNITS };

static const struct {
	uint64_t id;
	const char *path, *pod_uid;
	enum qos_class cls;
	uint64_t cpu_ns; /* 0: no part measured, not published */
} unit_fixture[N_UNITS] = {
	[U_LS] = {101, "kubepods/burstable/pod11", "11", QOS_LS, 2500000000ull},
	[U_BE] = {102, "kubepods/besteffort/pod22", "22", QOS_BE, 750000000ull},
	[U_SYSTEM] = {103, "system.slice/sshd.service", "", QOS_SYSTEM, 1000000000ull},
	[U_IDLE] = {104, "kubepods/besteffort/pod44", "44", QOS_BE, 0},
};

struct fixture {
	struct tick_record rec;
	struct pol_unit units[N_UNITS];
	struct cg_sample totals[N_UNITS];
	const struct cg_sample *total_ptrs[N_UNITS];
	struct kube_pod_list pods;
	struct decision_log log;
	struct breach_counts breaches;
	struct capacity_result capacity;
	uint64_t answers[ACT_ANSWER_NR];
	uint64_t errors[METRICS_ERR_NR];
	struct http_server *http;
	struct publish_view view;
};

/* One reported breach of victim explained by cause, n times: the one place that names a cause. */
static void count_breach(struct breach_counts *b, uint64_t victim, enum interference_cause cause,
			 int n)
{
	while (n-- > 0)
		assert_int_equal(breach_counts_add(b, victim, cause), 0);
}

/* One decision on a unit of the fixture, as the plan and the actuator would log it. */
static void log_decision(struct fixture *f, int unit, enum act_kind kind, enum rule_id rule,
			 int64_t value)
{
	struct decision d = {.ts_ns = 1700000000000000000ull, .outcome = OUT_APPLIED};

	d.act.kind = kind;
	d.act.rule = rule;
	d.act.id = unit_fixture[unit].id;
	d.act.cls = unit_fixture[unit].cls;
	d.act.value = value;
	snprintf(d.act.path, sizeof(d.act.path), "%s", unit_fixture[unit].path);
	snprintf(d.pod_uid, sizeof(d.pod_uid), "%s", unit_fixture[unit].pod_uid);
	assert_int_equal(decision_log_add(&f->log, &d), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int rc;

	assert_non_null(f);
	rc = http_start_unbound(&f->http);
	if (rc)
		fail_msg("cannot start the HTTP server: %s", strerror(-rc));
	for (int i = 0; i < N_UNITS; i++) {
		struct pol_unit *u = &f->units[i];

		u->id = unit_fixture[i].id;
		snprintf(u->path, sizeof(u->path), "%s", unit_fixture[i].path);
		snprintf(u->pod_uid, sizeof(u->pod_uid), "%s", unit_fixture[i].pod_uid);
		u->cls = unit_fixture[i].cls;
		u->quota_us = -1;
		u->burst_us = -1;
		u->idle = -1;
		f->totals[i].id = u->id;
		if (unit_fixture[i].cpu_ns) {
			f->totals[i].parts = CG_CPU | CG_THROTTLE;
			f->totals[i].cpu.cpu_ns = unit_fixture[i].cpu_ns;
			f->totals[i].throttle.nr_periods = 40;
			f->totals[i].throttle.nr_throttled = 3 * i;
		}
		f->total_ptrs[i] = &f->totals[i];
	}
	f->rec.in.units = f->units;
	f->rec.in.n_units = N_UNITS;
	f->rec.unit_totals = f->total_ptrs;

	assert_int_equal(decision_log_init(&f->log, 8, NULL), 0);
	log_decision(f, U_BE, ACT_CPU_QUOTA, RULE_SUPPRESS_CFS_QUOTA, 50000);
	log_decision(f, U_LS, ACT_CPU_BURST, RULE_BURST_SCALE_UP, 20000);

	count_breach(&f->breaches, unit_fixture[U_LS].id, CAUSE_QUOTA, 2);
	count_breach(&f->breaches, unit_fixture[U_LS].id, CAUSE_OUTSIDE, 1);
	count_breach(&f->breaches, 999, CAUSE_UNIT, 5); /* no unit any more: no series */

	f->capacity.r[CAP_CPU] =
		(struct capacity_terms){.capacity = 8, .threshold = 0.65, .batch = 1.5};
	f->capacity.r[CAP_MEM] = (struct capacity_terms){.capacity = 1 << 30, .threshold = 0.7};
	f->capacity.window_covered_s = 600;
	f->capacity.samples = 60;

	f->errors[METRICS_ERR_CGROUP_READ] = 3;
	f->view = (struct publish_view){.rec = &f->rec,
					.pods = &f->pods,
					.log = &f->log,
					.breaches = &f->breaches,
					.capacity = &f->capacity,
					.cgroups = METRICS_SCOPE_UNITS,
					.ticks = 7,
					.fast_ticks = 2,
					.answers = f->answers,
					.errors = f->errors,
					.http = f->http};
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	http_stop(f->http);
	decision_log_free(&f->log);
	breach_counts_free(&f->breaches);
	free(f);
	return 0;
}

struct reply {
	int status;
	char *body; /* NUL-terminated; NULL when the answer had none */
	char *raw;
};

/* GETs path from the server over a socketpair, as a scraper would, and reads the whole answer. */
static struct reply get(struct http_server *s, const char *path)
{
	struct timeval timeout = {.tv_sec = 5};
	struct reply r = {0};
	size_t len = 0, cap = 4096;
	char req[128];
	ssize_t n;
	char *end;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	/* a server that never answers fails the test instead of hanging it */
	assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)), 0);
	assert_int_equal(http_add_connection(s, sv[1]), 0);
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", path);
	assert_int_equal(write(sv[0], req, (size_t)n), n);
	r.raw = malloc(cap);
	assert_non_null(r.raw);
	while ((n = read(sv[0], r.raw + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len == 1) {
			r.raw = realloc(r.raw, cap *= 2);
			assert_non_null(r.raw);
		}
	}
	assert_int_equal(n, 0); /* the server closed: the answer is whole */
	close(sv[0]);
	r.raw[len] = '\0';
	assert_int_equal(sscanf(r.raw, "HTTP/1.%*d %d", &r.status), 1);
	end = strstr(r.raw, "\r\n\r\n");
	if (end)
		r.body = end + 4;
	return r;
}

/* A GET whose status is all the test asks of it. */
static void expect_status(struct http_server *h, const char *path, int status)
{
	struct reply r = get(h, path);

	assert_int_equal(r.status, status);
	free(r.raw);
}

/* The line, whole, is in text. */
static void assert_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return;
	fail_msg("no line \"%s\" in:\n%s", line, text);
}

static void test_metrics_text(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	publish_render(&f->view, 2500000, HTTP_WANT(HTTP_METRICS));
	assert_int_equal(f->errors[METRICS_ERR_RENDER], 0);
	r = get(f->http, "/metrics");
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.raw, "text/plain; version=0.0.4"));

	/* health, from the view's counters */
	assert_line(r.body, "# TYPE qoslet_agent_ticks_total counter");
	assert_line(r.body, "qoslet_agent_ticks_total 7");
	assert_line(r.body, "qoslet_agent_fast_path_ticks_total 2");
	assert_line(r.body, "qoslet_agent_loop_duration_seconds 0.0025");
	assert_line(r.body, "qoslet_agent_errors_total{kind=\"cgroup_read\"} 3");
	assert_line(r.body, "qoslet_agent_errors_total{kind=\"render\"} 0");
	/* no probe set: sched is said to be off */
	assert_line(r.body, "qoslet_agent_probe_up{probe=\"sched\"} 0");

	/* per unit: its path, pod and class; a unit with nothing measured has no series */
	assert_line(r.body, "# TYPE qoslet_cpu_usage_seconds_total counter");
	assert_line(r.body, "qoslet_cpu_usage_seconds_total{cgroup=\"/kubepods/burstable/pod11\","
			    "pod_uid=\"11\",qos=\"LS\"} 2.5");
	assert_line(r.body, "qoslet_cpu_usage_seconds_total{cgroup=\"/kubepods/besteffort/pod22\","
			    "pod_uid=\"22\",qos=\"BE\"} 0.75");
	assert_line(r.body, "qoslet_cpu_usage_seconds_total{cgroup=\"/system.slice/sshd.service\","
			    "qos=\"SYSTEM\"} 1");
	assert_line(r.body, "qoslet_cpu_cfs_throttled_periods_total{cgroup=\"/kubepods/besteffort/"
			    "pod22\",pod_uid=\"22\",qos=\"BE\"} 3");
	assert_null(strstr(r.body, "pod44"));
	/* no cycles without a hardware PMU reading */
	assert_null(strstr(r.body, "qoslet_cpu_cycles_total"));

	/* breaches per victim and cause, labelled as the victim unit; the gone victim left out */
	assert_line(r.body, "# TYPE qoslet_interference_breaches_total counter");
	assert_line(r.body,
		    "qoslet_interference_breaches_total{cgroup=\"/kubepods/burstable/pod11\","
		    "pod_uid=\"11\",qos=\"LS\",cause=\"outside\"} 1");
	assert_line(r.body,
		    "qoslet_interference_breaches_total{cgroup=\"/kubepods/burstable/pod11\","
		    "pod_uid=\"11\",qos=\"LS\",cause=\"quota\"} 2");
	assert_null(strstr(r.body, "cause=\"unit\""));

	/* the decisions' counters */
	assert_line(r.body, "qoslet_decisions_total{kind=\"cpu_burst\",rule=\"burst.scale_up\","
			    "outcome=\"applied\"} 1");
	assert_line(r.body, "qoslet_decisions_total{kind=\"cpu_quota\",rule=\"suppress.cfs_quota\","
			    "outcome=\"applied\"} 1");

	/* batch capacity and what the units request of it */
	assert_line(r.body, "qoslet_batch_allocatable_cpu_cores 1.5");
	assert_line(r.body, "qoslet_batch_formula_cpu_cores{term=\"capacity\"} 8");
	assert_line(r.body, "qoslet_batch_threshold_ratio{resource=\"cpu\"} 0.65");
	assert_line(r.body, "qoslet_batch_window_seconds 600");
	assert_line(r.body, "qoslet_batch_held{reason=\"\"} 0");
	assert_line(r.body, "# TYPE qoslet_batch_requested_cpu_cores gauge");
	/* the process itself */
	assert_non_null(strstr(r.body, "\nprocess_resident_memory_bytes "));
	/* no Kubernetes link: none of its families */
	assert_null(strstr(r.body, "qoslet_kube_"));
	free(r.raw);

	/* only the metrics were asked for: there are no decisions to serve */
	expect_status(f->http, "/decisions", 503);
}

static void test_decisions_json(void **state)
{
	static const struct {
		const char *kind, *rule, *cgroup, *cls;
		json_int_t value;
	} want[] = {
		{"cpu_quota", "suppress.cfs_quota", "/kubepods/besteffort/pod22", "BE", 50000},
		{"cpu_burst", "burst.scale_up", "/kubepods/burstable/pod11", "LS", 20000},
	};
	struct fixture *f = *state;
	json_error_t jerr;
	struct reply r;
	json_t *a;

	publish_render(&f->view, 0, HTTP_WANT(HTTP_DECISIONS));
	assert_int_equal(f->errors[METRICS_ERR_RENDER], 0);
	r = get(f->http, "/decisions");
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.raw, "application/json"));
	a = json_loads(r.body, 0, &jerr);
	if (!a)
		fail_msg("not JSON: %s: %s", jerr.text, r.body);
	assert_true(json_is_array(a));
	assert_int_equal(json_array_size(a), ARRAY_LEN(want));
	for (size_t i = 0; i < ARRAY_LEN(want); i++) {
		json_t *d = json_array_get(a, i);

		/* oldest first, numbered as logged */
		assert_int_equal(json_integer_value(json_object_get(d, "seq")), i + 1);
		assert_string_equal(json_string_value(json_object_get(d, "kind")), want[i].kind);
		assert_string_equal(json_string_value(json_object_get(d, "rule")), want[i].rule);
		assert_string_equal(json_string_value(json_object_get(d, "class")), want[i].cls);
		assert_string_equal(
			json_string_value(json_object_get(json_object_get(d, "target"), "cgroup")),
			want[i].cgroup);
		assert_int_equal(json_integer_value(json_object_get(d, "value")), want[i].value);
		assert_string_equal(json_string_value(json_object_get(d, "outcome")), "applied");
	}
	json_decref(a);
	free(r.raw);

	/* only the decisions were asked for */
	expect_status(f->http, "/metrics", 503);
}

/* An empty log is an empty array, not an empty answer. */
static void test_decisions_empty(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	decision_log_free(&f->log);
	assert_int_equal(decision_log_init(&f->log, 8, NULL), 0);
	publish_render(&f->view, 0, HTTP_WANT(HTTP_DECISIONS));
	r = get(f->http, "/decisions");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "[]");
	free(r.raw);
}

/* Nothing asked for, nothing rendered: the server has no text and is not ready. */
static void test_want_none(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	publish_render(&f->view, 0, 0);
	r = get(f->http, "/metrics");
	assert_int_equal(r.status, 503);
	assert_non_null(strstr(r.body, "no tick yet"));
	free(r.raw);
	expect_status(f->http, "/decisions", 503);
}

/* A metrics render that runs out of memory is counted, and the decisions still go out. */
static void test_render_failure(void **state)
{
	struct fixture *f = *state;
	struct reply r;

	__atomic_store_n(&fail_strdup, 1, __ATOMIC_RELAXED);
	publish_render(&f->view, 0, HTTP_WANT(HTTP_METRICS) | HTTP_WANT(HTTP_DECISIONS));
	__atomic_store_n(&fail_strdup, 0, __ATOMIC_RELAXED);
	assert_int_equal(f->errors[METRICS_ERR_RENDER], 1);
	expect_status(f->http, "/metrics", 503);
	r = get(f->http, "/decisions");
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body[0], '[');
	free(r.raw);

	/* the next render succeeds and publishes the count */
	publish_render(&f->view, 0, HTTP_WANT(HTTP_METRICS));
	assert_int_equal(f->errors[METRICS_ERR_RENDER], 1);
	r = get(f->http, "/metrics");
	assert_int_equal(r.status, 200);
	assert_line(r.body, "qoslet_agent_errors_total{kind=\"render\"} 1");
	free(r.raw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_metrics_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decisions_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_decisions_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_want_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_render_failure, setup, teardown),
	};

	/* MHD warns that a socketpair takes no TCP_NODELAY: noise here */
	log_max_level = LOG_ERROR;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
