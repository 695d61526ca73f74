/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the batch resources tests share: one tick of the policy's wishes,
 * with suppression's quota on the same pod beside them, through the plan.
 * Each test then lands the writes on its own model (pod or containers).
 */
#ifndef QOSLET_TESTS_BATCH_PLAN_H
#define QOSLET_TESTS_BATCH_PLAN_H

#include "policy/batch_resources.h"
#include "policy/plan.h"

/* Batch resources' wishes plus a suppression quota on pod (none when 0), planned into out. */
static inline void batch_plan_tick(struct plan_state *st, const struct pol_input *in,
				   const struct batch_resources_config *cfg,
				   const struct pol_unit *pod, int64_t suppress_quota,
				   struct action_list *out)
{
	struct action_list w = {0};
	struct action *a;

	assert_int_equal(batch_resources_run(in, cfg, &w), 0);
	if (suppress_quota) {
		a = action_add(&w, ACT_CPU_QUOTA, pod, RULE_SUPPRESS_CFS_QUOTA);
		assert_non_null(a);
		a->value = suppress_quota;
	}
	action_list_clear(out);
	assert_int_equal(plan_apply(st, in, &w, false, out), 0);
	action_list_free(&w);
}

#endif
