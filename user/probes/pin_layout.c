// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/pin_layout.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define PIN_MAP_ENTRY(map, revision) [PIN_MAP_##map] = {#map, revision},
static const struct {
	const char *name;
	unsigned int revision;
} pinned_maps[PIN_MAP_NR] = {PIN_MAPS(PIN_MAP_ENTRY)};
#undef PIN_MAP_ENTRY

unsigned int pin_revision(const char *name)
{
	for (size_t i = 0; i < PIN_MAP_NR; i++)
		if (!strcmp(pinned_maps[i].name, name))
			return pinned_maps[i].revision;
	return 0;
}

const char *pin_map_name(size_t i)
{
	return i < PIN_MAP_NR ? pinned_maps[i].name : NULL;
}

const char *pin_action_name(enum pin_action action)
{
	static const char *const names[] = {
		[PIN_CREATE] = "created",
		[PIN_REUSE] = "kept",
		[PIN_MIGRATE] = "migrated",
		[PIN_REPLACE] = "replaced",
	};

	return names[action];
}

/* An appending writer that remembers running out of room. */
struct out {
	char *buf;
	size_t len, used;
	bool full;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full || !o->len) {
		o->full = true;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->used) {
		o->buf[o->used] = '\0'; /* whole pieces or nothing: never half a word */
		o->full = true;
	} else {
		o->used += n;
	}
}

/* Nesting deeper than this is malformed BTF, not a map value. */
#define MAX_DEPTH 32

static int put_type(const struct btf *btf, __u32 id, struct out *o, int depth)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	if (!t || depth > MAX_DEPTH)
		return -EINVAL;
	/* Names of types and typedefs differ between vmlinux.h and uapi headers. */
	while (btf_is_typedef(t) || btf_is_mod(t)) {
		t = btf__type_by_id(btf, t->type);
		if (!t || ++depth > MAX_DEPTH)
			return -EINVAL;
	}
	if (btf_is_int(t)) {
		put(o, "%c%u", btf_int_encoding(t) & BTF_INT_SIGNED ? 's' : 'u', t->size);
		if (btf_int_bits(t) != t->size * 8 || btf_int_offset(t))
			put(o, ":%u+%u", btf_int_bits(t), btf_int_offset(t));
	} else if (btf_is_any_enum(t)) {
		put(o, "e%u", t->size);
	} else if (btf_is_float(t)) {
		put(o, "f%u", t->size);
	} else if (btf_is_ptr(t)) {
		put(o, "p");
	} else if (btf_is_array(t)) {
		put(o, "[%u]", btf_array(t)->nelems);
		return put_type(btf, btf_array(t)->type, o, depth + 1);
	} else if (btf_is_composite(t)) {
		const struct btf_member *m = btf_members(t);

		put(o, "%s{", btf_is_union(t) ? "union" : "");
		for (int i = 0; i < btf_vlen(t); i++, m++) {
			const char *name = btf__name_by_offset(btf, m->name_off);
			int err;

			put(o, "%s%s:", i ? "," : "", name ? name : "");
			err = put_type(btf, m->type, o, depth + 1);
			if (err)
				return err;
			put(o, "@%u", btf_member_bit_offset(t, i));
			if (btf_member_bitfield_size(t, i))
				put(o, ":%u", btf_member_bitfield_size(t, i));
		}
		put(o, "}%u", t->size);
	} else {
		return -EINVAL; /* void, functions, forward declarations: not data */
	}
	return 0;
}

int pin_btf_layout(const struct btf *btf, __u32 id, char *buf, size_t len)
{
	struct out o = {.buf = buf, .len = len};
	int err;

	if (!len)
		return -E2BIG;
	buf[0] = '\0';
	err = put_type(btf, id, &o, 0);
	if (err)
		return err;
	return o.full ? -E2BIG : 0;
}

/* Kinds of map whose entries copy into one another: same key and value buffers. */
static int copy_class(__u32 type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
		return 1;
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return 2;
	case BPF_MAP_TYPE_ARRAY:
		return 3;
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return 4;
	default:
		return 0; /* ring buffers, storage, fds: nothing to copy */
	}
}

static const char *type_name(__u32 type)
{
	const char *s = libbpf_bpf_map_type_str(type);

	return s ? s : "unknown";
}

static bool same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/* "what A, now B", with a separator after earlier differences. */
static void differs(struct out *o, const char *what, const char *a, const char *b)
{
	put(o, "%s%s %s, now %s", o->used ? "; " : "", what, a ? a : "without BTF", b);
}

static void differs_u(struct out *o, const char *what, const char *fmt, __u32 a, __u32 b)
{
	char x[16], y[16];

	snprintf(x, sizeof(x), fmt, a);
	snprintf(y, sizeof(y), fmt, b);
	differs(o, what, x, y);
}

enum pin_action pin_decide(const struct pin_map *want, const struct pin_map *found, char *why,
			   size_t len)
{
	const struct pin_shape *w = &want->shape, *f;
	struct out o = {.buf = why, .len = len};
	bool entries_differ;

	if (len)
		why[0] = '\0';
	if (!found)
		return PIN_CREATE;
	f = &found->shape;
	/* What the entries are: any difference makes the old ones unreadable. */
	entries_differ = true;
	if (f->key_size != w->key_size)
		differs_u(&o, "key size", "%u", f->key_size, w->key_size);
	else if (f->value_size != w->value_size)
		differs_u(&o, "value size", "%u", f->value_size, w->value_size);
	else if (want->key_layout && !same(found->key_layout, want->key_layout))
		differs(&o, "key layout", found->key_layout, want->key_layout);
	else if (want->value_layout && !same(found->value_layout, want->value_layout))
		differs(&o, "value layout", found->value_layout, want->value_layout);
	else if (found->revision != want->revision)
		differs_u(&o, "revision", "%u", found->revision, want->revision);
	else
		entries_differ = false;
	if (entries_differ)
		return PIN_REPLACE;
	if (!memcmp(f, w, sizeof(*w)))
		return PIN_REUSE;
	/* Where the entries live: a new map of the wanted shape can take them. */
	if (f->type != w->type)
		differs(&o, "type", type_name(f->type), type_name(w->type));
	if (f->max_entries != w->max_entries)
		differs_u(&o, "max_entries", "%u", f->max_entries, w->max_entries);
	if (f->flags != w->flags)
		differs_u(&o, "flags", "0x%x", f->flags, w->flags);
	if (!copy_class(f->type) || copy_class(f->type) != copy_class(w->type)) {
		put(&o, ": its entries cannot be copied");
		return PIN_REPLACE;
	}
	return PIN_MIGRATE;
}
