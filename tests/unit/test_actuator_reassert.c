// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Another writer's change to a file the actuator wrote: written back, or
 * adopted as the owner's original, or contested (fixture: actuator_fixture.h).
 */
#include "actuator_fixture.h"

#define S 1000000000ull

static const char *const P2 = "kubepods/ls/pod2";

struct answers {
	struct act_answer v[8];
	char rel[8][POL_PATH_MAX];
	size_t n;
};

static void on_answer(void *ctx, const struct act_answer *ans)
{
	struct answers *a = ctx;

	assert_true(a->n < ARRAY_LEN(a->v));
	a->v[a->n] = *ans;
	xsnprintf(a->rel[a->n], sizeof(a->rel[0]), "%s", ans->rel);
	a->n++;
}

struct watched {
	char v[16][POL_PATH_MAX + 32];
	size_t n;
};

static void on_watch(void *ctx, enum cg_knob knob, const char *rel)
{
	struct watched *w = ctx;

	assert_true(w->n < ARRAY_LEN(w->v));
	xsnprintf(w->v[w->n++], sizeof(w->v[0]), "%s %d", rel, (int)knob);
}

static bool is_watched(struct fx *f, const char *rel, enum cg_knob k)
{
	struct watched w = {0};
	char key[POL_PATH_MAX + 32];

	xsnprintf(key, sizeof(key), "%s %d", rel, (int)k);
	actuator_watch_list(f->a, on_watch, &w);
	for (size_t i = 0; i < w.n; i++)
		if (!strcmp(w.v[i], key))
			return true;
	return false;
}

/* Another writer puts text in rel's knob file; the watch's reader hands it over. */
static bool outside(struct fx *f, const char *rel, enum cg_knob k, const char *text)
{
	char dir[PATH_MAX];

	xsnprintf(dir, sizeof(dir), "%s/%s", f->c.root[cg_knob_ctrl(k)], rel);
	put(dir, cg_knob_file(&f->c, k), text);
	return actuator_note(f->a, k, rel, knob_text(f, rel, k));
}

static const char *original(struct fx *f, const char *rel, enum cg_knob k)
{
	const struct journal_entry *e = journal_find(&f->a->j, k, rel);

	assert_non_null(e);
	return e->orig;
}

/* A BE unit's quota changed by another writer: written back; the writer's value restores. */
static void test_reasserted(void **state)
{
	struct fx fx, *f = &fx;
	struct answers ans = {0};
	uint64_t gen;

	(void)state;
	for (int v2 = 0; v2 <= 1; v2++) {
		const char *ours = v2 ? "50000 100000" : "50000";
		const char *theirs = v2 ? "80000 100000" : "80000";

		setup_fx(f, v2);
		assert_false(is_watched(f, P4, CG_KNOB_QUOTA));
		gen = actuator_watch_generation(f->a);
		expect(f, ACT_CPU_QUOTA, P4, QOS_BE, 50000, NULL, OUT_APPLIED);
		assert_true(actuator_watch_generation(f->a) != gen);
		assert_true(is_watched(f, P4, CG_KNOB_QUOTA));
		/* the actuator's own write, read after its notification */
		assert_false(actuator_note(f->a, CG_KNOB_QUOTA, P4, ours));
		actuator_answer(f->a, 1 * S, on_answer, &ans);
		assert_int_equal(ans.n, 0);
		f->n = 0;

		assert_true(outside(f, P4, CG_KNOB_QUOTA, theirs));
		actuator_answer(f->a, 2 * S, on_answer, &ans);
		assert_int_equal(ans.n, 1);
		assert_int_equal(ans.v[0].kind, ACT_ANSWER_REASSERTED);
		assert_int_equal(ans.v[0].r.outcome, OUT_REASSERTED);
		assert_int_equal(ans.v[0].act_kind, ACT_CPU_QUOTA);
		assert_int_equal(ans.v[0].cls, QOS_BE);
		assert_string_equal(ans.rel[0], P4);
		assert_string_equal(ans.v[0].r.before, theirs);
		assert_string_equal(ans.v[0].r.after, ours);
		LOG(v2 ? "be/pod4 quota=50000 100000" : "be/pod4 quota=50000");
		assert_string_equal(knob_text(f, P4, CG_KNOB_QUOTA), ours);
		assert_string_equal(original(f, P4, CG_KNOB_QUOTA), theirs);
		/* answered once */
		ans.n = 0;
		actuator_answer(f->a, 3 * S, on_answer, &ans);
		assert_int_equal(ans.n, 0);
		assert_int_equal(actuator_restore(f->a), 0);
		assert_string_equal(knob_text(f, P4, CG_KNOB_QUOTA), theirs);
		actuator_close(f->a);
	}
}

/* An LS unit's limit resized in place: adopted, not undone, and restored at stop. */
static void test_adopted(void **state)
{
	struct fx fx, *f = &fx;
	struct answers ans = {0};

	(void)state;
	for (int v2 = 0; v2 <= 1; v2++) {
		const char *resized = v2 ? "100000 100000" : "100000";

		setup_fx(f, v2);
		ans.n = 0;
		/* burst raised the limit of 50000 */
		expect(f, ACT_CPU_QUOTA, P2, QOS_LS, 80000, NULL, OUT_APPLIED);
		f->n = 0;
		assert_true(outside(f, P2, CG_KNOB_QUOTA, resized));
		actuator_answer(f->a, 1 * S, on_answer, &ans);
		assert_int_equal(ans.n, 1);
		assert_int_equal(ans.v[0].kind, ACT_ANSWER_ADOPTED);
		assert_int_equal(ans.v[0].r.outcome, OUT_ADOPTED);
		NO_LOG();
		assert_string_equal(knob_text(f, P2, CG_KNOB_QUOTA), resized);
		assert_string_equal(original(f, P2, CG_KNOB_QUOTA), resized);
		/* still watched, and its value is no longer news */
		assert_true(is_watched(f, P2, CG_KNOB_QUOTA));
		assert_false(actuator_note(f->a, CG_KNOB_QUOTA, P2, resized));
		/* the LS rule now holds the new limit */
		expect(f, ACT_CPU_QUOTA, P2, QOS_LS, 80000, NULL, OUT_REFUSED);
		expect(f, ACT_CPU_QUOTA, P2, QOS_LS, 120000, NULL, OUT_APPLIED);
		/* a crash: the next start's reconcile restores the new limit from the journal */
		reopen(f);
		assert_string_equal(knob_text(f, P2, CG_KNOB_QUOTA), resized);
		assert_false(exists(f->journal));
		actuator_close(f->a);
	}
}

/* A writer in a loop: five write-backs, then a hold without a watch, then one write-back. */
static void test_contested(void **state)
{
	struct fx fx, *f = &fx;
	struct answers ans = {0};
	uint64_t t = 10 * S, gen;

	(void)state;
	setup_fx(f, false);
	expect(f, ACT_CPU_IDLE, P1, QOS_BE, 1, NULL, OUT_APPLIED);
	for (int i = 0; i < CONTEST_STRIKES; i++, t += S / 10) {
		assert_true(outside(f, P1, CG_KNOB_IDLE, "0"));
		actuator_answer(f->a, t, on_answer, &ans);
		assert_int_equal(ans.v[ans.n - 1].kind, ACT_ANSWER_REASSERTED);
		assert_string_equal(knob_text(f, P1, CG_KNOB_IDLE), "1");
	}
	assert_int_equal(ans.n, CONTEST_STRIKES);
	gen = actuator_watch_generation(f->a);
	assert_true(outside(f, P1, CG_KNOB_IDLE, "0"));
	actuator_answer(f->a, t, on_answer, &ans);
	assert_int_equal(ans.n, CONTEST_STRIKES + 1);
	assert_int_equal(ans.v[ans.n - 1].kind, ACT_ANSWER_CONTESTED);
	assert_int_equal(ans.v[ans.n - 1].r.outcome, OUT_CONTESTED);
	assert_int_equal(ans.v[ans.n - 1].hold_ns, CONTEST_HOLD_FIRST_NS);
	assert_non_null(strstr(ans.v[ans.n - 1].r.why, "written back in 1 s"));
	assert_string_equal(knob_text(f, P1, CG_KNOB_IDLE), "0");
	/* held: not watched, not written */
	assert_true(actuator_watch_generation(f->a) != gen);
	assert_false(is_watched(f, P1, CG_KNOB_IDLE));
	f->n = 0;
	actuator_answer(f->a, t + S / 2, on_answer, &ans);
	assert_int_equal(ans.n, CONTEST_STRIKES + 1);
	NO_LOG();
	/* the hold ended: written back once, watched again */
	actuator_answer(f->a, t + S, on_answer, &ans);
	assert_int_equal(ans.n, CONTEST_STRIKES + 2);
	assert_int_equal(ans.v[ans.n - 1].kind, ACT_ANSWER_REASSERTED);
	LOG("be/pod1 idle=1");
	assert_true(is_watched(f, P1, CG_KNOB_IDLE));
	actuator_close(f->a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reasserted),
		cmocka_unit_test(test_adopted),
		cmocka_unit_test(test_contested),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
