// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/rate.h"

#include <math.h>

static double clamp(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

double rate_step(bool have_prev, double prev, double want, const struct rate_limit *r)
{
	double v = clamp(want, r->lo, r->hi);

	if (!have_prev)
		return v;
	if (v > prev + r->max_up)
		v = prev + r->max_up;
	/*
	 * The drop to the floor is never skipped (koordlet exempts it too): on
	 * a large node the skip is wider than the last step, so BE would stay
	 * above its floor for as long as the victim wants the rest.
	 */
	if (fabs(v - prev) < r->min_change && v != r->lo)
		v = prev;
	/* Again: the bounds may have moved since prev was decided. */
	return clamp(v, r->lo, r->hi);
}
