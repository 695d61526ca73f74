// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The documents of the agent's Kubernetes link (user/kube/events.c,
 * node_status.c) and the error mapping of the client (user/kube/client.c):
 * what the API server would accept, checked field by field.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/client.h"
#include "kube/events.h"
#include "kube/node_status.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* 2023-11-14T22:13:20.123456789Z */
#define T_NS 1700000000123456789ull

/*
 * A DNS-1123 subdomain as the API server validates metadata.name: at most
 * 253 characters, dot-separated labels of [a-z0-9-] that begin and end with
 * an alphanumeric. Written out here rather than taken from the code under test.
 */
static bool dns_subdomain(const char *s)
{
	size_t n = strlen(s), label = 0;

	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i <= n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (c == '.' || c == '\0') {
			if (label == 0 || s[i - 1] == '-')
				return false;
			label = 0;
		} else if (alnum || (c == '-' && label > 0)) {
			label++;
		} else {
			return false;
		}
	}
	return true;
}

static const char *str_of(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_string(v))
		fail_msg("\"%s\" is not a string", key);
	return json_string_value(v);
}

/* ---- times --------------------------------------------------------------- */

static void test_times(void **state)
{
	static const struct {
		uint64_t ns;
		const char *micro, *sec;
	} cases[] = {
		{0, "1970-01-01T00:00:00.000000Z", "1970-01-01T00:00:00Z"},
		{T_NS, "2023-11-14T22:13:20.123456Z", "2023-11-14T22:13:20Z"},
		/* truncated, not rounded: a time never lies in the future */
		{1700000000999999999ull, "2023-11-14T22:13:20.999999Z", "2023-11-14T22:13:20Z"},
		{1709164800000001000ull, "2024-02-29T00:00:00.000001Z", "2024-02-29T00:00:00Z"},
		{4102444799000000000ull, "2099-12-31T23:59:59.000000Z", "2099-12-31T23:59:59Z"},
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		kube_micro_time(cases[i].ns, buf);
		assert_string_equal(buf, cases[i].micro);
		kube_time(cases[i].ns, buf);
		assert_string_equal(buf, cases[i].sec);
	}
}

/* ---- Event names ----------------------------------------------------------- */

static void test_event_name(void **state)
{
	/* Pod names of 253 characters (the most a DNS subdomain has) whose part the
	 * name keeps (236 characters) ends in a letter, in "--" or in '.'. */
	static char plain[254], dash_cut[254], dot_cut[254];
	static const struct {
		const char *pod;
		uint64_t ns;
		const char *want; /* NULL: only the rules are checked */
	} cases[] = {
		{"web-0", 1, "web-0.0000000000000001"},
		{"frontend-7d9f.x", T_NS, "frontend-7d9f.x.17979cfe3d85cd15"},
		{"a", UINT64_MAX, "a.ffffffffffffffff"},
		{plain, T_NS, NULL},
		{dash_cut, T_NS, NULL},
		{dot_cut, T_NS, NULL},
	};
	char name[KUBE_EVENT_NAME_MAX];

	(void)state;
	memset(plain, 'p', 253);
	memset(dash_cut, 'd', 253);
	dash_cut[234] = dash_cut[235] = '-';
	memset(dot_cut, 'o', 253);
	dot_cut[235] = '.';
	assert_true(dns_subdomain(plain) && dns_subdomain(dash_cut) && dns_subdomain(dot_cut));

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kube_event ev = {.pod = cases[i].pod, .time_ns = cases[i].ns};
		size_t n, keep;

		kube_event_name(&ev, name);
		n = strlen(name);
		if (cases[i].want)
			assert_string_equal(name, cases[i].want);
		if (!dns_subdomain(name))
			fail_msg("case %zu: \"%s\" is not a valid DNS subdomain", i, name);
		assert_true(n <= 253);
		/* a prefix of the pod's name, a dot and 16 hex digits of the time */
		assert_true(n > 17);
		keep = n - 17;
		assert_memory_equal(name, cases[i].pod, keep);
		assert_int_equal(name[keep], '.');
		assert_int_equal(strspn(name + keep + 1, "0123456789abcdef"), 16);
		assert_int_equal(strtoull(name + keep + 1, NULL, 16), cases[i].ns);
		/* as much of the pod's name as fits is kept */
		assert_true(keep >= (strlen(cases[i].pod) < 230 ? strlen(cases[i].pod) : 230));
	}
}

/* ---- Event bodies --------------------------------------------------------- */

static const struct kube_event base_event = {
	.ns = "batch",
	.pod = "spark-exec-1",
	.uid = "6f1c2a8e-0b1d-4c55-9d7e-1a2b3c4d5e01",
	.type = "Warning",
	.reason = "Interference",
	.action = "Detect",
	.note = "qoslet interference.report: web/frontend-0 delayed",
	.controller = "qoslet.io/agent",
	.instance = "qoslet-n1",
	.time_ns = T_NS,
};

static void test_event_body_fields(void **state)
{
	static const char *const top[] = {
		"apiVersion",	     "kind",   "metadata", "eventTime", "reportingController",
		"reportingInstance", "action", "reason",   "type",	"note",
		"regarding"};
	json_t *b = kube_event_body(&base_event, "spark-exec-1.17979cfe3d85cd15");
	const json_t *meta, *reg;

	(void)state;
	assert_non_null(b);
	/* exactly these fields: no series (a new Event is not one) and nothing else */
	assert_int_equal(json_object_size(b), ARRAY_SIZE(top));
	for (size_t i = 0; i < ARRAY_SIZE(top); i++)
		if (!json_object_get(b, top[i]))
			fail_msg("no \"%s\"", top[i]);
	assert_string_equal(str_of(b, "apiVersion"), "events.k8s.io/v1");
	assert_string_equal(str_of(b, "kind"), "Event");
	meta = json_object_get(b, "metadata");
	assert_int_equal(json_object_size(meta), 2);
	assert_string_equal(str_of(meta, "name"), "spark-exec-1.17979cfe3d85cd15");
	assert_string_equal(str_of(meta, "namespace"), "batch");
	assert_string_equal(str_of(b, "eventTime"), "2023-11-14T22:13:20.123456Z");
	assert_string_equal(str_of(b, "reportingController"), "qoslet.io/agent");
	assert_string_equal(str_of(b, "reportingInstance"), "qoslet-n1");
	assert_string_equal(str_of(b, "action"), "Detect");
	assert_string_equal(str_of(b, "reason"), "Interference");
	assert_string_equal(str_of(b, "type"), "Warning");
	assert_string_equal(str_of(b, "note"), base_event.note);
	reg = json_object_get(b, "regarding");
	assert_int_equal(json_object_size(reg), 5);
	assert_string_equal(str_of(reg, "apiVersion"), "v1");
	assert_string_equal(str_of(reg, "kind"), "Pod");
	assert_string_equal(str_of(reg, "namespace"), "batch");
	assert_string_equal(str_of(reg, "name"), "spark-exec-1");
	assert_string_equal(str_of(reg, "uid"), base_event.uid);
	json_decref(b);
}

/* A note of n bytes: unit (1 to 4 bytes of UTF-8) repeated after lead ASCII bytes. */
static char *make_note(size_t lead, const char *unit, size_t n)
{
	char *s = malloc(n + 1);
	size_t u = strlen(unit), i;

	assert_non_null(s);
	memset(s, 'a', lead < n ? lead : n);
	for (i = lead; i + u <= n; i += u)
		memcpy(s + i, unit, u);
	memset(s + i, 'z', n - i);
	s[n] = '\0';
	return s;
}

static void test_event_note_cut(void **state)
{
	static const struct {
		size_t lead;
		const char *unit;
		size_t len;
		size_t want; /* bytes of the original kept; (size_t)-1: all, uncut */
	} cases[] = {
		{0, "a", 10, (size_t)-1},
		{0, "a", KUBE_EVENT_NOTE_MAX - 1, (size_t)-1},
		{0, "a", KUBE_EVENT_NOTE_MAX, KUBE_EVENT_NOTE_MAX - 4},
		{0, "a", 5000, KUBE_EVENT_NOTE_MAX - 4},
		/* a multi-byte character that would straddle the cut is dropped whole */
		{0, "\xc3\xa9", 2000, KUBE_EVENT_NOTE_MAX - 4}, /* é: a character starts at 1020 */
		{1, "\xc3\xa9", 2000, KUBE_EVENT_NOTE_MAX - 5}, /* ... at 1019: 1020 is inside */
		{0, "\xe2\x82\xac", 2000, KUBE_EVENT_NOTE_MAX - 4}, /* € */
		{1, "\xe2\x82\xac", 2000, KUBE_EVENT_NOTE_MAX - 6},
		{2, "\xe2\x82\xac", 2000, KUBE_EVENT_NOTE_MAX - 5},
		{0, "\xf0\x9f\x98\x80", 2000, KUBE_EVENT_NOTE_MAX - 4}, /* U+1F600 */
		{1, "\xf0\x9f\x98\x80", 2000, KUBE_EVENT_NOTE_MAX - 7},
		{3, "\xf0\x9f\x98\x80", 2000, KUBE_EVENT_NOTE_MAX - 5},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *note = make_note(cases[i].lead, cases[i].unit, cases[i].len);
		struct kube_event ev = base_event;
		const char *got;
		json_t *b;
		size_t n;

		ev.note = note;
		/* json_pack refuses invalid UTF-8: a body at all means the cut kept it valid */
		b = kube_event_body(&ev, "x.0000000000000001");
		if (!b)
			fail_msg("case %zu: no body (note not valid UTF-8?)", i);
		got = str_of(b, "note");
		n = strlen(got);
		assert_true(n <= KUBE_EVENT_NOTE_MAX);
		if (cases[i].want == (size_t)-1) {
			assert_string_equal(got, note);
		} else {
			if (n != cases[i].want + 3 || strcmp(got + cases[i].want, "..."))
				fail_msg("case %zu: %zu bytes, want %zu kept and \"...\"", i, n,
					 cases[i].want);
			assert_memory_equal(got, note, cases[i].want);
		}
		json_decref(b);
		free(note);
	}
}

/* Bytes that are not UTF-8 (a cut sequence, an odd cgroup name) become '?', the rest stays. */
static void test_event_note_not_utf8(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{"ok \xc3\xa9 ok", "ok \xc3\xa9 ok"},	       /* é: valid */
		{"cut \xe2\x82", "cut ??"},		       /* € cut after 2 of 3 bytes */
		{"lone \x80 byte", "lone ? byte"},	       /* a continuation byte alone */
		{"over \xc0\xaf long", "over ?? long"},	       /* overlong '/' */
		{"sur \xed\xa0\x80 rogate", "sur ??? rogate"}, /* a UTF-16 surrogate */
		{"big \xf4\x90\x80\x80", "big ????"},	       /* beyond U+10FFFF */
		{"\xf0\x9f\x98\x80 emoji", "\xf0\x9f\x98\x80 emoji"},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kube_event ev = base_event;
		json_t *b;

		ev.note = cases[i].in;
		b = kube_event_body(&ev, "n.0");
		if (!b)
			fail_msg("case %zu: no body", i);
		assert_string_equal(str_of(b, "note"), cases[i].want);
		json_decref(b);
	}
}

static void test_series_patch(void **state)
{
	static const struct {
		uint32_t count;
		uint64_t ns;
		const char *when;
	} cases[] = {
		{2, T_NS, "2023-11-14T22:13:20.123456Z"},
		{UINT32_MAX, 1709164800000001000ull, "2024-02-29T00:00:00.000001Z"},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		json_t *p = kube_event_series_patch(cases[i].count, cases[i].ns);
		const json_t *s = json_object_get(p, "series");

		assert_non_null(p);
		/* a merge patch of the series alone: everything else of the Event stays */
		assert_int_equal(json_object_size(p), 1);
		assert_int_equal(json_object_size(s), 2);
		assert_true(json_is_integer(json_object_get(s, "count")));
		assert_int_equal(json_integer_value(json_object_get(s, "count")), cases[i].count);
		assert_string_equal(str_of(s, "lastObservedTime"), cases[i].when);
		json_decref(p);
	}
}

/* ---- node condition ------------------------------------------------------ */

static void test_condition_patch(void **state)
{
	static const struct kube_condition cases[] = {
		{"QoSletInterference", "True", "InterferenceDetected", "web/frontend-0 delayed",
		 1700000000999999999ull, 1700000000000000000ull},
		{"QoSletInterference", "False", "NoInterference", "", 1709164800000000000ull,
		 1709164800000000000ull},
	};
	static const char *const want[][2] = {
		{"2023-11-14T22:13:20Z", "2023-11-14T22:13:20Z"},
		{"2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kube_node_status ns = {.cond = &cases[i]};
		json_t *p = kube_node_status_patch(&ns);
		const json_t *st = json_object_get(p, "status"), *conds, *c;

		assert_non_null(p);
		assert_int_equal(json_object_size(p), 1);
		assert_int_equal(json_object_size(st), 1);
		conds = json_object_get(st, "conditions");
		/* one entry: merged by type, the kubelet's conditions are untouched */
		assert_true(json_is_array(conds));
		assert_int_equal(json_array_size(conds), 1);
		c = json_array_get(conds, 0);
		assert_int_equal(json_object_size(c), 6);
		assert_string_equal(str_of(c, "type"), cases[i].type);
		assert_string_equal(str_of(c, "status"), cases[i].status);
		assert_string_equal(str_of(c, "reason"), cases[i].reason);
		assert_string_equal(str_of(c, "message"), cases[i].message);
		assert_string_equal(str_of(c, "lastHeartbeatTime"), want[i][0]);
		assert_string_equal(str_of(c, "lastTransitionTime"), want[i][1]);
		json_decref(p);
	}
}

/*
 * The condition and the batch resources in one patch: the kubelet's
 * conditions merge by type and its resources by name, so both stay.
 */
static void test_status_patch_both(void **state)
{
	struct kube_condition cond = {"QoSletInterference",   "False",
				      "NoInterference",	      "quiet",
				      1700000000000000000ull, 1700000000000000000ull};
	struct kube_node_status both = {
		.cond = &cond, .batch = true, .cpu_milli = 2500, .mem_bytes = 1u << 30};
	struct kube_node_status batch_only = {.batch = true};
	json_t *p = kube_node_status_patch(&both), *q = kube_node_status_patch(&batch_only);
	const json_t *st = json_object_get(p, "status");

	(void)state;
	assert_int_equal(json_object_size(p), 1);
	assert_int_equal(json_object_size(st), 3);
	assert_int_equal(json_array_size(json_object_get(st, "conditions")), 1);
	for (const char *const *k = (const char *const[]){"capacity", "allocatable", NULL}; *k;
	     k++) {
		const json_t *m = json_object_get(st, *k);

		assert_int_equal(json_object_size(m), 2);
		assert_string_equal(str_of(m, "kubernetes.io/batch-cpu"), "2500");
		assert_string_equal(str_of(m, "kubernetes.io/batch-memory"), "1073741824");
	}
	st = json_object_get(q, "status");
	assert_int_equal(json_object_size(st), 2);
	assert_null(json_object_get(st, "conditions"));
	assert_string_equal(str_of(json_object_get(st, "capacity"), "kubernetes.io/batch-cpu"),
			    "0");
	json_decref(p);
	json_decref(q);
}

/* What the agent reads of its Node: labels, its condition, its batch resources. */
static void test_node_parse(void **state)
{
	json_t *node = json_loads(
		"{\"kind\": \"Node\", \"metadata\": {\"name\": \"n1\", \"labels\": "
		"{\"pool\": \"gpu\"}}, \"status\": {\"conditions\": [{\"type\": \"Ready\", "
		"\"status\": \"True\"}, {\"type\": \"QoSletInterference\", \"status\": "
		"\"True\", \"lastTransitionTime\": \"2023-11-14T22:13:20Z\"}], \"allocatable\": "
		"{\"cpu\": \"4\", \"kubernetes.io/batch-cpu\": \"1500\", "
		"\"kubernetes.io/batch-memory\": \"4096\"}}}",
		0, NULL);
	json_t *bare =
		json_loads("{\"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}}", 0, NULL);
	json_t *bad = json_loads("{\"metadata\": {\"labels\": {\"a\": 1}}}", 0, NULL);
	struct kube_node_info info;

	(void)state;
	assert_int_equal(kube_node_parse(node, &info), 0);
	assert_string_equal(str_of(info.labels, "pool"), "gpu");
	assert_true(info.has_condition && info.condition);
	assert_true(info.transition_ns == 1700000000000000000ull);
	assert_true(info.has_batch);
	assert_int_equal(info.cpu_milli, 1500);
	assert_int_equal(info.mem_bytes, 4096);
	kube_node_info_free(&info);
	assert_int_equal(kube_node_parse(bare, &info), 0);
	assert_int_equal(json_object_size(info.labels), 0);
	assert_false(info.has_condition || info.has_batch);
	kube_node_info_free(&info);
	assert_int_equal(kube_node_parse(bad, &info), -EBADMSG);
	json_decref(node);
	json_decref(bare);
	json_decref(bad);
}

/* ---- errors -------------------------------------------------------------- */

static void test_status_errno(void **state)
{
	static const struct {
		long status;
		int want;
	} cases[] = {
		{401, -EACCES}, {403, -EACCES}, {429, -EAGAIN}, {500, -EAGAIN}, {502, -EAGAIN},
		{503, -EAGAIN}, {504, -EAGAIN}, {599, -EAGAIN}, {400, -EPROTO}, {404, -EPROTO},
		{405, -EPROTO}, {409, -EPROTO}, {410, -EPROTO}, {413, -EPROTO}, {415, -EPROTO},
		{422, -EPROTO}, {301, -EPROTO},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (kube_status_errno(cases[i].status) != cases[i].want)
			fail_msg("status %ld: %d, want %d", cases[i].status,
				 kube_status_errno(cases[i].status), cases[i].want);
}

static void test_status_message(void **state)
{
	json_t *s = json_pack("{s:s, s:s}", "kind", "Status", "message", "pods \"x\" not found");
	json_t *no_msg = json_pack("{s:s}", "kind", "Status");
	json_t *not_str = json_pack("{s:i}", "message", 7);

	(void)state;
	assert_string_equal(kube_status_message(s), "pods \"x\" not found");
	assert_string_equal(kube_status_message(no_msg), "");
	assert_string_equal(kube_status_message(not_str), "");
	assert_string_equal(kube_status_message(NULL), "");
	json_decref(s);
	json_decref(no_msg);
	json_decref(not_str);
}

/* Refusals that happen before anything is sent: the client is never touched. */
static void test_refused_before_sending(void **state)
{
	struct kube_client c;
	struct kube_event ev = base_event;
	struct kube_condition cond = {"QoSletInterference", "True", "X", "m", 0, 0};
	char err[256];

	(void)state;
	memset(&c, 0, sizeof(c));
	err[0] = '\0';
	assert_int_equal(kube_call(&c, "POST", "/x", NULL, "application/json", err, sizeof(err)),
			 -ENOMEM);
	assert_true(err[0] != '\0');
	ev.ns = "Bad_NS";
	assert_int_equal(kube_event_create(&c, &ev, "x.1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "Bad_NS"));
	assert_int_equal(kube_event_update_series(&c, "batch", "a/b", 2, 0, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(kube_event_update_series(&c, "", "x.1", 2, 0, err, sizeof(err)), -EINVAL);
	assert_int_equal(kube_node_patch_status(&c, "../n1",
						&(struct kube_node_status){.cond = &cond}, err,
						sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "../n1"));
	assert_int_equal(c.stats.requests, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_event_name),
		cmocka_unit_test(test_event_body_fields),
		cmocka_unit_test(test_event_note_cut),
		cmocka_unit_test(test_event_note_not_utf8),
		cmocka_unit_test(test_series_patch),
		cmocka_unit_test(test_condition_patch),
		cmocka_unit_test(test_status_patch_both),
		cmocka_unit_test(test_node_parse),
		cmocka_unit_test(test_status_errno),
		cmocka_unit_test(test_status_message),
		cmocka_unit_test(test_refused_before_sending),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
