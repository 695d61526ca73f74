/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One reading of every probe: the plain data that views, policies and
 * sinks consume. Counters are cumulative since the maps were created;
 * snapshot_delta() turns two readings into one interval.
 */
#ifndef QOSLET_SNAPSHOT_H
#define QOSLET_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "hist.h"

struct cg_sample {
	uint64_t id; /* cgroup id (= inode of its directory) */
	struct rq_hist rq;
};

struct blame_sample {
	uint64_t victim;
	uint64_t culprit; /* QOSLET_CULPRIT_IDLE when the CPU was idle */
	uint64_t wait_ns;
	uint64_t count;
};

struct snapshot {
	uint64_t ts_ns;		   /* CLOCK_REALTIME at reading */
	struct cg_sample *cgroups; /* sorted by id */
	size_t n_cgroups;
	struct blame_sample *blame; /* sorted by (victim, culprit) */
	size_t n_blame;
	uint64_t drops[SCHED_DROP_NR];
};

void snapshot_free(struct snapshot *s);

/* Sorts both arrays into the order documented above. */
void snapshot_sort(struct snapshot *s);

/*
 * out = now - before, keeping only entries that changed in the interval.
 * Entries missing from `before` count from zero. Returns 0 or -ENOMEM.
 */
int snapshot_delta(struct snapshot *out, const struct snapshot *now, const struct snapshot *before);

#endif
