// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/cause.h"

const char *interference_cause_name(enum interference_cause c)
{
	static const char *const names[CAUSE_NR] = {
		[CAUSE_UNIT] = "unit",	       [CAUSE_OUTSIDE] = "outside",
		[CAUSE_SELF] = "self",	       [CAUSE_QUOTA] = "quota",
		[CAUSE_IDLE] = "idle",	       [CAUSE_LIMIT] = "own_limit",
		[CAUSE_ANCESTOR] = "ancestor", [CAUSE_NODE] = "node",
	};

	return (unsigned int)c < CAUSE_NR ? names[c] : NULL;
}

const char *act_cause_name(const struct act_cause *c)
{
	switch (c->kind) {
	case ACT_CAUSE_INTERFERENCE:
		return interference_cause_name(c->interference);
	case ACT_CAUSE_GUARD:
		return evict_guard_name(c->guard);
	case ACT_CAUSE_REFUSED_RULE:
		return rule_name(c->rule);
	case ACT_CAUSE_HELD:
		return c->held;
	case ACT_CAUSE_OUTSIDE_WRITE:
		return "outside_write";
	default:
		return NULL;
	}
}
