/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The step every suppression takes towards what it wants: cut at once (the
 * victim needs the resource now), grow by at most max_up a tick (so BE does
 * not rush back into a load that may return), skip changes smaller than
 * min_change (no churn of cgroup writes) but for the drop to lo, and stay
 * within [lo, hi]. CPU suppression steps BE's allowance with it, memory
 * suppression a BE unit's memory limit.
 */
#ifndef QOSLET_POLICY_RATE_H
#define QOSLET_POLICY_RATE_H

#include <stdbool.h>

struct rate_limit {
	double lo, hi;	   /* the bounds, lo <= hi */
	double max_up;	   /* the most a step grows */
	double min_change; /* a smaller move keeps prev */
};

/* The next value from prev (have_prev false: there is none, want is taken as it is). */
double rate_step(bool have_prev, double prev, double want, const struct rate_limit *r);

#endif
