// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "actuate/internal.h"
#include "cpulist.h"

int act_cpus_parse(const char *s, struct act_cpus *m)
{
	return cpu_list_parse(s, m->on, ACT_CPUS_MAX);
}

int act_cpus_format(const struct act_cpus *m, char *buf, size_t size)
{
	return cpu_list_format(m->on, ACT_CPUS_MAX, buf, size);
}

bool act_cpus_subset(const struct act_cpus *a, const struct act_cpus *b)
{
	for (int i = 0; i < ACT_CPUS_MAX; i++)
		if (a->on[i] && !b->on[i])
			return false;
	return true;
}

bool act_cpus_empty(const struct act_cpus *m)
{
	for (int i = 0; i < ACT_CPUS_MAX; i++)
		if (m->on[i])
			return false;
	return true;
}

void act_cpus_union(struct act_cpus *out, const struct act_cpus *a, const struct act_cpus *b)
{
	for (int i = 0; i < ACT_CPUS_MAX; i++)
		out->on[i] = a->on[i] || b->on[i];
}
