/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One reading of every probe: the plain data that views, policies and
 * sinks consume. Counters are cumulative since the probes started counting;
 * snapshot_delta() turns two readings into one interval. Gauges (PSI
 * averages) are carried as read.
 */
#ifndef QOSLET_SNAPSHOT_H
#define QOSLET_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "bpf/sched_maps.h"
#include "bpf/cpi_maps.h"
#include "bpf/memstall_maps.h"

/* Which parts of a cg_sample hold data (a probe that is off leaves its part unset). */
enum cg_part {
	CG_RQ = 1u << 0,       /* run-queue latency: sched probe */
	CG_CPU = 1u << 1,      /* CPU time and the CPI counters: cpi probe */
	CG_THROTTLE = 1u << 2, /* CFS bandwidth: throttle probe */
	CG_MEMSTALL = 1u << 3, /* reclaim stalls and OOM kills: memstall probe */
	CG_PSI = 1u << 4,      /* pressure stall information: psi reader */
};

/*
 * Counts from the two CPI events. In hardware mode numerator = cycles and
 * denominator = instructions; in software mode they are the stand-ins the
 * cpi probe reports (see user/probes/cpi.h), never to be called CPI.
 */
struct cpi_sample {
	uint64_t cpu_ns; /* time the cgroup's tasks ran on a CPU */
	uint64_t numerator;
	uint64_t denominator;
};

/* CFS bandwidth control, as cpu.stat counts it (v1 and v2 alike). */
struct throttle_sample {
	uint64_t nr_periods;
	uint64_t nr_throttled; /* periods in which the cgroup was throttled */
	uint64_t throttled_ns;
	uint64_t nr_bursts;
	uint64_t burst_ns;
	uint64_t events; /* throttle events the probe saw (0 when polling) */
};

/* Bytes of a cgroup's bios to one disk (bpf/memstall_maps.h's io_dev, all CPUs). */
#define SNAPSHOT_IO_DEVS 4
struct io_dev_bytes {
	uint32_t dev; /* MEMSTALL_DEV(major, minor); 0 a free slot */
	uint64_t bytes;
};

/* Adds bytes to dev's slot of v[n] (or the first free one); a disk past n is not told apart. */
void io_dev_add(struct io_dev_bytes *v, size_t n, uint32_t dev, uint64_t bytes);
/* The disk of v[n] with the most bytes; 0 none. */
uint32_t io_dev_top(const struct io_dev_bytes *v, size_t n);

struct memstall_sample {
	struct lat_hist direct; /* direct reclaim by the cgroup's tasks */
	struct lat_hist memcg;	/* memcg limit reclaim by the cgroup's tasks */
	/* PSI's inputs (bpf/memstall_maps.h): empty when not traced */
	struct lat_hist stall;			      /* memory stalls, as PSI counts them */
	struct lat_hist iowait;			      /* I/O waits, as PSI counts them */
	uint64_t io_bytes;			      /* bios submitted by the cgroup's tasks */
	struct io_dev_bytes io_dev[SNAPSHOT_IO_DEVS]; /* the same by disk */
	uint64_t oom_kills; /* tasks of the cgroup chosen as OOM victims */
};

enum psi_resource { PSI_CPU = 0, PSI_MEMORY, PSI_IO, PSI_NR };

struct psi_line {
	double avg10, avg60, avg300; /* percent, gauges */
	uint64_t total_us;	     /* counter */
};

struct psi_sample {
	struct psi_line some[PSI_NR];
	struct psi_line full[PSI_NR]; /* cpu "full" exists on 5.13+ only; else 0 */
};

struct cg_sample {
	uint64_t id;	/* cgroup id (= inode of its directory) */
	uint32_t parts; /* enum cg_part: which of the below hold data */
	struct lat_hist rq;
	struct cpi_sample cpu;
	struct throttle_sample throttle;
	struct memstall_sample mem;
	struct psi_sample psi;
};

struct blame_sample {
	uint64_t victim;
	uint64_t culprit; /* QOSLET_CULPRIT_IDLE when the CPU was idle */
	uint64_t wait_ns;
	uint64_t count;
};

/* One OOM kill, delivered once: events are drained, not cumulative. */
struct oom_event {
	uint64_t ts_ns;	    /* CLOCK_REALTIME */
	uint64_t cgroup_id; /* the victim's cgroup */
	uint32_t pid;	    /* the victim's thread-group id */
	char comm[16];
};

struct snapshot {
	uint64_t ts_ns;		   /* CLOCK_REALTIME at reading */
	struct cg_sample *cgroups; /* sorted by id, one per id (after snapshot_finish) */
	size_t n_cgroups, cap_cgroups;
	struct blame_sample *blame; /* sorted by (victim, culprit) */
	size_t n_blame, cap_blame;
	uint64_t sched_drops[SCHED_DROP_NR];
	uint32_t cpi_mode;		 /* enum cpi_mode of the attaching process (a label) */
	uint64_t cpi_drops[CPI_DROP_NR]; /* cpi probe: slices not published */
	uint64_t memstall_drops[MEMSTALL_DROP_NR]; /* enum memstall_drop */
	/* The CPI part counts cycles/instructions (else software stand-ins, not CPI). */
	bool cpi_hardware;
	/* The memstall part has PSI's inputs (mem.stall, mem.iowait): else they read 0. */
	bool memstall_psi;
	struct oom_event *ooms; /* drained at this reading, oldest first */
	size_t n_ooms, cap_ooms;
};

void snapshot_free(struct snapshot *s);

/*
 * Appends a zeroed record for cgroup `id`; probes fill their own part and
 * set its bit. Several records for one id are merged by snapshot_finish().
 * NULL when out of memory.
 */
struct cg_sample *snapshot_add(struct snapshot *s, uint64_t id);

/* Appends a blame pair; -ENOMEM on failure. */
int snapshot_add_blame(struct snapshot *s, const struct blame_sample *b);

/* Appends an OOM event; -ENOMEM on failure. */
int snapshot_add_oom(struct snapshot *s, const struct oom_event *e);

/* Sorts both arrays into the order documented above and merges records of one id. */
void snapshot_finish(struct snapshot *s);

/* Binary search in a finished snapshot; NULL when absent. */
const struct cg_sample *snapshot_find(const struct snapshot *s, uint64_t id);

/*
 * out = now - before for counters, now for gauges, keeping only cgroups
 * with some activity in the interval (a wait, CPU time, a throttled period,
 * a stall, an OOM kill, or PSI above zero). Records missing from `before`
 * count from zero; a counter that went down (record re-created) counts
 * from zero too. OOM events are carried from `now` (each is read once).
 * Returns 0 or -ENOMEM.
 */
int snapshot_delta(struct snapshot *out, const struct snapshot *now, const struct snapshot *before);

/*
 * acc += d for the counters of the probes' parts (run-queue waits, CPU,
 * reclaim stalls): an interval's delta added to a running total, which
 * stays monotonic while the cgroups it sums come and go.
 */
void cg_sample_accumulate(struct cg_sample *acc, const struct cg_sample *d);

#endif
