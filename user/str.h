/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Copying strings into fixed buffers without silent truncation. */
#ifndef QOSLET_STR_H
#define QOSLET_STR_H

#include <errno.h>
#include <string.h>

/* Copies src into dst[size]; -ENAMETOOLONG (dst untouched) when it does not fit. */
static inline int str_copy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(dst, src, n + 1);
	return 0;
}

#endif
