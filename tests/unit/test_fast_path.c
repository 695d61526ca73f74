// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The fast path's alert thresholds and muting, by the SLO control's config, and its alert decoding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "bpf/sched_maps.h"
#include "policy/alert_threshold.h"
#include "probes/fast_path.h"

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
		if (fast_path_threshold_us(&p, NULL) != cases[c].want)
			fail_msg("%s: %g us, want %g", cases[c].name,
				 fast_path_threshold_us(&p, NULL), cases[c].want);
		/* a settled interference breach mutes its unit only while slo is off */
		assert_int_equal(fast_path_may_mute(&p), !cases[c].slo);
	}
}

/* Each LS unit alerts at its own target: annotation, glob, class; never under 1 us of nothing. */
static void test_unit_threshold(void **state)
{
	static const struct {
		const char *name;
		bool slo;
		enum qos_class cls;
		const char *path;
		double annotated; /* 0: none */
		double want;
	} cases[] = {
		{"slo off: interference's, whatever the annotation", false, QOS_LS, "web/a", 50,
		 10000},
		{"an annotation under every configured target", true, QOS_LS, "web/a", 50, 50},
		{"an annotation over interference's", true, QOS_LS, "web/a", 20000, 10000},
		{"a glob beats the class", true, QOS_LS, "batchy/a", 0, 300},
		{"the class: LSE", true, QOS_LSE, "web/a", 0, 500},
		{"the class: LS, not the smallest of the config", true, QOS_LS, "web/a", 0, 2000},
		{"not an LS unit: interference's", true, QOS_BE, "web/a", 0, 10000},
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct policy_config p = {0};
		struct pol_unit u = {
			.id = 1, .cls = cases[c].cls, .rq_target_us = cases[c].annotated};

		snprintf(u.path, sizeof(u.path), "%s", cases[c].path);
		p.interference.rq_p99_us = 10000;
		p.slo.enabled = cases[c].slo;
		p.slo.lse_p99_us = 500;
		p.slo.lsr_p99_us = 1000;
		p.slo.ls_p99_us = 2000;
		p.slo.n_globs = 1;
		snprintf(p.slo.globs[0].glob, sizeof(p.slo.globs[0].glob), "batchy/*");
		p.slo.globs[0].p99_us = 300;
		if (fast_path_threshold_us(&p, &u) != cases[c].want)
			fail_msg("%s: %g us, want %g", cases[c].name,
				 fast_path_threshold_us(&p, &u), cases[c].want);
	}
}

/* Records of the probe's alert ring, counted by kind; a short one is not counted. */
static void test_decode(void **state)
{
	struct rq_alert wait = {.cgid = 7, .wait_ns = 3000000, .kind = RQ_ALERT_WAIT};
	struct rq_alert displaced = {.cgid = 7, .culprit = 9, .kind = RQ_ALERT_DISPLACED};
	struct fast_path_alerts got = {0};

	(void)state;
	fast_path_decode(&got, &wait, sizeof(wait));
	fast_path_decode(&got, &displaced, sizeof(displaced));
	fast_path_decode(&got, &displaced, sizeof(displaced));
	fast_path_decode(&got, &wait, sizeof(wait) - 1); /* cut: another layout */
	assert_int_equal(got.waits, 1);
	assert_int_equal(got.displaced, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_unit_threshold),
		cmocka_unit_test(test_decode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
