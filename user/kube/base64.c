// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/base64.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int sextet(char c)
{
	const char *p = c ? strchr(alphabet, c) : NULL;

	return p ? (int)(p - alphabet) : -1;
}

char *base64_decode(const char *in, size_t n, size_t *len)
{
	char *out = malloc(n / 4 * 3 + 4);
	uint32_t acc = 0;
	size_t got = 0, o = 0, pad = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int v;

		if (strchr(" \t\r\n", in[i]) && in[i])
			continue;
		if (in[i] == '=') {
			pad++;
			v = 0;
		} else if (pad || (v = sextet(in[i])) < 0) {
			goto bad; /* data after padding, or not base64 */
		}
		acc = acc << 6 | (uint32_t)v;
		if (++got % 4)
			continue;
		if (pad > 2)
			goto bad;
		out[o++] = (char)(acc >> 16);
		if (pad < 2)
			out[o++] = (char)(acc >> 8);
		if (pad < 1)
			out[o++] = (char)acc;
		acc = 0;
	}
	if (got % 4)
		goto bad;
	out[o] = '\0';
	*len = o;
	return out;
bad:
	free(out);
	errno = EINVAL;
	return NULL;
}

char *base64_encode(const char *in, size_t n)
{
	const unsigned char *u = (const unsigned char *)in;
	char *out = malloc((n + 2) / 3 * 4 + 1), *p = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t acc = (uint32_t)u[i] << 16 | (i + 1 < n ? (uint32_t)u[i + 1] << 8 : 0) |
			       (i + 2 < n ? u[i + 2] : 0);

		*p++ = alphabet[acc >> 18 & 63];
		*p++ = alphabet[acc >> 12 & 63];
		*p++ = i + 1 < n ? alphabet[acc >> 6 & 63] : '=';
		*p++ = i + 2 < n ? alphabet[acc & 63] : '=';
	}
	*p = '\0';
	return out;
}
