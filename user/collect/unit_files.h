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

/* A unit's files are the cgroup layer's CG_FILE_CPU_STAT to CG_FILE_PSI_IO, one slot each. */
#define UF_FIRST CG_FILE_CPU_STAT
#define UF_NR	 (CG_FILE_PSI_IO + 1 - UF_FIRST)

struct unit_files {
	int fd[UF_NR];	    /* -1: not open */
	bool absent[UF_NR]; /* the kernel or the hierarchy has no such file */
};

/* What one read gives; each `has_` says whether its files were read. */
struct unit_counters {
	bool has_cpu, has_throttle, has_mem, has_psi, has_mem_events;
	uint64_t usage_ns;		 /* CPU time of the subtree */
	struct throttle_sample throttle; /* cpu.stat as is */
	struct cg_mem mem;		 /* usage, anon, unevictable, inactive_file (no limit) */
	struct psi_sample psi;
	uint64_t mem_hits;   /* the unit's own memory limit's hits (cg_mem_events_parse) */
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
	UW_MEM_EVENTS = 1u << 3, /* the memory limit's hits */
};

/*
 * Reads the unit at rel: its CPU time and what `want` (enum unit_want) asks
 * for. Files that cannot be read leave their part unset. Returns -ENOENT
 * when the cgroup is gone, else 0.
 */
int unit_files_read(struct unit_files *f, const struct cgroup_ctrls *c, const char *rel,
		    unsigned int want, struct unit_counters *out);

#endif
