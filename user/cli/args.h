/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Arguments shared by the tracing views:
 *   [-c CGROUP]... [-j] [--pin-dir DIR] [--hook auto|tp_btf|raw_tp]
 *   [--wait-source auto|sched_info|stamp] [-v] [INTERVAL [COUNT]]
 * INTERVAL defaults to 1 s (at most 86400), COUNT to 0 (until interrupted;
 * an explicit COUNT must be > 0); --pin-dir must be absolute.
 */
#ifndef QOSLET_CLI_ARGS_H
#define QOSLET_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "../probes/probes.h"

#define VIEW_MAX_CGROUPS 64

struct view_args {
	const char *cgroups[VIEW_MAX_CGROUPS];
	size_t n_cgroups;
	bool json;
	bool help;
	double interval_s; /* > 0 */
	long count;	   /* intervals to print; 0 = until interrupted */
	struct probe_opts probe;
};

/*
 * Parses argv (argv[0] is the command name). On a usage error returns -1
 * with a one-line reason in err; on success 0. -h stops parsing at once and
 * sets help. Does not touch cgroups: checking that they exist is the
 * caller's job.
 */
int view_args_parse(struct view_args *a, int argc, char **argv, char *err, size_t errlen);

/* The option lines shared by every view's --help text. */
extern const char view_args_help[];

#endif
