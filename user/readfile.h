/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading the small text files of cgroupfs, procfs and sysfs. */
#ifndef QOSLET_READFILE_H
#define QOSLET_READFILE_H

#include <stddef.h>

/*
 * Reads the file `path` (relative to dirfd, or AT_FDCWD) with one read():
 * kernel pseudo-files are generated whole on the first read. buf is
 * NUL-terminated. Returns 0 or -errno.
 */
int read_file_at(int dirfd, const char *path, char *buf, size_t size);

#endif
