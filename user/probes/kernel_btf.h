/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Questions about the running kernel's types, answered from its BTF. */
#ifndef QOSLET_PROBES_KERNEL_BTF_H
#define QOSLET_PROBES_KERNEL_BTF_H

#include <stdbool.h>

/*
 * Does the kernel's `struct s` have a member `m`? false when it does not,
 * or when kernel BTF cannot be read (then CO-RE cannot load anything).
 */
bool kernel_struct_has_member(const char *s, const char *m);

#endif
