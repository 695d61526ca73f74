/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Strings read from the first bytes of a JSON document too large to parse
 * whole (a list page or a watch event over the size bound): enough to name
 * the object that is skipped and to go past it. The API server writes an
 * object's fields in its Go struct's order, so a list's metadata
 * (resourceVersion, continue) comes before its items, and an object's
 * metadata.name, namespace, uid and resourceVersion before its labels,
 * annotations, spec and status: the owner-controlled parts. A key inside a
 * JSON string has its quotes escaped, so "key":" found outside a string is
 * a real member; the first one after the anchor is taken.
 */
#ifndef QOSLET_KUBE_JSON_HEAD_H
#define QOSLET_KUBE_JSON_HEAD_H

#include <stdbool.h>
#include <stddef.h>

/* How many bytes of an oversized document are kept to read these from. */
#define JSON_HEAD_MAX 4096

/*
 * The string value of the first "key" member after the first occurrence of
 * anchor (NULL: from the start) in head[0..n). False when there is none in
 * those bytes, it is cut off, holds an escape, or does not fit out.
 */
bool json_head_string(const char *head, size_t n, const char *anchor, const char *key, char *out,
		      size_t size);

#endif
