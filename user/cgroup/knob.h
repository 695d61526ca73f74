/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The cgroup files the agent reads and the actuator writes, for cgroup v1
 * (one hierarchy per controller, as on hybrid hosts) and v2 alike: which
 * mount, which file, which units. Every path is relative to the
 * controller's root and means the same directory in every hierarchy (the
 * kubelet and the tests create each cgroup in all of them).
 *
 * Only user/actuate/ calls the cg_write_* functions.
 */
#ifndef QOSLET_CGROUP_KNOB_H
#define QOSLET_CGROUP_KNOB_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cg_ctrl {
	CTRL_CPU = 0, /* quota, burst, idle, shares/weight, cpu.stat */
	CTRL_CPUACCT, /* CPU time on v1 (v2: cpu.stat usage_usec) */
	CTRL_CPUSET,
	CTRL_MEMORY,
	CTRL_FREEZER, /* v1 only; v2 has cgroup.freeze */
	CTRL_IO,      /* v1 blkio, v2 io: block I/O bytes per cgroup */
	CTRL_NR,
};

/* Where each controller is mounted: "" when it is not. */
struct cgroup_ctrls {
	char root[CTRL_NR][PATH_MAX];
	bool v2[CTRL_NR]; /* the controller is on the cgroup2 mount */
};

/*
 * Finds each controller in a mountinfo file: its v1 mount, else the cgroup2
 * mount when that one lists it in cgroup.controllers (freezer: cgroup2 always,
 * through cgroup.freeze). Returns 0, or -ENOENT when not even the cpu
 * controller is mounted.
 */
int cgroup_ctrls_detect(struct cgroup_ctrls *c, const char *mountinfo_path);

/*
 * Test and replay hook: every controller under one directory tree
 * (root/<cpu|cpuacct|cpuset|memory|freezer>/ on v1, root itself on v2).
 */
void cgroup_ctrls_fake(struct cgroup_ctrls *c, const char *root, bool v2);

/* Absolute path of `file` (e.g. "cpu.stat") of cgroup `rel` in controller `ctrl`. */
int cg_path(const struct cgroup_ctrls *c, enum cg_ctrl ctrl, const char *rel, const char *file,
	    char *out, size_t size);

/*
 * Every read/write returns 0, -errno, -ENOENT when the cgroup does not exist,
 * or -EOPNOTSUPP when the cgroup exists but the file does not (the kernel
 * lacks it). Writes never create a file.
 */

/* Any file of a cgroup as text, trailing newline dropped; -EOVERFLOW when it does not fit. */
int cg_read_file(const struct cgroup_ctrls *c, enum cg_ctrl ctrl, const char *rel, const char *file,
		 char *buf, size_t size);
/* One write() of text ("" is written as a newline: the kernel strips it). */
int cg_write_file(const struct cgroup_ctrls *c, enum cg_ctrl ctrl, const char *rel,
		  const char *file, const char *text);

/* CFS bandwidth: quota_us -1 = unlimited. v1 cpu.cfs_quota_us + cfs_period_us, v2 cpu.max. */
int cg_read_quota(const struct cgroup_ctrls *c, const char *rel, int64_t *quota_us,
		  uint64_t *period_us);

/* v1 cpu.cfs_burst_us, v2 cpu.max.burst (us both). */
int cg_read_burst(const struct cgroup_ctrls *c, const char *rel, int64_t *burst_us);

/* cpu.idle (kernel 5.15+, v1 and v2). */
int cg_read_idle(const struct cgroup_ctrls *c, const char *rel, int *idle);

/* cpuset.cpus as the kernel prints it ("" when unset on v2). */
int cg_read_cpus(const struct cgroup_ctrls *c, const char *rel, char *cpus, size_t size);
/*
 * The CPUs the cgroup may really use, for capacity: v1 cpuset.effective_cpus,
 * v2 cpuset.cpus.effective.
 */
int cg_read_effective_cpus(const struct cgroup_ctrls *c, const char *rel, char *cpus, size_t size);

/*
 * CPU request in CPUs of a CG_KNOB_WEIGHT value: v1 cpu.shares / 1024, v2
 * cpu.weight mapped back to shares the kubelet's way.
 */
double cg_weight_request_cpus(const struct cgroup_ctrls *c, int64_t weight);

/* Total CPU time of the subtree in ns: v1 cpuacct.usage, v2 cpu.stat usage_usec. */
int cg_read_usage_ns(const struct cgroup_ctrls *c, const char *rel, uint64_t *ns);

struct cg_mem {
	uint64_t usage;	      /* v1 memory.usage_in_bytes, v2 memory.current */
	uint64_t limit;	      /* UINT64_MAX when unlimited */
	uint64_t anon;	      /* memory.stat: v1 total_rss (hierarchical), v2 anon */
	uint64_t unevictable; /* v1 total_unevictable, v2 unevictable */
	uint64_t inactive_file;
	uint64_t file; /* page cache: v1 total_cache, v2 file (0 when the text lacks it) */
	/* For memory interference; 0 where the kernel has no such key. */
	uint64_t refaults;	/* workingset refaults, anon + file (v1: total_, hierarchical) */
	uint64_t charged_pages; /* v1 total_pgpgin: pages charged; v2 has no such counter (0) */
};
int cg_read_mem(const struct cgroup_ctrls *c, const char *rel, struct cg_mem *m);
/* The memory limit alone (v1 memory.limit_in_bytes, v2 memory.max): bytes, -1 unlimited. */
int cg_read_mem_limit(const struct cgroup_ctrls *c, const char *rel, int64_t *limit);
/*
 * anon, unevictable and inactive_file of a memory.stat text, v1 or v2 as c
 * says (an error when one is missing); file (the page cache), refaults and
 * charged_pages when the kernel has them, else 0.
 */
int cg_mem_stat_parse(const struct cgroup_ctrls *c, const char *text, struct cg_mem *m);
/*
 * The limit hits of a CG_FILE_MEM_EVENTS text: v1 memory.failcnt's count,
 * v2 memory.events.local's max + high. -EINVAL when unreadable.
 */
int cg_mem_events_parse(const struct cgroup_ctrls *c, const char *text, uint64_t *hits);
/*
 * The bytes read and written of a CG_FILE_IO_STAT text, every device: v1's
 * "Total" line, v2's rbytes + wbytes summed. -EINVAL when unreadable.
 */
int cg_io_bytes_parse(const struct cgroup_ctrls *c, const char *text, uint64_t *bytes);

/*
 * CFS bandwidth counters of a cpu.stat text into s's nr_periods,
 * nr_throttled, throttled_ns, nr_bursts and burst_ns (events is left alone).
 * Both formats are read: v1 (throttled_time and burst_time in ns) and v2
 * (throttled_usec and burst_usec), keys in any order among others (v2
 * starts with usage_usec...). Missing keys read as 0 (burst lines are
 * 5.14+). Returns 0, or -EINVAL when the text has no nr_periods line (no
 * bandwidth control).
 */
struct throttle_sample;
int cg_cpu_stat_throttle(const char *text, struct throttle_sample *s);
/* CPU time in ns of a v2 cpu.stat text (usage_usec); -EOPNOTSUPP when absent. */
int cg_cpu_stat_usage_ns(const char *text, uint64_t *ns);

/*
 * Pids in cgroup.procs of `rel` alone (not its children), in the cpu
 * hierarchy: *n of at most max; -E2BIG (with max of them) when it has more.
 */
int cg_read_procs(const struct cgroup_ctrls *c, const char *rel, int *pids, size_t max, size_t *n);

/*
 * Kills every task of the subtree: v2 cgroup.kill where it exists; else
 * freeze (v1 freezer / v2 cgroup.freeze, when present), SIGKILL every pid
 * of every cgroup of the subtree, thaw, repeated until empty or 1 s passed.
 * Returns the number of tasks signalled (for cgroup.kill: the tasks the
 * subtree held), or -errno.
 */
int cg_kill_subtree(const struct cgroup_ctrls *c, const char *rel);

/* Tasks (cgroup.procs entries) of the whole subtree in the cpu hierarchy, or -errno. */
int cg_count_subtree_procs(const struct cgroup_ctrls *c, const char *rel);

/*
 * The cgroups of the subtree at `rel` in ctrl's hierarchy, rel first and
 * every parent before its children (pre-order; reversed, children come
 * before parents). Directories that vanish during the walk are skipped.
 * Returns 0, -ENOENT when rel itself is gone, or -errno.
 */
struct cg_list {
	char **v; /* paths relative to the root */
	size_t n, cap;
};
int cg_subtree(const struct cgroup_ctrls *c, enum cg_ctrl ctrl, const char *rel,
	       struct cg_list *out);
void cg_list_free(struct cg_list *l);

/*
 * The knobs the actuator sets, one file each, as text: what the kernel
 * prints and takes ("50000 100000" in v2 cpu.max, "50000" in v1
 * cpu.cfs_quota_us, "0-1", "1"). The actuator journals and restores these
 * texts as they were.
 */
enum cg_knob {
	CG_KNOB_QUOTA = 0, /* v1 cpu.cfs_quota_us, v2 cpu.max */
	CG_KNOB_BURST,	   /* v1 cpu.cfs_burst_us, v2 cpu.max.burst */
	CG_KNOB_IDLE,	   /* cpu.idle */
	CG_KNOB_CPUS,	   /* cpuset.cpus */
	CG_KNOB_WEIGHT,	 /* v1 cpu.shares, v2 cpu.weight: batch requests; journaled with cpu.idle */
	CG_KNOB_MEM_MAX, /* v1 memory.limit_in_bytes, v2 memory.max (bytes, -1 unlimited) */
	/* Memory QoS (docs/memory-qos.md), v2 only: bytes, "max" (-1) for none. */
	CG_KNOB_MEM_MIN,  /* memory.min */
	CG_KNOB_MEM_LOW,  /* memory.low */
	CG_KNOB_MEM_HIGH, /* memory.high */
	/*
	 * Block I/O throttles, per disk (cg_knob_per_device): v1
	 * blkio.throttle.read_bps_device / write_bps_device, v2 io.max's rbps /
	 * wbps keys. Their text is one "MAJ:MIN VALUE" line per disk with a
	 * rule, VALUE as the version writes it (v1 bytes a second, 0 none; v2
	 * "rbps=N", "rbps=max" none): each line is a write that sets that disk.
	 */
	CG_KNOB_IO_RBPS,
	CG_KNOB_IO_WBPS,
	CG_KNOB_NR,
};

/*
 * The other files the agent reads, numbered after the knobs: together they
 * index the one table of file names per cgroup version (knob.c), which the
 * collector, the probes and the actuator all use.
 */
enum cg_file {
	/* A unit's counters, CPU_STAT to PSI_IO together: the collector keeps each one open. */
	CG_FILE_CPU_STAT = CG_KNOB_NR, /* cpu.stat: CFS bandwidth (v1, v2) and usage_usec (v2) */
	CG_FILE_CPUACCT_USAGE,	       /* v1 cpuacct.usage (v2 counts in cpu.stat) */
	CG_FILE_MEM_USAGE,	       /* v1 memory.usage_in_bytes, v2 memory.current */
	CG_FILE_MEM_STAT,	       /* memory.stat */
	/*
	 * Hits on the cgroup's own memory limit, not its descendants': v1
	 * memory.failcnt, v2 memory.events.local (max and high).
	 */
	CG_FILE_MEM_EVENTS,
	/*
	 * Block I/O bytes of the subtree: v1
	 * blkio.throttle.io_service_bytes_recursive, v2 io.stat.
	 */
	CG_FILE_IO_STAT,
	CG_FILE_PSI_CPU, /* v2 only: cpu.pressure, memory.pressure, io.pressure */
	CG_FILE_PSI_MEMORY,
	CG_FILE_PSI_IO,
	CG_FILE_CFS_PERIOD,	/* v1 cpu.cfs_period_us (v2: in cpu.max) */
	CG_FILE_EFFECTIVE_CPUS, /* v1 cpuset.effective_cpus, v2 cpuset.cpus.effective */
	CG_FILE_MEM_RECLAIM,	/* v2 memory.reclaim (5.19+): a write reclaims; v1 has none */
	CG_FILE_NR,
};

/*
 * Whether cgroup rel has file f (a knob or cg_file) on this host: false
 * where its version names none, or the kernel lacks it.
 */
bool cg_has_file(const struct cgroup_ctrls *c, int f, const char *rel);

/*
 * Asks the kernel to reclaim `bytes` of cgroup rel's memory (v2
 * memory.reclaim, a one-shot request, not a setting: nothing to restore).
 * 0; -EAGAIN when it reclaimed less than asked; -EOPNOTSUPP where the
 * kernel or the version has no memory.reclaim (v1, v2 before 5.19); -errno.
 * Only user/actuate/ calls it.
 */
int cg_mem_reclaim(const struct cgroup_ctrls *c, const char *rel, uint64_t bytes);

/* The controller of a knob or cg_file (the pressure files: the cpu one's cgroup2 directory). */
enum cg_ctrl cg_file_ctrl(int f);
/* The name of a knob or cg_file on that cgroup version; NULL where that version has none. */
const char *cg_file_name(int f, bool v2);

/*
 * Per-disk knobs (CG_KNOB_IO_*): cg_read_knob gives the knob's text (above),
 * cg_write_knob writes each of its lines in turn; cg_knob_parse takes a
 * text of at most one line (bytes a second, -1 none). Devices are
 * MEMSTALL_DEV(major, minor) numbers.
 */
bool cg_knob_per_device(enum cg_knob k);
/* The line that sets dev's throttle to bps (-1 none). -EINVAL, -ENAMETOOLONG. */
int cg_io_knob_format(const struct cgroup_ctrls *c, enum cg_knob k, uint64_t dev, int64_t bps,
		      char *text, size_t size);
/*
 * The throttle a knob text sets on *dev (-1 none); *dev 0: on the first disk
 * it names, then *dev is that disk (still 0 when none). -EINVAL when malformed.
 */
int cg_io_knob_value(const struct cgroup_ctrls *c, enum cg_knob k, const char *text, uint64_t *dev,
		     int64_t *bps);
/*
 * A journaled original must undo every disk a write names: for each disk of
 * `text` that orig has no line for, a line that clears it is appended.
 * 0, -EINVAL, -ENAMETOOLONG (orig unchanged then).
 */
int cg_io_knob_cover(const struct cgroup_ctrls *c, enum cg_knob k, char *orig, size_t size,
		     const char *text);
/*
 * Whether a per-disk knob's text is knob k's: v1 has a file a knob; v2's
 * io.max holds both, and a text of k's names its key on every line.
 */
bool cg_io_knob_owns(const struct cgroup_ctrls *c, enum cg_knob k, const char *text);
/* Reads a per-disk knob's file as its text. */
int cg_io_knob_read(const struct cgroup_ctrls *c, enum cg_knob k, const char *rel, char *text,
		    size_t size);
/* Writes each line of a per-disk knob's text. */
int cg_io_knob_write(const struct cgroup_ctrls *c, enum cg_knob k, const char *rel,
		     const char *text);

enum cg_ctrl cg_knob_ctrl(enum cg_knob k);
/* The knob's file name on this host ("cpu.max", "cpu.cfs_quota_us", ...). */
const char *cg_knob_file(const struct cgroup_ctrls *c, enum cg_knob k);
/* cg_read_file / cg_write_file of the knob's file. */
int cg_read_knob(const struct cgroup_ctrls *c, enum cg_knob k, const char *rel, char *text,
		 size_t size);
/* Any text, "" included: it restores an unset v2 cpuset. */
int cg_write_knob(const struct cgroup_ctrls *c, enum cg_knob k, const char *rel, const char *text);
/*
 * The text that sets a number knob (not CG_KNOB_CPUS) to value: quota -1 is
 * unlimited, period_us is the period a v2 cpu.max keeps; memory -1 is "max".
 * -EINVAL, -ENAMETOOLONG.
 */
int cg_knob_format(const struct cgroup_ctrls *c, enum cg_knob k, int64_t value, uint64_t period_us,
		   char *text, size_t size);
/* The value of a number knob's text (quota, memory: -1 unlimited); -EINVAL when it is not one. */
int cg_knob_parse(const struct cgroup_ctrls *c, enum cg_knob k, const char *text, int64_t *value);
/*
 * The one quota parser, by version, for readers that know the version but
 * hold no cgroup_ctrls (the probes): v1 cpu.cfs_quota_us "-1" or "50000"
 * (period 0: v1 keeps it in cpu.cfs_period_us), v2 cpu.max "max 100000" or
 * "50000 100000". quota_us -1 is unlimited; -EINVAL when the text is not one.
 */
int cg_quota_parse(bool v2, const char *text, int64_t *quota_us, uint64_t *period_us);

#endif
