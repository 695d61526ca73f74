// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/json_head.h"

#include <stdio.h>
#include <string.h>

/* memmem() over a bounded, maybe NUL-free buffer. */
static const char *find(const char *s, size_t n, const char *what)
{
	return memmem(s, n, what, strlen(what));
}

bool json_head_string(const char *head, size_t n, const char *anchor, const char *key, char *out,
		      size_t size)
{
	const char *end = head + n, *at = head, *v, *q;
	char member[80];

	if (anchor) {
		at = find(head, n, anchor);
		if (!at)
			return false;
		at += strlen(anchor);
	}
	if ((size_t)snprintf(member, sizeof(member), "\"%s\":\"", key) >= sizeof(member))
		return false;
	v = find(at, (size_t)(end - at), member);
	if (!v)
		return false;
	v += strlen(member);
	q = memchr(v, '"', (size_t)(end - v));
	/* cut off, or an escape this reader does not undo: not a value it can trust */
	if (!q || memchr(v, '\\', (size_t)(q - v)) || (size_t)(q - v) >= size)
		return false;
	memcpy(out, v, (size_t)(q - v));
	out[q - v] = '\0';
	return true;
}
