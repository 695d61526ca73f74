/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's own CFS bandwidth counters: cpu.stat of every cgroup that has
 * a CPU quota, read efficiently (the list of quota cgroups is cached and
 * refreshed every few seconds; each cpu.stat is read with one read()).
 */
#ifndef QOSLET_PROBES_CPUSTAT_H
#define QOSLET_PROBES_CPUSTAT_H

#include <stdbool.h>
#include <stdint.h>

#include "cgroup/path.h"
#include "snapshot.h"

struct cpustat_reader;

/* NULL on failure (errno set). */
struct cpustat_reader *cpustat_reader_new(const struct cgroup_fs *fs, struct cgroup_names *names);
void cpustat_reader_free(struct cpustat_reader *r);

/*
 * Calls fn with the cpu.stat counters of every cgroup that has a quota.
 * The quota cgroups are re-listed when the shared name map walked the tree
 * again (cgroups came or went) or the last listing is 30 s older than
 * now_ns (CLOCK_MONOTONIC), so a limit set on an existing cgroup shows up
 * within 30 s. A cgroup removed since is skipped. Returns 0, fn's non-zero
 * value, or -errno. `names` is borrowed, not freed.
 */
int cpustat_reader_read(struct cpustat_reader *r, uint64_t now_ns,
			int (*fn)(void *ctx, uint64_t id, const struct throttle_sample *s),
			void *ctx);

#endif
