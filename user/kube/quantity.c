// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/quantity.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *suffix;
	double factor;
} suffixes[] = {
	{"Ki", 0x1p10}, {"Mi", 0x1p20}, {"Gi", 0x1p30}, {"Ti", 0x1p40},
	{"Pi", 0x1p50}, {"Ei", 0x1p60}, {"n", 1e-9},	{"u", 1e-6},
	{"m", 1e-3},	{"k", 1e3},	{"M", 1e6},	{"G", 1e9},
	{"T", 1e12},	{"P", 1e15},	{"E", 1e18},	{"", 1},
};

/* The quantity x scale, rounded up. */
static int parse_scaled(const char *s, double scale, uint64_t *out)
{
	const char *p = s;
	char *end;
	double v;

	/* strtod alone would take "inf", "0x10" and leading blanks: digits only. */
	if (*p == '+' || *p == '-')
		p++;
	if (!(*p >= '0' && *p <= '9') && !(*p == '.' && p[1] >= '0' && p[1] <= '9'))
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return -EINVAL;
	v = strtod(s, &end);
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strcmp(end, suffixes[i].suffix))
			continue;
		v = ceil(v * (suffixes[i].factor * scale));
		if (v < 0)
			return -ERANGE;
		if (!(v < 0x1p64))
			return -ERANGE;
		*out = (uint64_t)v;
		return 0;
	}
	return -EINVAL;
}

int kube_quantity_parse(const char *s, uint64_t *out)
{
	return parse_scaled(s, 1, out);
}

int kube_quantity_parse_milli(const char *s, uint64_t *out)
{
	return parse_scaled(s, 1000, out);
}
