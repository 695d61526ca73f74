// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "agent/summary.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "hist.h"

/* Who a culprit id is, for a person: a path with its leading '/', or what the id stands for. */
static void culprit_name(const struct pol_input *in, uint64_t victim, uint64_t culprit, char *buf,
			 size_t size)
{
	const struct pol_unit *u = pol_input_find(in, culprit);
	const struct pol_outside *o = pol_outside_find(in->outside, in->n_outside, culprit);

	if (culprit == victim)
		snprintf(buf, size, "its own tasks");
	else if (culprit == POL_CULPRIT_IDLE)
		snprintf(buf, size, "nobody (the CPU was idle: wake-up latency)");
	else if (culprit == POL_CULPRIT_OTHER)
		snprintf(buf, size, "tasks outside every unit");
	else if (u || o)
		snprintf(buf, size, "/%s", u ? u->path : o->path);
	else
		snprintf(buf, size, "cgroup id %" PRIu64, culprit);
}

void summary_run_queue(const struct pol_input *in, bool rq_on, uint64_t min_waits, char *buf,
		       size_t size)
{
	const struct pol_unit *worst = NULL;
	double worst_p99 = 0;
	uint64_t total = 0, top = 0, top_id = 0;
	char who[POL_PATH_MAX + 16];

	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];
		double p99;

		if (!u->has_rq || !u->rq.count || u->rq.count < min_waits)
			continue;
		p99 = hist_quantile_ns(&u->rq, 0.99);
		if (!worst || p99 > worst_p99) {
			worst = u;
			worst_p99 = p99;
		}
	}
	if (!rq_on) {
		snprintf(buf, size, "run queue: not measured (the sched probe is off)");
		return;
	}
	if (!worst) {
		snprintf(buf, size, "run queue: no unit waited %" PRIu64 " times or more",
			 min_waits);
		return;
	}
	for (size_t i = 0; i < in->n_blame; i++) {
		const struct pol_blame *b = &in->blame[i];

		if (b->victim != worst->id)
			continue;
		total += b->wait_ns;
		if (b->wait_ns > top) {
			top = b->wait_ns;
			top_id = b->culprit;
		}
	}
	if (!top) {
		snprintf(buf, size, "run queue: worst p99 %.1f ms in /%s (%" PRIu64 " waits)",
			 worst_p99 / 1e6, worst->path, (uint64_t)worst->rq.count);
		return;
	}
	culprit_name(in, worst->id, top_id, who, sizeof(who));
	snprintf(buf, size,
		 "run queue: worst p99 %.1f ms in /%s (%" PRIu64 " waits), %.0f%% of it behind %s",
		 worst_p99 / 1e6, worst->path, (uint64_t)worst->rq.count,
		 100.0 * (double)top / (double)total, who);
}
