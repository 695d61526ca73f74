// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The throttle probe's pure parts: choosing the event source, reading cpu.stat. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probes/throttle.h"

/* A fake kernel: which sources load, and the order they were tried in. */
struct fake {
	int result[THROTTLE_CPUSTAT + 1]; /* 0 = loads, else -errno */
	enum throttle_source tried[4];
	int n_tried;
};

static int fake_try(void *ctx, enum throttle_source src)
{
	struct fake *f = ctx;

	f->tried[f->n_tried++] = src;
	return f->result[src];
}

static void test_auto_prefers_fentry(void **state)
{
	struct fake f = {0};
	enum throttle_source chosen = THROTTLE_AUTO;

	(void)state;
	assert_int_equal(throttle_select(THROTTLE_AUTO, fake_try, &f, &chosen), 0);
	assert_int_equal(chosen, THROTTLE_FENTRY);
	assert_int_equal(f.n_tried, 1);
}

/* This machine: fentry refused (EPERM), the sched_switch path loads. */
static void test_auto_falls_back_to_tp_btf(void **state)
{
	struct fake f = {.result = {[THROTTLE_FENTRY] = -EPERM}};
	enum throttle_source chosen = THROTTLE_AUTO;

	(void)state;
	assert_int_equal(throttle_select(THROTTLE_AUTO, fake_try, &f, &chosen), 0);
	assert_int_equal(chosen, THROTTLE_TP_BTF);
	assert_int_equal(f.n_tried, 2);
	assert_int_equal(f.tried[0], THROTTLE_FENTRY);
	assert_int_equal(f.tried[1], THROTTLE_TP_BTF);
}

static void test_auto_falls_back_to_cpustat(void **state)
{
	struct fake f = {.result = {[THROTTLE_FENTRY] = -EPERM, [THROTTLE_TP_BTF] = -EINVAL}};
	enum throttle_source chosen = THROTTLE_AUTO;

	(void)state;
	assert_int_equal(throttle_select(THROTTLE_AUTO, fake_try, &f, &chosen), 0);
	assert_int_equal(chosen, THROTTLE_CPUSTAT);
	assert_int_equal(f.n_tried, 3);
}

static void test_auto_nothing_loads(void **state)
{
	struct fake f = {.result = {-EPERM, -EPERM, -EPERM, -ENOENT}};
	enum throttle_source chosen = THROTTLE_AUTO;

	(void)state;
	f.result[THROTTLE_AUTO] = 0; /* never tried */
	assert_int_equal(throttle_select(THROTTLE_AUTO, fake_try, &f, &chosen), -ENOENT);
	assert_int_equal(chosen, THROTTLE_AUTO);
	assert_int_equal(f.n_tried, 3);
}

/* A forced source is the only one tried, and its failure is the result. */
static void test_forced(void **state)
{
	struct fake f = {.result = {[THROTTLE_FENTRY] = -EPERM}};
	enum throttle_source chosen = THROTTLE_AUTO;

	(void)state;
	assert_int_equal(throttle_select(THROTTLE_FENTRY, fake_try, &f, &chosen), -EPERM);
	assert_int_equal(chosen, THROTTLE_AUTO);
	assert_int_equal(f.n_tried, 1);

	f.n_tried = 0;
	assert_int_equal(throttle_select(THROTTLE_CPUSTAT, fake_try, &f, &chosen), 0);
	assert_int_equal(chosen, THROTTLE_CPUSTAT);
	assert_int_equal(f.n_tried, 1);
	assert_int_equal(f.tried[0], THROTTLE_CPUSTAT);

	f.n_tried = 0;
	assert_int_equal(throttle_select(THROTTLE_TP_BTF, fake_try, &f, &chosen), 0);
	assert_int_equal(chosen, THROTTLE_TP_BTF);
	assert_int_equal(f.n_tried, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auto_prefers_fentry),
		cmocka_unit_test(test_auto_falls_back_to_tp_btf),
		cmocka_unit_test(test_auto_falls_back_to_cpustat),
		cmocka_unit_test(test_auto_nothing_loads),
		cmocka_unit_test(test_forced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
