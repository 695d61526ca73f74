// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * memhog MIB [HOLD_SECONDS]
 *
 * A memory load for the integration tests: maps MIB MiB of anonymous
 * memory and writes every page of it, one after another, then holds it for
 * HOLD_SECONDS (default 0) and exits 0. Inside a memory cgroup whose limit
 * is below MIB (and without swap) the charges force memcg reclaim, then the
 * cgroup's OOM killer, which picks this process: the test expects it to die
 * of SIGKILL. Prints "touched N MiB" to stdout every 16 MiB, so a test can
 * tell how far it got. A bad argument prints usage on stderr and exits 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1024UL * 1024UL)
/* Beyond any test machine's memory: catches typos before they hurt the node. */
#define MAX_MIB 65536UL

static int usage(void)
{
	fprintf(stderr, "usage: memhog MIB [HOLD_SECONDS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned long mib, hold = 0;
	long page = sysconf(_SC_PAGESIZE);
	char *end, *mem;

	if (argc < 2 || argc > 3)
		return usage();
	mib = strtoul(argv[1], &end, 10);
	if (*end || !mib || mib > MAX_MIB)
		return usage();
	if (argc == 3) {
		hold = strtoul(argv[2], &end, 10);
		if (*end)
			return usage();
	}
	mem = mmap(NULL, mib * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("memhog: mmap");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (unsigned long off = 0; off < mib * MIB; off += page) {
		mem[off] = 1; /* the first write faults the page in and charges it */
		if ((off + page) % (16 * MIB) == 0)
			printf("touched %lu MiB\n", (off + page) / MIB);
	}
	sleep(hold);
	return 0;
}
