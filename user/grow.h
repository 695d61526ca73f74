/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Growable arrays: the one realloc-doubling step every list in qoslet uses. */
#ifndef QOSLET_GROW_H
#define QOSLET_GROW_H

#include <stddef.h>

/*
 * Makes room for element n (0-based) of size bytes in *v, whose capacity is
 * *cap elements: doubles it (from 16) when full. 0, or -ENOMEM with *v and
 * *cap unchanged.
 */
int array_grow(void **v, size_t *cap, size_t n, size_t size);

/* Makes room for n elements at once (exactly n when it must grow). 0 or -ENOMEM, as above. */
int array_reserve(void **v, size_t *cap, size_t n, size_t size);

#endif
