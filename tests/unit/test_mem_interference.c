// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory and I/O interference from constructed tick records: a quiet node,
 * an LS unit under its own limit, a shared ancestor at its limit with a BE
 * page-cache churner, a hog outside kubepods, an I/O streamer (in a pod or
 * outside them), a reader waiting for its refaults, and the I/O of
 * those refaults charged to whoever evicted the pages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/mem_interference.h"
#include "evidence.h"

#define NS 1000000000ULL
#define MS 1000000ULL

/* LS victim V, BE units B (churner) and B2 (quiet), LS unit L; KUBEPODS, SLICE outside. */
enum { V = 10, B = 20, B2 = 21, L = 30, KUBEPODS = 500, SLICE = 600 };

static const struct mem_interference_config defaults = {
	.enabled = true,
	.stall_share = 0.05,
	.io_share = 0.2,
	.k = 3,
	.n = 5,
	.culprit_min_share = 0.2,
	.report_s = 300,
};

struct world {
	struct pol_unit units[4];
	struct pol_mem_party ancestors[1], outside[1];
	struct pol_input in;
};

/* A one-second tick at t seconds: every unit measured, nothing stalled. */
static void world_init(struct world *w, int t)
{
	static const struct {
		uint64_t id;
		enum qos_class cls;
		const char *path;
	} spec[] = {{V, QOS_LS, "kubepods/burstable/podv"},
		    {B, QOS_BE, "kubepods/besteffort/podb"},
		    {B2, QOS_BE, "kubepods/besteffort/podb2"},
		    {L, QOS_LS, "kubepods/burstable/podl"}};

	memset(w, 0, sizeof(*w));
	for (size_t i = 0; i < 4; i++) {
		struct pol_unit *u = &w->units[i];

		u->id = spec[i].id;
		u->cls = spec[i].cls;
		snprintf(u->path, sizeof(u->path), "%s", spec[i].path);
		u->ms.has_stall = u->ms.has_io = true;
	}
	w->ancestors[0].name = (struct pol_outside){.id = KUBEPODS, .path = "kubepods"};
	w->outside[0].name = (struct pol_outside){.id = SLICE, .path = "noisy.slice"};
	w->in = (struct pol_input){.ts_ns = (uint64_t)t * NS + 1700000000 * NS,
				   .interval_s = 1,
				   .units = w->units,
				   .n_units = 4,
				   .mem_ancestors = w->ancestors,
				   .n_mem_ancestors = 1,
				   .mem_outside = w->outside,
				   .n_mem_outside = 1};
}

static struct pol_unit *unit(struct world *w, uint64_t id)
{
	return (struct pol_unit *)pol_input_find(&w->in, id);
}

static const struct action *only_report(const struct action_list *out, enum rule_id rule)
{
	const struct action *found = NULL;

	for (size_t i = 0; i < out->n; i++) {
		assert_int_equal(out->v[i].kind, ACT_REPORT);
		if (out->v[i].rule == rule) {
			assert_null(found);
			found = &out->v[i];
		}
	}
	return found;
}

/* Runs ticks 1..n of `scene`; returns the reports of all of them in out. */
typedef void (*scene_fn)(struct world *w);

static void run(scene_fn scene, int ticks, struct mem_interference_state *st,
		struct action_list *out)
{
	for (int t = 1; t <= ticks; t++) {
		struct world w;

		world_init(&w, t);
		scene(&w);
		assert_int_equal(mem_interference_run(&w.in, &defaults, st, out), 0);
	}
}

/* Runs 3 ticks of `scene`: its one I/O report (on V). */
static const struct action *io_breach(scene_fn scene, struct mem_interference_state *st,
				      struct action_list *out)
{
	const struct action *a;

	run(scene, 3, st, out);
	a = only_report(out, RULE_INTERFERENCE_IO);
	assert_non_null(a);
	assert_int_equal(a->id, V);
	return a;
}

static void quiet(struct world *w)
{
	/* a little stall under the threshold, some reclaim: no victim */
	unit(w, V)->ms.stall_ns = 10 * MS;
	unit(w, B)->ms.reclaim_ns = 5 * MS;
}

static void test_quiet(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};

	(void)state;
	run(quiet, 10, &st, &out);
	assert_int_equal(out.n, 0);
	assert_int_equal(st.n_guilty, 0);
	assert_int_equal(st.n_io_guilty, 0);
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void own_limit(struct world *w)
{
	/* V reclaims under its own limit; B reclaims a little elsewhere */
	unit(w, V)->ms.stall_ns = 300 * MS;
	unit(w, V)->ms.reclaim_ns = 250 * MS;
	unit(w, V)->ms.limit_hits = 400;
	unit(w, B)->ms.reclaim_ns = 20 * MS;
}

static void test_own_limit(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	run(own_limit, 5, &st, &out);
	a = only_report(&out, RULE_INTERFERENCE_MEMORY);
	assert_non_null(a);
	assert_int_equal(a->id, V);
	assert_int_equal(a->cause.interference, CAUSE_LIMIT);
	assert_string_equal(interference_cause_name(a->cause.interference), "own_limit");
	assert_int_equal(a->related_id, V);
	assert_true(evidence(a, "share_own_limit") > 0.99);
	assert_int_equal(evidence(a, "limit_hits"), 400);
	assert_int_equal(st.n_guilty, 0); /* nothing to suppress: its own limit */
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void ancestor_churn(struct world *w)
{
	/* kubepods at its limit; B streams files and reclaims most; V refaults */
	unit(w, V)->ms.stall_ns = 400 * MS;
	unit(w, V)->ms.reclaim_ns = 2 * MS;
	unit(w, V)->ms.ancestor_hits = 900;
	unit(w, V)->ms.ancestor = KUBEPODS;
	unit(w, V)->ms.refaults = 5000;
	unit(w, B)->ms.reclaim_ns = 700 * MS;
	unit(w, B)->ms.charged_pages = 400000;
	unit(w, B2)->ms.reclaim_ns = 1 * MS;
	w->ancestors[0].limit_hits = 900;
}

static void test_ancestor_churner(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	run(ancestor_churn, 2, &st, &out);
	assert_int_equal(out.n, 0); /* 2 windows of 5 over: not yet (k = 3) */
	assert_int_equal(st.n_guilty, 0);
	run(ancestor_churn, 1, &st, &out);
	a = only_report(&out, RULE_INTERFERENCE_MEMORY);
	assert_non_null(a);
	assert_int_equal(a->id, V);
	assert_int_equal(a->cause.interference, CAUSE_UNIT);
	assert_int_equal(a->related_id, B);
	assert_string_equal(a->related, "kubepods/besteffort/podb");
	assert_true(evidence(a, "culprit_wait_share") > 0.9);
	assert_int_equal(evidence(a, "windows_over"), 3);
	assert_int_equal(evidence(a, "refaults"), 5000);
	assert_int_equal(st.n_guilty, 1);
	assert_int_equal(st.guilty[0].culprit, B);
	assert_int_equal(st.guilty[0].victim, V);
	assert_true(st.guilty[0].share > 0.9);
	/* reported once per report_s; still guilty every tick */
	action_list_clear(&out);
	run(ancestor_churn, 1, &st, &out);
	assert_int_equal(out.n, 0);
	assert_int_equal(st.n_guilty, 1);
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void ancestor_nobody(struct world *w)
{
	/* kubepods at its limit, nobody's reclaim or charges to show: the ancestor */
	unit(w, V)->ms.stall_ns = 200 * MS;
	unit(w, V)->ms.ancestor_hits = 50;
	unit(w, V)->ms.ancestor = KUBEPODS;
}

static void test_ancestor_unexplained(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	run(ancestor_nobody, 3, &st, &out);
	a = only_report(&out, RULE_INTERFERENCE_MEMORY);
	assert_non_null(a);
	assert_int_equal(a->cause.interference, CAUSE_ANCESTOR);
	assert_string_equal(a->related, "kubepods");
	assert_int_equal(st.n_guilty, 0);
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void outside_hog(struct world *w)
{
	/* no limit hit: the node is short, and noisy.slice reclaims the most */
	unit(w, V)->ms.stall_ns = 250 * MS;
	unit(w, B)->ms.reclaim_ns = 30 * MS;
	w->outside[0].reclaim_ns = 600 * MS;
}

static void test_outside_hog(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	run(outside_hog, 3, &st, &out);
	a = only_report(&out, RULE_INTERFERENCE_MEMORY);
	assert_non_null(a);
	assert_int_equal(a->cause.interference, CAUSE_OUTSIDE);
	assert_int_equal(a->related_id, SLICE);
	assert_string_equal(a->related, "noisy.slice");
	assert_int_equal(st.n_guilty, 0); /* B's share is under culprit_min_share */
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void io_streamer(struct world *w)
{
	/* V waits on I/O behind B's stream; no memory stall */
	unit(w, V)->ms.io_ns = 500 * MS;
	unit(w, V)->ms.io_bytes = 1 << 20;
	unit(w, B)->ms.io_bytes = 1600ULL << 20;
}

static void test_io_streamer(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	a = io_breach(io_streamer, &st, &out);
	assert_null(only_report(&out, RULE_INTERFERENCE_MEMORY));
	assert_int_equal(a->related_id, B);
	assert_int_equal(st.n_io_guilty, 1);
	assert_int_equal(st.io_guilty[0].culprit, B);
	assert_int_equal(st.n_guilty, 0);
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void paced_refaults(struct world *w)
{
	/*
	 * Issue 35's paced reader: kubepods at its limit, V's pages pushed out
	 * by B's stream, V waiting on the disk for each refault, which PSI
	 * does not count as a memory stall (they were not in its workingset).
	 */
	unit(w, V)->ms.stall_ns = 2 * MS;
	unit(w, V)->ms.io_ns = 802 * MS;
	unit(w, V)->ms.io_bytes = 700 * 4096;
	unit(w, V)->ms.refaults = 700;
	unit(w, V)->ms.ancestor_hits = 600;
	unit(w, V)->ms.ancestor = KUBEPODS;
	unit(w, B)->ms.reclaim_ns = 150 * MS;
	unit(w, B)->ms.io_bytes = 1500ULL << 20;
	w->ancestors[0].limit_hits = 600;
}

static void test_refault_waits(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	run(paced_refaults, 3, &st, &out);
	a = only_report(&out, RULE_INTERFERENCE_MEMORY);
	assert_non_null(a);
	assert_int_equal(a->cause.interference, CAUSE_UNIT);
	assert_int_equal(a->related_id, B);
	/* 2 ms of PSI stall and the 800 ms of refault waits beyond it */
	assert_float_equal(evidence(a, "stall_share"), 0.802, 1e-9);
	assert_float_equal(evidence(a, "refault_wait_share"), 0.8, 1e-9);
	assert_int_equal(st.n_guilty, 1);
	assert_int_equal(st.guilty[0].culprit, B);
	a = only_report(&out, RULE_INTERFERENCE_IO);
	assert_non_null(a);
	assert_int_equal(a->related_id, B);
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void some_refaults(struct world *w)
{
	/* a quarter of V's bytes read back refaults: a quarter of its I/O wait is memory's */
	unit(w, V)->ms.stall_ns = 20 * MS;
	unit(w, V)->ms.io_ns = 420 * MS;
	unit(w, V)->ms.io_bytes = 400 * 4096;
	unit(w, V)->ms.refaults = 100;
}

static void test_refault_waits_part(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	run(some_refaults, 3, &st, &out);
	a = only_report(&out, RULE_INTERFERENCE_MEMORY);
	assert_non_null(a);
	assert_float_equal(evidence(a, "stall_share"), 0.02 + 0.4 / 4, 1e-9);
	assert_float_equal(evidence(a, "refault_wait_share"), 0.1, 1e-9);
	/* nobody reclaimed, no limit hit: the node */
	assert_int_equal(a->cause.interference, CAUSE_NODE);
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void io_outside(struct world *w)
{
	/* V waits on I/O behind noisy.slice's stream (outside the pods) */
	unit(w, V)->ms.io_ns = 500 * MS;
	unit(w, V)->ms.io_bytes = 1 << 20;
	unit(w, B)->ms.io_bytes = 8 << 20;
	w->outside[0].io_bytes = 1600ULL << 20;
}

static void test_io_outside(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	a = io_breach(io_outside, &st, &out);
	assert_null(only_report(&out, RULE_INTERFERENCE_MEMORY));
	assert_int_equal(a->cause.interference, CAUSE_OUTSIDE);
	assert_int_equal(a->related_id, SLICE);
	assert_string_equal(a->related, "noisy.slice");
	assert_int_equal(st.n_io_guilty, 0); /* B's share is under culprit_min_share */
	mem_interference_state_free(&st);
	action_list_free(&out);
}

/*
 * The I/O split of a refaulting reader (issue 35, as the v2 VM saw it):
 * kubepods at its limit, B's stream reclaims V's pages, and V's refault
 * reads are 74% of the disk's bytes. Those reads are V's only because B
 * evicted its pages: they count as B's, so the I/O breach names B, not
 * V itself.
 */
static void io_refaults(struct world *w)
{
	paced_refaults(w);
	unit(w, B)->ms.io_bytes = 246 * 4096; /* V's 700 pages: 74% of the bytes */
}

static void test_io_refaults_evicter(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	a = io_breach(io_refaults, &st, &out);
	assert_int_equal(a->cause.interference, CAUSE_UNIT);
	assert_int_equal(a->related_id, B);
	assert_float_equal(evidence(a, "share_unit"), 1, 1e-6);
	assert_float_equal(evidence(a, "share_self"), 0, 1e-9);
	assert_float_equal(evidence(a, "refault_byte_share"), 1, 1e-9);
	assert_int_equal(evidence(a, "refaults"), 700);
	assert_int_equal(st.n_io_guilty, 1);
	assert_int_equal(st.io_guilty[0].culprit, B);
	assert_float_equal(st.io_guilty[0].share, 1, 1e-6);
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void io_own_stream(struct world *w)
{
	/* V streams its own file, nothing evicted: its I/O wait is its own load */
	unit(w, V)->ms.io_ns = 600 * MS;
	unit(w, V)->ms.io_bytes = 800ULL << 20;
	unit(w, B)->ms.io_bytes = 100ULL << 20;
}

static void test_io_own_stream(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	a = io_breach(io_own_stream, &st, &out);
	assert_null(only_report(&out, RULE_INTERFERENCE_MEMORY));
	assert_int_equal(a->cause.interference, CAUSE_SELF);
	assert_int_equal(a->related_id, V);
	assert_float_equal(evidence(a, "share_self"), 800.0 / 900, 1e-6);
	assert_float_equal(evidence(a, "refault_byte_share"), 0, 1e-9);
	assert_int_equal(st.n_io_guilty, 0); /* B's 11% is under culprit_min_share */
	mem_interference_state_free(&st);
	action_list_free(&out);
}

/*
 * Both at once: V streams 50 MiB of its own and reads back 10 MiB that
 * B's reclaim evicted; B streams 20 MiB. V's own bytes still explain
 * most of its wait (self, 50 of 80), B's share is its bytes and the
 * refaults it caused (30 of 80), enough to be guilty.
 */
static void io_stream_and_refaults(struct world *w)
{
	io_refaults(w);
	unit(w, V)->ms.refaults = 2560;
	unit(w, V)->ms.io_bytes = 60ULL << 20;
	unit(w, B)->ms.io_bytes = 20ULL << 20;
}

static void test_io_stream_and_refaults(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	a = io_breach(io_stream_and_refaults, &st, &out);
	assert_int_equal(a->cause.interference, CAUSE_SELF);
	assert_float_equal(evidence(a, "share_self"), 50.0 / 80, 1e-6);
	assert_float_equal(evidence(a, "share_unit"), 30.0 / 80, 1e-6);
	assert_float_equal(evidence(a, "refault_byte_share"), 10.0 / 60, 1e-9);
	assert_int_equal(st.n_io_guilty, 1);
	assert_int_equal(st.io_guilty[0].culprit, B);
	assert_float_equal(st.io_guilty[0].share, 30.0 / 80, 1e-6);
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void io_own_limit(struct world *w)
{
	/* V reads back what its own limit evicted: its limit's doing, nobody else's */
	io_refaults(w);
	unit(w, V)->ms.limit_hits = 300;
	unit(w, V)->ms.ancestor_hits = 0;
	unit(w, V)->ms.ancestor = 0;
	unit(w, B)->ms.reclaim_ns = 0;
	w->ancestors[0].limit_hits = 0;
}

static void test_io_own_limit(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	a = io_breach(io_own_limit, &st, &out);
	assert_int_equal(a->cause.interference, CAUSE_LIMIT);
	assert_int_equal(a->related_id, V);
	assert_float_equal(evidence(a, "share_own_limit"), 700.0 / 946, 1e-6);
	assert_float_equal(evidence(a, "share_unit"), 246.0 / 946, 1e-6);
	assert_int_equal(st.n_io_guilty, 0); /* its own limit explains it */
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void io_refaults_ancestor(struct world *w)
{
	/* kubepods at its limit and nobody's reclaim to show: kubepods evicted them */
	io_refaults(w);
	unit(w, B)->ms.reclaim_ns = 0;
}

static void test_io_refaults_ancestor(void **state)
{
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	a = io_breach(io_refaults_ancestor, &st, &out);
	assert_int_equal(a->cause.interference, CAUSE_ANCESTOR);
	assert_string_equal(a->related, "kubepods");
	assert_float_equal(evidence(a, "share_ancestor"), 700.0 / 946, 1e-6);
	mem_interference_state_free(&st);
	action_list_free(&out);
}

static void test_bad_config(void **state)
{
	struct mem_interference_config cfg = defaults;
	struct mem_interference_state st = {0};
	struct action_list out = {0};
	struct world w;

	(void)state;
	world_init(&w, 1);
	cfg.k = 6;
	assert_int_equal(mem_interference_run(&w.in, &cfg, &st, &out), -EINVAL);
	cfg = defaults;
	cfg.stall_share = 0;
	assert_int_equal(mem_interference_run(&w.in, &cfg, &st, &out), -EINVAL);
	assert_int_equal(out.n, 0);
	mem_interference_state_free(&st);
	action_list_free(&out);
}

/* The CLI's explanation of one input: the policy's parties, every unit a victim. */
static void explain(scene_fn scene, bool io, struct mem_stall_explained out[4])
{
	struct world w;

	world_init(&w, 1);
	scene(&w);
	assert_int_equal(mem_stall_explain(&w.in, io, out), 0);
}

/* out[] is in the units' order: V, B, B2, L (ids ascending). */
static void test_explain_one_input(void **state)
{
	struct mem_stall_explained e[4];

	(void)state;
	/* the churner drove kubepods' reclaim: it is V's culprit, on one input */
	explain(ancestor_churn, false, e);
	assert_true(e[0].explained);
	assert_int_equal(e[0].stall_ns, 400 * MS);
	assert_int_equal(e[0].top.id, B);
	assert_int_equal(e[0].top.cause, CAUSE_UNIT);
	assert_true(e[0].top.share > 0.99 * 700.0 / 703);
	assert_false(e[1].explained); /* B reclaimed but did not stall */
	assert_int_equal(e[1].stall_ns, 0);
	/* its own limit */
	explain(own_limit, false, e);
	assert_int_equal(e[0].top.id, POL_CULPRIT_LIMIT);
	assert_int_equal(e[0].top.cause, CAUSE_LIMIT);
	assert_float_equal(e[0].share[CAUSE_LIMIT], 1, 1e-9);
	/* the node short, a slice outside the units reclaiming most */
	explain(outside_hog, false, e);
	assert_int_equal(e[0].top.id, SLICE);
	assert_int_equal(e[0].top.cause, CAUSE_OUTSIDE);
	/* kubepods hit, nobody reclaimed: the ancestor itself */
	explain(ancestor_nobody, false, e);
	assert_int_equal(e[0].top.id, KUBEPODS);
	assert_int_equal(e[0].top.cause, CAUSE_ANCESTOR);
}

/* The refault waits PSI leaves out are in the stall; the I/O by bytes on the disk. */
static void test_explain_refaults_and_io(void **state)
{
	struct mem_stall_explained e[4];

	(void)state;
	explain(paced_refaults, false, e);
	assert_int_equal(e[0].refault_wait_ns, 800 * MS);
	assert_int_equal(e[0].stall_ns, 802 * MS);
	assert_int_equal(e[0].top.id, B);
	explain(io_streamer, true, e);
	assert_int_equal(e[0].stall_ns, 500 * MS);
	assert_int_equal(e[0].refault_wait_ns, 0);
	assert_int_equal(e[0].top.id, B);
	assert_int_equal(e[0].top.cause, CAUSE_UNIT);
}

/* A BE unit that stalls is explained too: the views show every cgroup. */
static void be_stalls(struct world *w)
{
	ancestor_churn(w);
	unit(w, B)->ms.stall_ns = 100 * MS;
	unit(w, B)->ms.ancestor_hits = 900;
	unit(w, B)->ms.ancestor = KUBEPODS;
}

static void test_explain_every_class(void **state)
{
	struct mem_stall_explained e[4];

	(void)state;
	explain(be_stalls, false, e);
	assert_true(e[1].explained);
	assert_int_equal(e[1].top.id, B);
	assert_int_equal(e[1].top.cause, CAUSE_SELF);
	assert_false(e[2].explained);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_own_limit),
		cmocka_unit_test(test_ancestor_churner),
		cmocka_unit_test(test_ancestor_unexplained),
		cmocka_unit_test(test_outside_hog),
		cmocka_unit_test(test_io_streamer),
		cmocka_unit_test(test_refault_waits),
		cmocka_unit_test(test_refault_waits_part),
		cmocka_unit_test(test_io_outside),
		cmocka_unit_test(test_io_refaults_evicter),
		cmocka_unit_test(test_io_own_stream),
		cmocka_unit_test(test_io_stream_and_refaults),
		cmocka_unit_test(test_io_own_limit),
		cmocka_unit_test(test_io_refaults_ancestor),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_explain_one_input),
		cmocka_unit_test(test_explain_refaults_and_io),
		cmocka_unit_test(test_explain_every_class),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
