// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/cg_map.h"

#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "log.h"
#include "probes/kernel_btf.h"

/* Whether the kernel's BPF hash maps may make elements under the run-queue lock. */
static bool cg_maps_on_demand(void)
{
	/*
	 * The allocator's own type, as the BPF side asks it
	 * (bpf_core_type_exists): both read the same BTF, so they agree, and a
	 * distribution kernel that took the allocator in a backport counts.
	 */
	static int known = -1;

	if (known < 0)
		known = kernel_has_struct("bpf_mem_alloc");
	return known;
}

int cg_map_prepare(struct bpf_map *map)
{
	static bool said;
	int err;

	if (cg_maps_on_demand())
		return 0;
	if (bpf_map__type(map) == BPF_MAP_TYPE_PERCPU_HASH) {
		err = bpf_map__set_type(map, BPF_MAP_TYPE_HASH);
		if (err)
			return err;
	}
	err = bpf_map__set_map_flags(map, bpf_map__map_flags(map) & ~BPF_F_NO_PREALLOC);
	if (!err && !said) {
		said = true;
		log_info("this kernel has no BPF memory allocator (6.1): the per-cgroup maps are "
			 "preallocated and shared by the CPUs, since making an element under the "
			 "run-queue lock could deadlock a CPU");
	}
	return err;
}

int cg_map_ncpus(const struct bpf_map *map, int ncpus)
{
	return bpf_map__type(map) == BPF_MAP_TYPE_PERCPU_HASH ? ncpus : 1;
}
