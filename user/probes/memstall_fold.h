/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The memstall probe's pure steps, from the kernel's layouts (bpf/memstall.h)
 * to the snapshot's (user/snapshot.h): no BPF calls, unit-tested.
 */
#ifndef QOSLET_PROBES_MEMSTALL_FOLD_H
#define QOSLET_PROBES_MEMSTALL_FOLD_H

#include <stdint.h>

#include "snapshot.h"

/* out = the sum of one cgroup's ncpus per-CPU records. */
void memstall_fold(struct memstall_sample *out, const struct memstall_cg *percpu, int ncpus);

/*
 * One ring-buffer record as a snapshot event: its CLOCK_MONOTONIC stamp
 * moved to CLOCK_REALTIME by adding mono_to_real_ns (realtime - monotonic,
 * read together), and comm always NUL-terminated.
 */
void memstall_oom_event(struct oom_event *out, const struct memstall_oom *in,
			int64_t mono_to_real_ns);

#endif
