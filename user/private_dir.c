// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "private_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int private_dir_open(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd, e;

	if (mkdir(path, 0700) && errno != EEXIST) {
		e = errno;
		snprintf(err, errlen, "creating %s: %s", path, strerror(e));
		return -e;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "opening %s: %s", path,
			 e == ELOOP || e == ENOTDIR ? "not a directory (a symlink is refused)"
						    : strerror(e));
		return -e;
	}
	if (fstat(fd, &st)) {
		e = errno;
		close(fd);
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(
			err, errlen,
			"%s belongs to uid %u with mode %04o: refused, since it must be the agent's "
			"alone (uid %u, writable by no one else); chown and chmod 0700 it, or "
			"remove it",
			path, (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777),
			(unsigned int)geteuid());
		close(fd);
		return -EPERM;
	}
	if ((st.st_mode & 077) && fchmod(fd, st.st_mode & 0700)) {
		e = errno;
		close(fd);
		snprintf(err, errlen, "chmod go= %s: %s", path, strerror(e));
		return -e;
	}
	return fd;
}
