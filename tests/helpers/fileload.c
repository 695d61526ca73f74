// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fileload make FILE MIB
 * fileload rand [-r RATE] [-w] [-a] [-d] [-j] FILE SECS
 * fileload stream [-d] [-j] FILE SECS
 *
 * Page-cache loads for the memory suppression test and benchmark
 * (tests/integration/test_agent_mem_suppress.sh, scripts/bench/memcolo.sh),
 * and with -d (O_DIRECT: every read goes to the disk, past the page cache)
 * disk loads for the I/O suppression test (test_agent_io_suppress.sh).
 *
 * make: writes FILE of MIB MiB (a distinct byte pattern per page, so no
 * filesystem can share or skip them), fsyncs it, and drops its pages from
 * the page cache, so that the first reader is charged for them, not the
 * writer.
 *
 * rand: the LS load. Random 4 KiB pread()s over FILE, one at a time, for
 * SECS seconds; with -a after POSIX_FADV_RANDOM (no readahead). With -w
 * the whole file is read once first (its pages are then the reader's
 * cache: a hot working set). With -r RATE the reads are paced at RATE a
 * second (each waits for its due time), else each goes as soon as the last
 * returns. A read's latency is the pread() call's own time: a page-cache
 * hit, or a refault's wait for the disk, which is what memory interference
 * changes; the wake-up before it is left out (on a shared machine
 * scheduling noise would swamp the cache's microseconds). The percentiles
 * (nearest rank, to within 3%: see bucket()) are over the run and for each
 * second of it (a transient, such as the seconds before a controller acts,
 * shows apart from the steady state).
 *
 * stream: the BE load. Sequential 1 MiB read()s through FILE, from the
 * start again at its end, for SECS seconds: with FILE larger than the
 * memory it may use, the page cache churns. Reports MB/s, over the run and
 * per second.
 *
 * SIGTERM or SIGINT ends a rand or stream run early, with its report over
 * the seconds it ran (a test need not know beforehand how long it needs).
 *
 * Output: a text summary, or with -j one JSON object:
 *   rand:   {"mode","start_ns" (CLOCK_REALTIME of the first counted read),"secs","reads","rate",
 *            "latency_us":{"p50","p99","p999","max"},
 *            "p99_per_s_us":[...],"p50_per_s_us":[...],"reads_per_s":[...]}
 *   stream: {"mode","secs","bytes","mb_per_s","mb_per_s_per_s":[...]}
 * Exit 0 after the run, 1 on a failed call, 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE	 4096
#define CHUNK	 (1024 * 1024)
#define MAX_MIB	 (256 * 1024) /* a typo must not fill the disk */
#define MAX_SECS 3600
#define NS_PER_S 1000000000ull

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* The whole seconds a run lasted (its last one counted when begun): what its report covers. */
static unsigned ran_secs(uint64_t start, uint64_t t, unsigned secs)
{
	uint64_t s = (t - start + NS_PER_S - 1) / NS_PER_S;

	return s < secs ? (unsigned)s : secs;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / NS_PER_S), .tv_nsec = (long)(t % NS_PER_S)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int usage(FILE *f)
{
	fprintf(f, "usage: fileload make FILE MIB\n"
		   "       fileload rand [-r RATE] [-w] [-a] [-d] [-j] FILE SECS\n"
		   "       fileload stream [-d] [-j] FILE SECS\n");
	return f == stdout ? 0 : 2;
}

static int fail(const char *what, const char *file)
{
	fprintf(stderr, "fileload: %s %s: %s\n", what, file, strerror(errno));
	return 1;
}

static int make(const char *file, long mib)
{
	static char buf[CHUNK];
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return fail("creating", file);
	for (long m = 0; m < mib; m++) {
		for (size_t p = 0; p < CHUNK; p += PAGE)
			memset(buf + p, (int)((m * (CHUNK / PAGE) + p / PAGE) % 251) + 1, PAGE);
		if (write(fd, buf, CHUNK) != CHUNK) {
			close(fd);
			return fail("writing", file);
		}
	}
	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) {
		close(fd);
		return fail("syncing", file);
	}
	close(fd);
	return 0;
}

/*
 * Latencies go into a log-linear histogram: 32 buckets per power of two, so
 * a bucket's upper bound, which the percentiles report, is within 1/32 (3%)
 * of every value in it; values under 32 ns are exact. Constant memory: a
 * closed-loop reader keeping every sample grew by megabytes a second, and
 * in a memory-limited cgroup that pushed out its own page cache.
 */
#define SUB_BITS 5
#define SUB	 (1u << SUB_BITS)
#define BUCKETS	 ((64 - SUB_BITS + 1) * SUB)

static unsigned bucket(uint64_t v)
{
	unsigned e;

	if (v < SUB)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v); /* >= SUB_BITS */
	return (e - SUB_BITS + 1) * SUB + (unsigned)((v >> (e - SUB_BITS)) & (SUB - 1));
}

/* The largest value of bucket b. */
static uint64_t bucket_max(unsigned b)
{
	unsigned e = b / SUB + SUB_BITS - 1;

	if (b < SUB)
		return b;
	return ((uint64_t)(SUB + b % SUB + 1) << (e - SUB_BITS)) - 1;
}

/* Nearest rank: the smallest bucket with at least p of the n samples at or below it. */
static uint64_t pct(const uint32_t *h, uint64_t n, double p)
{
	uint64_t rank = (uint64_t)(p * (double)n + 0.999999), seen = 0;

	if (!n)
		return 0;
	for (unsigned b = 0; b < BUCKETS; b++) {
		seen += h[b];
		if (seen >= (rank ? rank : 1))
			return bucket_max(b);
	}
	return bucket_max(BUCKETS - 1);
}

/* xorshift64: the offsets need no quality beyond covering the file evenly. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* O_DIRECT wants buffers aligned to the disk's block: a page is aligned for every disk. */
static char page_buf[PAGE] __attribute__((aligned(PAGE)));
static char chunk_buf[CHUNK] __attribute__((aligned(PAGE)));

static int rand_reads(const char *file, unsigned secs, double rate, bool warm, bool advise,
		      int direct, bool json)
{
	char *buf = page_buf;
	struct stat st;
	uint64_t pages, seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid(), start, end, due;
	uint64_t n = 0, max = 0, *per_n;
	uint32_t *all, *per; /* the run's histogram; then one per second */
	struct timespec
		start_rt; /* when the reads that count began, for lining them up with others */
	int fd = open(file, O_RDONLY | O_CLOEXEC | direct);

	if (fd < 0 || fstat(fd, &st))
		return fail("opening", file);
	/*
	 * -a: the reader says it reads at random, as databases do: no
	 * readahead, so each read brings in its own page (an order-0 folio,
	 * touched once: on the inactive list, where reclaim finds it). Without
	 * it, readahead's large folios take several reads each and are soon
	 * active: the kernel then counts their refaults as thrashing (memory
	 * stall), not as I/O waits.
	 */
	if (advise && posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM))
		return fail("advising", file);
	pages = (uint64_t)st.st_size / PAGE;
	if (!pages) {
		fprintf(stderr, "fileload: %s is smaller than a page\n", file);
		return 1;
	}
	/* 1 MiB reads: fast, and still one order-0 folio a page with -a */
	if (warm) {
		ssize_t r;

		for (off_t off = 0; (r = pread(fd, chunk_buf, CHUNK, off)) > 0; off += r)
			;
		if (r < 0)
			return fail("reading", file);
	}
	all = calloc(BUCKETS, sizeof(*all));
	per = calloc((size_t)secs * BUCKETS, sizeof(*per));
	per_n = calloc(secs, sizeof(*per_n));
	if (!all || !per || !per_n)
		return fail("allocating for", file);
	start = now_ns();
	clock_gettime(CLOCK_REALTIME, &start_rt);
	end = start + secs * NS_PER_S;
	due = start;
	for (;;) {
		uint64_t t0, t1;

		if (rate > 0) {
			due += (uint64_t)(NS_PER_S / rate);
			if (due >= end)
				break;
			sleep_until(due);
		}
		t0 = now_ns();
		if (t0 >= end || stop)
			break;
		if (pread(fd, buf, PAGE, (off_t)(rnd(&seed) % pages * PAGE)) != PAGE) {
			if (errno == EINTR && stop)
				break;
			return fail("reading", file);
		}
		t1 = now_ns();
		{
			uint64_t v = t1 - t0, sec = (t0 - start) / NS_PER_S;
			unsigned b = bucket(v);

			all[b]++;
			per[sec * BUCKETS + b]++;
			per_n[sec]++;
			n++;
			max = v > max ? v : max;
		}
	}
	secs = ran_secs(start, now_ns(), secs);
	close(fd);
	if (json) {
		printf("{\"mode\":\"rand\",\"start_ns\":%llu,\"secs\":%u,\"reads\":%llu,\"rate\":%.0f,"
		       "\"latency_us\":{\"p50\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f},"
		       "\"p99_per_s_us\":[",
		       (unsigned long long)start_rt.tv_sec * NS_PER_S +
			       (unsigned long long)start_rt.tv_nsec,
		       secs, (unsigned long long)n, rate, pct(all, n, 0.5) / 1e3,
		       pct(all, n, 0.99) / 1e3, pct(all, n, 0.999) / 1e3, max / 1e3);
		for (unsigned s = 0; s < secs; s++)
			printf("%s%.1f", s ? "," : "",
			       pct(per + (size_t)s * BUCKETS, per_n[s], 0.99) / 1e3);
		printf("],\"p50_per_s_us\":[");
		for (unsigned s = 0; s < secs; s++)
			printf("%s%.1f", s ? "," : "",
			       pct(per + (size_t)s * BUCKETS, per_n[s], 0.5) / 1e3);
		printf("],\"reads_per_s\":[");
		for (unsigned s = 0; s < secs; s++)
			printf("%s%llu", s ? "," : "", (unsigned long long)per_n[s]);
		printf("]}\n");
	} else {
		printf("%llu reads in %u s: p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us\n",
		       (unsigned long long)n, secs, pct(all, n, 0.5) / 1e3, pct(all, n, 0.99) / 1e3,
		       pct(all, n, 0.999) / 1e3, max / 1e3);
	}
	free(all);
	free(per);
	free(per_n);
	return 0;
}

static int stream(const char *file, unsigned secs, int direct, bool json)
{
	char *buf = chunk_buf;
	uint64_t start, end, total = 0, *per = calloc(secs, sizeof(*per));
	int fd = open(file, O_RDONLY | O_CLOEXEC | direct);

	if (fd < 0 || !per)
		return fail("opening", file);
	start = now_ns();
	end = start + secs * NS_PER_S;
	for (uint64_t t = start; t < end && !stop; t = now_ns()) {
		ssize_t r = read(fd, buf, CHUNK);

		if (r < 0 && errno == EINTR && stop)
			break;
		if (r < 0)
			return fail("reading", file);
		if (r == 0) {
			if (lseek(fd, 0, SEEK_SET))
				return fail("rewinding", file);
			continue;
		}
		total += (uint64_t)r;
		per[(t - start) / NS_PER_S] += (uint64_t)r;
	}
	secs = ran_secs(start, now_ns(), secs);
	close(fd);
	if (json) {
		printf("{\"mode\":\"stream\",\"secs\":%u,\"bytes\":%llu,\"mb_per_s\":%.1f,"
		       "\"mb_per_s_per_s\":[",
		       secs, (unsigned long long)total, (double)total / 1e6 / secs);
		for (unsigned s = 0; s < secs; s++)
			printf("%s%.1f", s ? "," : "", (double)per[s] / 1e6);
		printf("]}\n");
	} else {
		printf("%llu bytes in %u s: %.1f MB/s\n", (unsigned long long)total, secs,
		       (double)total / 1e6 / secs);
	}
	free(per);
	return 0;
}

int main(int argc, char **argv)
{
	double rate = 0;
	bool warm = false, advise = false, json = false;
	int direct = 0;
	const char *mode;
	char *end;
	long n;
	int c;

	struct sigaction sa = {.sa_handler = on_stop};

	if (argc < 2)
		return usage(stderr);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	mode = argv[1];
	if (!strcmp(mode, "-h") || !strcmp(mode, "--help"))
		return usage(stdout);
	optind = 2;
	while ((c = getopt(argc, argv, "r:wadjh")) != -1) {
		switch (c) {
		case 'r':
			rate = strtod(optarg, &end);
			if (*end || rate <= 0 || rate > 1e7)
				return usage(stderr);
			break;
		case 'w':
			warm = true;
			break;
		case 'a':
			advise = true;
			break;
		case 'd':
			direct = O_DIRECT;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			return usage(stdout);
		default:
			return usage(stderr);
		}
	}
	if (argc - optind != 2)
		return usage(stderr);
	n = strtol(argv[optind + 1], &end, 10);
	if (*end || n <= 0)
		return usage(stderr);
	if (!strcmp(mode, "make"))
		return n > MAX_MIB ? usage(stderr) : make(argv[optind], n);
	if (n > MAX_SECS)
		return usage(stderr);
	if (!strcmp(mode, "rand"))
		return rand_reads(argv[optind], (unsigned)n, rate, warm, advise, direct, json);
	if (!strcmp(mode, "stream") && !warm && !advise && rate == 0)
		return stream(argv[optind], (unsigned)n, direct, json);
	return usage(stderr);
}
