// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPU time and CPI per cgroup, from one pair of counting perf events per
 * CPU (not per CPU and container, as koordlet does).
 *
 * Each CPU keeps an open period: since its start, the CPU has run tasks of
 * one cgroup only. When a switch hands the CPU to another cgroup (or the
 * period is PERIOD_MAX_NS old), the CPU's two events are read: what they
 * grew by during the period is charged to its cgroup, with the period's
 * length (cpu_ns). Switches between tasks of one cgroup cost no counter
 * read, the most expensive step (two helper calls into perf). The idle
 * task is charged nothing. Both counter deltas are published together
 * or not at all: a slice whose reading failed at either end, or whose event
 * never reached the PMU, is counted in cpi_drops instead of half-published.
 *
 * User space opens the events (hardware cycles/instructions, or software
 * stand-ins) and fills the two perf event arrays, index = CPU.
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
