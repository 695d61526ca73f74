/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The memory-stall probe (bpf/memstall.bpf.c): direct and memcg reclaim
 * stalls and OOM kills per cgroup. Fills CG_MEMSTALL, the snapshot's OOM
 * events (drained from a ring buffer) and its memstall_drops.
 */
#ifndef QOSLET_PROBES_MEMSTALL_H
#define QOSLET_PROBES_MEMSTALL_H

#include "probes/probes.h"

extern const struct probe_ops memstall_probe_ops;

#endif
