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

/*
 * Does tracepoint `tp` pass a `struct s *` as its argument `arg` (0-based,
 * as BPF_PROG sees them)? Read from the btf_trace_<tp> typedef; false when
 * it does not, or when kernel BTF cannot be read.
 */
bool kernel_tp_arg_is_struct_ptr(const char *tp, int arg, const char *s);

/*
 * Frees the parsed kernel BTF. libbpf parses its own copy while it loads a
 * BPF object: release ours before that, or the agent's peak memory holds
 * both. The next question parses it again.
 */
void kernel_btf_release(void);

#endif
