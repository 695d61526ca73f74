// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wakelat INTERVAL_US SECONDS [WORK_US]
 *
 * A latency-sensitive service for the benchmarks: one SCHED_OTHER thread
 * that sleeps until absolute deadlines INTERVAL_US apart on CLOCK_MONOTONIC
 * (clock_nanosleep TIMER_ABSTIME, as cyclictest does) for SECONDS, and
 * measures how late each wake-up is: timer slack + wake-up + run-queue wait.
 * With WORK_US, each wake-up is followed by WORK_US of busy CPU work (wall
 * clock), as a request handler does: a service that uses a share of a CPU
 * competes with CPU hogs for it, where a bare wake-up loop barely does.
 * A wake-up that misses later deadlines skips them, so one long stall is one
 * sample, as in cyclictest.
 *
 * Why not cyclictest: it always makes its main thread SCHED_FIFO, which the
 * kernel refuses (EPERM) in a v1 cpu cgroup without an RT budget, as in every
 * kubepods cgroup; and a normal service has no RT thread. Samples are kept in
 * memory and printed at the end, so nothing but the measured loop runs while
 * measuring, and any window or quantile can be computed afterwards.
 *
 * Output on stdout, after the run:
 *   start_realtime_ns <CLOCK_REALTIME of the first deadline>
 *   <deadline offset from the first, us> <latency, ns>    (one line a sample)
 * A bad argument prints usage on stderr and exits 2; 1 on a failed call.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_SEC  1000000000ULL
/* An hour: catches typos; the sample array (16 bytes a deadline) is allocated up front. */
#define MAX_SECONDS 3600.0
#define MAX_USEC    1000000UL

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* A whole number of microseconds, 0 to max: digits only. */
static int parse_us(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || *end || *out > max ? -1 : 0;
}

static int sleep_until(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / NSEC_PER_SEC),
			      .tv_nsec = (long)(t % NSEC_PER_SEC)};
	int err;

	/* clock_nanosleep returns the error number rather than setting errno. */
	while ((err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR)
		;
	return err;
}

int main(int argc, char **argv)
{
	uint64_t interval_ns, work_ns = 0, first, next, end, real0, now, *lat, *at;
	unsigned long interval_us, work_us = 0;
	size_t n = 0, cap;
	double secs = 0;
	char *rest;

	if (argc == 3 || argc == 4) {
		errno = 0;
		secs = strtod(argv[2], &rest);
		if (errno || *rest)
			secs = 0;
	}
	if ((argc != 3 && argc != 4) || parse_us(argv[1], MAX_USEC, &interval_us) || !interval_us ||
	    (argc == 4 && parse_us(argv[3], interval_us - 1, &work_us)) || !(secs > 0) ||
	    secs > MAX_SECONDS) {
		fprintf(stderr,
			"usage: wakelat INTERVAL_US SECONDS [WORK_US]\n"
			"  wake up every INTERVAL_US (1 to 1000000) for SECONDS (at most "
			"3600), working WORK_US (less than INTERVAL_US) after each wake-up;\n"
			"  print each wake-up's lateness\n");
		return 2;
	}
	interval_ns = interval_us * NSEC_PER_USEC;
	work_ns = work_us * NSEC_PER_USEC;
	cap = (size_t)(secs * 1e9 / (double)interval_ns) + 1;
	lat = malloc(cap * sizeof(*lat));
	at = malloc(cap * sizeof(*at));
	if (!lat || !at) {
		perror("wakelat: malloc");
		return 1;
	}

	first = now_ns(CLOCK_MONOTONIC) + interval_ns;
	real0 = now_ns(CLOCK_REALTIME) + interval_ns;
	end = first + (uint64_t)(secs * 1e9);
	/* Every sample consumes at least one deadline below end, and cap counts them
	 * all (+1 for rounding): the n < cap test only guards against float error. */
	for (next = first; next < end && n < cap; next += interval_ns) {
		int err = sleep_until(next);

		if (err) {
			fprintf(stderr, "wakelat: clock_nanosleep: %d\n", err);
			return 1;
		}
		now = now_ns(CLOCK_MONOTONIC);
		lat[n] = now - next;
		at[n++] = next - first;
		for (uint64_t stop = now + work_ns; now < stop;)
			now = now_ns(CLOCK_MONOTONIC);
		while (next + interval_ns <= now)
			next += interval_ns;
	}

	printf("start_realtime_ns %llu\n", (unsigned long long)real0);
	for (size_t i = 0; i < n; i++)
		printf("%llu %llu\n", (unsigned long long)(at[i] / NSEC_PER_USEC),
		       (unsigned long long)lat[i]);
	free(lat);
	free(at);
	return fflush(stdout) ? 1 : 0;
}
