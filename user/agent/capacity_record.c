// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's side of batch capacity (user/policy/capacity.h, run inside
 * policy_tick): turns each change into a decision record that spells the
 * formula out (docs/capacity.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "agent/agent_state.h"

/* What a value reads like in a record: "1900m" CPUs or "1288490188" bytes. */
static void value_text(enum capacity_resource r, uint64_t v, char *buf, size_t size)
{
	snprintf(buf, size, r == CAP_CPU ? "%" PRIu64 "m" : "%" PRIu64, v);
}

static double to_text_unit(enum capacity_resource r, double v)
{
	return r == CAP_CPU ? v : v / (1024.0 * 1024 * 1024);
}

/* The formula with this tick's numbers, or why it is held. */
static void explain(const struct capacity_result *res, enum capacity_resource r,
		    const struct capacity_config *cfg, uint64_t value, char *buf, size_t size)
{
	const struct capacity_terms *t = &res->r[r];
	const char *unit = r == CAP_CPU ? "" : " GiB";
	char v[32];

	value_text(r, value, v, sizeof(v));
	if (res->held) {
		snprintf(buf, size, "%s: held at 0: %s", v, res->held);
		return;
	}
	snprintf(buf, size,
		 "%s = %.3g%s x %.2f - max(LS %.3g + system %.3g, p%g over %.0f s %.3g)%s - "
		 "reserve %.3g%s; the node shows %.4g%s (peak over %.0f s %.3g%s, less %.0f %%)",
		 v, to_text_unit(r, t->capacity), unit, t->threshold, to_text_unit(r, t->ls),
		 to_text_unit(r, t->system), cfg->percentile * 100, cfg->window_s,
		 to_text_unit(r, t->pctl), unit, to_text_unit(r, t->reserve), unit,
		 to_text_unit(r, t->published), unit, cfg->hold_s, to_text_unit(r, t->peak), unit,
		 cfg->step * 100);
}

void agent_record_capacity(struct agent *a, const struct action *act, const uint64_t *before)
{
	enum capacity_resource r = act->rule == RULE_CAPACITY_CPU ? CAP_CPU : CAP_MEM;
	struct decision d = {.ts_ns = a->rec->in.ts_ns, .act = *act, .outcome = OUT_REPORTED};

	if (before)
		value_text(r, before[r], d.before, sizeof(d.before));
	explain(&a->pol.capacity_result, r, &a->cfg.policy.capacity, (uint64_t)act->value, d.after,
		sizeof(d.after));
	if (act->cause.kind == ACT_CAUSE_HELD)
		log_info("agent: batch %s held at 0: %s", r == CAP_CPU ? "cpu" : "memory",
			 act->cause.held);
	agent_record_decision(a, &d);
}
