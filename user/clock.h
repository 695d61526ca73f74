/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading a clock in nanoseconds. */
#ifndef QOSLET_CLOCK_H
#define QOSLET_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
