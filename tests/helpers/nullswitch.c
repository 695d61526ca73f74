// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nullswitch
 *
 * Attaches an empty tp_btf program to sched_switch and holds it until
 * SIGINT or SIGTERM: the floor of scripts/bench/ctxsw.sh, what entering any
 * BPF program from that tracepoint costs before it does anything. The
 * program is two instructions (return 0) loaded from here, so the floor
 * needs no BPF object and measures no map, helper or load of ours.
 * Prints "attached" once the link exists. Exits 0 on a signal, 1 after
 * saying what failed.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
	struct sigaction sa = {.sa_handler = on_signal};
	struct btf *vmlinux = btf__load_vmlinux_btf();
	int id, prog, link;

	if (!vmlinux) {
		fprintf(stderr, "nullswitch: no kernel BTF: %s\n", strerror(errno));
		return 1;
	}
	/* tp_btf programs name their tracepoint by its BTF typedef. */
	id = btf__find_by_name_kind(vmlinux, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	btf__free(vmlinux);
	if (id < 0) {
		fprintf(stderr, "nullswitch: btf_trace_sched_switch not in kernel BTF\n");
		return 1;
	}
	opts.attach_btf_id = id;
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "null_switch", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), &opts);
	if (prog < 0) {
		fprintf(stderr, "nullswitch: load: %s\n", strerror(-prog));
		return 1;
	}
	link = bpf_raw_tracepoint_open(NULL, prog);
	if (link < 0) {
		fprintf(stderr, "nullswitch: attach: %s\n", strerror(-link));
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	return 0;
}
