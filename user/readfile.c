// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int read_file_at(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return 0;
}
