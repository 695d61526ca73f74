/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel BTF cut down to what qoslet's BPF objects name, for libbpf's CO-RE
 * relocations (bpf_object_open_opts.btf_custom_path). libbpf 1.1 holds the
 * whole vmlinux BTF twice while it parses it (5 MiB each on 6.x), which is
 * most of a CLI view's peak memory; the cut-down copy is a few hundred KiB.
 */
#ifndef QOSLET_PROBES_BTF_SMALL_H
#define QOSLET_PROBES_BTF_SMALL_H

#include <stddef.h>

struct btf;

/*
 * A new BTF (btf__free() it) holding, from the kernel's `full`:
 *  - in full, every struct, union, enum and typedef named as in one of the
 *    `locals` (the BPF objects' own BTF; a CO-RE flavour "x___y" names x),
 *    and the typedefs btf_trace_<tp> for every `tps[i]`;
 *  - in full, what those members and typedefs are made of, through
 *    pointers, arrays, qualifiers and function prototypes, and every
 *    anonymous struct or union among them;
 *  - as an empty struct or union of the same name and size, any other
 *    named struct or union they refer to.
 *  - the enum BTF_SMALL_ATTACH_IDS: for every tracepoint's typedef
 *    btf_trace_<tp> and every function in `funcs` (fentry and fexit
 *    targets) that `full` has, an enumerator of that name whose value is
 *    its id in `full`: what the kernel takes as a tracing program's
 *    attach_btf_id (btf_attach.h), which the cut renumbers away.
 * CO-RE matches types by name and members by name and offset, and looks
 * inside a type only where an object names it, so every relocation comes
 * out as against `full` (tests/integration/test_btf_small.sh checks this
 * instruction by instruction). NULL with errno set on failure.
 */
struct btf *btf_small_build(const struct btf *full, const struct btf *const *locals,
			    size_t n_locals, const char *const *tps, size_t n_tps,
			    const char *const *funcs, size_t n_funcs);

/* The enum of kernel BTF ids of the attach targets; no kernel type has this name. */
#define BTF_SMALL_ATTACH_IDS "qoslet_attach_btf_ids"

#endif
