// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the agent writes to the API and when, without a server: the Event
 * correlator (series, similar Events combined, the spam filter) and the
 * node-status writer (on change only, one patch, seeded, the stop).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kube/event_correlate.h"
#include "kube/node_writer.h"

#define SEC 1000000000ull

static const char *const interference = "Interference", *const suppressed = "Suppressed";

static struct kube_event_req occurrence(const char *uid, const char *reason, const char *note)
{
	struct kube_event_req ev = {.type = "Warning", .reason = reason, .action = "Detect"};

	snprintf(ev.uid, sizeof(ev.uid), "%s", uid);
	snprintf(ev.ns, sizeof(ev.ns), "ns1");
	snprintf(ev.pod, sizeof(ev.pod), "pod-%s", uid);
	snprintf(ev.note, sizeof(ev.note), "%s", note);
	return ev;
}

/* Makes every call due at now succeed; returns how many creates and patches were made. */
static void drain(struct event_correlator *c, uint64_t now, int *creates, int *patches)
{
	struct event_call call;

	while (event_correlate_next(c, now, &call)) {
		if (call.create) {
			snprintf(call.s.name, sizeof(call.s.name), "e%d", *creates);
			++*creates;
		} else {
			++*patches;
		}
		event_correlate_done(c, &call, 0, false, now);
	}
}

/* The same occurrence again joins its Event's series: one create, then a count per interval. */
static void test_series(void **state)
{
	struct event_correlator c;
	struct kube_event_req ev = occurrence("u1", interference, "delayed");
	struct event_call call;
	int creates = 0, patches = 0;

	(void)state;
	event_correlate_init(&c, 60, 1000, 0);
	assert_true(event_correlate_add(&c, &ev, 0));
	drain(&c, 0, &creates, &patches);
	for (int i = 0; i < 5; i++)
		assert_false(event_correlate_add(&c, &ev, SEC * (uint64_t)(i + 1)));
	drain(&c, 10 * SEC, &creates, &patches); /* not an interval yet */
	assert_int_equal(creates, 1);
	assert_int_equal(patches, 0);
	assert_true(event_correlate_next(&c, 60 * SEC, &call));
	assert_false(call.create);
	assert_int_equal(call.s.seen, 6);
	event_correlate_done(&c, &call, 0, false, 60 * SEC);
	assert_false(event_correlate_next(&c, 200 * SEC, &call)); /* nothing new */
	assert_int_equal(c.aggregated, 5);
	/* the Event was deleted meanwhile: a new one, not a patch of nothing */
	event_correlate_add(&c, &ev, 300 * SEC);
	assert_true(event_correlate_next(&c, 400 * SEC, &call));
	event_correlate_done(&c, &call, -ENOENT, false, 400 * SEC);
	assert_true(event_correlate_next(&c, 400 * SEC, &call));
	assert_true(call.create);
	event_correlate_free(&c);
}

/* client-go: 10 similar Events (another note) in 10 minutes, then one combined Event. */
static void test_similar_combined(void **state)
{
	struct event_correlator c;
	char note[32];
	int creates = 0, patches = 0;
	struct event_call call;

	(void)state;
	event_correlate_init(&c, 60, 1000, 0);
	for (int i = 0; i < 30; i++) {
		struct kube_event_req ev;

		snprintf(note, sizeof(note), "note %d", i);
		ev = occurrence("u1", interference, note);
		event_correlate_add(&c, &ev, (uint64_t)i * SEC);
	}
	drain(&c, 30 * SEC, &creates, &patches);
	assert_int_equal(creates, EVENT_SIMILAR_MAX + 1);
	assert_int_equal(c.aggregated, 30 - EVENT_SIMILAR_MAX - 1);
	for (size_t i = 0; i < c.n_series; i++)
		if (c.series[i].combined) {
			assert_string_equal(c.series[i].first.note,
					    EVENT_COMBINED_PREFIX "note 10");
			assert_int_equal(c.series[i].seen, 20);
		}
	/* another reason has its own window; after 10 minutes the window opens anew */
	{
		struct kube_event_req other = occurrence("u1", suppressed, "note x");
		struct kube_event_req later = occurrence("u1", interference, "note 99");

		assert_true(event_correlate_add(&c, &other, 31 * SEC));
		assert_true(event_correlate_add(&c, &later, 700 * SEC));
	}
	assert_true(event_correlate_next(&c, 700 * SEC, &call));
	event_correlate_free(&c);
}

/*
 * The spam filter: 25 writes per pod, then one every 5 minutes; a new Event
 * without a token is dropped, a series count waits. Another pod has its own.
 */
static void test_spam_filter(void **state)
{
	struct event_correlator c;
	char note[32];
	int creates = 0, patches = 0;

	(void)state;
	event_correlate_init(&c, 1, 6000, 0);
	for (int i = 0; i < 40; i++) {
		struct kube_event_req ev;

		/* each its own Event: the similar window is reset by moving time 11 minutes */
		snprintf(note, sizeof(note), "n%d", i);
		ev = occurrence("u1", interference, note);
		event_correlate_add(&c, &ev, (uint64_t)(i / 10) * 660 * SEC);
		drain(&c, (uint64_t)(i / 10) * 660 * SEC, &creates, &patches);
	}
	/* 25 at once, then one per 300 s over the 3 x 660 s the loop took */
	assert_int_equal(creates, 25 + 6);
	assert_int_equal(c.dropped, 40 - 31);
	{
		struct kube_event_req other = occurrence("u2", interference, "n");

		creates = 0;
		event_correlate_add(&c, &other, 1980 * SEC);
		drain(&c, 1980 * SEC, &creates, &patches);
		assert_int_equal(creates, 1);
	}
	event_correlate_free(&c);
}

/* The node's bucket (events_per_minute) bounds all pods together. */
static void test_node_bucket(void **state)
{
	struct event_correlator c;
	int creates = 0, patches = 0;

	(void)state;
	event_correlate_init(&c, 60, 3, 0);
	for (int i = 0; i < 10; i++) {
		char uid[8];
		struct kube_event_req ev;

		snprintf(uid, sizeof(uid), "u%d", i);
		ev = occurrence(uid, interference, "x");
		event_correlate_add(&c, &ev, 0);
	}
	drain(&c, 0, &creates, &patches);
	assert_int_equal(creates, 3);
	assert_int_equal(c.dropped, 7);
	event_correlate_expire(&c, 3600 * SEC, 600 * SEC);
	assert_int_equal(c.n_series, 0);
	assert_int_equal(c.n_buckets, 0);
	assert_int_equal(c.n_windows, 0);
	event_correlate_free(&c);
}

/*
 * The API thread reads its clock once a round; occurrences added meanwhile
 * carry later readings. A series created in such a round, and a window
 * opened in it, are new, not idle for ever: the repeat joins the series
 * (before, it made a second Event, as test_kube_sync once saw), and the
 * window still counts.
 */
static void test_round_clock_older(void **state)
{
	struct event_correlator c;
	struct kube_event_req ev = occurrence("u1", interference, "delayed");
	struct event_call call;
	int creates = 0, patches = 0;
	const uint64_t round = 10 * SEC, later = round + SEC / 1000;

	(void)state;
	event_correlate_init(&c, 2, 1000, 0);
	assert_true(event_correlate_add(&c, &ev, later));
	drain(&c, round, &creates, &patches);
	assert_int_equal(creates, 1);
	event_correlate_expire(&c, round, 20 * SEC);
	assert_int_equal(c.n_series, 1);
	assert_int_equal(c.n_windows, 1);
	assert_false(event_correlate_add(&c, &ev, later + SEC));
	assert_int_equal(c.aggregated, 1);
	/* its count goes out an interval after the create, not before */
	assert_false(event_correlate_next(&c, round + SEC, &call));
	drain(&c, round + 2 * SEC, &creates, &patches);
	assert_int_equal(creates, 1);
	assert_int_equal(patches, 1);
	event_correlate_free(&c);
}

/*
 * The node's bucket likewise: a round's older reading neither refills it nor
 * moves its stamp back, which would refill the same seconds twice later.
 */
static void test_bucket_clock_older(void **state)
{
	struct event_correlator c;
	struct kube_event_req a = occurrence("u1", interference, "x"),
			      b = occurrence("u2", interference, "x"),
			      d = occurrence("u3", interference, "x");
	int creates = 0, patches = 0;

	(void)state;
	event_correlate_init(&c, 60, 1, 0); /* one Event a minute */
	event_correlate_add(&c, &a, 100 * SEC);
	drain(&c, 100 * SEC, &creates, &patches);
	event_correlate_add(&c, &b, 101 * SEC);
	drain(&c, 50 * SEC, &creates, &patches); /* an older round: no token */
	event_correlate_add(&c, &d, 151 * SEC);
	drain(&c, 151 * SEC, &creates, &patches); /* 51 s after the last token went */
	assert_int_equal(creates, 1);
	assert_int_equal(c.dropped, 2);
	event_correlate_free(&c);
}

/* ---- node status ------------------------------------------------------- */

static const struct kubernetes_config kcfg = {
	.node_condition = true, .batch_status = true, .batch_min_interval_s = 30};

/* Runs the writer once a second from `from` to `to` with want; counts the patches it made. */
static int run_writer(struct node_writer *w, const struct node_want *want, uint64_t from,
		      uint64_t to, struct kube_node_status *last)
{
	struct kube_node_status st;
	int n = 0;

	for (uint64_t t = from; t < to; t += SEC)
		if (node_writer_due(w, want, t, t, &st)) {
			node_writer_done(w, &st, 0, false, t);
			*last = st;
			n++;
		}
	return n;
}

/* Nothing changes for an hour: one patch at the start (both parts), none after. */
static void test_status_unchanged(void **state)
{
	struct node_writer w;
	struct node_want want = {.cond_said = true,
				 .message = "quiet",
				 .batch = true,
				 .batch_value = {2000, 1 << 30}};
	struct kube_node_status last, st;

	(void)state;
	node_writer_init(&w, &kcfg);
	/* the batch resources alone wait for the loop's first word on the condition */
	want.cond_said = false;
	assert_int_equal(run_writer(&w, &want, SEC, 3 * SEC, &last), 0);
	want.cond_said = true;
	assert_int_equal(run_writer(&w, &want, 3 * SEC, 3600 * SEC, &last), 1);
	assert_non_null(last.cond);
	assert_true(last.batch);
	/* the stop resets nothing that is already at rest: a False condition... */
	want.batch_value[0] = want.batch_value[1] = 0;
	assert_int_equal(run_writer(&w, &want, 3600 * SEC, 3601 * SEC, &last), 1);
	assert_false(node_writer_stop(&w, 3601 * SEC, &st));
}

/*
 * A seeded writer (the Node as an earlier run left it) writes nothing that
 * is there already; a change writes what changed, with what else differs.
 */
static void test_status_seeded(void **state)
{
	struct node_writer w;
	struct kube_node_info info = {
		.has_condition = true, .has_batch = true, .cpu_milli = 2000, .mem_bytes = 1 << 30};
	struct node_want want = {.cond_said = true,
				 .message = "quiet",
				 .batch = true,
				 .batch_value = {2000, 1 << 30}};
	struct kube_node_status last = {0}, st;

	(void)state;
	node_writer_init(&w, &kcfg);
	node_writer_seed(&w, &info, SEC);
	assert_int_equal(run_writer(&w, &want, SEC, 100 * SEC, &last), 0);
	/* a rise alone waits min_interval (from the seed), or rides along */
	want.batch_value[0] = 2050;
	assert_int_equal(run_writer(&w, &want, 100 * SEC, 101 * SEC, &last), 1);
	assert_true(last.batch && last.cpu_milli == 2050 && !last.cond);
	want.batch_value[0] = 2500;
	assert_int_equal(run_writer(&w, &want, 101 * SEC, 130 * SEC, &last), 0);
	want.cond = true;
	want.message = "web/a delayed";
	assert_int_equal(run_writer(&w, &want, 130 * SEC, 131 * SEC, &last), 1);
	assert_non_null(last.cond);
	assert_string_equal(last.cond->status, "True");
	assert_true(last.batch && last.cpu_milli == 2500);
	/* no write without a change, and no periodic re-patch: nothing for an hour */
	assert_int_equal(run_writer(&w, &want, 131 * SEC, 3731 * SEC, &last), 0);
	/* a drop goes at once, whatever the last write's time */
	want.batch_value[1] = 1 << 29;
	assert_int_equal(run_writer(&w, &want, 3731 * SEC, 3732 * SEC, &last), 1);
	want.batch_value[0] = 1000;
	assert_int_equal(run_writer(&w, &want, 3732 * SEC, 3733 * SEC, &last), 1);
	assert_true(last.batch && last.cpu_milli == 1000 && last.mem_bytes == 1 << 29);
	/* the stop: batch to 0 and the True condition to Unknown, in one patch */
	assert_true(node_writer_stop(&w, 2000 * SEC, &st));
	assert_true(st.batch && !st.cpu_milli && !st.mem_bytes);
	assert_string_equal(st.cond->status, "Unknown");
}

/* A drop to 0 is written at once; a refusal waits instead of retrying every second. */
static void test_status_zero_and_refusal(void **state)
{
	struct node_writer w;
	struct node_want want = {
		.cond_said = true, .message = "", .batch = true, .batch_value = {2000, 4096}};
	struct kube_node_status last, st;

	(void)state;
	node_writer_init(&w, &kcfg);
	assert_int_equal(run_writer(&w, &want, SEC, 2 * SEC, &last), 1);
	want.batch_value[0] = want.batch_value[1] = 0;
	assert_int_equal(run_writer(&w, &want, 2 * SEC, 3 * SEC, &last), 1);
	want.batch_value[0] = 3000;
	want.batch_value[1] = 4096;
	assert_true(node_writer_due(&w, &want, 40 * SEC, 40 * SEC, &st));
	node_writer_done(&w, &st, -EACCES, false, 40 * SEC);
	assert_false(node_writer_due(&w, &want, 41 * SEC, 41 * SEC, &st));
	assert_true(node_writer_due(&w, &want, 70 * SEC, 70 * SEC, &st));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_similar_combined),
		cmocka_unit_test(test_spam_filter),
		cmocka_unit_test(test_node_bucket),
		cmocka_unit_test(test_round_clock_older),
		cmocka_unit_test(test_bucket_clock_older),
		cmocka_unit_test(test_status_unchanged),
		cmocka_unit_test(test_status_seeded),
		cmocka_unit_test(test_status_zero_and_refusal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
