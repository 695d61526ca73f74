// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cpulist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One decimal CPU number of a list; advances *s past it. */
static int parse_cpu(const char **s, long *cpu)
{
	char *end;

	if (!isdigit((unsigned char)**s))
		return -EINVAL;
	errno = 0;
	*cpu = strtol(*s, &end, 10);
	if (errno || *cpu > 1 << 22) /* far beyond NR_CPUS: not a CPU number */
		return -EINVAL;
	*s = end;
	return 0;
}

/* Calls fn for each range lo-hi of a list (a lone CPU is lo == hi); -EINVAL when malformed. */
static int for_each_range(const char *s, void (*fn)(void *ctx, long lo, long hi), void *ctx)
{
	while (*s && *s != '\n') {
		long lo, hi;

		if (parse_cpu(&s, &lo))
			return -EINVAL;
		hi = lo;
		if (*s == '-') {
			s++;
			if (parse_cpu(&s, &hi) || hi < lo)
				return -EINVAL;
		}
		fn(ctx, lo, hi);
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return 0;
}

struct mark {
	bool *online;
	int n;
};

static void mark_range(void *ctx, long lo, long hi)
{
	struct mark *m = ctx;

	for (long c = lo; c <= hi && c < m->n; c++)
		m->online[c] = true;
}

int cpu_list_parse(const char *s, bool *online, int n)
{
	struct mark m = {online, n};

	memset(online, 0, (size_t)n * sizeof(*online));
	return for_each_range(s, mark_range, &m);
}

static void count_range(void *ctx, long lo, long hi)
{
	*(long *)ctx += hi - lo + 1;
}

int cpu_list_count(const char *s)
{
	long n = 0;
	int err = for_each_range(s, count_range, &n);

	return err ? err : (int)n;
}

int cpu_list_format(const bool *on, int n, char *buf, size_t size)
{
	size_t len = 0;

	if (!size)
		return -ENAMETOOLONG;
	buf[0] = '\0';
	for (int lo = 0; lo < n; lo++) {
		int hi = lo, w;

		if (!on[lo])
			continue;
		while (hi + 1 < n && on[hi + 1])
			hi++;
		if (hi == lo)
			w = snprintf(buf + len, size - len, "%s%d", len ? "," : "", lo);
		else
			w = snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "", lo, hi);
		if (w < 0 || (size_t)w >= size - len)
			return -ENAMETOOLONG;
		len += (size_t)w;
		lo = hi;
	}
	return 0;
}
