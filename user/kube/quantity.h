/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kubernetes resource quantities ("512Mi", "1.5G", "129e6", "250m"), the
 * way resource.Quantity writes them: a decimal number, then a binary
 * (Ki..Ei) or decimal (n, u, m, k, M..E) suffix or an exponent.
 */
#ifndef QOSLET_KUBE_QUANTITY_H
#define QOSLET_KUBE_QUANTITY_H

#include <stdint.h>

/*
 * The quantity as a whole number, rounded up as the API rounds memory
 * (0.5 -> 1). -EINVAL when s is not a quantity, -ERANGE when it is negative
 * or does not fit.
 */
int kube_quantity_parse(const char *s, uint64_t *out);

/* The same in thousandths ("250m" is 250, "2" 2000): CPU requests, to tell whole CPUs. */
int kube_quantity_parse_milli(const char *s, uint64_t *out);

#endif
