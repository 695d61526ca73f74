/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The cgroup files a unit's counters come from, opened once and read with
 * pread() at offset 0, which makes cgroupfs print them anew. Opening by path
 * costs a walk through kernfs per component (about 2.2 us a file on the
 * development VM, against 0.4 us for the pread): with hundreds of pods, the
 * opens were most of the agent's work.
 *
 * A file that cannot be opened yet (on v1 the kubelet makes a pod's
 * directory in each hierarchy one after the other) is tried again at the
 * next read; one the kernel lacks is tried again only when the settings
 * are (collect.c), so a missing feature costs nothing per tick.
 */
#ifndef QOSLET_COLLECT_UNIT_FILES_H
#define QOSLET_COLLECT_UNIT_FILES_H

#include <stdbool.h>
#include <stdint.h>

#include "cgroup/knob.h"
#include "snapshot.h"

enum unit_file {
	UF_CPU_STAT = 0, /* cpu.stat: CFS bandwidth (v1, v2) and usage_usec (v2) */
	UF_CPUACCT,	 /* v1 cpuacct.usage (v2 counts in cpu.stat) */
	UF_MEM_USAGE,	 /* v1 memory.usage_in_bytes, v2 memory.current */
	UF_MEM_STAT,	 /* memory.stat */
	UF_PSI_CPU,	 /* v2 only: cpu.pressure, memory.pressure, io.pressure */
	UF_PSI_MEMORY,
	UF_PSI_IO,
	UF_NR,
};

struct unit_files {
	int fd[UF_NR];	    /* -1: not open */
	bool absent[UF_NR]; /* the kernel or the hierarchy has no such file */
};

/* What one read gives; each `has_` says whether its files were read. */
struct unit_counters {
	bool has_cpu, has_throttle, has_mem, has_psi;
	uint64_t usage_ns;		 /* CPU time of the subtree */
	struct throttle_sample throttle; /* cpu.stat as is */
	struct cg_mem mem;		 /* usage, anon, unevictable, inactive_file (no limit) */
	struct psi_sample psi;
	unsigned int errors; /* files that failed for another reason than absence */
};

void unit_files_init(struct unit_files *f);
void unit_files_close(struct unit_files *f);

/* Forgets which files were absent, so the next read tries them again. */
void unit_files_retry_absent(struct unit_files *f);

/* What a read should cover, beyond the CPU time that is always read. */
enum unit_want {
	UW_THROTTLE =
		1u << 0,  /* cpu.stat's CFS counters (v2 reads cpu.stat for the CPU time anyway) */
	UW_MEM = 1u << 1, /* memory usage and memory.stat */
	UW_PSI = 1u << 2, /* the pressure files */
};

/*
 * Reads the unit at rel: its CPU time and what `want` (enum unit_want) asks
 * for. Files that cannot be read leave their part unset. Returns -ENOENT
 * when the cgroup is gone, else 0.
 */
int unit_files_read(struct unit_files *f, const struct cgroup_ctrls *c, const char *rel,
		    unsigned int want, struct unit_counters *out);

#endif
