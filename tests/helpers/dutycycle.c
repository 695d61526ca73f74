// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dutycycle WORK_US SLEEP_US SECONDS
 *
 * A load generator for the integration tests and benchmarks: busy-spins
 * WORK_US microseconds of wall-clock time (CLOCK_MONOTONIC), then sleeps
 * SLEEP_US microseconds, over and over for SECONDS (fractions allowed), then
 * exits 0. Every sleep ends in a wakeup, so the task's run-queue waits are
 * predictable: one per cycle when its CPU is free, longer ones when it is not.
 * SLEEP_US 0 spins without sleeping (a pure CPU hog); WORK_US 0 only sleeps.
 * A bad argument prints usage on stderr and exits 2.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_SEC  1000000000ULL
/* One hour: keeps every product below in range and catches typos. */
#define MAX_USEC (3600ULL * 1000000ULL)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static int parse_us(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > MAX_USEC)
		return -1;
	*out = v;
	return 0;
}

static int parse_seconds(const char *s, uint64_t *out_ns)
{
	double v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > MAX_USEC / 1e6)
		return -1;
	*out_ns = (uint64_t)(v * 1e9);
	return 0;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec req = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};
	struct timespec rem;

	while (nanosleep(&req, &rem) && errno == EINTR)
		req = rem;
}

int main(int argc, char **argv)
{
	uint64_t work_us, sleep_us, duration_ns, work_ns, sleep_for_ns, now, end;

	if (argc != 4 || parse_us(argv[1], &work_us) || parse_us(argv[2], &sleep_us) ||
	    parse_seconds(argv[3], &duration_ns) || (!work_us && !sleep_us)) {
		fprintf(stderr, "usage: dutycycle WORK_US SLEEP_US SECONDS\n"
				"  busy-spin WORK_US us, sleep SLEEP_US us, repeat for SECONDS\n"
				"  (WORK_US and SLEEP_US are whole microseconds, not both 0)\n");
		return 2;
	}
	work_ns = work_us * NSEC_PER_USEC;
	sleep_for_ns = sleep_us * NSEC_PER_USEC;

	now = now_ns();
	end = now + duration_ns;
	while (now < end) {
		uint64_t stop = now + work_ns;

		if (stop > end)
			stop = end;
		while (now < stop)
			now = now_ns();
		if (sleep_for_ns && now < end) {
			uint64_t left = end - now;

			sleep_ns(sleep_for_ns < left ? sleep_for_ns : left);
		}
		now = now_ns();
	}
	return 0;
}
