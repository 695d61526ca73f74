// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int array_grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t want = *cap ? 2 * *cap : 16;
	void *p;

	if (n < *cap)
		return 0;
	if (want > SIZE_MAX / size)
		return -ENOMEM;
	p = realloc(*v, want * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = want;
	return 0;
}
