/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The loop every tracing view shares: parse arguments, resolve cgroups,
 * open the probe, then once per interval read a snapshot and hand the
 * interval's delta to the view's renderer.
 */
#ifndef QOSLET_CLI_VIEW_H
#define QOSLET_CLI_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>
#include <stdio.h>

#include "cgroup/path.h"
#include "probes/probes.h"
#include "cli/args.h"
#include "cli/pod_filter.h"

struct view_ops;

struct view {
	const struct view_ops *ops;
	struct view_args args;
	struct cgroup_fs fs;
	struct cgroup_names *names;
	char *filters[VIEW_MAX_CGROUPS]; /* normalized -c paths, relative to fs.root */
	struct pod_filter pods;		 /* --pod, --namespace */
	struct probe_set *probes;
	uint64_t interval_ns; /* actual length of the interval being rendered */
	bool partial;	      /* it was cut short by SIGINT/SIGTERM */
};

struct view_ops {
	const char *name;
	const char *summary;	/* one line for `qoslet --help` */
	const char *usage;	/* text before the options in --help */
	const char *examples;	/* --help's last section: two examples, explained */
	unsigned int probes;	/* PROBE_BIT mask of the probes the view reads */
	unsigned int options;	/* enum view_opt: what it takes besides the shared options */
	const char *cpi_events; /* --cpi-events when not given; NULL: auto */
	void (*render)(struct view *v, const struct snapshot *delta, FILE *out);
	/*
	 * Optional: waits until the absolute CLOCK_MONOTONIC deadline instead
	 * of sleeping, e.g. to handle keys and re-render `last` (the previous
	 * interval, NULL before the first). Returns true to stop.
	 */
	bool (*wait)(struct view *v, const struct timespec *deadline, const struct snapshot *last);
};

/* Runs a view to completion; returns the process exit status. */
int view_main(const struct view_ops *ops, int argc, char **argv);

/*
 * The cgroup's path for reports: relative to the hierarchy root with a
 * leading '/' ("/" for the root), "(idle)" for QOSLET_CULPRIT_IDLE, NULL
 * when no cgroup has that id any more.
 */
const char *view_cgroup_path(struct view *v, uint64_t id, char *buf, size_t size);

/* Does cgroup `id` fall under one of the -c filters and --pod/--namespace (or are there none)? */
int view_selected(struct view *v, uint64_t id);

/*
 * The views' JSON (-j) share one vocabulary, docs/json-output.md: a key means
 * the same and has the same type in every view. The schema version goes up
 * when a key is renamed, removed or changes type or meaning.
 */
#define VIEW_JSON_SCHEMA 2

/*
 * Starts the JSON object every view prints: {"schema":1, "node":...,
 * "view":..., "ts":..., "interval_s":..., "partial":..., "shared":...,
 * "probes":{"sched":{"on":true,"detail":"tp_btf, sched_info"}}}.
 */
json_t *view_json_header(struct view *v, const struct snapshot *delta);

/*
 * Starts the JSON object of one cgroup, the same in every view:
 * {"path":..., "id":..., "qos":..., "pod":..., "container":...} (qos, pod and
 * container null off Kubernetes' layout; path null once removed).
 */
json_t *view_cgroup_json(struct view *v, uint64_t id);

/* $NODE_NAME (the DaemonSet sets it from spec.nodeName), else the host name. */
const char *view_node_name(void);

/* Prints a JSON object as one line and releases it. */
void view_json_emit(json_t *obj, FILE *out);

/* Sleeps until an absolute CLOCK_MONOTONIC deadline; true when SIGINT/SIGTERM asked to stop. */
bool view_sleep_until(const struct timespec *deadline);

/* True once SIGINT or SIGTERM asked the view to stop. */
bool view_stopping(void);

/*
 * The end of a long name in `width` characters (at least 4), which is the
 * part that differs: "...pod1234/c0ffee"; s itself when it fits.
 */
const char *view_fmt_tail(const char *s, size_t width, char *buf, size_t size);

/* Formats nanoseconds for people: "850 ns", "12.3 us", "4.56 ms", "1.20 s". */
const char *view_fmt_ns(double ns, char *buf, size_t size);

#endif
