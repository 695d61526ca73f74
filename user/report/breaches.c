// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "report/breaches.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

int breach_counts_add(struct breach_counts *b, uint64_t victim, enum interference_cause cause)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].victim == victim && b->v[i].cause == cause) {
			b->v[i].n++;
			return 0;
		}
	if (array_grow((void **)&b->v, &b->cap, b->n, sizeof(*b->v)))
		return -ENOMEM;
	b->v[b->n++] = (struct breach_count){victim, cause, 1};
	return 0;
}

void breach_counts_keep(struct breach_counts *b, const struct pol_input *in)
{
	size_t k = 0;

	for (size_t i = 0; i < b->n; i++)
		if (pol_input_find(in, b->v[i].victim))
			b->v[k++] = b->v[i];
	b->n = k;
}

void breach_counts_free(struct breach_counts *b)
{
	free(b->v);
	memset(b, 0, sizeof(*b));
}
