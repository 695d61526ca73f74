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

/*
 * Parses cpu.stat text into s's nr_periods, nr_throttled, throttled_ns,
 * nr_bursts and burst_ns (events is left alone). Both formats are read:
 * v1 (throttled_time and burst_time in ns) and v2 (throttled_usec and
 * burst_usec), and keys may come in any order among others (v2 starts with
 * usage_usec...). Missing keys read as 0 (burst lines are 5.14+). Returns 0,
 * or -EINVAL when the text has no nr_periods line (no bandwidth control).
 */
int cpustat_parse(const char *text, struct throttle_sample *s);

/*
 * Does this quota file say the cgroup has a quota? v1: cpu.cfs_quota_us is
 * a number, -1 for none; v2: cpu.max is "QUOTA PERIOD", "max" for none.
 */
bool cpustat_has_quota(enum qoslet_cgroup_mode mode, const char *text);

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
