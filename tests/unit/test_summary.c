// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's run-queue line off Kubernetes (user/agent/summary.c) on made-up records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "agent/summary.h"
#include "hist.h"

/* A unit whose n waits all fall in the bucket ending at slot's bound. */
static struct pol_unit unit(uint64_t id, const char *path, uint64_t n, int slot)
{
	struct pol_unit u = {.id = id, .cls = QOS_SYSTEM, .has_rq = true};

	snprintf(u.path, sizeof(u.path), "%s", path);
	u.rq.count = n;
	u.rq.slots[slot] = n;
	return u;
}

static void test_worst_and_culprit(void **state)
{
	/* sorted by id, as in a record */
	struct pol_unit units[] = {
		unit(2, "system.slice/cron.service", 100, 10),
		unit(3, "system.slice/db.service", 50, 20),
		unit(4, "user.slice/user-1000.slice", 5, 25), /* worse, but too few waits */
	};
	struct pol_blame blame[] = {
		{.victim = 3, .culprit = 2, .wait_ns = 600},
		{.victim = 3, .culprit = 3, .wait_ns = 300},
		{.victim = 3, .culprit = POL_CULPRIT_OTHER, .wait_ns = 100},
		{.victim = 4, .culprit = 2, .wait_ns = 99999},
	};
	struct pol_input in = {.units = units, .n_units = 3, .blame = blame, .n_blame = 4};
	char line[1200], want[200];

	(void)state;
	summary_run_queue(&in, true, 20, line, sizeof(line));
	snprintf(want, sizeof(want),
		 "run queue: worst p99 %.1f ms in /system.slice/db.service (50 waits), 60%% of it "
		 "behind /system.slice/cron.service",
		 hist_quantile_ns(&units[1].rq, 0.99) / 1e6);
	assert_string_equal(line, want);

	blame[0].wait_ns = 100; /* now its own tasks are the most */
	summary_run_queue(&in, true, 20, line, sizeof(line));
	assert_non_null(strstr(line, "(50 waits), 60% of it behind its own tasks"));

	in.n_blame = 0; /* no blame data: the worst alone */
	summary_run_queue(&in, true, 20, line, sizeof(line));
	assert_null(strstr(line, "behind"));
	assert_non_null(strstr(line, "in /system.slice/db.service (50 waits)"));
}

static void test_nothing_to_say(void **state)
{
	struct pol_unit units[] = {unit(2, "init.scope", 3, 10)};
	struct pol_input in = {.units = units, .n_units = 1};
	char line[200];

	(void)state;
	summary_run_queue(&in, true, 20, line, sizeof(line));
	assert_string_equal(line, "run queue: no unit waited 20 times or more");
	summary_run_queue(&in, false, 20, line, sizeof(line));
	assert_string_equal(line, "run queue: not measured (the sched probe is off)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worst_and_culprit),
		cmocka_unit_test(test_nothing_to_say),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
