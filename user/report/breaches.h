/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Interference breaches the agent reported, per victim unit and cause:
 * the counts behind qoslet_interference_breaches_total. Causes come from a
 * fixed set (enum interference_cause), victims are the units of the
 * record, so the series stay bounded.
 */
#ifndef QOSLET_REPORT_BREACHES_H
#define QOSLET_REPORT_BREACHES_H

#include <stddef.h>
#include <stdint.h>

#include "policy/cause.h"
#include "policy/model.h"

struct breach_count {
	uint64_t victim; /* the unit's id */
	enum interference_cause cause;
	uint64_t n;
};

struct breach_counts {
	struct breach_count *v;
	size_t n, cap;
};

/* Counts one report on victim explained by cause; 0 or -ENOMEM. */
int breach_counts_add(struct breach_counts *b, uint64_t victim, enum interference_cause cause);

/* Drops the victims that are no longer units of in: their series end with them. */
void breach_counts_keep(struct breach_counts *b, const struct pol_input *in);

void breach_counts_free(struct breach_counts *b);

#endif
