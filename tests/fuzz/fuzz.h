/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the libFuzzer targets (tests/fuzz/fuzz_*.c) share: a check that
 * aborts, which libFuzzer reports as a crash and saves the input for, and a
 * file for code that reads its input from a path. docs/fuzzing.md.
 */
#ifndef QOSLET_FUZZ_H
#define QOSLET_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A property of the code under test that must hold for every input. */
#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz check failed: %s: ", #cond);                         \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/*
 * A path whose file holds exactly data[size]. One memfd serves every call
 * (rewritten each time), so fuzzing writes nothing to disk; the path opens
 * a new file description at offset 0, as a real file would.
 */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static char path[32];
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		FUZZ_CHECK(fd >= 0, "memfd_create: %m");
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	FUZZ_CHECK(!ftruncate(fd, 0) && pwrite(fd, data, size, 0) == (ssize_t)size,
		   "cannot write %zu bytes to the memfd: %m", size);
	return path;
}

#endif
