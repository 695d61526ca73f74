/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Questions about the running kernel's types, answered from its BTF. */
#ifndef QOSLET_PROBES_KERNEL_BTF_H
#define QOSLET_PROBES_KERNEL_BTF_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_object_open_opts;

/*
 * Does the kernel's `struct s` have a member `m`? false when it does not,
 * or when kernel BTF cannot be read (then CO-RE cannot load anything).
 */
bool kernel_struct_has_member(const char *s, const char *m);

/*
 * Does the kernel have a `struct s`? The cut-down BTF (below) keeps a type
 * only when a BPF object names it: ask only of those.
 */
bool kernel_has_struct(const char *s);

/*
 * May a program under a run-queue lock create task storage (6.4)? User
 * space's side of bpf/task_storage.bpf.h, asked of the same BTF: which
 * stamp maps the sched_switch and wake-up programs use.
 */
bool kernel_task_storage_under_rq_lock(void);

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

/* One BPF object's ELF, as its skeleton embeds it. */
struct kernel_btf_object {
	const void *elf;
	size_t size;
};

/*
 * The cut-down kernel BTF (btf_small.h) for this boot and these objects:
 * looked for in $QOSLET_BTF_DIR (default /run/qoslet); when there is none,
 * the full BTF is parsed (the questions above keep it until
 * kernel_btf_release()), cut and written there for later processes. With
 * `use`, the questions above and libbpf's CO-RE relocations
 * (kernel_btf_open_opts()) read the cut-down copy from then on. Returns
 * whether it is in use; what kept it from being written or used is logged,
 * and the full BTF serves then.
 */
bool kernel_btf_small_setup(const struct kernel_btf_object *objs, size_t n, bool use);

/* A skeleton's open options: the cut-down BTF when in use, else NULL (the full one). */
const struct bpf_object_open_opts *kernel_btf_open_opts(void);

#endif
