/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the memory and I/O suppression tests share: the record's clock of a
 * tick t seconds into the test, and finding a unit's action. Include after
 * <cmocka.h> and the policy header.
 */
#ifndef QOSLET_TEST_SUPPRESS_TICKS_H
#define QOSLET_TEST_SUPPRESS_TICKS_H

#include <stdint.h>

#define SEC 1000000000ull

/* in's clock moved to t seconds after 1000 s (the fixtures' start), the interval with it. */
static inline void tick_clock(struct pol_input *in, double t)
{
	uint64_t ts = 1000 * SEC + (uint64_t)(t * 1e9 + 0.5);

	in->interval_s = (double)(ts - in->ts_ns) / 1e9;
	in->ts_ns = ts;
}

/* The action of kind on unit id in l, or NULL. */
static inline const struct action *find_action(const struct action_list *l, uint64_t id,
					       enum act_kind kind)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].id == id && l->v[i].kind == kind)
			return &l->v[i];
	return NULL;
}

#endif
