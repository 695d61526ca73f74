// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/bpf_atomics.h"

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <unistd.h>

bool bpf_has_cmpxchg(void)
{
	/* r0 = 0; *(u64 *)(r10 - 8) = r0; r1 = 0; r0 = cmpxchg(r10 - 8, r0, r1); exit */
	static const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0},
		{.code = BPF_STX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_10, .off = -8},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1},
		{.code = BPF_STX | BPF_DW | BPF_ATOMIC,
		 .dst_reg = BPF_REG_10,
		 .src_reg = BPF_REG_1,
		 .off = -8,
		 .imm = BPF_CMPXCHG},
		{.code = BPF_JMP | BPF_EXIT},
	};
	static int known = -1;

	if (known < 0) {
		int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
				       sizeof(insns) / sizeof(insns[0]), NULL);

		known = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	return known;
}
