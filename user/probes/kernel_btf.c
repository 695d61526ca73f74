// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kernel_btf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>

/*
 * Loaded on first use and kept until kernel_btf_release(): parsing vmlinux
 * BTF takes tens of milliseconds and several megabytes.
 */
static struct btf *cached;
static bool tried;

static struct btf *vmlinux_btf(void)
{
	if (!tried) {
		tried = true;
		cached = btf__load_vmlinux_btf();
		if (libbpf_get_error(cached))
			cached = NULL;
	}
	return cached;
}

void kernel_btf_release(void)
{
	btf__free(cached);
	cached = NULL;
	tried = false;
}

bool kernel_struct_has_member(const char *s, const char *m)
{
	struct btf *btf = vmlinux_btf();
	const struct btf_type *t;
	const struct btf_member *mem;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, s, BTF_KIND_STRUCT);
	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	mem = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, mem++)
		if (!strcmp(btf__name_by_offset(btf, mem->name_off), m))
			return true;
	return false;
}

/* The type behind typedefs and qualifiers. */
static const struct btf_type *skip_mods(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t)))
		t = btf__type_by_id(btf, t->type);
	return t;
}

bool kernel_tp_arg_is_struct_ptr(const char *tp, int arg, const char *s)
{
	struct btf *btf = vmlinux_btf();
	const struct btf_type *t;
	const struct btf_param *params;
	char name[128];
	int id;

	if (!btf)
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return false;
	/* typedef -> pointer -> func proto (void *ctx, the tracepoint's args...) */
	t = skip_mods(btf, id);
	if (!t || !btf_is_ptr(t))
		return false;
	t = skip_mods(btf, t->type);
	if (!t || !btf_is_func_proto(t) || arg + 1 >= btf_vlen(t))
		return false;
	params = btf_params(t);
	t = skip_mods(btf, params[arg + 1].type);
	if (!t || !btf_is_ptr(t))
		return false;
	t = skip_mods(btf, t->type);
	return t && btf_is_struct(t) && !strcmp(btf__name_by_offset(btf, t->name_off), s);
}
