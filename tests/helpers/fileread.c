// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fileread MODE FILE SECS
 *
 * A page-cache load for the memory interference tests, through buffered
 * reads (the page cache is the point):
 *   random  4 KiB preads at random page-aligned offsets of FILE, closed
 *           loop: the latency-sensitive reader whose hot file a streamer
 *           evicts;
 *   stream  1 MiB reads from the start to the end of FILE, over and over:
 *           the streamer whose page-cache churn evicts everyone else's.
 * Runs SECS seconds, then prints one JSON line:
 *   {"mode","ops","bytes","secs","p50_us","p99_us"} (latencies of each read
 * call, exact, nearest rank; random mode keeps up to 2^22 of them, the
 * first ones), and exits 0. A bad argument prints usage and exits 2; a
 * failed read exits 1.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE	 4096
#define CHUNK	 (1 << 20)
#define KEEP_MAX (1u << 22)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank of sorted v[0..n), in us. */
static double rank_us(const uint32_t *v, size_t n, double q)
{
	size_t i = n ? (size_t)(q * (double)n + 0.999999) : 0;

	if (!n)
		return 0;
	return v[i ? i - 1 : 0] / 1000.0;
}

int main(int argc, char **argv)
{
	static char buf[CHUNK];
	uint64_t ops = 0, bytes = 0, t0, end, pages;
	uint32_t *lat = NULL;
	size_t kept = 0;
	bool random_mode;
	off_t off = 0;
	struct stat st;
	int fd;

	if (argc != 4 || (strcmp(argv[1], "random") && strcmp(argv[1], "stream")) ||
	    atoi(argv[3]) <= 0) {
		fprintf(stderr, "usage: fileread random|stream FILE SECS\n");
		return 2;
	}
	random_mode = !strcmp(argv[1], "random");
	fd = open(argv[2], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || st.st_size < PAGE) {
		perror(argv[2]);
		return 2;
	}
	pages = (uint64_t)st.st_size / PAGE;
	lat = malloc(KEEP_MAX * sizeof(*lat));
	if (!lat)
		return 1;
	srandom((unsigned int)getpid());
	t0 = now_ns();
	end = t0 + (uint64_t)atoi(argv[3]) * 1000000000ULL;
	for (uint64_t t = t0; t < end;) {
		size_t len = random_mode ? PAGE : CHUNK;
		uint64_t start = t;
		ssize_t n;

		if (random_mode)
			off = (off_t)(((uint64_t)random() << 16 ^ (uint64_t)random()) % pages) *
			      PAGE;
		n = pread(fd, buf, len, off);
		if (n < 0) {
			perror("pread");
			return 1;
		}
		t = now_ns();
		if (random_mode && kept < KEEP_MAX)
			lat[kept++] = (uint32_t)(t - start > UINT32_MAX ? UINT32_MAX : t - start);
		ops++;
		bytes += (uint64_t)n;
		if (!random_mode)
			off = n < (ssize_t)len ? 0 : off + n;
	}
	qsort(lat, kept, sizeof(*lat), cmp_u32);
	printf("{\"mode\":\"%s\",\"ops\":%llu,\"bytes\":%llu,\"secs\":%.3f,\"p50_us\":%.1f,"
	       "\"p99_us\":%.1f}\n",
	       argv[1], (unsigned long long)ops, (unsigned long long)bytes, (now_ns() - t0) / 1e9,
	       rank_us(lat, kept, 0.50), rank_us(lat, kept, 0.99));
	free(lat);
	return 0;
}
