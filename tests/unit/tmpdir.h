/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A unit test's own directory under /tmp (a stand-in cgroup tree, pin
 * directory or state directory), and its removal with everything in it.
 */
#ifndef QOSLET_TESTS_TMPDIR_H
#define QOSLET_TESTS_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static int tmpdir_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Makes /tmp/qoslet-test-NAME-XXXXXX into dir (size bytes); 0 or -1. */
static inline int tmpdir_make(char *dir, size_t size, const char *name)
{
	snprintf(dir, size, "/tmp/qoslet-test-%s-XXXXXX", name);
	return mkdtemp(dir) ? 0 : -1;
}

/* Removes dir and all below it, not following symlinks; 0 or -1. */
static inline int tmpdir_remove(const char *dir)
{
	return nftw(dir, tmpdir_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
