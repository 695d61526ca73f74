// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[QOS_NR] = {
	[QOS_UNMANAGED] = "UNMANAGED",
	[QOS_SYSTEM] = "SYSTEM",
	[QOS_LSE] = "LSE",
	[QOS_LSR] = "LSR",
	[QOS_LS] = "LS",
	[QOS_BE] = "BE",
};

const char *qos_class_name(enum qos_class c)
{
	return (unsigned int)c < QOS_NR ? class_names[c] : "?";
}

int qos_class_parse(const char *s, enum qos_class *c)
{
	for (int i = 0; i < QOS_NR; i++)
		if (!strcmp(s, class_names[i])) {
			*c = i;
			return 0;
		}
	return -EINVAL;
}

const struct pol_unit *pol_input_find(const struct pol_input *in, uint64_t id)
{
	size_t lo = 0, hi = in->n_units;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (in->units[mid].id == id)
			return &in->units[mid];
		if (in->units[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void pol_input_free(struct pol_input *in)
{
	free(in->units);
	free(in->blame);
	in->units = NULL;
	in->blame = NULL;
	in->n_units = in->n_blame = 0;
}
