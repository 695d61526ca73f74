/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The policies' unit tests read a decision's evidence by name. Include after
 * <cmocka.h> (fail_msg) and the policy header (struct action).
 */
#ifndef QOSLET_TEST_EVIDENCE_H
#define QOSLET_TEST_EVIDENCE_H

#include <math.h>
#include <string.h>

/* The value of the evidence `name` of a; fails the test when a has none. */
static inline double evidence(const struct action *a, const char *name)
{
	for (size_t i = 0; i < a->n_ev; i++)
		if (!strcmp(a->ev[i].name, name))
			return a->ev[i].value;
	fail_msg("%s: no evidence %s", rule_name(a->rule), name);
	return NAN;
}

#endif
