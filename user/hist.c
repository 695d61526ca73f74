// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "hist.h"

uint64_t hist_slot_le_ns(int slot)
{
	if (slot >= QOSLET_LAT_SLOTS - 1)
		return UINT64_MAX;
	return 1ULL << (slot + QOSLET_LAT_MIN_SHIFT);
}

void hist_add(struct lat_hist *dst, const struct lat_hist *src)
{
	dst->count += src->count;
	dst->sum_ns += src->sum_ns;
	for (int i = 0; i < QOSLET_LAT_SLOTS; i++)
		dst->slots[i] += src->slots[i];
}

void hist_delta(struct lat_hist *out, const struct lat_hist *now, const struct lat_hist *before)
{
	int reset = now->count < before->count || now->sum_ns < before->sum_ns;

	for (int i = 0; i < QOSLET_LAT_SLOTS && !reset; i++)
		reset = now->slots[i] < before->slots[i];
	if (reset) {
		*out = *now;
		return;
	}
	out->count = now->count - before->count;
	out->sum_ns = now->sum_ns - before->sum_ns;
	for (int i = 0; i < QOSLET_LAT_SLOTS; i++)
		out->slots[i] = now->slots[i] - before->slots[i];
}

double hist_quantile_ns(const struct lat_hist *h, double q)
{
	uint64_t total = 0, cum = 0;
	double rank;

	/* Buckets, not count: the two are read at slightly different times. */
	for (int i = 0; i < QOSLET_LAT_SLOTS; i++)
		total += h->slots[i];
	if (!total)
		return 0;
	rank = q * (double)total;
	for (int i = 0; i < QOSLET_LAT_SLOTS; i++) {
		double lo = i ? (double)hist_slot_le_ns(i - 1) : 0;

		if (!h->slots[i] || (double)(cum + h->slots[i]) < rank) {
			cum += h->slots[i];
			continue;
		}
		if (i == QOSLET_LAT_SLOTS - 1)
			return lo;
		return lo + ((double)hist_slot_le_ns(i) - lo) * (rank - (double)cum) /
				    (double)h->slots[i];
	}
	return (double)hist_slot_le_ns(QOSLET_LAT_SLOTS - 2);
}
