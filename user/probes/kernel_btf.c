// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kernel_btf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <string.h>

/* Loaded once: parsing vmlinux BTF takes milliseconds and megabytes. */
static struct btf *vmlinux_btf(void)
{
	static struct btf *btf;
	static bool tried;

	if (!tried) {
		tried = true;
		btf = btf__load_vmlinux_btf();
		if (libbpf_get_error(btf))
			btf = NULL;
	}
	return btf;
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
