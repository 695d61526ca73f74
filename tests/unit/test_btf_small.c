// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The cut-down kernel BTF: what goes in whole, what as an empty shell, what not at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "probes/btf_small.h"

/*
 * A kernel in miniature: struct task (named by the object, under a CO-RE
 * flavour) holds an int, a pointer to struct mm (not named: a shell), an
 * anonymous union, a __rcu-tagged pointer back to itself and a bitfield;
 * struct unrelated is referred to by nothing the object names; the
 * tracepoint typedef btf_trace_tick points at (void *, struct mm *), as
 * does the function tick_fn (12).
 */
static struct btf *kernel(void)
{
	struct btf *b = btf__new_empty();
	int i32, task, mm, anon, tag, ptr_tag, proto, ptr_proto, unrelated;

	i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED); /* 1 */
	task = btf__add_struct(b, "task", 32);		 /* 2 */
	btf__add_field(b, "pid", i32, 0, 0);
	btf__add_field(b, "mm", 4, 64, 0);
	btf__add_field(b, "", 5, 128, 0);
	btf__add_field(b, "parent", 8, 192, 0);
	btf__add_field(b, "flag", i32, 224, 1);
	mm = btf__add_struct(b, "mm", 64); /* 3 */
	btf__add_field(b, "users", i32, 0, 0);
	btf__add_ptr(b, mm);		   /* 4 */
	anon = btf__add_union(b, NULL, 8); /* 5 */
	btf__add_field(b, "a", i32, 0, 0);
	btf__add_field(b, "b", 4, 0, 0);
	tag = btf__add_type_tag(b, "rcu", task); /* 6 */
	(void)tag;
	unrelated = btf__add_struct(b, "unrelated", 8); /* 7 */
	btf__add_field(b, "x", i32, 0, 0);
	ptr_tag = btf__add_ptr(b, 6);	   /* 8 */
	proto = btf__add_func_proto(b, 0); /* 9 */
	btf__add_func_param(b, "ctx", 0);
	btf__add_func_param(b, "mm", 4);
	ptr_proto = btf__add_ptr(b, proto);		     /* 10 */
	btf__add_typedef(b, "btf_trace_tick", ptr_proto);    /* 11 */
	btf__add_func(b, "tick_fn", BTF_FUNC_GLOBAL, proto); /* 12 */
	assert_int_equal(task, 2);
	assert_int_equal(anon, 5);
	assert_int_equal(unrelated, 7);
	assert_int_equal(ptr_tag, 8);
	return b;
}

/* What a BPF object says: it reads task, under the flavour task___v2. */
static struct btf *object(void)
{
	struct btf *b = btf__new_empty();
	int i32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);

	btf__add_struct(b, "task___v2", 4);
	btf__add_field(b, "pid", i32, 0, 0);
	return b;
}

static const struct btf_type *find(const struct btf *b, const char *name, int kind)
{
	int id = btf__find_by_name_kind(b, name, kind);

	return id > 0 ? btf__type_by_id(b, id) : NULL;
}

static const char *member_type_name(const struct btf *b, const struct btf_type *t, int i)
{
	const struct btf_type *m = btf__type_by_id(b, btf_members(t)[i].type);

	return btf__name_by_offset(b, m->name_off);
}

static void test_named_whole_others_shells(void **state)
{
	struct btf *full = kernel(), *local = object(), *small;
	const struct btf *locals[] = {local};
	const struct btf_type *task, *mm, *anon, *parent;

	(void)state;
	small = btf_small_build(full, locals, 1, NULL, 0, NULL, 0);
	assert_non_null(small);

	/* The object's flavour names the kernel's task: whole, every member at its offset. */
	task = find(small, "task", BTF_KIND_STRUCT);
	assert_non_null(task);
	assert_int_equal(task->size, 32);
	assert_int_equal(btf_vlen(task), 5);
	assert_string_equal(btf__name_by_offset(small, btf_members(task)[4].name_off), "flag");
	assert_int_equal(btf_member_bit_offset(task, 4), 224);
	assert_int_equal(btf_member_bitfield_size(task, 4), 1);

	/* mm is named by nothing the object has: a shell of its size. */
	mm = find(small, "mm", BTF_KIND_STRUCT);
	assert_non_null(mm);
	assert_int_equal(mm->size, 64);
	assert_int_equal(btf_vlen(mm), 0);

	/* The anonymous union inside task comes whole. */
	anon = btf__type_by_id(small, btf_members(task)[2].type);
	assert_true(btf_is_union(anon));
	assert_int_equal(btf_vlen(anon), 2);

	/* The tag is dropped: parent points at task itself. */
	parent = btf__type_by_id(small, btf_members(task)[3].type);
	assert_true(btf_is_ptr(parent));
	assert_ptr_equal(btf__type_by_id(small, parent->type), task);
	assert_string_equal(member_type_name(small, task, 0), "int");

	/* Nothing refers to unrelated, and no tracepoint was asked for. */
	assert_null(find(small, "unrelated", BTF_KIND_STRUCT));
	assert_null(find(small, "btf_trace_tick", BTF_KIND_TYPEDEF));
	btf__free(small);
	btf__free(local);
	btf__free(full);
}

static void test_tracepoint_typedef(void **state)
{
	struct btf *full = kernel(), *local = btf__new_empty(), *small;
	const struct btf *locals[] = {local};
	const char *tps[] = {"tick", "absent"};
	const struct btf_type *t, *proto;

	(void)state;
	small = btf_small_build(full, locals, 1, tps, 2, NULL, 0);
	assert_non_null(small);
	t = find(small, "btf_trace_tick", BTF_KIND_TYPEDEF);
	assert_non_null(t);
	proto = btf__type_by_id(small, btf__type_by_id(small, t->type)->type);
	assert_true(btf_is_func_proto(proto));
	assert_int_equal(btf_vlen(proto), 2);
	/* Its argument's struct is named by no object: a shell, enough to say what it points at. */
	t = btf__type_by_id(small, btf_params(proto)[1].type);
	assert_true(btf_is_ptr(t));
	t = btf__type_by_id(small, t->type);
	assert_string_equal(btf__name_by_offset(small, t->name_off), "mm");
	assert_int_equal(btf_vlen(t), 0);
	/* task is not reachable from it and not named. */
	assert_null(find(small, "task", BTF_KIND_STRUCT));
	btf__free(small);
	btf__free(local);
	btf__free(full);
}

/* The kernel's ids of the attach targets it has, under their names; the renumbered types stay. */
static void test_attach_ids(void **state)
{
	struct btf *full = kernel(), *local = btf__new_empty(), *small;
	const struct btf *locals[] = {local};
	const char *tps[] = {"tick", "absent"}, *funcs[] = {"tick_fn", "absent_fn"};
	const struct btf_type *ids;
	const struct btf_enum *e;

	(void)state;
	small = btf_small_build(full, locals, 1, tps, 2, funcs, 2);
	assert_non_null(small);
	ids = find(small, BTF_SMALL_ATTACH_IDS, BTF_KIND_ENUM);
	assert_non_null(ids);
	assert_int_equal(btf_vlen(ids), 2);
	e = btf_enum(ids);
	assert_string_equal(btf__name_by_offset(small, e[0].name_off), "btf_trace_tick");
	assert_int_equal(e[0].val, 11);
	assert_string_equal(btf__name_by_offset(small, e[1].name_off), "tick_fn");
	assert_int_equal(e[1].val, 12);
	/* In the cut the typedef has an id of its own, not the kernel's. */
	assert_int_not_equal(btf__find_by_name_kind(small, "btf_trace_tick", BTF_KIND_TYPEDEF), 11);
	assert_null(find(small, "tick_fn", BTF_KIND_FUNC));
	btf__free(small);
	btf__free(local);
	btf__free(full);
}

/* The written copy is a BTF libbpf parses back as it was. */
static void test_round_trip(void **state)
{
	struct btf *full = kernel(), *local = object(), *small, *back;
	const struct btf *locals[] = {local};
	const void *raw;
	__u32 size;

	(void)state;
	small = btf_small_build(full, locals, 1, NULL, 0, NULL, 0);
	assert_non_null(small);
	raw = btf__raw_data(small, &size);
	assert_non_null(raw);
	back = btf__new(raw, size);
	assert_int_equal(libbpf_get_error(back), 0);
	assert_int_equal(btf__type_cnt(back), btf__type_cnt(small));
	assert_non_null(find(back, "task", BTF_KIND_STRUCT));
	btf__free(back);
	btf__free(small);
	btf__free(local);
	btf__free(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_whole_others_shells),
		cmocka_unit_test(test_tracepoint_typedef),
		cmocka_unit_test(test_attach_ids),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
