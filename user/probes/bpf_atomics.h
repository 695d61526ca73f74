/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Whether the kernel's BPF takes the atomic compare-and-swap instruction. */
#ifndef QOSLET_PROBES_BPF_ATOMICS_H
#define QOSLET_PROBES_BPF_ATOMICS_H

#include <stdbool.h>

/*
 * BPF_CMPXCHG came with the other atomic operations in 5.12. Before, the
 * verifier refuses a program that holds one anywhere, even where a constant
 * skips it, so a program that needs it must be left out, not turned off.
 * Asked once, by loading a program of five instructions.
 */
bool bpf_has_cmpxchg(void);

#endif
