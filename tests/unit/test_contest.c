// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Two writers fighting over one file: when the actuator backs off (actuate/contest.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "actuate/contest.h"

#define MS 1000000ull
#define S  1000000000ull

/* A writer undoing every write-back 100 ms later: five answers, then holds of 1, 2, 4 s. */
static void test_fight_backs_off(void **state)
{
	struct contest c = {0};
	uint64_t t = 10 * S;

	(void)state;
	for (int i = 0; i < CONTEST_STRIKES; i++, t += 100 * MS)
		assert_int_equal(contest_judge(&c, t), CONTEST_ANSWER);
	assert_int_equal(contest_judge(&c, t), CONTEST_BACK_OFF);
	assert_int_equal(contest_hold_ns(&c), CONTEST_HOLD_FIRST_NS);
	assert_true(contest_held(&c, t + 999 * MS));
	assert_int_equal(contest_judge(&c, t + 500 * MS), CONTEST_HELD);
	assert_false(contest_hold_over(&c, t + 999 * MS));
	assert_true(contest_hold_over(&c, t + 1 * S));
	assert_false(contest_hold_over(&c, t + 1 * S)); /* once */
	/* Undone again at once: twice as long. */
	t += 1 * S + 10 * MS;
	assert_int_equal(contest_judge(&c, t), CONTEST_BACK_OFF);
	assert_int_equal(contest_hold_ns(&c), 2 * S);
	assert_true(contest_hold_over(&c, t + 2 * S));
	t += 2 * S + 10 * MS;
	assert_int_equal(contest_judge(&c, t), CONTEST_BACK_OFF);
	assert_int_equal(contest_hold_ns(&c), 4 * S);
}

/* The hold doubles up to its maximum and stays there. */
static void test_hold_capped(void **state)
{
	struct contest c = {0};
	uint64_t t = 1 * S;

	(void)state;
	for (int i = 0; i < CONTEST_STRIKES; i++, t += MS)
		contest_judge(&c, t);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(contest_judge(&c, t), CONTEST_BACK_OFF);
		assert_true(contest_hold_ns(&c) <= CONTEST_HOLD_MAX_NS);
		t += contest_hold_ns(&c);
		assert_true(contest_hold_over(&c, t));
		t += MS;
	}
	assert_int_equal(contest_hold_ns(&c), CONTEST_HOLD_MAX_NS);
}

/*
 * A write-back that stood a whole window ends it: a periodic rewriter (the
 * kubelet's CPU manager every 10 s) is answered every time, never held.
 */
static void test_periodic_rewrites_answered(void **state)
{
	struct contest c = {0};
	uint64_t t = 1 * S;

	(void)state;
	for (int i = 0; i < 50; i++, t += 10 * S)
		assert_int_equal(contest_judge(&c, t), CONTEST_ANSWER);
	/* after holds too */
	for (int i = 0; i <= CONTEST_STRIKES; i++, t += MS)
		contest_judge(&c, t);
	assert_true(contest_hold_over(&c, t + CONTEST_HOLD_FIRST_NS));
	t += CONTEST_HOLD_FIRST_NS + CONTEST_WINDOW_NS;
	assert_int_equal(contest_judge(&c, t), CONTEST_ANSWER);
	assert_int_equal(c.holds, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fight_backs_off),
		cmocka_unit_test(test_hold_capped),
		cmocka_unit_test(test_periodic_rewrites_answered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
