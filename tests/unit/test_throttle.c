// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The throttle probe's pure parts: choosing the event source, reading cpu.stat. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probes/cpustat.h"
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

static void test_parse_v1(void **state)
{
	struct throttle_sample s = {.events = 7};

	(void)state;
	assert_int_equal(cpustat_parse("nr_periods 102\n"
				       "nr_throttled 99\n"
				       "throttled_time 9098001501\n"
				       "nr_bursts 3\n"
				       "burst_time 12345\n",
				       &s),
			 0);
	assert_int_equal(s.nr_periods, 102);
	assert_int_equal(s.nr_throttled, 99);
	assert_int_equal(s.throttled_ns, 9098001501ULL);
	assert_int_equal(s.nr_bursts, 3);
	assert_int_equal(s.burst_ns, 12345);
	assert_int_equal(s.events, 7); /* not cpu.stat's: left alone */
}

/* v2 has usage lines first and times in microseconds. */
static void test_parse_v2(void **state)
{
	struct throttle_sample s = {0};

	(void)state;
	assert_int_equal(cpustat_parse("usage_usec 5000000\n"
				       "user_usec 4000000\n"
				       "system_usec 1000000\n"
				       "core_sched.force_idle_usec 0\n"
				       "nr_periods 50\n"
				       "nr_throttled 48\n"
				       "throttled_usec 4321000\n"
				       "nr_bursts 2\n"
				       "burst_usec 1500\n",
				       &s),
			 0);
	assert_int_equal(s.nr_periods, 50);
	assert_int_equal(s.nr_throttled, 48);
	assert_int_equal(s.throttled_ns, 4321000000ULL);
	assert_int_equal(s.nr_bursts, 2);
	assert_int_equal(s.burst_ns, 1500000);
}

/* Older kernels have no burst lines; a file without bandwidth lines is refused. */
static void test_parse_partial(void **state)
{
	struct throttle_sample s = {.nr_bursts = 9, .burst_ns = 9};

	(void)state;
	assert_int_equal(cpustat_parse("nr_periods 1\nnr_throttled 0\nthrottled_time 0\n", &s), 0);
	assert_int_equal(s.nr_periods, 1);
	assert_int_equal(s.nr_bursts, 0);
	assert_int_equal(s.burst_ns, 0);
	assert_int_equal(cpustat_parse("usage_usec 5\nuser_usec 4\nsystem_usec 1\n", &s), -EINVAL);
	assert_int_equal(cpustat_parse("", &s), -EINVAL);
	/* A key that only starts like one of ours is not it. */
	assert_int_equal(cpustat_parse("nr_periods_x 5\n", &s), -EINVAL);
	/* No trailing newline. */
	assert_int_equal(cpustat_parse("nr_throttled 4\nnr_periods 8", &s), 0);
	assert_int_equal(s.nr_periods, 8);
	assert_int_equal(s.nr_throttled, 4);
}

static void test_has_quota(void **state)
{
	(void)state;
	assert_false(cpustat_has_quota(QOSLET_CGROUP_V1_CPU, "-1\n"));
	assert_true(cpustat_has_quota(QOSLET_CGROUP_V1_CPU, "10000\n"));
	assert_false(cpustat_has_quota(QOSLET_CGROUP_V2, "max 100000\n"));
	assert_true(cpustat_has_quota(QOSLET_CGROUP_V2, "10000 100000\n"));
	assert_false(cpustat_has_quota(QOSLET_CGROUP_V2, ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auto_prefers_fentry),
		cmocka_unit_test(test_auto_falls_back_to_tp_btf),
		cmocka_unit_test(test_auto_falls_back_to_cpustat),
		cmocka_unit_test(test_auto_nothing_loads),
		cmocka_unit_test(test_forced),
		cmocka_unit_test(test_parse_v1),
		cmocka_unit_test(test_parse_v2),
		cmocka_unit_test(test_parse_partial),
		cmocka_unit_test(test_has_quota),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
