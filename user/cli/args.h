/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Arguments of the tracing views. Every view takes
 *   [-c CGROUP]... [-j] [--pin-dir DIR] [--hook auto|tp_btf|raw_tp] [-v]
 *   [INTERVAL [COUNT]]
 * and some take more (enum view_opt): a view refuses, and its --help omits,
 * the options it would ignore. INTERVAL defaults to 1 s (at most 86400),
 * COUNT to 0 (until interrupted; an explicit COUNT must be > 0); --pin-dir
 * must be absolute.
 */
#ifndef QOSLET_CLI_ARGS_H
#define QOSLET_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "probes/probes.h"

#define VIEW_MAX_CGROUPS 64

/* The options only some views take. */
enum view_opt {
	VIEW_OPT_WAIT_SOURCE = 1 << 0,	   /* --wait-source: the sched probe */
	VIEW_OPT_CPI_EVENTS = 1 << 1,	   /* --cpi-events: the cpi probe */
	VIEW_OPT_THROTTLE_SOURCE = 1 << 2, /* --throttle-source: the throttle probe */
	VIEW_OPT_TOP = 1 << 3,		   /* --top N: views that rank cgroups */
	VIEW_OPT_ALL = (1 << 4) - 1,
};

struct view_args {
	const char *cgroups[VIEW_MAX_CGROUPS];
	size_t n_cgroups;
	bool json;
	bool help;
	double interval_s; /* > 0 */
	long count;	   /* intervals to print; 0 = until interrupted */
	long top;	   /* --top N: at most N cgroups an interval; 0 = all */
	const char *pod;   /* --pod NAME|UID, NULL: any (cli/pod_filter.h) */
	const char *ns;	   /* --namespace NS, NULL: any */
	struct probe_opts probe;
};

/*
 * Parses argv (argv[0] is the command name) for a view taking the shared
 * options and `options` (enum view_opt bits). On a usage error returns -1
 * with a one-line reason in err; on success 0. -h stops parsing at once and
 * sets help. Does not touch cgroups: checking that they exist is the
 * caller's job.
 */
int view_args_parse(struct view_args *a, unsigned int options, int argc, char **argv, char *err,
		    size_t errlen);

/* The --help lines of the shared options and of `options`, in one list. */
void view_args_usage(unsigned int options, FILE *out);

#endif
