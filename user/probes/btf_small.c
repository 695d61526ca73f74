// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/btf_small.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cut: which types of `full` go in, under which id, and how. */
struct cut {
	const struct btf *full;
	__u32 *new_id; /* full's id -> the new BTF's id; 0: not in (yet) */
	bool *shell;   /* the type goes in as an empty struct/union */
	__u32 *order;  /* full's ids by new id (order[0] is new id 1) */
	__u32 n;       /* types taken so far */
	char **names;  /* the objects' names, sorted, for bsearch */
	size_t n_names;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool named(const struct cut *c, const char *name)
{
	return name[0] && bsearch(&name, c->names, c->n_names, sizeof(*c->names), cmp_str);
}

/* The objects' type names, CO-RE flavours ("task_struct___old") under their kernel name. */
static int collect_names(struct cut *c, const struct btf *const *locals, size_t n_locals)
{
	size_t cap = 0;

	for (size_t i = 0; i < n_locals; i++)
		cap += btf__type_cnt(locals[i]);
	c->names = calloc(cap ? cap : 1, sizeof(*c->names));
	if (!c->names)
		return -ENOMEM;
	for (size_t i = 0; i < n_locals; i++) {
		for (__u32 id = 1; id < btf__type_cnt(locals[i]); id++) {
			const struct btf_type *t = btf__type_by_id(locals[i], id);
			const char *name = btf__name_by_offset(locals[i], t->name_off);
			const char *flavour;

			if (!name || !name[0])
				continue;
			flavour = strstr(name, "___");
			c->names[c->n_names] =
				flavour ? strndup(name, flavour - name) : strdup(name);
			if (!c->names[c->n_names++])
				return -ENOMEM;
		}
	}
	qsort(c->names, c->n_names, sizeof(*c->names), cmp_str);
	return 0;
}

/* Takes full's type `id` (what it is made of follows, through the worklist). */
static void take(struct cut *c, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(c->full, id);
	__u32 asked = id;

	/* Type tags (__rcu, __user) say nothing CO-RE reads: the tagged type stands in. */
	while (id && btf_is_type_tag(t)) {
		id = t->type;
		t = btf__type_by_id(c->full, id);
	}
	if (id && !c->new_id[id]) {
		const char *name = btf__name_by_offset(c->full, t->name_off);

		/* An anonymous one is part of a named one: CO-RE looks into it for members. */
		c->shell[id] = btf_is_composite(t) && name[0] && !named(c, name);
		c->order[c->n++] = id;
		c->new_id[id] = c->n;
	}
	c->new_id[asked] = c->new_id[id];
}

/* Takes every type that full's type `id` refers to. */
static void take_parts(struct cut *c, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(c->full, id);

	if (c->shell[id])
		return;
	if (btf_is_composite(t)) {
		const struct btf_member *m = btf_members(t);

		for (__u16 i = 0; i < btf_vlen(t); i++)
			take(c, m[i].type);
	} else if (btf_is_func_proto(t)) {
		const struct btf_param *p = btf_params(t);

		take(c, t->type);
		for (__u16 i = 0; i < btf_vlen(t); i++)
			take(c, p[i].type);
	} else if (btf_is_array(t)) {
		take(c, btf_array(t)->type);
		take(c, btf_array(t)->index_type);
	} else if (btf_is_ptr(t) || btf_is_mod(t) || btf_is_typedef(t)) {
		take(c, t->type);
	}
}

/* Writes full's type `id` into `out` as the cut took it: its new id, or a negative errno. */
static int emit(const struct cut *c, struct btf *out, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(c->full, id);
	const char *name = btf__name_by_offset(c->full, t->name_off);
	int err;

	switch (btf_kind(t)) {
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION: {
		const struct btf_member *m = btf_members(t);

		err = btf_is_struct(t) ? btf__add_struct(out, name, t->size)
				       : btf__add_union(out, name, t->size);
		for (__u16 i = 0; err > 0 && !c->shell[id] && i < btf_vlen(t); i++) {
			int e = btf__add_field(out, btf__name_by_offset(c->full, m[i].name_off),
					       c->new_id[m[i].type], btf_member_bit_offset(t, i),
					       btf_member_bitfield_size(t, i));

			err = e < 0 ? e : err;
		}
		return err;
	}
	case BTF_KIND_FUNC_PROTO: {
		const struct btf_param *p = btf_params(t);

		err = btf__add_func_proto(out, c->new_id[t->type]);
		for (__u16 i = 0; err > 0 && i < btf_vlen(t); i++) {
			int e = btf__add_func_param(out,
						    btf__name_by_offset(c->full, p[i].name_off),
						    c->new_id[p[i].type]);

			err = e < 0 ? e : err;
		}
		return err;
	}
	case BTF_KIND_ARRAY:
		return btf__add_array(out, c->new_id[btf_array(t)->index_type],
				      c->new_id[btf_array(t)->type], btf_array(t)->nelems);
	case BTF_KIND_PTR:
		return btf__add_ptr(out, c->new_id[t->type]);
	case BTF_KIND_TYPEDEF:
		return btf__add_typedef(out, name, c->new_id[t->type]);
	case BTF_KIND_CONST:
		return btf__add_const(out, c->new_id[t->type]);
	case BTF_KIND_VOLATILE:
		return btf__add_volatile(out, c->new_id[t->type]);
	case BTF_KIND_RESTRICT:
		return btf__add_restrict(out, c->new_id[t->type]);
	default: /* int, float, enum, enum64, fwd: nothing to renumber */
		return btf__add_type(out, c->full, t);
	}
}

/* The roots: full's named types the objects name too, and the tracepoints' typedefs. */
static void take_roots(struct cut *c, const char *const *tps, size_t n_tps)
{
	__u32 cnt = btf__type_cnt(c->full);

	for (__u32 id = 1; id < cnt; id++) {
		const struct btf_type *t = btf__type_by_id(c->full, id);

		if ((btf_is_composite(t) || btf_is_any_enum(t) || btf_is_typedef(t)) &&
		    named(c, btf__name_by_offset(c->full, t->name_off)))
			take(c, id);
	}
	for (size_t i = 0; i < n_tps; i++) {
		char name[128];
		int id;

		snprintf(name, sizeof(name), "btf_trace_%s", tps[i]);
		id = btf__find_by_name_kind(c->full, name, BTF_KIND_TYPEDEF);
		if (id > 0)
			take(c, (__u32)id);
	}
}

static void cut_free(struct cut *c)
{
	for (size_t i = 0; i < c->n_names; i++)
		free(c->names[i]);
	free(c->names);
	free(c->new_id);
	free(c->shell);
	free(c->order);
}

/* Adds `name`'s id in full, of kind `kind`, to the attach ids (if full has it). */
static int add_attach_id(struct btf *out, const struct btf *full, const char *name, int kind)
{
	int id = btf__find_by_name_kind(full, name, kind);

	return id > 0 ? btf__add_enum_value(out, name, id) : 0;
}

/* The enum BTF_SMALL_ATTACH_IDS (btf_small.h). */
static int emit_attach_ids(struct btf *out, const struct btf *full, const char *const *tps,
			   size_t n_tps, const char *const *funcs, size_t n_funcs)
{
	int err = btf__add_enum(out, BTF_SMALL_ATTACH_IDS, sizeof(__u32));

	for (size_t i = 0; err >= 0 && i < n_tps; i++) {
		char name[128];

		snprintf(name, sizeof(name), "btf_trace_%s", tps[i]);
		err = add_attach_id(out, full, name, BTF_KIND_TYPEDEF);
	}
	for (size_t i = 0; err >= 0 && i < n_funcs; i++)
		err = add_attach_id(out, full, funcs[i], BTF_KIND_FUNC);
	return err < 0 ? err : 0;
}

struct btf *btf_small_build(const struct btf *full, const struct btf *const *locals,
			    size_t n_locals, const char *const *tps, size_t n_tps,
			    const char *const *funcs, size_t n_funcs)
{
	__u32 cnt = btf__type_cnt(full);
	struct cut c = {.full = full};
	struct btf *out = NULL;
	int err;

	c.new_id = calloc(cnt, sizeof(*c.new_id));
	c.shell = calloc(cnt, sizeof(*c.shell));
	c.order = calloc(cnt, sizeof(*c.order));
	err = c.new_id && c.shell && c.order ? collect_names(&c, locals, n_locals) : -ENOMEM;
	if (!err) {
		take_roots(&c, tps, n_tps);
		/* take() appends to order: this walks what each taken type is made of. */
		for (__u32 k = 0; k < c.n; k++)
			take_parts(&c, c.order[k]);
		out = btf__new_empty();
		err = out ? 0 : -errno;
	}
	for (__u32 k = 0; !err && k < c.n; k++) {
		int id = emit(&c, out, c.order[k]);

		/* Forward references are by the order of taking: each must land on its id. */
		err = id < 0 ? id : (__u32)id != k + 1 ? -EPROTO : 0;
	}
	if (!err)
		err = emit_attach_ids(out, full, tps, n_tps, funcs, n_funcs);
	cut_free(&c);
	if (err) {
		btf__free(out);
		errno = -err;
		return NULL;
	}
	return out;
}
