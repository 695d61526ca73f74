/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The policies' settings: their part of the agent's config (one JSON
 * document, every field in docs/agent-config.md, parsed by
 * user/config/agent_config.c). Plain values, so that policies and their tests need
 * nothing but this header; how the agent runs and talks to the outside
 * (HTTP, Kubernetes) is not theirs to see.
 */
#ifndef QOSLET_POLICY_POLICY_CONFIG_H
#define QOSLET_POLICY_POLICY_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/model.h"

enum suppress_policy {
	SUPPRESS_CFS_QUOTA = 0, /* "cfsQuota": CFS quota on each BE unit */
	SUPPRESS_CPUSET,	/* "cpuset": BE units share a set of CPUs */
	SUPPRESS_SPLIT, /* "split": whole CPUs to BE alone, the rest to LS units; else cfsQuota */
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

/* What both evictions share (evict_round.h); the order itself is fixed. */
struct evict_order_config {
	bool kube_system; /* kube-system pods may be evicted: false */
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

/*
 * Memory and I/O interference (docs/agent-policies.md): an LS unit whose
 * stall share (stall time / interval) is over its threshold in k of the
 * last n windows is a victim; its stall is shared out among the parties by
 * their evidence (docs/agent-policies.md), and BE units holding at least
 * culprit_min_share of it are guilty (policy/mem_guilty.h).
 */
struct mem_interference_config {
	bool enabled;		  /* true */
	double stall_share;	  /* memory stall / interval over this is a window over: 0.05 */
	double io_share;	  /* I/O stall / interval over this: 0.2 (0 off) */
	unsigned int k, n;	  /* k windows of the last n over it: 3 of 5 */
	double culprit_min_share; /* of the victim's stall, for a BE unit to be guilty: 0.2 */
	double report_s;	  /* one report per victim and party in this long: 300 */
};

/*
 * Batch capacity (docs/capacity.md): what BE pods may be given, per resource,
 * batch = capacity x threshold - (LS + system, a high percentile over the
 * window) - reserve, never below 0.
 */
struct capacity_config {
	bool enabled;
	double cpu_threshold; /* share of CPU capacity LS + system + batch may use: 0.60 */
	double mem_threshold; /* share of memory capacity: 0.65 */
	double window_s;      /* usage drops are believed after this long: 300 */
	double percentile;    /* of LS + system usage over the window: 0.95 */
	double cpu_reserve;   /* CPUs kept from batch: 0 */
	double mem_reserve;   /* bytes kept from batch: 0 */
	double stale_s;	      /* unreadable data this long drives batch to 0: 60 */
	double min_change;    /* share of capacity a change must exceed to be a decision: 0.01 */
	double hold_s;	      /* the published figure grows back after the peak is this old: 3600 */
	double step; /* the published figure moves by more than this share of itself: 0.10 */
};

/*
 * Batch resources (docs/batch-resources.md): BE pods' kubernetes.io/batch-cpu
 * and batch-memory requests and limits written into their pod cgroups, and
 * the eviction of BE pods while their requests exceed batch capacity.
 */
struct batch_resources_config {
	bool enabled;		 /* write them: true */
	bool cpu_quota;		 /* the CFS quota from the batch-cpu limit: true */
	bool memory_limit;	 /* the memory limit from the batch-memory limit: true */
	bool evict;		 /* evict while the requests exceed batch capacity: false */
	double evict_after_s;	 /* the excess must last this long: 60 */
	double evict_cooldown_s; /* between eviction rounds: 20 */
};

/*
 * Memory QoS (docs/memory-qos.md), cgroup v2 only: protection for LS units
 * from their memory request, memory.high for BE units.
 */
struct memory_qos_class {
	double min_share; /* memory.min = request x this: LSE, LSR 1.0; LS 0 */
	double low_share; /* memory.low = request x this: LSE, LSR 0; LS 1.0 */
};

struct memory_qos_config {
	bool enabled;
	struct memory_qos_class lse, lsr, ls;
	double limit_cap;  /* protection at most this share of the unit's limit: 0.9 */
	double throttling; /* BE memory.high = request + this x (limit - request): 0.9 */
	double free_share; /* unlimited BE: memory.high = used + this x free / BE units: 0.5 */
	double min_change; /* memory.high moves under this share of capacity are skipped: 0.01 */
};

/*
 * The steps of a BE unit's limit under memory or I/O suppression
 * (policy/be_limit.h), in the limit's unit (bytes, bytes a second).
 */
struct suppress_steps {
	double cut_share;  /* of the gap between the limit and its floor, per guilty tick: 0.5 */
	double well_s;	   /* not guilty this long before growing back: 10 */
	double grow_share; /* per second, of the ceiling: memory 0.02, I/O 0.05 */
	double min_change; /* moves under this are skipped: 4 MiB, 1 MiB/s */
};

/*
 * Memory suppression (docs/agent-policies.md): a BE unit the memory
 * interference policy found guilty gives back its page cache, then has its
 * memory limit (v2 memory.high, v1 memory.limit_in_bytes) stepped down
 * towards what reclaim cannot take; it grows back slowly once it is no
 * longer guilty, and is evicted when at its floor it stays guilty.
 */
struct mem_suppress_config {
	bool enabled;		   /* true */
	double reclaim_share;	   /* of the unit's page cache asked back per memory.reclaim: 0.5 */
	double reclaim_interval_s; /* between two reclaims of one unit: 2 */
	double margin_bytes;	   /* the floor: anon + unevictable + this: 64 MiB */
	/* the ceiling growth ends at: the owner's limit, else node memory */
	struct suppress_steps steps;
	bool evict;		 /* evict when at the floor it stays guilty: true */
	double evict_after_s;	 /* that long at the floor: 60 */
	double evict_cooldown_s; /* between eviction rounds: 20 */
};

/*
 * I/O suppression (docs/agent-policies.md): a BE unit the interference
 * policy found guilty of an LS unit's I/O stall through its block I/O has
 * a block I/O throttle on its disk stepped down from its measured rate
 * towards a floor, and grown back slowly once it is no longer guilty.
 */
struct io_suppress_config {
	bool enabled;	  /* true */
	double floor_bps; /* the floor, bytes a second: 10 MiB/s */
	/* the ceiling growth ends at: the owner's throttle, else the rate it was first cut from */
	struct suppress_steps steps;
};

/*
 * SLO control (docs/slo-control.md): BE CPU steered by the LS units'
 * run-queue p99 against a target per unit. The target of an LS unit: its
 * pod's annotation, else the first glob that matches its path, else its
 * class's.
 */
#define SLO_MAX_GLOBS 16

struct slo_glob_target {
	char glob[POL_PATH_MAX]; /* fnmatch (FNM_PATHNAME) of the unit's path */
	double p99_us;
};

struct slo_config {
	bool enabled;	   /* false */
	double lse_p99_us; /* LSE target: 500 */
	double lsr_p99_us; /* LSR target: 1000 */
	double ls_p99_us;  /* LS target: 2000 */
	/* a pod's annotated target is never taken under this: 500 (docs/security.md) */
	double annotation_min_us;
	struct slo_glob_target globs[SLO_MAX_GLOBS];
	size_t n_globs;
	uint64_t min_waits;	  /* windows with fewer waits say nothing of a p99: 20 */
	double culprit_min_share; /* of the LS unit's wait, for a BE unit to be cut: 0.2 */
	/* of the LS unit's switch-ins taken from BE, for BE to be confined: 0.25 (0 off) */
	double displaced_share;
	double cut_factor;  /* allowance x this on a breach: 0.5 */
	double grow_cpus;   /* + this per BE unit per growth step: 0.1 */
	double slack_ratio; /* every LS p99 under target x this is slack: 0.8 */
	double dwell_s;	    /* slack this long before a growth step, and between them: 3 */
	double floor_cpus;  /* a BE unit's allowance never goes below: 0.1 */
};

enum evict_action {
	EVICT_REPORT = 0, /* "report": a decision only */
	EVICT_KILL,	  /* "kill": cgroup.kill (v2) or freeze + SIGKILL (v1) */
	EVICT_KUBERNETES, /* "kubernetes": the Eviction API (reporting layer) */
};

/*
 * Everything the policies read: the config's policy objects
 * (user/config/agent_config.h has the rest).
 */
struct policy_config {
	struct suppress_config suppress;
	struct burst_config burst;
	struct evict_memory_config evict_memory;
	struct evict_cpu_config evict_cpu;
	struct evict_order_config evict_order;
	struct interference_config interference;
	struct mem_interference_config mem_interference;
	struct capacity_config capacity;
	struct batch_resources_config batch;
	struct memory_qos_config memory_qos;
	struct slo_config slo;
	struct mem_suppress_config mem_suppress;
	struct io_suppress_config io_suppress;
};

#endif
