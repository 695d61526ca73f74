// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * btfcheck SMALL.btf OBJECT.bpf.o...: loads every raw_tp program of each
 * object twice, once with CO-RE against the kernel's full BTF and once
 * against SMALL (qoslet's cut-down copy), and compares the instructions
 * libbpf relocated, map fds aside (each load makes its own maps). Prints one
 * line a program; exits 1 if any differs or fails to load.
 */
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static struct bpf_object *load(const char *path, const char *custom)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = custom);
	struct bpf_object *obj = bpf_object__open_file(path, &opts);
	struct bpf_program *p;

	if (libbpf_get_error(obj))
		return NULL;
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, !strncmp(bpf_program__section_name(p), "raw_tp/", 7));
	if (bpf_object__load(obj)) {
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

int main(int argc, char **argv)
{
	int bad = 0, progs = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: btfcheck SMALL.btf OBJECT.bpf.o...\n");
		return 2;
	}
	libbpf_set_print(quiet);
	for (int i = 2; i < argc; i++) {
		struct bpf_object *full = load(argv[i], NULL), *small = load(argv[i], argv[1]);
		struct bpf_program *p;

		if (!full || !small) {
			printf("FAIL %s: did not load against the %s BTF\n", argv[i],
			       full ? "cut-down" : "full");
			bad++;
			bpf_object__close(full);
			bpf_object__close(small);
			continue;
		}
		bpf_object__for_each_program(p, full) {
			const struct bpf_program *q;
			long at;

			if (!bpf_program__autoload(p))
				continue;
			q = bpf_object__find_program_by_name(small, bpf_program__name(p));
			at = first_difference(p, q);
			progs++;
			if (at >= 0) {
				printf("DIFF %s %s: from instruction %ld\n", argv[i],
				       bpf_program__name(p), at);
				bad++;
			} else {
				printf("same %s %s (%zu instructions)\n", argv[i],
				       bpf_program__name(p), bpf_program__insn_cnt(p));
			}
		}
		bpf_object__close(full);
		bpf_object__close(small);
	}
	printf("%d programs compared, %d failures\n", progs, bad);
	return bad ? 1 : 0;
}
