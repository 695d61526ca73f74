/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The running agent's state, shared by the files that make up the agent
 * (agent.c: the loop, and the other files of agent/). Only the loop's thread reads or
 * writes it; what other folders read of it goes to them as narrow views
 * (report/publish.h, kube/report.h).
 */
#ifndef QOSLET_AGENT_AGENT_STATE_H
#define QOSLET_AGENT_AGENT_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cgroup/path.h"
#include "actuate/actuator.h"
#include "collect/file_watch.h"
#include "collect/collect.h"
#include "policy/policy.h"
#include "probes/probes.h"
#include "report/metrics.h"
#include "report/breaches.h"
#include "report/publish.h"
#include "config/agent_args.h"
#include "config/agent_config.h"
#include "config/config_watch.h"
#include "probes/fast_path.h"
#include "decision/decision.h"
#include "kube/report.h"
#include "kube/sync.h"

struct actuator;
struct fast_path;
struct http_server;

struct unit_ref {
	uint64_t id;
	char *path; /* malloc'd: the fixed POL_PATH_MAX would hold 260 KiB at 500 pods */
};

struct agent {
	struct agent_args args;
	struct agent_config cfg;
	struct cgroup_fs fs;
	struct cgroup_ctrls ctrls;
	char subtree[PATH_MAX];
	struct probe_set *probes;
	unsigned int parts; /* enum cg_part the running probes provide */
	bool cpi_wanted;    /* the cpi probe was asked for (CPI outliers on, a PMU counts cycles) */
	struct collect_wants wants; /* from cfg, at start and at every reload */
	struct collect_opts coll_opts;
	struct collector *coll;
	const struct tick_record *rec; /* the collector's last record: all a tick reads */
	size_t n_muted;		       /* LS cgroups the fast path last left out (settled) */
	struct actuator *act;
	struct fast_path *fp;
	struct decision_log log;
	FILE *decisions, *record;
	struct policy_state pol;
	struct action_list actions;
	struct unit_ref *known; /* the units of the last tick, sorted by id */
	size_t n_known;
	uint64_t last_tick_ns;	 /* CLOCK_MONOTONIC */
	uint64_t last_status_ns; /* CLOCK_MONOTONIC */
	uint64_t ticks, fast_ticks;
	struct fast_path_alerts alerts; /* drained since the start, by kind */
	uint64_t loop_ns;		/* how long the last tick took */
	bool write_raced;		/* a write of the last tick raced its cgroup's making */
	int render_fd;			/* the HTTP endpoint asks for a render: readable; -1 none */
	struct http_server *http;	/* NULL when http.enabled is false */
	struct cgroup_names *names;	/* names of cgroups outside the units (blame culprits) */
	struct kube_sync *kube;		/* NULL when kubernetes.enabled is false */
	struct kube_pod_list pods;	/* sorted by uid; empty until the first list */
	json_t *node_labels; /* this Node's labels: the config's overrides choose by them; NULL
				unknown */
	uint64_t errors[METRICS_ERR_NR]; /* by enum metrics_error: qoslet_agent_errors_total */
	bool observe_only; /* no kubepods and no cgroup_root: dry-run, whatever the config */
	uint64_t reloads;  /* configs swapped in by SIGHUP or a change of the file */
	struct config_watch *watch;    /* the --config file's changes; NULL when not watched */
	struct breach_counts breaches; /* reports per victim and cause, for the metrics */
	/* the last interference, for the node condition */
	struct kube_report_seen kube_seen;
	/* Settings that stay applied: the files the actuator wrote, watched; NULL in dry-run. */
	struct file_watch *files;
	uint64_t files_gen;		 /* the actuator's watch generation the watch is set to */
	bool outside_noted;		 /* another writer changed one: the next tick answers */
	bool outside_wake;		 /* ... and the loop has not been woken for it yet */
	uint64_t answers[ACT_ANSWER_NR]; /* by kind: qoslet_agent_outside_writes_total */
};

/*
 * The config: --config FILE (refused when others may write it) or the
 * embedded defaults, with the overrides this Node's labels choose (node:
 * its labels are filled in, what applied comes back), --dry-run and
 * observe_only applied. 0, or a negative errno with err set.
 */
int agent_config_read(const struct agent *a, struct agent_config *out, struct config_node *node,
		      char *err, size_t errlen);

/*
 * What an eviction does on this node under config c: evict.action, or
 * "report" where evict.nodes does not match the node's name (reload.c).
 */
enum evict_action agent_evict_action(const struct agent *a, const struct agent_config *c);

/*
 * SIGHUP: the config read again and swapped in whole, or refused with the
 * reason (reload.c); ask_labels: the Node's labels are read again too.
 */
void agent_reload(struct agent *a, bool ask_labels);

/* The Node's labels read again (kube_sync_take_labels()): a reload when they changed. */
void agent_take_labels(struct agent *a);

/* Records d, and tells the cluster about it when it is worth an Event (agent.c). */
void agent_record_decision(struct agent *a, struct decision *d);

/* Hands one action to the actuator and records the decision; returns its outcome (agent.c). */
enum decision_outcome agent_decide(struct agent *a, const struct action *act);

/*
 * A change of batch capacity (an ACT_CAPACITY action of this tick) as its
 * decision record, with the formula spelled out; before: the values of the
 * last tick's decision, NULL for the first (capacity.c).
 */
void agent_record_capacity(struct agent *a, const struct action *act, const uint64_t *before);

#endif
