/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The per-cgroup maps' layout for the running kernel (bpf/cg_maps.bpf.h
 * says why): per-CPU hashes that grow on demand where the kernel has BPF's
 * memory allocator (6.1), preallocated hashes shared by the CPUs before.
 */
#ifndef QOSLET_PROBES_CG_MAP_H
#define QOSLET_PROBES_CG_MAP_H

#include <stdbool.h>

struct bpf_map;

/*
 * Before its object loads: a per-cgroup map as the kernel needs it (said
 * once per process where it is preallocated). Returns 0 or -errno.
 */
int cg_map_prepare(struct bpf_map *map);

/* How many values an entry of the loaded map holds: the CPUs of a per-CPU map, else 1. */
int cg_map_ncpus(const struct bpf_map *map, int ncpus);

#endif
