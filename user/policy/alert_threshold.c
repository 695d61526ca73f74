// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/alert_threshold.h"

#include <math.h>

#include "policy/slo.h"

double fast_path_threshold_us(const struct policy_config *p, const struct pol_unit *u)
{
	double us = p->interference.rq_p99_us;

	if (!p->slo.enabled)
		return us;
	if (u) {
		double target = slo_target_us(u, &p->slo); /* 0: not an LS unit */

		return target > 0 ? fmin(us, target) : us;
	}
	us = fmin(us, fmin(p->slo.lse_p99_us, fmin(p->slo.lsr_p99_us, p->slo.ls_p99_us)));
	for (size_t i = 0; i < p->slo.n_globs; i++)
		us = fmin(us, p->slo.globs[i].p99_us);
	return us;
}

bool fast_path_may_mute(const struct policy_config *p)
{
	return !p->slo.enabled;
}
