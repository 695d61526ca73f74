// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/action.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[ACT_NR] = {
	[ACT_CPU_QUOTA] = "cpu_quota",
	[ACT_CPU_BURST] = "cpu_burst",
	[ACT_CPUSET] = "cpuset",
	[ACT_CPU_IDLE] = "cpu_idle",
	[ACT_EVICT] = "evict",
	[ACT_REPORT] = "report",
	[ACT_CAPACITY] = "capacity",
	[ACT_CPU_WEIGHT] = "cpu_weight",
	[ACT_MEM_LIMIT] = "mem_limit",
	[ACT_MEM_MIN] = "memory_min",
	[ACT_MEM_LOW] = "memory_low",
	[ACT_MEM_HIGH] = "memory_high",
	[ACT_MEM_RECLAIM] = "memory_reclaim",
	[ACT_IO_RBPS] = "io_rbps",
	[ACT_IO_WBPS] = "io_wbps",
};

const char *act_kind_name(enum act_kind k)
{
	return (unsigned int)k < ACT_NR ? kind_names[k] : "?";
}

struct action *action_add(struct action_list *l, enum act_kind kind, const struct pol_unit *u,
			  enum rule_id rule)
{
	struct action *a;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct action *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	a = &l->v[l->n++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->rule = rule;
	if (u) {
		a->id = u->id;
		a->cls = u->cls;
		a->pinned = u->pinned_cpus != 0;
		/* as large as the unit's path: a copy, not a formatted print, on every action */
		memcpy(a->path, u->path, strlen(u->path) + 1);
	}
	return a;
}

void action_evidence(struct action *a, const char *name, double value)
{
	assert(a->n_ev < ACT_EVIDENCE_MAX);
	if (a->n_ev < ACT_EVIDENCE_MAX)
		a->ev[a->n_ev++] = (struct act_evidence){name, value};
}

void action_list_clear(struct action_list *l)
{
	l->n = 0;
}

void action_list_free(struct action_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}
