// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Block I/O throttles on the fake node: one disk's rule written (v1
 * blkio.throttle.*_bps_device), other disks' rules left alone, the
 * original journaled so that a stop clears the rule qoslet added and
 * puts back one the owner had; never on an LS unit; a disk the write
 * adds later is covered too.
 */
#include "actuator_fixture.h"

#define MIB  (1024ll * 1024)
#define VDA  ((254u << 20) | 0u)
#define SDB  ((8u << 20) | 16u)
#define RBPS "blkio.throttle.read_bps_device"
#define WBPS "blkio.throttle.write_bps_device"

static void put_io(struct fx *f, const char *rel, const char *file, const char *text)
{
	char dir[PATH_MAX];

	xsnprintf(dir, sizeof(dir), "%s/%s", f->c.root[CTRL_IO], rel);
	put(dir, file, text);
}

/* A fresh v1 node whose units have no throttle yet (the files hold nothing). */
static void setup_io(struct fx *f)
{
	setup_fx(f, false);
	for (size_t i = 0; i < ARRAY_LEN(tree); i++) {
		put_io(f, tree[i].rel, RBPS, "");
		put_io(f, tree[i].rel, WBPS, "");
	}
}

static enum decision_outcome act_io(struct fx *f, enum act_kind kind, const char *unit,
				    enum qos_class cls, uint32_t dev, int64_t bps,
				    struct act_result *r)
{
	struct action a = {.kind = kind, .cls = cls, .value = bps, .dev = dev};

	xsnprintf(a.path, sizeof(a.path), "%s", unit);
	actuator_apply(f->a, &a, r);
	return r->outcome;
}

static void test_throttle_and_restore(void **state)
{
	struct fx fx, *f = &fx;
	struct act_result r;

	(void)state;
	setup_io(f);
	assert_int_equal(act_io(f, ACT_IO_RBPS, P1, QOS_BE, VDA, 50 * MIB, &r), OUT_APPLIED);
	assert_string_equal(r.before, "");
	assert_string_equal(r.after, "254:0 52428800");
	LOG("be/pod1 rbps=254:0 52428800");
	assert_int_equal(act_io(f, ACT_IO_WBPS, P1, QOS_BE, VDA, 50 * MIB, &r), OUT_APPLIED);
	LOG("be/pod1 wbps=254:0 52428800");
	/* the same again: nothing to write */
	assert_int_equal(act_io(f, ACT_IO_RBPS, P1, QOS_BE, VDA, 50 * MIB, &r), OUT_UNCHANGED);
	NO_LOG();
	assert_int_equal(act_io(f, ACT_IO_RBPS, P1, QOS_BE, VDA, 20 * MIB, &r), OUT_APPLIED);
	assert_string_equal(knob_text(f, P1, CG_KNOB_IO_RBPS), "254:0 20971520");
	LOG("be/pod1 rbps=254:0 20971520");
	/* a restart reads the journal back; then a stop clears the rule (v1 takes 0 for none) */
	reopen(f);
	assert_int_equal(actuator_restore(f->a), 0);
	LOG("be/pod1 wbps=254:0 0", "be/pod1 rbps=254:0 0");
	assert_string_equal(knob_text(f, P1, CG_KNOB_IO_RBPS), "");
	assert_false(exists(f->journal));
	actuator_close(f->a);
}

/* The owner's rule on that disk comes back; its rule on another disk is never touched. */
static void test_owner_rules(void **state)
{
	struct fx fx, *f = &fx;
	struct act_result r;

	(void)state;
	setup_io(f);
	put_io(f, P1, RBPS, "8:16 1000000\n254:0 104857600");
	assert_int_equal(act_io(f, ACT_IO_RBPS, P1, QOS_BE, VDA, 10 * MIB, &r), OUT_APPLIED);
	assert_string_equal(r.before, "8:16 1000000\n254:0 104857600");
	LOG("be/pod1 rbps=254:0 10485760");
	/* a later write on a disk the original has no rule for: the journal covers it */
	put_io(f, P1, RBPS, "8:16 1000000\n254:0 10485760");
	assert_int_equal(act_io(f, ACT_IO_RBPS, P1, QOS_BE, SDB + 16, 5 * MIB, &r), OUT_APPLIED);
	LOG("be/pod1 rbps=8:32 5242880");
	/* the original, a line a disk (written one a write: the kernel takes one) */
	assert_int_equal(actuator_restore(f->a), 0);
	LOG("be/pod1 rbps=8:16 1000000\n254:0 104857600\n8:32 0");
	actuator_close(f->a);
}

/* v2: both knobs live in io.max; a restart tells them apart by the journaled text. */
static void test_v2_io_max(void **state)
{
	struct fx fx, *f = &fx;
	struct act_result r;

	(void)state;
	setup_fx(f, true);
	put_io(f, P1, "io.max", "");
	assert_int_equal(act_io(f, ACT_IO_WBPS, P1, QOS_BE, VDA, 5 * MIB, &r), OUT_APPLIED);
	assert_string_equal(r.after, "254:0 wbps=5242880");
	LOG("be/pod1 io=254:0 wbps=5242880");
	/*
	 * A restart reconciles the journal: read back as the wbps entry it is,
	 * it finds wbps changed and writes the original (read as rbps's, it
	 * would find rbps as it was and write nothing).
	 */
	reopen(f);
	LOG("be/pod1 io=254:0 wbps=max");
	assert_string_equal(knob_text(f, P1, CG_KNOB_IO_WBPS), "");
	actuator_close(f->a);
}

/* Never an LS unit's I/O, whoever asks. */
static void test_never_ls(void **state)
{
	struct fx fx, *f = &fx;
	struct act_result r;

	(void)state;
	setup_io(f);
	assert_int_equal(act_io(f, ACT_IO_RBPS, "kubepods/ls/pod2", QOS_LS, VDA, MIB, &r),
			 OUT_REFUSED);
	assert_non_null(strstr(r.why, "never squeezes"));
	NO_LOG();
	/* nor a memory limit there, as before */
	expect(f, ACT_MEM_LIMIT, "kubepods/ls/pod2", QOS_LS, 64 * MIB, NULL, OUT_REFUSED);
	/* nor a throttle of 0 or a disk of none */
	assert_int_equal(act_io(f, ACT_IO_RBPS, P1, QOS_BE, VDA, 0, &r), OUT_REFUSED);
	assert_int_equal(act_io(f, ACT_IO_RBPS, P1, QOS_BE, 0, MIB, &r), OUT_REFUSED);
	actuator_close(f->a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_throttle_and_restore),
		cmocka_unit_test(test_owner_rules),
		cmocka_unit_test(test_v2_io_max),
		cmocka_unit_test(test_never_ls),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
