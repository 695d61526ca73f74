// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * btfcheck SMALL.btf OBJECT.bpf.o...: loads every raw_tp and tp_btf program of each
 * object, one at a time, once with CO-RE against the kernel's full BTF and once
 * against SMALL (qoslet's cut-down copy), and compares the instructions
 * libbpf relocated, map fds aside (each load makes its own maps); a program
 * this kernel refuses against the full BTF (a feature it lacks) is skipped,
 * and said. And for every tp_btf, fentry and fexit program, that the attach
 * id SMALL carries for its target (btf_small.h) is the target's id in the
 * kernel's BTF. Prints one line a program and one an attach target; exits 1
 * if any differs or fails to load against SMALL alone.
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "probes/btf_small.h"
#include "probes/cg_map.h"

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static bool compared(const struct bpf_program *p)
{
	return !strncmp(bpf_program__section_name(p), "raw_tp/", 7) ||
	       !strncmp(bpf_program__section_name(p), "tp_btf/", 7);
}

/* A hash map whose elements the BPF side makes on demand. */
static bool made_on_demand(const struct bpf_map *m)
{
	return (bpf_map__type(m) == BPF_MAP_TYPE_HASH ||
		bpf_map__type(m) == BPF_MAP_TYPE_PERCPU_HASH) &&
	       (bpf_map__map_flags(m) & BPF_F_NO_PREALLOC);
}

/*
 * A map of a type this kernel lacks (task storage before 5.11) is not made: a
 * program that uses one does not load, and is skipped. An on-demand hash map
 * gets the probes' own preparation: before 6.1 a tracing program that uses
 * one as built is unsafe, and the verifier says so with a kernel warning that
 * taints the kernel (a test failure, tests/run.sh).
 */
static int prepare_map(struct bpf_map *m)
{
	if (libbpf_probe_bpf_map_type(bpf_map__type(m), NULL) != 1)
		return bpf_map__set_autocreate(m, false);
	return made_on_demand(m) ? cg_map_prepare(m) : 0;
}

/*
 * The object with program `name` alone loaded, CO-RE against `custom` (NULL:
 * the kernel's BTF), its maps prepared as above.
 */
static struct bpf_object *load(const char *path, const char *custom, const char *name)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = custom);
	struct bpf_object *obj = bpf_object__open_file(path, &opts);
	struct bpf_program *p;
	struct bpf_map *m;
	int err = 0;

	if (libbpf_get_error(obj))
		return NULL;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), name));
	bpf_object__for_each_map(m, obj)
		err = err ?: prepare_map(m);
	if (err || bpf_object__load(obj)) {
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

/* Where the two differ beyond map fds: the first instruction, or -1. */
static long first_difference(const struct bpf_program *a, const struct bpf_program *b)
{
	const struct bpf_insn *x = bpf_program__insns(a), *y = bpf_program__insns(b);
	size_t n = bpf_program__insn_cnt(a);

	if (n != bpf_program__insn_cnt(b))
		return 0;
	for (size_t k = 0; k < n; k++) {
		struct bpf_insn u = x[k], v = y[k];

		if (u.code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    (u.src_reg == BPF_PSEUDO_MAP_FD || u.src_reg == BPF_PSEUDO_MAP_VALUE))
			u.imm = v.imm = 0;
		if (memcmp(&u, &v, sizeof(u)))
			return (long)k;
	}
	return -1;
}

/* The copy's attach id for `name`, or -1. */
static long copy_attach_id(const struct btf *small, const char *name)
{
	int id = btf__find_by_name_kind(small, BTF_SMALL_ATTACH_IDS, BTF_KIND_ENUM);
	const struct btf_type *t = id > 0 ? btf__type_by_id(small, id) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(small, btf_enum(t)[i].name_off), name))
			return btf_enum(t)[i].val;
	return -1;
}

/* Each tracing program's attach target, as the copy and the kernel number it; failures. */
static int check_attach_ids(const char *object, const struct btf *small, const struct btf *kernel,
			    int *targets)
{
	struct bpf_object *obj = bpf_object__open_file(object, NULL);
	struct bpf_program *p;
	int bad = 0;

	if (libbpf_get_error(obj)) {
		printf("FAIL %s: does not open\n", object);
		return 1;
	}
	bpf_object__for_each_program(p, obj) {
		const char *sec = bpf_program__section_name(p), *slash = strchr(sec, '/');
		bool tp = !strncmp(sec, "tp_btf/", 7);
		char name[128];
		long copy;
		int want;

		if (!slash || !(tp || !strncmp(sec, "fentry/", 7) || !strncmp(sec, "fexit/", 6)))
			continue;
		snprintf(name, sizeof(name), "%s%s", tp ? "btf_trace_" : "", slash + 1);
		want = btf__find_by_name_kind(kernel, name, tp ? BTF_KIND_TYPEDEF : BTF_KIND_FUNC);
		copy = copy_attach_id(small, name);
		(*targets)++;
		if (want <= 0 || copy != want) {
			printf("DIFF %s %s: attach id of %s: %ld in the copy, %d in the kernel\n",
			       object, bpf_program__name(p), name, copy, want);
			bad++;
		} else {
			printf("same %s %s: attach id of %s (%d)\n", object, bpf_program__name(p),
			       name, want);
		}
	}
	bpf_object__close(obj);
	return bad;
}

int main(int argc, char **argv)
{
	int bad = 0, progs = 0, targets = 0, skipped = 0;
	struct btf *small, *kernel;

	if (argc < 3) {
		fprintf(stderr, "usage: btfcheck SMALL.btf OBJECT.bpf.o...\n");
		return 2;
	}
	libbpf_set_print(quiet);
	small = btf__parse(argv[1], NULL);
	kernel = btf__load_vmlinux_btf();
	if (libbpf_get_error(small) || libbpf_get_error(kernel)) {
		fprintf(stderr, "btfcheck: cannot read %s or the kernel's BTF\n", argv[1]);
		return 1;
	}
	for (int i = 2; i < argc; i++)
		bad += check_attach_ids(argv[i], small, kernel, &targets);
	btf__free(small);
	btf__free(kernel);
	for (int i = 2; i < argc; i++) {
		struct bpf_object *obj = bpf_object__open_file(argv[i], NULL);
		struct bpf_program *p;

		if (libbpf_get_error(obj)) {
			printf("FAIL %s: does not open\n", argv[i]);
			bad++;
			continue;
		}
		bpf_object__for_each_program(p, obj) {
			const char *name = bpf_program__name(p);
			struct bpf_object *full, *cut;
			long at;

			if (!compared(p))
				continue;
			full = load(argv[i], NULL, name);
			if (!full) {
				/* A kernel feature it needs is missing: the probe falls back too.
				 */
				printf("skip %s %s: does not load on this kernel\n", argv[i], name);
				skipped++;
				continue;
			}
			cut = load(argv[i], argv[1], name);
			progs++;
			at = cut ? first_difference(bpf_object__find_program_by_name(full, name),
						    bpf_object__find_program_by_name(cut, name))
				 : -2;
			if (at == -2)
				printf("FAIL %s %s: did not load against the cut-down BTF\n",
				       argv[i], name);
			else if (at >= 0)
				printf("DIFF %s %s: from instruction %ld\n", argv[i], name, at);
			else
				printf("same %s %s (%zu instructions)\n", argv[i], name,
				       bpf_program__insn_cnt(
					       bpf_object__find_program_by_name(full, name)));
			bad += at != -1;
			bpf_object__close(full);
			bpf_object__close(cut);
		}
		bpf_object__close(obj);
	}
	printf("%d programs and %d attach targets compared, %d failures, %d programs this kernel refuses\n",
	       progs, targets, bad, skipped);
	return bad ? 1 : 0;
}
