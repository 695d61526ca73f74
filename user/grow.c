// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int array_grow(void **v, size_t *cap, size_t n, size_t size)
{
	return n < *cap ? 0 : array_reserve(v, cap, *cap ? 2 * *cap : 16, size);
}

int array_reserve(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n <= *cap)
		return 0;
	if (n > SIZE_MAX / size)
		return -ENOMEM;
	p = realloc(*v, n * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}
