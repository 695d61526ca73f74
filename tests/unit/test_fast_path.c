// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The fast path's alert threshold and muting, by the SLO control's config. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "agent/fast_path.h"

static void test_threshold(void **state)
{
	static const struct {
		const char *name;
		bool slo;
		double lse, lsr, ls, glob; /* glob 0: none */
		double want;
	} cases[] = {
		{"slo off: interference's", false, 500, 1000, 2000, 0, 10000},
		{"slo on: the smallest class target", true, 500, 1000, 2000, 0, 500},
		{"slo on: a glob under the classes", true, 500, 1000, 2000, 300, 300},
		{"slo on, targets over interference's", true, 20000, 30000, 40000, 50000, 10000},
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct policy_config p = {0};

		p.interference.rq_p99_us = 10000;
		p.slo.enabled = cases[c].slo;
		p.slo.lse_p99_us = cases[c].lse;
		p.slo.lsr_p99_us = cases[c].lsr;
		p.slo.ls_p99_us = cases[c].ls;
		if (cases[c].glob) {
			p.slo.n_globs = 1;
			p.slo.globs[0].p99_us = cases[c].glob;
		}
		if (fast_path_threshold_us(&p) != cases[c].want)
			fail_msg("%s: %g us, want %g", cases[c].name, fast_path_threshold_us(&p),
				 cases[c].want);
		/* a settled interference breach mutes its unit only while slo is off */
		assert_int_equal(fast_path_may_mute(&p), !cases[c].slo);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
