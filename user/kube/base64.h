/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Standard base64 (RFC 4648, with padding), as Kubernetes writes []byte
 * fields in YAML and JSON (certificate-authority-data, client-key-data,
 * an exec plugin's cluster info). Written here: none of the libraries the
 * binary links has it (libcurl's is internal, OpenSSL is only libcurl's).
 */
#ifndef QOSLET_KUBE_BASE64_H
#define QOSLET_KUBE_BASE64_H

#include <stddef.h>

/*
 * Decodes in[n] (whitespace and line breaks between groups ignored, as Go's
 * decoder does for YAML's folded lines) into a new NUL-terminated buffer.
 * Returns it with *len set, or NULL (errno EINVAL for a bad character or
 * length, ENOMEM).
 */
char *base64_decode(const char *in, size_t n, size_t *len);

/* in[n] encoded into a new NUL-terminated string; NULL when out of memory. */
char *base64_encode(const char *in, size_t n);

#endif
