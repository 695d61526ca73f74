/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The rows of `qoslet top`: one per cgroup active in an interval, with the
 * numbers an SRE scans first. Pure: built from a delta snapshot, sorted and
 * filtered without touching the terminal, so it is unit-tested.
 */
#ifndef QOSLET_CLI_TOP_ROWS_H
#define QOSLET_CLI_TOP_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/mem_explain.h"
#include "kube_path.h"
#include "snapshot.h"

/* A metric that is not known for a row (probe off, no data) is TOP_NA. */
#define TOP_NA (-1.0)

enum top_col {
	TOP_COL_NAME = 0,
	TOP_COL_CPU,	     /* CPU %, of one CPU */
	TOP_COL_RQ_P99,	     /* run-queue wait p99, ns */
	TOP_COL_THROTTLED,   /* throttled periods, % of periods */
	TOP_COL_CPI,	     /* cycles per instruction (hardware PMU only) */
	TOP_COL_RECLAIM_P99, /* reclaim stall p99 (direct and memcg), ns */
	TOP_COL_PSI,	     /* PSI some avg10, the highest of cpu/memory/io, % */
	TOP_COL_MEM_STALL, /* memory stall as the agent counts it (mem_explain.h), % of the interval
			    */
	TOP_COL_IO_STALL,  /* I/O wait (the probe's PSI inputs), % of the interval */
	TOP_COL_NR,
};

struct top_row {
	uint64_t id;
	char path[512]; /* "/" + path relative to the root, or "(removed)" */
	struct kube_ids kube;
	bool is_kube;
	double val[TOP_COL_NR]; /* TOP_COL_NAME unused */
	uint64_t culprit;	/* cgroup that delayed it most (0: none) */
	uint64_t culprit_wait_ns;
	/* Its memory stall as the agent measures and explains it (mem_explain.h). */
	struct mem_stall_explained mem;
};

/* Resolves a cgroup id to its path ("/..."), or NULL when it is gone. */
typedef const char *(*top_path_fn)(void *ctx, uint64_t id, char *buf, size_t size);

/*
 * Builds one row per cgroup of `delta` (interval_ns long) into rows (room
 * for delta->n_cgroups), with the memory stalls of mx (explained from the
 * same delta). Returns the number of rows.
 */
size_t top_rows_build(struct top_row *rows, const struct snapshot *delta, uint64_t interval_ns,
		      const struct mem_explain *mx, top_path_fn path, void *ctx);

/* Sorts rows by `col`: names ascending, numbers descending with TOP_NA last. */
void top_rows_sort(struct top_row *rows, size_t n, enum top_col col);

/* Keeps the rows whose path contains `needle` (all if empty); returns the new count. */
size_t top_rows_filter(struct top_row *rows, size_t n, const char *needle);

/* The column's short heading and its key in the interactive view. */
const char *top_col_title(enum top_col col);
char top_col_key(enum top_col col);

#endif
