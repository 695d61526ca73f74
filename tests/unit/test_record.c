// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Recordings: a tick survives the trip through JSON bit for bit, bad lines
 * are named, format 1 and 2 recordings still read, and a recording with
 * outside culprits replays to the decisions the live inputs gave.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "record/record.h"
#include "policy/interference.h"

static void fill(struct pol_input *in)
{
	memset(in, 0, sizeof(*in));
	in->ts_ns = 1795324388306986598ull;
	in->interval_s = 1.0 / 3; /* not exact in decimal: needs 17 digits */
	in->cgroup_v2 = true;
	in->has_cpu_idle = true;
	in->mem_v2 = true;
	in->has_mem_reclaim = true;
	in->cpus = 1.5;
	snprintf(in->cpu_list, sizeof(in->cpu_list), "0-1");
	in->n_topo = 2;
	in->topo[1] = (struct pol_cpu){1, 0, 0, 1};
	in->mem_capacity = 24ull << 30;
	in->mem_used = 123456789;
	in->node_cpu_used = 0.1 + 0.2;
	in->n_units = 2;
	in->units = calloc(2, sizeof(*in->units));
	assert_non_null(in->units);
	in->units[0] = (struct pol_unit){
		.id = 7,
		.cls = QOS_LS,
		.priority = -5,
		.quota_us = 50000,
		.period_us = 100000,
		.burst_us = -1,
		.idle = -1,
		.request_cpus = 0.5,
		.limit_cpus = 0.5,
		.cpu_used = 0.123456789012345678,
		.nr_periods = 10,
		.nr_throttled = 3,
		.has_rq = true,
		.has_cpi = true,
		.cpi = 1.25,
		.mem_anon_unevict = 1 << 20,
		.mem_used = 2 << 20,
		.weight = -1, /* unreadable, and an LS unit's memory limit: not written */
		.mem_max = -1};
	snprintf(in->units[0].path, sizeof(in->units[0].path), "kubepods/burstable/pod1");
	snprintf(in->units[0].pod_uid, sizeof(in->units[0].pod_uid), "1");
	in->units[0].rq.count = 3;
	in->units[0].rq.sum_ns = 4000;
	in->units[0].rq.slots[2] = 3;
	in->units[1] = (struct pol_unit){.id = UINT64_MAX - 1,
					 .cls = QOS_BE,
					 .quota_us = -1,
					 .idle = 1,
					 .limit_cpus = -1,
					 .evict_guard = EVICT_GUARD_DAEMONSET,
					 .evict_priority = -3,
					 .start_ns = 1795540537000000000ull,
					 .rq_target_us = 750,
					 .weight = 512,
					 .mem_max = 512 << 20,
					 .batch = {500, 1000, 256 << 20, 512 << 20},
					 .has_mem_qos = true,
					 .mem_min = 0,
					 .mem_low = 4096,
					 .mem_high = -1,
					 /* memory suppression's readings */
					 .mem_usage = 300 << 20,
					 .mem_file = 200 << 20};
	snprintf(in->units[1].path, sizeof(in->units[1].path), "batch/job");
	snprintf(in->units[1].cpus, sizeof(in->units[1].cpus), "1");
	in->n_blame = 1;
	in->blame = calloc(1, sizeof(*in->blame));
	assert_non_null(in->blame);
	in->blame[0] = (struct pol_blame){7, POL_CULPRIT_OTHER, 99, 3};
}

/* fill() with a culprit outside the units, named. */
static void fill_outside(struct pol_input *in)
{
	fill(in);
	in->blame = realloc(in->blame, 2 * sizeof(*in->blame));
	in->outside = calloc(1, sizeof(*in->outside));
	assert_non_null(in->blame);
	assert_non_null(in->outside);
	in->blame[1] = in->blame[0];
	in->blame[0] = (struct pol_blame){7, 12345, 1000, 40};
	in->n_blame = 2;
	in->outside[0] = (struct pol_outside){.id = 12345, .cls = QOS_SYSTEM};
	snprintf(in->outside[0].path, sizeof(in->outside[0].path), "noisy.slice");
	in->n_outside = 1;
}

static void test_round_trip(void **state)
{
	struct pol_input a, b = {0};
	char err[256];
	json_t *o;
	char *text;

	(void)state;
	fill_outside(&a);
	o = record_input_to_json(&a);
	text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(o);
	o = json_loads(text, 0, NULL);
	assert_int_equal(record_input_from_json(o, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a.ts_ns, &b.ts_ns, offsetof(struct pol_input, units));
	assert_int_equal(b.n_units, 2);
	assert_memory_equal(a.units, b.units, 2 * sizeof(*a.units));
	assert_int_equal(b.n_blame, 2);
	assert_memory_equal(a.blame, b.blame, 2 * sizeof(*a.blame));
	assert_int_equal(b.n_outside, 1);
	assert_memory_equal(a.outside, b.outside, sizeof(*a.outside));
	assert_int_equal(b.n_containers, 0); /* none: no "containers" key either */
	json_decref(o);
	free(text);
	pol_input_free(&a);
	pol_input_free(&b);
}

/* The containers with batch settings of their own come back as they were written. */
static void test_round_trip_containers(void **state)
{
	struct pol_input a, b = {0};
	char err[256];
	json_t *o;

	(void)state;
	fill(&a);
	a.containers = calloc(2, sizeof(*a.containers));
	assert_non_null(a.containers);
	a.containers[0] = (struct pol_container){.id = 20,
						 .unit = UINT64_MAX - 1,
						 .batch_cpu_request = 500,
						 .batch_cpu_limit = 1000,
						 .batch_mem_limit = 256 << 20,
						 .weight = 512,
						 .mem_max = 256 << 20,
						 .quota_us = 100000,
						 .period_us = 100000};
	snprintf(a.containers[0].path, sizeof(a.containers[0].path), "batch/job/c1");
	a.containers[1] = (struct pol_container){.id = 21,
						 .unit = UINT64_MAX - 1,
						 .batch_mem_limit = 1 << 20,
						 .quota_us = -1,
						 .weight = -1,
						 .mem_max = -1};
	snprintf(a.containers[1].path, sizeof(a.containers[1].path), "batch/job/c2");
	a.n_containers = 2;
	o = record_input_to_json(&a);
	assert_int_equal(record_input_from_json(o, &b, err, sizeof(err)), 0);
	assert_int_equal(b.n_containers, 2);
	assert_memory_equal(a.containers, b.containers, 2 * sizeof(*a.containers));
	/* out of order: refused, named */
	json_array_insert(json_object_get(o, "containers"), 0,
			  json_array_get(json_object_get(o, "containers"), 1));
	assert_int_equal(record_input_from_json(o, &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "containers: not sorted by id"));
	json_decref(o);
	pol_input_free(&a);
	pol_input_free(&b);
}

/* The memory stall of a unit and the memory parties come back as they were written. */
static void test_round_trip_memory(void **state)
{
	struct pol_input a, b = {0};
	char err[256];
	json_t *o;

	(void)state;
	fill(&a);
	a.units[0].ms.has_stall = true;
	a.units[0].ms.has_io = true;
	a.units[0].ms.stall_ns = 0; /* measured: 0 is kept */
	a.units[0].ms.io_ns = 5000;
	a.units[0].ms.reclaim_ns = 7;
	a.units[0].ms.limit_hits = 1;
	a.units[0].ms.ancestor_hits = 900;
	a.units[0].ms.ancestor = 500;
	a.units[0].ms.refaults = 12;
	a.units[0].ms.charged_pages = 40000;
	a.units[0].ms.io_bytes = 1 << 20;
	a.units[0].ms.io_dev = (254u << 20) | 0;
	/* field by field: a compound literal's padding is unspecified, and the units are compared
	 * whole */
	a.units[1].io_limit.has = true;
	a.units[1].io_limit.dev = (254u << 20) | 0;
	a.units[1].io_limit.rbps = 10485760;
	a.units[1].io_limit.wbps = -1;
	a.has_io_limit = true;
	a.after_race = true;
	a.mem_ancestors = calloc(1, sizeof(*a.mem_ancestors));
	a.mem_outside = calloc(2, sizeof(*a.mem_outside));
	assert_non_null(a.mem_ancestors);
	assert_non_null(a.mem_outside);
	a.mem_ancestors[0].name.id = 500; /* calloc'd, set field by field: compared whole */
	a.mem_ancestors[0].limit_hits = 900;
	snprintf(a.mem_ancestors[0].name.path, POL_PATH_MAX, "kubepods");
	a.n_mem_ancestors = 1;
	a.mem_outside[0].name.id = 600;
	a.mem_outside[0].name.cls = QOS_SYSTEM;
	a.mem_outside[0].reclaim_ns = 123;
	a.mem_outside[0].io_bytes = 1 << 20;
	a.mem_outside[1].name.id = 601;
	a.mem_outside[1].reclaim_ns = 1;
	snprintf(a.mem_outside[0].name.path, POL_PATH_MAX, "noisy.slice");
	snprintf(a.mem_outside[1].name.path, POL_PATH_MAX, "system.slice/x.service");
	a.n_mem_outside = 2;
	o = record_input_to_json(&a);
	assert_int_equal(record_input_from_json(o, &b, err, sizeof(err)), 0);
	assert_memory_equal(a.units, b.units, 2 * sizeof(*a.units));
	assert_true(b.has_io_limit);
	assert_true(b.after_race);
	assert_int_equal(b.n_mem_ancestors, 1);
	assert_memory_equal(a.mem_ancestors, b.mem_ancestors, sizeof(*a.mem_ancestors));
	assert_int_equal(b.n_mem_outside, 2);
	assert_memory_equal(a.mem_outside, b.mem_outside, 2 * sizeof(*a.mem_outside));
	/* a recording made before the parties' io_bytes: 5 numbers, no bytes */
	pol_input_free(&b);
	json_array_remove(json_array_get(json_object_get(o, "mem_outside"), 0), 5);
	assert_int_equal(record_input_from_json(o, &b, err, sizeof(err)), 0);
	assert_int_equal(b.mem_outside[0].reclaim_ns, 123);
	assert_int_equal(b.mem_outside[0].io_bytes, 0);
	/* a unit without memory numbers has no "ms" key */
	assert_null(json_object_get(json_array_get(json_object_get(o, "units"), 1), "ms"));
	/* an unknown key and a negative count: refused, named */
	json_object_set_new(json_object_get(json_array_get(json_object_get(o, "units"), 0), "ms"),
			    "bogus", json_integer(1));
	assert_int_equal(record_input_from_json(o, &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ms.bogus: unknown key"));
	json_decref(o);
	pol_input_free(&a);
	pol_input_free(&b);
}

/* Table: one damaged field each, and the message that names it. */
static void test_bad_fields(void **state)
{
	static const struct {
		const char *path, *set, *want;
	} cases[] = {
		{"units.0.class", "\"GOLD\"", "unknown class 'GOLD'"},
		{"units.0.quota_us", "\"x\"", "unit.quota_us: Expected integer"},
		{"units.0.rq.slots", "[1]", "rq: expected"},
		{"units.1.id", "1", "not sorted by id"},
		{"blame.0", "[1]", "blame[0]"},
		{"blame.0", "[7, 1, 2, 3, 4]",
		 "blame[0]: expected [victim, culprit, wait_ns, count]"},
		{"topo.0", "[0]", "topo[0]"},
		{"mem_used", "null", "mem_used: Expected integer"},
		{"outside.0", "[1]", "outside[0]"},
		{"outside.0", "[12345, \"x\", \"GOLD\"]", "unknown class 'GOLD'"},
		{"outside", "{}", "outside: expected an array"},
		{"units.1.evict_guard", "\"never\"", "unknown evict_guard 'never'"},
		{"units.1.start_ns", "\"x\"", "unit.start_ns: Expected integer"},
		{"units.1.mem_qos.high", "\"max\"", "mem_qos: Expected integer"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pol_input a, b = {0};
		char err[256] = "", path[64], *tok, *save;
		json_t *o, *parent, *v = json_loads(cases[i].set, JSON_DECODE_ANY, NULL);

		fill_outside(&a);
		a.n_topo = 1;
		o = record_input_to_json(&a);
		snprintf(path, sizeof(path), "%s", cases[i].path);
		parent = o;
		tok = strtok_r(path, ".", &save);
		for (char *next; (next = strtok_r(NULL, ".", &save)); tok = next)
			parent = json_is_array(parent) ? json_array_get(parent, atoi(tok))
						       : json_object_get(parent, tok);
		if (json_is_array(parent))
			json_array_set_new(parent, atoi(tok), v);
		else
			json_object_set_new(parent, tok, v);
		assert_int_equal(record_input_from_json(o, &b, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].want))
			fail_msg("%s: '%s' lacks '%s'", cases[i].path, err, cases[i].want);
		json_decref(o);
		pol_input_free(&a);
		pol_input_free(&b);
	}
}

static void test_file(void **state)
{
	char path[] = "/tmp/qoslet-test-record-XXXXXX", err[256];
	struct record_reader r;
	struct pol_input a, b = {0};
	json_t *cfg = json_pack("{s:i}", "interval_s", 1), *got = NULL;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	(void)state;
	fill(&a);
	assert_int_equal(record_write_header(f, cfg), 0);
	assert_int_equal(record_write_input(f, &a), 0);
	fputs("{\"ts_ns\": 1}\n", f);
	fclose(f);
	assert_int_equal(record_open(&r, path, &got, err, sizeof(err)), 0);
	assert_true(json_equal(cfg, got));
	assert_int_equal(record_next(&r, &b, err, sizeof(err)), 1);
	assert_memory_equal(a.units, b.units, 2 * sizeof(*a.units));
	assert_int_equal(record_next(&r, &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 3"));
	record_close(&r);
	/* Not a recording. */
	f = fopen(path, "w");
	fputs("{\"hello\": 1}\n", f);
	fclose(f);
	assert_int_equal(record_open(&r, path, &got, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a qoslet recording"));
	unlink(path);
	json_decref(cfg);
	json_decref(got);
	pol_input_free(&a);
	pol_input_free(&b);
}

/* A recording of format 1 (no outside table) still reads: its outside culprits are unnamed. */
static void test_format_1(void **state)
{
	char path[] = "/tmp/qoslet-test-record-XXXXXX", err[256];
	struct pol_input a, b = {0};
	struct record_reader r;
	json_t *got = NULL, *o;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	(void)state;
	fill(&a);
	o = record_input_to_json(&a);
	json_object_del(o, "outside");
	fprintf(f, "{\"qoslet_record\": 1, \"version\": \"0\", \"config\": {}}\n");
	json_dumpf(o, f, JSON_COMPACT);
	fputc('\n', f);
	fclose(f);
	json_decref(o);
	assert_int_equal(record_open(&r, path, &got, err, sizeof(err)), 0);
	assert_int_equal(record_next(&r, &b, err, sizeof(err)), 1);
	assert_int_equal(b.n_blame, 1);
	assert_int_equal(b.n_outside, 0);
	record_close(&r);
	json_decref(got);
	/* a format from the future is refused with both numbers */
	f = fopen(path, "w");
	fputs("{\"qoslet_record\": 5, \"config\": {}}\n", f);
	fclose(f);
	assert_int_equal(record_open(&r, path, &got, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "recording format 5, this qoslet reads 1 to 4"));
	assert_null(got);
	unlink(path);
	pol_input_free(&a);
	pol_input_free(&b);
}

/* A blame pair of format 2 has no count: it reads as none (no hand-overs). */
static void test_format_2_blame(void **state)
{
	struct pol_input a, b = {0};
	char err[256];
	json_t *o;

	(void)state;
	fill(&a);
	o = record_input_to_json(&a);
	json_array_set_new(json_object_get(o, "blame"), 0, json_pack("[i, i, i]", 7, 8, 99));
	assert_int_equal(record_input_from_json(o, &b, err, sizeof(err)), 0);
	assert_int_equal(b.n_blame, 1);
	assert_true(b.blame[0].victim == 7 && b.blame[0].culprit == 8 && b.blame[0].wait_ns == 99 &&
		    b.blame[0].count == 0);
	json_decref(o);
	pol_input_free(&a);
	pol_input_free(&b);
}

/* Runs the interference policy over ticks; returns the report of the last tick (copied). */
static bool replay_ticks(struct pol_input *ticks, size_t n, struct action *report)
{
	static const struct interference_config cfg = {.enabled = true,
						       .rq_p99_us = 1000,
						       .rq_k = 2,
						       .rq_n = 3,
						       .rq_min_waits = 1,
						       .cpi_outliers = 1,
						       .culprit_min_share = 0.2,
						       .cap_cpus = 0.2,
						       .cap_s = 300};
	struct interference_state st = {0};
	struct action_list out = {0};
	bool found = false;

	for (size_t i = 0; i < n; i++) {
		action_list_clear(&out);
		assert_int_equal(interference_run(&ticks[i], &cfg, &st, &out), 0);
		for (size_t k = 0; k < out.n; k++)
			if (out.v[k].kind == ACT_REPORT) {
				*report = out.v[k];
				found = true;
			}
	}
	action_list_free(&out);
	interference_state_free(&st);
	return found;
}

/*
 * Three ticks of an LS unit waiting 90% behind an outside cgroup, written
 * to a file and read back: the replay reports the same outside culprit,
 * by path, with the same shares, as the inputs did live.
 */
static void test_replay_outside(void **state)
{
	char path[] = "/tmp/qoslet-test-record-XXXXXX", err[256];
	struct pol_input live[3], back[3] = {{0}};
	struct action want, got;
	struct record_reader r;
	json_t *cfg = json_object(), *hdr = NULL;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	(void)state;
	assert_int_equal(record_write_header(f, cfg), 0);
	for (int t = 0; t < 3; t++) {
		fill_outside(&live[t]);
		live[t].ts_ns += (uint64_t)t * 1000000000ull;
		live[t].units[0].nr_throttled = 0;
		live[t].units[0].rq.slots[12] = 100; /* p99 about 4 ms */
		live[t].units[0].rq.count = 100;
		live[t].blame[0].wait_ns = 9000;
		assert_int_equal(record_write_input(f, &live[t]), 0);
	}
	fclose(f);
	assert_int_equal(record_open(&r, path, &hdr, err, sizeof(err)), 0);
	for (int t = 0; t < 3; t++)
		assert_int_equal(record_next(&r, &back[t], err, sizeof(err)), 1);
	record_close(&r);
	assert_true(replay_ticks(live, 3, &want));
	assert_true(replay_ticks(back, 3, &got));
	assert_int_equal(got.cause.kind, ACT_CAUSE_INTERFERENCE);
	assert_int_equal(got.cause.interference, CAUSE_OUTSIDE);
	assert_int_equal(got.related_id, 12345);
	assert_string_equal(got.related, "noisy.slice");
	assert_string_equal(want.related, got.related);
	assert_int_equal(want.n_ev, got.n_ev);
	for (size_t i = 0; i < got.n_ev; i++) {
		assert_string_equal(want.ev[i].name, got.ev[i].name);
		assert_memory_equal(&want.ev[i].value, &got.ev[i].value, sizeof(double));
	}
	for (int t = 0; t < 3; t++) {
		pol_input_free(&live[t]);
		pol_input_free(&back[t]);
	}
	unlink(path);
	json_decref(cfg);
	json_decref(hdr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_containers),
		cmocka_unit_test(test_round_trip_memory),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_format_1),
		cmocka_unit_test(test_format_2_blame),
		cmocka_unit_test(test_replay_outside),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
