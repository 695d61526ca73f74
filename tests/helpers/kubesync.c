// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Drives the agent's Kubernetes link (user/kube/sync.h) against a test
 * API server, as the agent's loop would: it queues occurrences, conditions
 * and evictions, and reads results and counters back.
 *
 *   kubesync KUBECONFIG NODE [--resync S] [--timeout S] [--event-interval S]
 *            [--events-per-minute N] [--no-events] [--no-condition]
 *            [--batch STEP,MIN_S] [--hold S] [--node-cpus N] [--node-memory BYTES]
 *            < commands
 *
 * Commands, one a line on stdin:
 *   event UID NS POD REASON N  N occurrences of REASON (CamelCase) on the pod, the same
 *                              note each time (a series)
 *   similar UID NS POD REASON N
 *                              N occurrences of REASON on the pod, each its own note
 *   condition on|off MESSAGE   the node condition the loop wants
 *   batch CPU_MILLI MEM_BYTES VALID_S
 *                              the node's batch resources, good for VALID_S seconds
 *   load T_S LS_CPUS LS_MEM_BYTES
 *                              one tick of the agent's capacity policy (user/policy/
 *                              capacity.c) at T_S seconds of the policy's own clock
 *                              (the caller's: a trace may be replayed faster than real
 *                              time), the node's LS + system usage as given; its
 *                              published figure goes to the link as the agent's loop
 *                              hands it over, good for capacity.stale_s. --batch's STEP
 *                              is the policy's capacity.node_status.step_percent (a
 *                              share), --hold its hold_s; the rest are the defaults of
 *                              docs/agent-config.md, on a node of --node-cpus (16) and
 *                              --node-memory (64 GiB)
 *   evict UID NS NAME          queues an eviction ("error evict RC" when refused)
 *   sleep S                    waits S seconds (fractions allowed)
 *   results                    "result UID OUTCOME ATTEMPT STATUS TS_MS WHY" for each
 *                              eviction attempt since the last time, then "results N"
 *   pods                       "pods N" when a newer pod list came, else "pods none"
 *   podset                     the newest pod set the link handed over: "pod UID NS NAME
 *                              LABELS" (k=v,... or -) for each, then "podset N"
 *   labels [KEY...]            the label keys to keep (none: no labels); "labels all": every one
 *   stats                      "stat KEY VALUE" lines: requests.CALL, errors.CALL,
 *                              aggregated, dropped, pods, listed (0/1), condition
 *                              (unknown/true/false), pod_lists, pod_expired,
 *                              watch_broken, oversize, etcd_lists, skipped_size,
 *                              terminated
 *   stop                       stops the link and prints "stop MS" (how long that took)
 * The link is stopped at the end of input too. Exit 0, 1 for a bad command,
 * 2 when the link did not start.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/sync.h"
#include "policy/capacity.h"
#include "clock.h"

#define MAX_REASONS 32

/* kube_sync keeps the reason pointers (static in the agent): one lasting copy each. */
static const char *intern(const char *reason)
{
	static char *reasons[MAX_REASONS];
	size_t i;

	for (i = 0; i < MAX_REASONS && reasons[i]; i++)
		if (!strcmp(reasons[i], reason))
			return reasons[i];
	if (i == MAX_REASONS || !(reasons[i] = strdup(reason)))
		return NULL;
	return reasons[i];
}

static int event(struct kube_sync *ks, char **arg, bool similar)
{
	struct kube_event_req ev = {.type = "Warning", .action = "Detect"};
	long n = strtol(arg[4], NULL, 10);

	ev.reason = intern(arg[3]);
	if (!ev.reason || n < 1)
		return -EINVAL;
	snprintf(ev.uid, sizeof(ev.uid), "%s", arg[0]);
	snprintf(ev.ns, sizeof(ev.ns), "%s", arg[1]);
	snprintf(ev.pod, sizeof(ev.pod), "%s", arg[2]);
	for (long i = 1; i <= n; i++) {
		if (similar)
			snprintf(ev.note, sizeof(ev.note), "kubesync: %s occurrence %ld of %ld",
				 arg[3], i, n);
		else
			snprintf(ev.note, sizeof(ev.note), "kubesync: %s", arg[3]);
		ev.ts_ns = clock_ns(CLOCK_REALTIME);
		kube_sync_event(ks, &ev);
	}
	return 0;
}

static int evict(struct kube_sync *ks, char **arg)
{
	struct kube_evict_req r = {.ts_ns = clock_ns(CLOCK_REALTIME)};
	int rc;

	snprintf(r.uid, sizeof(r.uid), "%s", arg[0]);
	snprintf(r.ns, sizeof(r.ns), "%s", arg[1]);
	snprintf(r.name, sizeof(r.name), "%s", arg[2]);
	rc = kube_sync_evict(ks, &r);
	if (rc)
		printf("error evict %d\n", rc);
	return 0;
}

static void results(struct kube_sync *ks)
{
	struct kube_evict_result r[16];
	size_t n, total = 0;

	while ((n = kube_sync_take_results(ks, r, 16)) > 0) {
		for (size_t i = 0; i < n; i++)
			printf("result %s %s %u %ld %llu %s\n", r[i].req.uid,
			       decision_outcome_name(r[i].outcome), r[i].attempt, r[i].status,
			       (unsigned long long)(r[i].ts_ns / 1000000),
			       r[i].why[0] ? r[i].why : "-");
		total += n;
	}
	printf("results %zu\n", total);
}

static void stats(struct kube_sync *ks)
{
	struct kube_link_stats s;

	kube_sync_stats(ks, &s);
	for (int c = 0; c < KUBE_CALL_NR; c++)
		printf("stat requests.%s %llu\nstat errors.%s %llu\n", kube_call_name(c),
		       (unsigned long long)s.requests[c], kube_call_name(c),
		       (unsigned long long)s.errors[c]);
	printf("stat aggregated %llu\nstat dropped %llu\nstat pods %llu\nstat listed %d\n",
	       (unsigned long long)s.events_aggregated, (unsigned long long)s.events_dropped,
	       (unsigned long long)s.pods, s.last_list_ns != 0);
	printf("stat pod_lists %llu\nstat pod_expired %llu\nstat watch_broken %llu\n"
	       "stat oversize %llu\nstat etcd_lists %llu\nstat skipped_size %llu\n"
	       "stat terminated %llu\n",
	       (unsigned long long)s.pod_lists, (unsigned long long)s.pod_expired,
	       (unsigned long long)s.pod_watch_broken, (unsigned long long)s.pod_oversize,
	       (unsigned long long)s.pod_etcd_lists, (unsigned long long)s.pods_skipped_size,
	       (unsigned long long)s.pods_terminated);
	printf("stat condition %s\n", !s.condition_known ? "unknown"
				      : s.condition	 ? "true"
							 : "false");
}

/* The newest set the link handed over, kept for "podset". */
static struct kube_pod_list seen;

static void pods(struct kube_sync *ks)
{
	if (kube_sync_take_pods(ks, &seen))
		printf("pods %zu\n", seen.n);
	else
		printf("pods none\n");
}

static void podset(struct kube_sync *ks)
{
	kube_sync_take_pods(ks, &seen);
	for (size_t i = 0; i < seen.n; i++) {
		const struct kube_pod *p = &seen.pods[i];

		printf("pod %s %s %s ", p->uid, p->ns, p->name);
		for (const char *l = p->labels; l && *l; l += strlen(l) + 1)
			printf("%s%s", l, l[strlen(l) + 1] ? "," : "");
		printf("%s\n", p->labels ? "" : "-");
	}
	printf("podset %zu\n", seen.n);
}

/* "labels KEY...": the keys as "k\0k\0\0"; "labels all": NULL. */
static void labels(struct kube_sync *ks, char **arg, size_t n)
{
	char keys[1024];
	size_t at = 0;

	if (n == 1 && !strcmp(arg[0], "all")) {
		kube_sync_label_keys(ks, NULL);
		return;
	}
	for (size_t i = 0; i < n && at + strlen(arg[i]) + 2 < sizeof(keys); i++)
		at += (size_t)sprintf(keys + at, "%s", arg[i]) + 1;
	keys[at] = '\0';
	kube_sync_label_keys(ks, keys);
}

/* The capacity policy as the agent runs it, on a node of one LS unit. */
static struct capacity_config capacity_cfg = {.enabled = true,
					      .cpu_threshold = 0.60,
					      .mem_threshold = 0.65,
					      .window_s = 300,
					      .percentile = 0.95,
					      .stale_s = 60,
					      .min_change = 0.01,
					      .hold_s = 3600,
					      .step = 0.10};
static struct capacity_state capacity_st;
static double node_cpus = 16, node_mem = 64.0 * (1 << 30);

static int load(struct kube_sync *ks, char **arg)
{
	struct pol_unit ls = {.id = 1, .cls = QOS_LS};
	struct pol_input in = {.cpus = node_cpus,
			       .mem_capacity = (uint64_t)node_mem,
			       .units = &ls,
			       .n_units = 1,
			       .interval_s = 2};
	struct action_list acts = {0};
	struct capacity_result res;
	double t = strtod(arg[0], NULL);
	int err;

	/* ts 0 is "no sample yet" to the policy: its clock starts a second in */
	in.ts_ns = (uint64_t)((t + 1) * 1e9);
	ls.cpu_used = in.node_cpu_used = strtod(arg[1], NULL);
	ls.mem_used = in.mem_used = strtoull(arg[2], NULL, 10);
	err = capacity_tick(&in, NULL, &capacity_cfg, &capacity_st, &res, &acts);
	action_list_free(&acts);
	if (err)
		return err;
	kube_sync_batch(ks, capacity_st.published[CAP_CPU], capacity_st.published[CAP_MEM],
			(uint64_t)(capacity_cfg.stale_s * 1e9));
	return 0;
}

static void nap(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* One command; 1 after "stop", 0 to go on, -1 for a bad command. */
static int run(struct kube_sync *ks, char *line)
{
	char *arg[6] = {0}, *cmd = strtok(line, " \t\n"), *msg;
	size_t n = 0;
	uint64_t t0;

	if (!cmd)
		return 0;
	if (!strcmp(cmd, "condition")) { /* the message is the rest of the line */
		arg[0] = strtok(NULL, " \t\n");
		msg = strtok(NULL, "\n");
		if (!arg[0] || (strcmp(arg[0], "on") && strcmp(arg[0], "off")))
			return -1;
		kube_sync_condition(ks, !strcmp(arg[0], "on"), msg ? msg : "");
		return 0;
	}
	while (n < 6 && (arg[n] = strtok(NULL, " \t\n")))
		n++;
	if ((!strcmp(cmd, "event") || !strcmp(cmd, "similar")) && n == 5)
		return event(ks, arg, !strcmp(cmd, "similar"));
	if (!strcmp(cmd, "evict") && n == 3)
		return evict(ks, arg);
	if (!strcmp(cmd, "batch") && n == 3) {
		kube_sync_batch(ks, strtoull(arg[0], NULL, 10), strtoull(arg[1], NULL, 10),
				(uint64_t)(strtod(arg[2], NULL) * 1e9));
		return 0;
	}
	if (!strcmp(cmd, "load") && n == 3)
		return load(ks, arg);
	if (!strcmp(cmd, "labels")) {
		labels(ks, arg, n);
		return 0;
	}
	if (!strcmp(cmd, "sleep") && n == 1) {
		nap(strtod(arg[0], NULL));
		return 0;
	}
	if (n == 0 && !strcmp(cmd, "results"))
		results(ks);
	else if (n == 0 && !strcmp(cmd, "stats"))
		stats(ks);
	else if (n == 0 && !strcmp(cmd, "pods"))
		pods(ks);
	else if (n == 0 && !strcmp(cmd, "podset"))
		podset(ks);
	else if (n == 0 && !strcmp(cmd, "stop")) {
		t0 = clock_ns(CLOCK_MONOTONIC);
		kube_sync_stop(ks);
		printf("stop %llu\n",
		       (unsigned long long)((clock_ns(CLOCK_MONOTONIC) - t0) / 1000000));
		return 1;
	} else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"resync", required_argument, NULL, 'r'},
		{"timeout", required_argument, NULL, 't'},
		{"event-interval", required_argument, NULL, 'i'},
		{"events-per-minute", required_argument, NULL, 'e'},
		{"no-events", no_argument, NULL, 'E'},
		{"no-condition", no_argument, NULL, 'C'},
		{"batch", required_argument, NULL, 'b'},
		{"hold", required_argument, NULL, 'h'},
		{"node-cpus", required_argument, NULL, 'c'},
		{"node-memory", required_argument, NULL, 'm'},
		{NULL, 0, NULL, 0},
	};
	/* The defaults of docs/agent-config.md, but for resync: tests want results sooner. */
	struct kubernetes_config cfg = {.enabled = true,
					.resync_s = 5,
					.timeout_s = 10,
					.events = true,
					.event_interval_s = 60,
					.events_per_minute = 30,
					.node_condition = true,
					.condition_hold_s = 300};
	struct kube_sync *ks;
	char err[512], line[1024];
	int o, rc = 0;

	/* Line-buffered: a test may read answers while commands are still coming. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'r')
			cfg.resync_s = strtod(optarg, NULL);
		else if (o == 't')
			cfg.timeout_s = strtod(optarg, NULL);
		else if (o == 'i')
			cfg.event_interval_s = strtod(optarg, NULL);
		else if (o == 'e')
			cfg.events_per_minute = (uint32_t)strtoul(optarg, NULL, 10);
		else if (o == 'E')
			cfg.events = false;
		else if (o == 'C')
			cfg.node_condition = false;
		else if (o == 'b' && sscanf(optarg, "%lf,%lf", &capacity_cfg.step,
					    &cfg.batch_min_interval_s) == 2)
			cfg.batch_status = true;
		else if (o == 'h')
			capacity_cfg.hold_s = strtod(optarg, NULL);
		else if (o == 'c')
			node_cpus = strtod(optarg, NULL);
		else if (o == 'm')
			node_mem = strtod(optarg, NULL);
		else
			return 2;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: kubesync KUBECONFIG NODE [options] < commands\n");
		return 2;
	}
	snprintf(cfg.kubeconfig, sizeof(cfg.kubeconfig), "%s", argv[optind]);
	snprintf(cfg.node_name, sizeof(cfg.node_name), "%s", argv[optind + 1]);
	if (kube_sync_open(&ks, &cfg, err, sizeof(err)) || kube_sync_start(ks, err, sizeof(err))) {
		fprintf(stderr, "kubesync: %s\n", err);
		return 2;
	}
	while (ks && fgets(line, sizeof(line), stdin)) {
		o = run(ks, line);
		if (o < 0) {
			printf("error unknown command %s\n", line);
			rc = 1;
		} else if (o > 0) {
			ks = NULL;
		}
	}
	kube_sync_stop(ks);
	kube_pod_list_free(&seen);
	capacity_state_free(&capacity_st);
	return rc;
}
