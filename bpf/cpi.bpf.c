// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The cpi probe's object: its maps and the cgroup-removal hooks. Its
 * context-switch step (bpf/cpi_switch.bpf.h) runs in the shared
 * sched_switch program, bpf/switch.bpf.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "cpi_switch.bpf.h"

/* A removed cgroup's entry leaves the map with it, so churn cannot fill the map. */
SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(btf_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	__u64 id = cgrp->kn->id;

	if (cgroup_is_ours_btf(cgrp))
		bpf_map_delete_elem(&cpi_usage, &id);
	return 0;
}

SEC("raw_tp/cgroup_rmdir")
int BPF_PROG(raw_cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	__u64 id = BPF_CORE_READ(cgrp, kn, id);

	if (cgroup_is_ours_raw(cgrp))
		bpf_map_delete_elem(&cpi_usage, &id);
	return 0;
}
