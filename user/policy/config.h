/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's settings: one JSON document (docs/agent-config.md documents
 * every field), parsed over embedded defaults by user/agent/config.c. The
 * policy parts are plain values so that policies and their tests need
 * nothing but this header.
 */
#ifndef QOSLET_POLICY_CONFIG_H
#define QOSLET_POLICY_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "model.h"

enum suppress_policy {
	SUPPRESS_CFS_QUOTA = 0, /* "cfsQuota": CFS quota on each BE unit */
	SUPPRESS_CPUSET,	/* "cpuset": BE units share a set of CPUs */
};

struct suppress_config {
	bool enabled;
	enum suppress_policy policy;
	double threshold;  /* share of capacity LS + system + BE may use: 0.65 */
	double min_cpus;   /* floor of BE's allowance in CPUs: 2 */
	double max_growth; /* per round, share of capacity BE may grow by: 0.10 */
	double min_change; /* changes under this share of capacity are skipped: 0.01 */
	bool cpu_idle;	   /* also set cpu.idle=1 on BE units when the kernel has it */
};

enum burst_policy {
	BURST_NONE = 0,	      /* "none" */
	BURST_CPU_BURST_ONLY, /* "cpuBurstOnly": cpu.cfs_burst_us / cpu.max.burst */
	BURST_CFS_QUOTA_ONLY, /* "cfsQuotaBurstOnly": scale the quota */
	BURST_AUTO,	      /* "auto": both */
};

struct burst_config {
	enum burst_policy policy;
	double burst_percent;	 /* burst = limit x this / 100: 1000 */
	double scale_up;	 /* quota x this while throttled: 1.2 */
	double scale_down;	 /* quota x this otherwise: 0.8 */
	double max_percent;	 /* quota ceiling, % of the limit: 300 */
	double shared_pool_busy; /* no scale-up at or above this node busy share: 0.5 */
	double throttled_min;	 /* throttled periods / periods that count as throttled: 0 (any) */
	double budget_cpu_s;	 /* extra CPU-seconds above the limit per budget_period_s; 0 off */
	double budget_period_s;	 /* 60 */
};

struct evict_memory_config {
	bool enabled;
	double threshold;  /* node memory used share that triggers: 0.70 */
	double release;	   /* evict until below this share: 0.68 */
	double cooldown_s; /* 4 */
};

struct evict_cpu_config {
	bool enabled;
	double satisfaction_lower; /* granted / requested below this triggers: 0.6 */
	double satisfaction_upper; /* evict until granted / requested reaches this: 0.8 */
	double be_usage_min;	   /* BE used / granted at least this: 0.9 */
	double window_s;	   /* condition must hold this long: 60 */
	double cooldown_s;	   /* 20 */
};

struct interference_config {
	bool enabled;
	/* (a) run-queue SLO of LS units */
	double rq_p99_us;	 /* threshold: 10000 */
	unsigned int rq_k, rq_n; /* k windows of the last n over it: 3 of 5 */
	uint64_t rq_min_waits;	 /* windows with fewer waits do not count: 20 */
	/* (b) CPI outliers (hardware counters only) */
	bool cpi_enabled;
	double cpi_sigma;	      /* outlier above mean + sigma x stddev: 2 */
	double cpi_min_cpus;	      /* ignore samples under this usage: 0.25 */
	unsigned int cpi_min_samples; /* before the distribution counts: 30 */
	unsigned int cpi_outliers;    /* outliers in the window make a victim: 3 */
	double cpi_window_s;	      /* 300 */
	double cpi_correlation;	      /* suspect's CPU use vs victim CPI: 0.35 */
	/* (c) antagonists and the action */
	double culprit_min_share; /* of the victim's wait, for a suspect to count: 0.2 */
	double cap_cpus;	  /* a BE antagonist's quota while capped: 0.2 */
	double cap_s;		  /* for this long: 300 */
};

enum evict_action {
	EVICT_REPORT = 0, /* "report": a decision only */
	EVICT_KILL,	  /* "kill": cgroup.kill (v2) or freeze + SIGKILL (v1) */
	EVICT_KUBERNETES, /* "kubernetes": the Eviction API (reporting layer) */
};

/* Which cgroups /metrics carries per-cgroup series for (docs/metrics/agent.md). */
enum metrics_scope {
	METRICS_SCOPE_UNITS = 0, /* "units": one series set per pod (or unit), summed over it */
	METRICS_SCOPE_ALL,	 /* "all": also every container and cgroup outside the units */
};

/* The reporting layer's HTTP endpoint (user/report/http.h). */
struct http_config {
	bool enabled;		    /* true */
	char address[64];	    /* an IPv4 or IPv6 literal: "127.0.0.1" */
	uint32_t port;		    /* 9464 */
	enum metrics_scope cgroups; /* "units" */
};

/* The link to the Kubernetes API (user/agent/kube_sync.h, docs/kubernetes.md). */
struct kubernetes_config {
	bool enabled;		    /* false: no API calls at all */
	char kubeconfig[PATH_MAX];  /* "": in-cluster (service account) */
	char node_name[254];	    /* "": the NODE_NAME environment variable */
	double resync_s;	    /* 30: how often the pods on this node are listed */
	double timeout_s;	    /* 10: one API call, connection included */
	bool events;		    /* true: Events on the pods the decisions concern */
	double event_interval_s;    /* 60: one API call per (pod, reason) at most this often */
	uint32_t events_per_minute; /* 30: all Events together, at most */
	bool node_condition;	    /* true: the QoSletInterference node condition */
	double condition_hold_s;    /* 300: it stays True this long after the last interference */
};

#define CONFIG_MAX_CLASS_RULES 32

/* Standalone classes: the first glob (fnmatch, FNM_PATHNAME) matching a cgroup path wins. */
struct class_rule {
	char glob[POL_PATH_MAX];
	enum qos_class cls;
};

struct agent_config {
	char cgroup_root[PATH_MAX]; /* managed subtree, relative to the cpu root; "" detect kubepods
				     */
	double interval_s;	    /* 1 */
	bool dry_run;		    /* false */
	bool fast_path;		    /* true: BPF wakes the loop on an LS wait over rq_p99_us */
	char state_dir[PATH_MAX];   /* /run/qoslet: what to restore after a crash */
	char decisions_file[PATH_MAX]; /* JSON lines; "-" stdout, "" none: "-" */
	size_t decisions_ring;	       /* decisions kept in memory: 1024 */
	enum evict_action evict_action;
	struct class_rule classes[CONFIG_MAX_CLASS_RULES];
	size_t n_classes;
	struct suppress_config suppress;
	struct burst_config burst;
	struct evict_memory_config evict_memory;
	struct evict_cpu_config evict_cpu;
	struct interference_config interference;
	struct http_config http;
	struct kubernetes_config kube;
};

#endif
