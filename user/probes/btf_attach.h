/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tp_btf, fentry and fexit programs loaded without the full kernel BTF.
 *
 * The kernel takes a tracing program with the id, in its own BTF, of what
 * it attaches to (the typedef btf_trace_<tp>, or the traced function).
 * libbpf 1.1 finds that id by parsing the whole vmlinux BTF for every
 * object that has such a program, even when the object's CO-RE
 * relocations read the cut-down copy (btf_small.h): 5 MiB read and held
 * twice, tens of milliseconds of CPU, per object. The cut-down copy carries
 * those ids (BTF_SMALL_ATTACH_IDS). The section handlers registered here,
 * in place of libbpf's own, open such a program as a raw tracepoint (a type
 * that needs no kernel BTF, so libbpf parses none) and make it the tracing
 * program it is, with the id from the copy, just before it is loaded.
 */
#ifndef QOSLET_PROBES_BTF_ATTACH_H
#define QOSLET_PROBES_BTF_ATTACH_H

#include <stdbool.h>

struct btf;

/*
 * Registers the handlers for this process, for every object opened from
 * then on, with the attach ids of `small`. false when `small` has none (a
 * copy an older qoslet cut): libbpf's own handlers stay, and parse the full
 * BTF for tracing programs.
 */
bool btf_attach_register(const struct btf *small);

/* Whether the handlers are in place: tracing programs then cost no parse of the full BTF. */
bool btf_attach_registered(void);

#endif
