// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory QoS writes on the fake node (v2): memory.min/low carried up to the
 * subtree's root as the sum of the children's (raised parents first,
 * lowered children first, an owner's larger value kept), memory.high on
 * the unit alone, released and restored on stop; v1 has none of the files.
 */
#include "actuator_fixture.h"

#define MIB (1024ll * 1024)

static const char *const LS2 = "kubepods/ls/pod2", *const LS3 = "kubepods/ls/pod3";

static void put_knob(struct fx *f, const char *rel, const char *file, const char *text)
{
	char dir[PATH_MAX];

	xsnprintf(dir, sizeof(dir), "%s/%s", f->c.root[CTRL_MEMORY], rel);
	put(dir, file, text);
}

static void test_protection_parents(void **state)
{
	struct fx fx, *f = &fx;
	struct act_result r;

	(void)state;
	setup_fx(f, true);
	assert_int_equal(act(f, ACT_MEM_MIN, LS2, QOS_LSR, 1024 * MIB, NULL, &r), OUT_APPLIED);
	assert_string_equal(r.before, "0");
	assert_string_equal(r.after, "1073741824");
	/* raised: the parents first, so the protection counts from the unit's write on */
	LOG(". min=1073741824", "ls min=1073741824", "ls/pod2 min=1073741824");
	expect(f, ACT_MEM_MIN, LS3, QOS_LSR, 512 * MIB, NULL, OUT_APPLIED);
	LOG(". min=1610612736", "ls min=1610612736", "ls/pod3 min=536870912");
	/* lowered: the unit first */
	expect(f, ACT_MEM_MIN, LS2, QOS_LSR, 256 * MIB, NULL, OUT_APPLIED);
	LOG("ls/pod2 min=268435456", "ls min=805306368", ". min=805306368");
	expect(f, ACT_MEM_MIN, LS2, QOS_LSR, 256 * MIB, NULL, OUT_UNCHANGED);
	NO_LOG();
	/* memory.low goes the same way, on its own file */
	expect(f, ACT_MEM_LOW, LS3, QOS_LS, 64 * MIB, NULL, OUT_APPLIED);
	LOG(". low=67108864", "ls low=67108864", "ls/pod3 low=67108864");
	/* a clean stop: every file back to the owner's value */
	assert_int_equal(actuator_restore(f->a), 0);
	assert_string_equal(knob_text(f, "kubepods", CG_KNOB_MEM_MIN), "0");
	assert_string_equal(knob_text(f, "kubepods/ls", CG_KNOB_MEM_MIN), "0");
	assert_string_equal(knob_text(f, LS2, CG_KNOB_MEM_MIN), "0");
	assert_string_equal(knob_text(f, LS3, CG_KNOB_MEM_LOW), "0");
	assert_false(exists(f->journal));
	actuator_close(f->a);
}

/* A parent's own protection (the kubelet's, say) larger than the sum stays. */
static void test_owner_parent_kept(void **state)
{
	struct fx fx, *f = &fx;

	(void)state;
	setup_fx(f, true);
	put_knob(f, "kubepods/ls", "memory.min", "2147483648");
	expect(f, ACT_MEM_MIN, LS2, QOS_LSR, 1024 * MIB, NULL, OUT_APPLIED);
	LOG(". min=2147483648", "ls/pod2 min=1073741824");
	expect(f, ACT_MEM_MIN, LS3, QOS_LSR, 2048 * MIB, NULL, OUT_APPLIED);
	LOG(". min=3221225472", "ls min=3221225472", "ls/pod3 min=2147483648");
	assert_int_equal(actuator_restore(f->a), 0);
	assert_string_equal(knob_text(f, "kubepods/ls", CG_KNOB_MEM_MIN), "2147483648");
	assert_string_equal(knob_text(f, "kubepods", CG_KNOB_MEM_MIN), "0");
	actuator_close(f->a);
}

/* plan.release of one unit's protection: it and its ancestors' sums come down. */
static void test_release_protection(void **state)
{
	struct fx fx, *f = &fx;
	struct action rel = {.kind = ACT_MEM_MIN, .cls = QOS_LSR, .restore = true};
	struct act_result r;

	(void)state;
	xsnprintf(rel.path, sizeof(rel.path), "%s", LS2);
	setup_fx(f, true);
	expect(f, ACT_MEM_MIN, LS2, QOS_LSR, 1024 * MIB, NULL, OUT_APPLIED);
	expect(f, ACT_MEM_MIN, LS3, QOS_LSR, 512 * MIB, NULL, OUT_APPLIED);
	f->n = 0;
	actuator_apply(f->a, &rel, &r);
	assert_string_equal(decision_outcome_name(r.outcome), "applied");
	LOG("ls/pod2 min=0", "ls min=536870912", ". min=536870912");
	actuator_close(f->a);
}

/* A protected unit that vanished leaves its ancestors' sums. */
static void test_vanished_protection(void **state)
{
	struct fx fx, *f = &fx;
	char dir[PATH_MAX];

	(void)state;
	setup_fx(f, true);
	expect(f, ACT_MEM_MIN, LS2, QOS_LSR, 1024 * MIB, NULL, OUT_APPLIED);
	expect(f, ACT_MEM_MIN, LS3, QOS_LSR, 512 * MIB, NULL, OUT_APPLIED);
	f->n = 0;
	xsnprintf(dir, sizeof(dir), "%s/%s", f->c.root[CTRL_MEMORY], LS2);
	assert_int_equal(tmpdir_remove(dir), 0);
	actuator_forget(f->a, LS2);
	LOG("ls min=536870912", ". min=536870912");
	assert_int_equal(actuator_restore(f->a), 0);
	assert_string_equal(knob_text(f, "kubepods", CG_KNOB_MEM_MIN), "0");
	assert_string_equal(knob_text(f, LS3, CG_KNOB_MEM_MIN), "0");
	actuator_close(f->a);
}

/* memory.high: the BE unit alone; never on an LS unit; a crash is reconciled at the next start. */
static void test_high(void **state)
{
	struct fx fx, *f = &fx;
	struct act_result r;

	(void)state;
	setup_fx(f, true);
	assert_int_equal(act(f, ACT_MEM_HIGH, P1, QOS_BE, 900 * MIB, NULL, &r), OUT_APPLIED);
	assert_string_equal(r.before, "max");
	assert_string_equal(r.after, "943718400");
	LOG("be/pod1 high=943718400");
	expect(f, ACT_MEM_HIGH, LS2, QOS_LS, 900 * MIB, NULL, OUT_REFUSED);
	expect(f, ACT_MEM_HIGH, P1, QOS_BE, -2, NULL, OUT_REFUSED);
	NO_LOG();
	reopen(f); /* a crash: the journal is left, the next start writes the original back */
	assert_int_equal(actuator_reconciled(f->a), 1);
	assert_string_equal(knob_text(f, P1, CG_KNOB_MEM_HIGH), "max");
	actuator_close(f->a);
}

static void test_dry_run(void **state)
{
	struct fx fx, *f = &fx;

	(void)state;
	setup_fx(f, true);
	actuator_close(f->a);
	f->o.dry_run = true;
	open_a(f);
	expect(f, ACT_MEM_MIN, LS2, QOS_LSR, 1024 * MIB, NULL, OUT_DRY_RUN);
	LOG(". min=1073741824", "ls min=1073741824", "ls/pod2 min=1073741824");
	assert_string_equal(knob_text(f, LS2, CG_KNOB_MEM_MIN), "0");
	assert_string_equal(knob_text(f, "kubepods", CG_KNOB_MEM_MIN), "0");
	assert_false(exists(f->journal));
	actuator_close(f->a);
}

/* v1 (upstream) has no memory.min/low/high: the decision fails and says so. */
static void test_v1_has_none(void **state)
{
	struct fx fx, *f = &fx;
	struct act_result r;

	(void)state;
	setup_fx(f, false);
	assert_int_equal(act(f, ACT_MEM_MIN, LS2, QOS_LSR, 1024 * MIB, NULL, &r), OUT_FAILED);
	assert_int_equal(r.err, -EOPNOTSUPP);
	assert_non_null(strstr(r.why, "memory.min does not exist on this kernel"));
	assert_int_equal(act(f, ACT_MEM_HIGH, P1, QOS_BE, 900 * MIB, NULL, &r), OUT_FAILED);
	assert_int_equal(r.err, -EOPNOTSUPP);
	NO_LOG();
	actuator_close(f->a);
}

/*
 * memory.reclaim (v2, 5.19+): a one-shot write, never journaled; refused on
 * an LS unit; said clearly where the kernel lacks it (v1, older v2).
 */
static void test_reclaim(void **state)
{
	struct fx fx, *f = &fx;
	struct act_result r;
	char path[PATH_MAX];

	(void)state;
	setup_fx(f, true);
	/* no memory.reclaim yet: a kernel before 5.19 */
	assert_int_equal(act(f, ACT_MEM_RECLAIM, P1, QOS_BE, 64 * MIB, NULL, &r), OUT_FAILED);
	assert_int_equal(r.err, -EOPNOTSUPP);
	assert_non_null(strstr(r.why, "memory.reclaim does not exist on this kernel"));
	put_knob(f, P1, "memory.reclaim", "");
	put_knob(f, P1, "memory.current", "1073741824");
	assert_int_equal(act(f, ACT_MEM_RECLAIM, P1, QOS_BE, 64 * MIB, NULL, &r), OUT_APPLIED);
	assert_string_equal(r.before, "1073741824");
	LOG("be/pod1 reclaim=67108864");
	xsnprintf(path, sizeof(path), "%s/%s/memory.reclaim", f->c.root[CTRL_MEMORY], P1);
	assert_true(exists(path));
	expect(f, ACT_MEM_RECLAIM, P1, QOS_BE, 0, NULL, OUT_REFUSED);
	expect(f, ACT_MEM_RECLAIM, LS2, QOS_LS, 64 * MIB, NULL, OUT_REFUSED);
	NO_LOG();
	/* nothing to hand back on stop */
	assert_false(exists(f->journal));
	actuator_close(f->a);
	/* dry-run: said, not written */
	setup_fx(f, true);
	actuator_close(f->a);
	f->o.dry_run = true;
	open_a(f);
	put_knob(f, P1, "memory.reclaim", "");
	expect(f, ACT_MEM_RECLAIM, P1, QOS_BE, 64 * MIB, NULL, OUT_DRY_RUN);
	LOG("be/pod1 reclaim=67108864");
	actuator_close(f->a);
	/* v1 has none */
	setup_fx(f, false);
	assert_int_equal(act(f, ACT_MEM_RECLAIM, P1, QOS_BE, 64 * MIB, NULL, &r), OUT_FAILED);
	assert_int_equal(r.err, -EOPNOTSUPP);
	NO_LOG();
	actuator_close(f->a);
}

/* v1's memory suppression: memory.limit_in_bytes of a BE unit, journaled, restored; never LS. */
static void test_v1_limit(void **state)
{
	struct fx fx, *f = &fx;

	(void)state;
	setup_fx(f, false);
	expect(f, ACT_MEM_LIMIT, P1, QOS_BE, 512 * MIB, NULL, OUT_APPLIED);
	LOG("be/pod1 mem=536870912");
	expect(f, ACT_MEM_LIMIT, LS2, QOS_LS, 512 * MIB, NULL, OUT_REFUSED);
	NO_LOG();
	assert_int_equal(actuator_restore(f->a), 0);
	assert_string_equal(knob_text(f, P1, CG_KNOB_MEM_MAX), "9223372036854771712");
	actuator_close(f->a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_protection_parents),
		cmocka_unit_test(test_owner_parent_kept),
		cmocka_unit_test(test_release_protection),
		cmocka_unit_test(test_high),
		cmocka_unit_test(test_dry_run),
		cmocka_unit_test(test_v1_has_none),
		cmocka_unit_test(test_vanished_protection),
		cmocka_unit_test(test_reclaim),
		cmocka_unit_test(test_v1_limit),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
