/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's state as Prometheus text exposition (format 0.0.4): a pure
 * renderer, so the agent loop builds the text once per tick and the HTTP
 * thread only ever serves copies of it. Every metric is described in
 * docs/metrics/agent.md.
 */
#ifndef QOSLET_REPORT_METRICS_H
#define QOSLET_REPORT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/knob.h"
#include "decision/decision.h"
#include "kube/link.h"
#include "kube/pods.h"
#include "policy/capacity.h"
#include "snapshot.h"

/* Blame pairs the agent publishes: the largest totals; the rest are summed in one gauge. */
#define METRICS_BLAME_TOP 20

/*
 * A cgroup with the labels it is published under. Its parts (enum cg_part)
 * say which families it appears in; a cgroup with no part only names a
 * blame culprit.
 */
struct metrics_cgroup {
	const struct cg_sample *s; /* cumulative: the probes' counters since they started */
	const char *path;	   /* relative to the cgroup root ("" is the root) */
	const char *pod_uid;	   /* NULL or "" when the cgroup belongs to no pod */
	const char *qos;	   /* the unit's class name; NULL when it belongs to no unit */
};

/* A setting qoslet changed on a unit, as the cgroup holds it now. */
struct metrics_setting {
	const char *path, *pod_uid, *qos; /* the unit, labelled as its cgroup is */
	enum cg_knob knob;		  /* CG_KNOB_QUOTA, _BURST, _IDLE or _CPUS */
	/* quota: CPUs (quota / period; INFINITY when unlimited); burst: seconds;
	 * idle: 0 or 1; cpus: how many CPUs the cpuset holds */
	double value;
};

/* A pod the kubelet pinned to CPUs of its own: qoslet_pinned_cpus. */
struct metrics_pinned {
	const char *path, *pod_uid, *qos; /* the unit, labelled as its cgroup is */
	uint32_t cpus;			  /* how many it holds alone */
};

/* Breaches of one victim unit explained by one cause: qoslet_interference_breaches_total. */
struct metrics_breach {
	const char *path, *pod_uid, *qos; /* the victim unit, labelled as its cgroup is */
	enum interference_cause cause;
	uint64_t n;
};

struct metrics_probe {
	const char *name; /* "sched", "cpi", ... */
	bool on;
	const char *path; /* the path in use when on ("tp_btf, sched_info"); NULL otherwise */
};

/* The agent's error counters, by kind: qoslet_agent_errors_total{kind}. */
enum metrics_error {
	METRICS_ERR_PROBE_READ = 0,    /* a tick could not read the probes */
	METRICS_ERR_SUBTREE_READ,      /* a tick could not read the managed subtree */
	METRICS_ERR_CGROUP_READ,       /* a unit's file for the metrics could not be read */
	METRICS_ERR_RENDER,	       /* the metrics could not be rendered (out of memory) */
	METRICS_ERR_JOURNAL_SET_ASIDE, /* a damaged journal was moved aside at start */
	METRICS_ERR_JOURNAL_WRITE,     /* a journal write failed (a full disk) */
	METRICS_ERR_NR,
};

/* The agent process (the `process_` metrics client libraries export); -1: unknown. */
struct metrics_process {
	int64_t rss_bytes, vm_bytes;
	int64_t open_fds, max_fds;
	int64_t cpu_ns; /* user + system, all threads */
};

/*
 * How many pods asked through their own labels or annotations for what the
 * config does not let them decide (docs/security.md, Trust model), by the
 * input and the reason: qoslet_pod_metadata_refused{input,reason}.
 */
struct metrics_refusal {
	const char *input, *reason;
	uint64_t pods;
};

struct metrics_input {
	const struct metrics_cgroup *cgroups; /* any order */
	size_t n_cgroups;
	bool cpi_hardware; /* CG_CPU counts cycles/instructions (else: no CPI series) */
	bool memstall_psi; /* CG_MEMSTALL has PSI's inputs (else: no stall series) */
	const struct blame_sample *blame; /* cumulative pairs, any order */
	size_t n_blame;
	size_t blame_top; /* pairs published one by one (METRICS_BLAME_TOP) */
	const struct metrics_setting *settings;
	size_t n_settings;
	const struct kube_pod_list *pods;      /* sorted by uid; NULL: no namespace/pod labels */
	const struct decision_log *log;	       /* NULL: no decision counters */
	const struct metrics_breach *breaches; /* any order */
	size_t n_breaches;
	const struct metrics_pinned *pinned; /* sorted by path */
	size_t n_pinned;
	uint32_t exclusive_cpus; /* CPUs pods hold alone: qoslet_exclusive_cpus */
	uint64_t ticks, fast_ticks;
	uint64_t alerts_wait, alerts_displaced; /* fast-path alerts by kind */
	/* Other writers' changes to files qoslet wrote, by the answer (docs/agent-actuator.md). */
	uint64_t outside_reasserted, outside_adopted, outside_contested;
	uint64_t loop_ns; /* how long the last tick took */
	const struct metrics_probe *probes;
	size_t n_probes;
	uint64_t errors[METRICS_ERR_NR];
	const struct metrics_process *process; /* NULL: no process metrics */
	const struct kube_link_stats *kube;    /* NULL: Kubernetes off */
	/* With kube: every (input, reason), sorted by them; the family is left out when 0. */
	const struct metrics_refusal *refusals;
	size_t n_refusals;
	const struct capacity_result *capacity; /* NULL: batch capacity off or not yet computed */
	/* With capacity: what BE pods request of it (batch-cpu in CPUs, batch-memory in bytes). */
	double batch_requested[CAP_NR];
};

/* "probe_read", "subtree_read", "cgroup_read", "render", "journal_set_aside", "journal_write". */
const char *metrics_error_name(enum metrics_error e);

/*
 * Renders the text into *text (malloc'd, NUL-terminated, length in *len).
 * Two cgroups with one path (an id the name cache has not yet seen removed)
 * would be two series with one label set: the newer id (the larger) wins,
 * in every family. Returns 0 or -ENOMEM.
 */
int metrics_render(const struct metrics_input *in, char **text, size_t *len);

#endif
