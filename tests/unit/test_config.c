// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's config: embedded defaults, every kind of error, round trips. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config/agent_config.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void assert_is_defaults(const struct agent_config *c)
{
	struct agent_config d;

	config_defaults(&d);
	assert_memory_equal(c, &d, sizeof(d));
}

/* The embedded document parses to the values docs/agent-config.md gives. */
static void test_defaults_documented(void **state)
{
	struct agent_config c;
	const struct interference_config *in = &c.policy.interference;

	(void)state;
	config_defaults(&c);
	assert_string_equal(c.cgroup_root, "");
	assert_true(c.interval_s == 1);
	assert_false(c.dry_run);
	assert_true(c.fast_path);
	assert_string_equal(c.state_dir, "/run/qoslet");
	assert_string_equal(c.decisions_file, "-");
	assert_int_equal(c.decisions_ring, 1024);
	assert_int_equal(c.n_classes, 0);
	assert_true(c.trust.qos_label);
	assert_int_equal(c.trust.production_priority, 9000);
	assert_int_equal(c.trust.opt_out_ns.n, 0); /* the eviction opt-out counts nowhere */
	assert_true(c.policy.slo.annotation_min_us == 500);
	assert_true(c.policy.suppress.enabled);
	assert_int_equal(c.policy.suppress.policy, SUPPRESS_CFS_QUOTA);
	assert_true(c.policy.suppress.threshold == 0.65);
	assert_true(c.policy.suppress.min_cpus == 2);
	assert_true(c.policy.suppress.max_growth == 0.10);
	assert_true(c.policy.suppress.min_change == 0.01);
	assert_true(c.policy.suppress.cpu_idle);
	assert_int_equal(c.policy.burst.policy, BURST_AUTO);
	assert_true(c.policy.burst.burst_percent == 1000);
	assert_true(c.policy.burst.scale_up == 1.2);
	assert_true(c.policy.burst.scale_down == 0.8);
	assert_true(c.policy.burst.max_percent == 300);
	assert_true(c.policy.burst.shared_pool_busy == 0.5);
	assert_true(c.policy.burst.throttled_min == 0);
	assert_true(c.policy.burst.budget_cpu_s == 0);
	assert_true(c.policy.burst.budget_period_s == 60);
	assert_int_equal(c.evict_action, EVICT_REPORT);
	assert_true(c.policy.evict_memory.enabled);
	assert_true(c.policy.evict_memory.threshold == 0.70);
	assert_true(c.policy.evict_memory.release == 0.68);
	assert_true(c.policy.evict_memory.cooldown_s == 4);
	assert_true(c.policy.evict_cpu.enabled);
	assert_true(c.policy.evict_cpu.satisfaction_lower == 0.6);
	assert_true(c.policy.evict_cpu.satisfaction_upper == 0.8);
	assert_true(c.policy.evict_cpu.be_usage_min == 0.9);
	assert_true(c.policy.evict_cpu.window_s == 60);
	assert_true(c.policy.evict_cpu.cooldown_s == 20);
	assert_false(c.policy.evict_order.kube_system);
	assert_true(in->enabled);
	assert_true(in->rq_p99_us == 10000);
	assert_int_equal(in->rq_k, 3);
	assert_int_equal(in->rq_n, 5);
	assert_int_equal(in->rq_min_waits, 20);
	assert_true(in->cpi_enabled);
	assert_true(in->cpi_sigma == 2);
	assert_true(in->cpi_min_cpus == 0.25);
	assert_int_equal(in->cpi_min_samples, 30);
	assert_int_equal(in->cpi_outliers, 3);
	assert_true(in->cpi_window_s == 300);
	assert_true(in->cpi_correlation == 0.35);
	assert_true(in->culprit_min_share == 0.2);
	assert_true(in->cap_cpus == 0.2);
	assert_true(in->cap_s == 300);
	assert_true(c.policy.capacity.enabled);
	assert_true(c.policy.capacity.cpu_threshold == 0.60);
	assert_true(c.policy.capacity.mem_threshold == 0.65);
	assert_true(c.policy.capacity.window_s == 300);
	assert_true(c.policy.capacity.percentile == 0.95);
	assert_true(c.policy.capacity.cpu_reserve == 0);
	assert_true(c.policy.capacity.mem_reserve == 0);
	assert_true(c.policy.capacity.stale_s == 60);
	assert_true(c.policy.capacity.min_change == 0.01);
	assert_true(c.policy.batch.enabled);
	assert_true(c.policy.batch.cpu_quota);
	assert_true(c.policy.batch.memory_limit);
	assert_false(c.policy.batch.evict);
	assert_true(c.policy.batch.evict_after_s == 60);
	assert_true(c.policy.batch.evict_cooldown_s == 20);
	assert_false(c.policy.memory_qos.enabled);
	assert_true(c.policy.memory_qos.lse.min_share == 1 &&
		    c.policy.memory_qos.lse.low_share == 0);
	assert_true(c.policy.memory_qos.lsr.min_share == 1 &&
		    c.policy.memory_qos.lsr.low_share == 0);
	assert_true(c.policy.memory_qos.ls.min_share == 0 && c.policy.memory_qos.ls.low_share == 1);
	assert_true(c.policy.memory_qos.limit_cap == 0.9);
	assert_true(c.policy.memory_qos.throttling == 0.9);
	assert_true(c.policy.memory_qos.free_share == 0.5);
	assert_true(c.policy.memory_qos.min_change == 0.01);
	assert_false(c.policy.slo.enabled);
	assert_true(c.policy.slo.lse_p99_us == 500 && c.policy.slo.lsr_p99_us == 1000 &&
		    c.policy.slo.ls_p99_us == 2000);
	assert_int_equal(c.policy.slo.n_globs, 0);
	assert_int_equal(c.policy.slo.min_waits, 20);
	assert_true(c.policy.slo.culprit_min_share == 0.2);
	assert_true(c.policy.slo.displaced_share == 0.25);
	assert_true(c.policy.slo.cut_factor == 0.5 && c.policy.slo.grow_cpus == 0.1);
	assert_true(c.policy.slo.slack_ratio == 0.8 && c.policy.slo.dwell_s == 3);
	assert_true(c.policy.slo.floor_cpus == 0.1);
	assert_true(c.kube.batch_status);
	assert_true(c.policy.capacity.step == 0.10 && c.policy.capacity.hold_s == 3600);
	assert_true(c.kube.batch_min_interval_s == 30);
	assert_true(c.http.enabled);
	assert_string_equal(c.http.address, "127.0.0.1");
	assert_int_equal(c.http.port, 9464);
}

/* The embedded text is exactly the effective defaults: every key, nothing more. */
static void test_default_json_is_complete(void **state)
{
	struct agent_config c, p;
	json_t *doc = json_loads(config_default_json(), 0, NULL);
	json_t *out;
	char err[256];

	(void)state;
	assert_non_null(doc);
	config_defaults(&c);
	out = config_to_json(&c);
	assert_non_null(out);
	assert_true(json_equal(doc, out));
	/* an empty document is the defaults */
	assert_int_equal(config_parse(&p, "{}", err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_memory_equal(&p, &c, sizeof(c));
	json_decref(doc);
	json_decref(out);
}

/* A partial document merges over the defaults; percentages become fractions. */
static void test_overlay(void **state)
{
	struct agent_config c;
	char err[256];

	(void)state;
	assert_int_equal(
		config_parse(
			&c,
			"{\"cgroup_root\": \"qoslet.slice/test\", \"interval_s\": 0.5,"
			" \"suppress\": {\"threshold_percent\": 50, \"policy\": \"cpuset\"},"
			" \"burst\": {\"policy\": \"none\"},"
			" \"evict\": {\"action\": \"kill\", \"memory\": {\"release_percent\": 60}},"
			" \"interference\": {\"runq\": {\"k\": 5.0, \"min_waits\": 0}},"
			" \"classes\": [{\"glob\": \"batch/*\", \"class\": \"BE\"},"
			"               {\"glob\": \"web\", \"class\": \"LSR\"},"
			"               {\"namespace\": \"batch-*\", \"label\": \"example.com/tier=low\","
			"                \"class\": \"BE\"}]}",
			err, sizeof(err)),
		0);
	assert_string_equal(c.cgroup_root, "qoslet.slice/test");
	assert_true(c.interval_s == 0.5);
	assert_true(c.policy.suppress.threshold == 0.5);
	assert_int_equal(c.policy.suppress.policy, SUPPRESS_CPUSET);
	assert_true(c.policy.suppress.min_cpus == 2); /* sibling kept */
	assert_int_equal(c.policy.burst.policy, BURST_NONE);
	assert_int_equal(c.evict_action, EVICT_KILL);
	assert_true(c.policy.evict_memory.release == 0.6);
	assert_true(c.policy.evict_memory.threshold == 0.7);
	assert_int_equal(c.policy.interference.rq_k, 5); /* 5.0 is an integer */
	assert_int_equal(c.policy.interference.rq_min_waits, 0);
	assert_int_equal(c.n_classes, 3);
	assert_string_equal(c.classes[0].glob, "batch/*");
	assert_int_equal(c.classes[0].cls, QOS_BE);
	assert_string_equal(c.classes[1].glob, "web");
	assert_int_equal(c.classes[1].cls, QOS_LSR);
	assert_string_equal(c.classes[2].glob, "");
	assert_string_equal(c.classes[2].ns, "batch-*");
	assert_string_equal(c.classes[2].label, "example.com/tier=low");
	assert_int_equal(c.classes[2].cls, QOS_BE);
}

#define GLOB_ALLOWED                                                                               \
	" (allowed: a glob of cgroup paths relative to the cpu controller's root, without a "      \
	"leading '/' or \"..\", or \"\" for any path, at most 511 bytes)"
#define RULES_ALLOWED                                                                               \
	" (allowed: an array of at most 32 rules {\"glob\", \"namespace\", \"label\", \"class\"}, " \
	"each with a class and at least one of the others)"

struct bad {
	const char *json;
	const char *err;
};

static const struct bad bad_docs[] = {
	/* invalid JSON: the position */
	{"{\n  \"interval_s\": 1,\n  \"dry_run\": tru\n}",
	 "invalid JSON at line 3, column 16: invalid token near 'tru'"},
	{"{\"dry_run\": true, \"dry_run\": false}",
	 "invalid JSON at line 1, column 27: duplicate object key near '\"dry_run\"'"},
	{"[1]", "top level: expected an object, got an array"},
	/* unknown keys, at every depth */
	{"{\"interval\": 1}",
	 "interval: unknown key (allowed keys: cgroup_root, interval_s, dry_run, fast_path, "
	 "state_dir, cpu_manager_state, decisions, classes, qos_label, daemonset_namespaces, suppress, burst, evict, interference, capacity, "
	 "batch_resources, memory_qos, memory_suppress, io_suppress, slo, http, kubernetes)"},
	{"{\"burst\": {\"polcy\": \"auto\"}}",
	 "burst.polcy: unknown key (allowed keys: policy, burst_percent, scale_up, scale_down, "
	 "max_percent, shared_pool_busy_percent, throttled_min_percent, budget_cpu_s, "
	 "budget_period_s)"},
	{"{\"interference\": {\"cpi\": {\"sigmaa\": 2}}}",
	 "interference.cpi.sigmaa: unknown key (allowed keys: enabled, sigma, min_cpus, "
	 "min_samples, outliers, window_s, correlation)"},
	{"{\"classes\": [{\"glob\": \"a\", \"class\": \"BE\", \"prio\": 1}]}",
	 "classes[0].prio: unknown key (allowed keys: glob, namespace, label, class)"},
	/* wrong types */
	{"{\"interval_s\": \"1\"}", "interval_s: expected a number, got a string"},
	{"{\"dry_run\": 1}", "dry_run: expected true or false, got a number"},
	{"{\"state_dir\": null}", "state_dir: expected a string, got null"},
	{"{\"suppress\": []}", "suppress: expected an object, got an array"},
	{"{\"classes\": {}}", "classes: expected an array, got an object"},
	{"{\"classes\": [\"BE\"]}", "classes[0]: expected an object, got a string"},
	{"{\"interference\": {\"runq\": {\"k\": 1.5}}}",
	 "interference.runq.k: expected an integer, got 1.5"},
	{"{\"decisions\": {\"ring\": true}}", "decisions.ring: expected an integer, got true"},
	/* out of range */
	{"{\"suppress\": {\"threshold_percent\": 150}}",
	 "suppress.threshold_percent: 150 is out of range (allowed: 1 to 100)"},
	{"{\"interval_s\": 0.05}", "interval_s: 0.05 is out of range (allowed: 0.1 to 60)"},
	{"{\"burst\": {\"scale_up\": 1}}",
	 "burst.scale_up: 1 is out of range (allowed: more than 1, at most 10)"},
	{"{\"burst\": {\"scale_down\": 1}}",
	 "burst.scale_down: 1 is out of range (allowed: more than 0, less than 1)"},
	{"{\"burst\": {\"max_percent\": 99.5}}",
	 "burst.max_percent: 99.5 is out of range (allowed: 100 to 10000)"},
	{"{\"decisions\": {\"ring\": 8}}",
	 "decisions.ring: 8 is out of range (allowed: 16 to 1000000)"},
	{"{\"interference\": {\"runq\": {\"n\": 65}}}",
	 "interference.runq.n: 65 is out of range (allowed: 1 to 64)"},
	{"{\"interference\": {\"runq\": {\"min_waits\": -1}}}",
	 "interference.runq.min_waits: -1 is out of range (allowed: 0 to 1000000)"},
	/* enums and strings */
	{"{\"burst\": {\"policy\": \"always\"}}",
	 "burst.policy: unknown value \"always\" (allowed: none, cpuBurstOnly, cfsQuotaBurstOnly, "
	 "auto)"},
	{"{\"evict\": {\"action\": \"Kill\"}}",
	 "evict.action: unknown value \"Kill\" (allowed: report, kill, kubernetes)"},
	{"{\"evict\": {\"action\": \"kubernetes\"}}",
	 "evict.action: \"kubernetes\" needs kubernetes.enabled: true"},
	{"{\"evict\": {\"kube_system\": \"yes\"}}",
	 "evict.kube_system: expected true or false, got a string"},
	{"{\"evict\": {\"nodes\": \"canary-*\"}}",
	 "evict.nodes: \"canary-*\" needs kubernetes.enabled: true (the node's name)"},
	{"{\"evict\": {\"nodes\": \"Canary\"}, \"kubernetes\": {\"enabled\": true}}",
	 "evict.nodes: \"Canary\" is not a glob of node names (allowed: a glob of node names "
	 "(lowercase letters, digits, '-', '.' and the glob characters *?[]!), or \"\" for every "
	 "node, at most 253 bytes)"},
	{"{\"kubernetes\": {\"node_name\": \"Node_1\"}}",
	 "kubernetes.node_name: \"Node_1\" is not a valid node name (allowed: a node name "
	 "(lowercase letters, digits, '-' and '.'), or \"\", at most 253 bytes)"},
	{"{\"kubernetes\": {\"kubeconfig\": \"kube.conf\"}}",
	 "kubernetes.kubeconfig: \"kube.conf\" is not an absolute path (allowed: an absolute "
	 "path, or \"\", at most 4095 bytes)"},
	{"{\"kubernetes\": {\"events\": {\"per_minute\": 0}}}",
	 "kubernetes.events.per_minute: 0 is out of range (allowed: 1 to 6000)"},
	{"{\"kubernetes\": {\"resync_s\": -1}}",
	 "kubernetes.resync_s: -1 is out of range (allowed: 0 to 86400)"},
	{"{\"state_dir\": \"run/qoslet\"}",
	 "state_dir: \"run/qoslet\" is not an absolute path (allowed: an absolute path, at most "
	 "4095 bytes)"},
	{"{\"decisions\": {\"file\": \"out.json\"}}",
	 "decisions.file: \"out.json\" is not an absolute path (allowed: \"-\" for stdout, \"\" for "
	 "none, or an absolute path, at most 4095 bytes)"},
	{"{\"cgroup_root\": \"kubepods/../system.slice\"}",
	 "cgroup_root: \"kubepods/../system.slice\" has a \"..\" component (allowed: a path "
	 "relative to the cpu controller's root, without a leading '/' or \"..\"; \"\" to detect "
	 "the kubepods root, at most 4095 bytes)"},
	{"{\"http\": {\"address\": \"localhost\"}}",
	 "http.address: \"localhost\" is not an IP address (allowed: an IPv4 or IPv6 address such "
	 "as \"127.0.0.1\", \"0.0.0.0\" or \"::1\", at most 63 bytes)"},
	{"{\"http\": {\"port\": 0}}", "http.port: 0 is out of range (allowed: 1 to 65535)"},
	/* class rules */
	{"{\"classes\": [{\"glob\": \"a\", \"class\": \"BE\"}, {\"glob\": \"b\", \"class\": \"be\"}]}",
	 "classes[1].class: unknown value \"be\" (allowed: SYSTEM, LSE, LSR, LS, BE)"},
	{"{\"classes\": [{\"glob\": \"a\", \"class\": \"UNMANAGED\"}]}",
	 "classes[0].class: unknown value \"UNMANAGED\" (allowed: SYSTEM, LSE, LSR, LS, BE)"},
	{"{\"classes\": [{\"glob\": \"a\"}]}",
	 "classes[0].class: missing (allowed: SYSTEM, LSE, LSR, LS, BE)"},
	{"{\"classes\": [{\"glob\": \"\", \"class\": \"BE\"}]}",
	 "classes[0]: no glob, namespace or label: the rule would match every cgroup" RULES_ALLOWED},
	{"{\"classes\": [{\"class\": \"BE\"}]}",
	 "classes[0]: no glob, namespace or label: the rule would match every cgroup" RULES_ALLOWED},
	{"{\"classes\": [{\"namespace\": \"Batch\", \"class\": \"BE\"}]}",
	 "classes[0].namespace: \"Batch\" is not a glob of namespace names (allowed: a glob of "
	 "namespace names (lowercase letters, digits, '-' and the glob characters *?[]!), or \"\" "
	 "for any namespace, at most 63 bytes)"},
	{"{\"classes\": [{\"label\": \"app=a b\", \"class\": \"BE\"}]}",
	 "classes[0].label: \"app=a b\" has an invalid value (at most 63 letters, digits, '-', "
	 "'_', '.') (allowed: a label \"key\" (any value) or \"key=value\", or \"\" for any "
	 "labels, at most 319 bytes)"},
	{"{\"classes\": [{\"label\": \"/app\", \"class\": \"BE\"}]}",
	 "classes[0].label: \"/app\" has an invalid key prefix (a DNS subdomain before '/') "
	 "(allowed: a label \"key\" (any value) or \"key=value\", or \"\" for any labels, at "
	 "most 319 bytes)"},
	{"{\"classes\": [{\"label\": \"=x\", \"class\": \"BE\"}]}",
	 "classes[0].label: \"=x\" has an invalid key name (1 to 63 letters, digits, '-', '_', "
	 "'.') (allowed: a label \"key\" (any value) or \"key=value\", or \"\" for any labels, "
	 "at most 319 bytes)"},
	{"{\"classes\": [{\"glob\": \"/kubepods/*\", \"class\": \"BE\"}]}",
	 "classes[0].glob: \"/kubepods/*\" starts with '/'" GLOB_ALLOWED},
	{"{\"classes\": [{\"glob\": \"a/../b\", \"class\": \"BE\"}]}",
	 "classes[0].glob: \"a/../b\" has a \"..\" component" GLOB_ALLOWED},
	/* cross-field */
	{"{\"evict\": {\"memory\": {\"threshold_percent\": 60}}}",
	 "evict.memory.release_percent: 68 must be less than evict.memory.threshold_percent "
	 "(allowed: less than 60)"},
	{"{\"evict\": {\"cpu\": {\"satisfaction_lower_percent\": 80}}}",
	 "evict.cpu.satisfaction_lower_percent: 80 must be less than "
	 "evict.cpu.satisfaction_upper_percent (allowed: less than 80)"},
	{"{\"interference\": {\"runq\": {\"k\": 6}}}",
	 "interference.runq.k: 6 must be at most interference.runq.n (allowed: at most 5)"},
	{"{\"suppress\": {\"min_change_percent\": 12.5}}",
	 "suppress.min_change_percent: 12.5 must be at most suppress.max_growth_percent "
	 "(allowed: at most 10)"},
	{"{\"suppress\": {\"policy\": \"split\", \"threshold_percent\": 100}}",
	 "suppress.threshold_percent: 100 must be at most 95 with policy \"split\" (allowed: at "
	 "most 95)"},
	{"{\"interval_s\": 30, \"evict\": {\"cpu\": {\"window_s\": 20}}}",
	 "evict.cpu.window_s: 20 must be at least interval_s (allowed: at least 30)"},
	{"{\"interval_s\": 60, \"interference\": {\"cpi\": {\"outliers\": 6}}}",
	 "interference.cpi.outliers: 6 must be at most interference.cpi.window_s / interval_s "
	 "(allowed: at most 5)"},
	{"{\"interference\": {\"cpi\": {\"outliers\": 17}}}",
	 "interference.cpi.outliers: 17 is out of range (allowed: 1 to 16)"},
	{"{\"interval_s\": 10, \"burst\": {\"budget_cpu_s\": 5, \"budget_period_s\": 5}}",
	 "burst.budget_period_s: 5 must be at least interval_s (allowed: at least 10)"},
	/* capacity */
	{"{\"capacity\": {\"percentile\": 40}}",
	 "capacity.percentile: 40 is out of range (allowed: 50 to 100)"},
	{"{\"interval_s\": 10, \"capacity\": {\"window_s\": 5}}",
	 "capacity.window_s: 5 must be at least interval_s (allowed: at least 10)"},
	{"{\"interval_s\": 10, \"capacity\": {\"stale_s\": 15}}",
	 "capacity.stale_s: 15 must be at least 2 x interval_s (allowed: at least 20)"},
	/* memory QoS: protection never reaches the limit */
	{"{\"slo\": {\"cut_factor\": 1}}",
	 "slo.cut_factor: 1 is out of range (allowed: more than 0, less than 1)"},
	{"{\"slo\": {\"displaced_percent\": 101}}",
	 "slo.displaced_percent: 101 is out of range (allowed: 0 to 100)"},
	{"{\"slo\": {\"floor_cpus\": 0}}",
	 "slo.floor_cpus: 0 is out of range (allowed: 0.01 to 4096)"},
	{"{\"slo\": {\"dwel_s\": 3}}",
	 "slo.dwel_s: unknown key (allowed keys: enabled, targets, min_waits, "
	 "culprit_min_share_percent, displaced_percent, cut_factor, grow_cpus, slack_ratio, dwell_s, "
	 "floor_cpus)"},
	{"{\"slo\": {\"targets\": {\"globs\": [{\"glob\": \"a/*\"}]}}}",
	 "slo.targets.globs[0].p99_us: missing (allowed: 1 to 10000000)"},
	{"{\"slo\": {\"targets\": {\"globs\": {}}}}",
	 "slo.targets.globs: expected an array, got an object"},
	{"{\"memory_qos\": {\"limit_cap_percent\": 100}}",
	 "memory_qos.limit_cap_percent: 100 is out of range (allowed: 1 to 99)"},
	{"{\"memory_qos\": {\"ls\": {\"low_percent\": -1}}}",
	 "memory_qos.ls.low_percent: -1 is out of range (allowed: 0 to 100)"},
	{"{\"capacity\": {\"node_status\": {\"hold_s\": 200}}}",
	 "capacity.node_status.hold_s: 200 must be at least capacity.window_s (allowed: at least "
	 "300)"},
	{"{\"capacity\": {\"node_status\": {\"step_percent\": 60}}}",
	 "capacity.node_status.step_percent: 60 is out of range (allowed: 0 to 50)"},
	/* batch resources */
	{"{\"batch_resources\": {\"cpu_quota\": \"yes\"}}",
	 "batch_resources.cpu_quota: expected true or false, got a string"},
	{"{\"batch_resources\": {\"evict\": {\"after_s\": 0}}}",
	 "batch_resources.evict.after_s: 0 is out of range (allowed: 1 to 86400)"},
	{"{\"evict\": {\"opt_out_namespaces\": [\"Batch\"]}}",
	 "evict.opt_out_namespaces: element 0 is not a namespace glob (allowed: an array of at "
	 "most 16 namespace globs (lowercase letters, digits, '-' and the glob characters *?[]!, "
	 "1 to 63 bytes each))"},
	{"{\"evict\": {\"opt_out_namespaces\": \"batch\"}}",
	 "evict.opt_out_namespaces: expected an array, got a string"},
	{"{\"qos_label\": {\"production_priority\": 0}}",
	 "qos_label.production_priority: 0 is out of range (allowed: 1 to 2147483647)"},
	{"{\"slo\": {\"targets\": {\"annotation_min_us\": 0}}}",
	 "slo.targets.annotation_min_us: 0 is out of range (allowed: 1 to 10000000)"},
};

static void test_bad_docs(void **state)
{
	int failed = 0;

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(bad_docs); i++) {
		struct agent_config c;
		char err[512];
		int r;

		memset(&c, 0xa5, sizeof(c));
		r = config_parse(&c, bad_docs[i].json, err, sizeof(err));
		if (r != -EINVAL || strcmp(err, bad_docs[i].err)) {
			print_error("case %zu: %s\n got %d: %s\n want: %s\n", i, bad_docs[i].json,
				    r, err, bad_docs[i].err);
			failed++;
		}
		assert_is_defaults(&c); /* never half-applied */
	}
	assert_int_equal(failed, 0);
}

/* Documents at the edges of the rules, which must pass. */
static void test_valid_edges(void **state)
{
	static const char *const ok[] = {
		/* 0.1 s ticks: 1.2 s hold 12 samples, though 1.2 / 0.1 < 12 in doubles */
		("{\"interval_s\": 0.1, \"interference\": {\"cpi\": {\"outliers\": 12, "
		 "\"window_s\": 1.2}}}"),
		"{\"interference\": {\"runq\": {\"k\": 5, \"n\": 5}}}",
		"{\"suppress\": {\"min_change_percent\": 10}}",
		/* ".." inside a name is no component */
		"{\"classes\": [{\"glob\": \"a..b/..c\", \"class\": \"LS\"}], \"cgroup_root\": \"x..\"}",
		/* the budget period only matters with a budget */
		"{\"interval_s\": 10, \"burst\": {\"budget_period_s\": 5}}",
	};
	struct agent_config c;
	char err[512];

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(ok); i++)
		if (config_parse(&c, ok[i], err, sizeof(err)))
			fail_msg("case %zu: %s: %s", i, ok[i], err);
}

/* A document of n rules with distinct globs. */
static char *rules_doc(size_t n)
{
	size_t size = 32 + n * 48, len;
	char *s = malloc(size);

	assert_non_null(s);
	len = (size_t)snprintf(s, size, "{\"classes\": [");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, size - len,
					"%s{\"glob\": \"b%zu/*\", \"class\": \"BE\"}", i ? "," : "",
					i);
	snprintf(s + len, size - len, "]}");
	return s;
}

static void test_class_rule_limit(void **state)
{
	struct agent_config c;
	char err[512];
	char *doc = rules_doc(CONFIG_MAX_CLASS_RULES);

	(void)state;
	assert_int_equal(config_parse(&c, doc, err, sizeof(err)), 0);
	assert_int_equal(c.n_classes, CONFIG_MAX_CLASS_RULES);
	assert_string_equal(c.classes[CONFIG_MAX_CLASS_RULES - 1].glob, "b31/*");
	free(doc);

	doc = rules_doc(CONFIG_MAX_CLASS_RULES + 1);
	assert_int_equal(config_parse(&c, doc, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "classes: 33 rules is too many" RULES_ALLOWED);
	assert_is_defaults(&c);
	free(doc);
}

/* Strings that fill their array exactly fit; one byte more is an error, never cut. */
static void test_string_length(void **state)
{
	char path[PATH_MAX + 1], doc[PATH_MAX + 64], err[512];
	struct agent_config c;

	(void)state;
	memset(path, 'a', sizeof(path));
	path[0] = '/';
	path[PATH_MAX - 1] = '\0'; /* 4095 bytes: fits */
	snprintf(doc, sizeof(doc), "{\"state_dir\": \"%s\"}", path);
	assert_int_equal(config_parse(&c, doc, err, sizeof(err)), 0);
	assert_string_equal(c.state_dir, path);

	path[PATH_MAX - 1] = 'a';
	path[PATH_MAX] = '\0'; /* 4096 bytes */
	snprintf(doc, sizeof(doc), "{\"state_dir\": \"%s\"}", path);
	assert_int_equal(config_parse(&c, doc, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "state_dir: 4096 bytes is too long (allowed: an absolute path, at "
				 "most 4095 bytes)");
	assert_is_defaults(&c);

	memset(path, 'g', POL_PATH_MAX);
	path[POL_PATH_MAX] = '\0';
	snprintf(doc, sizeof(doc), "{\"classes\": [{\"glob\": \"%s\", \"class\": \"LS\"}]}", path);
	assert_int_equal(config_parse(&c, doc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "classes[0].glob: 512 bytes is too long ("));
}

/* parse(dump(to_json(c))) == c, for the defaults and for awkward values. */
static void test_round_trip(void **state)
{
	static const char *const docs[] = {
		"{}",
		"{\"cgroup_root\": \"qoslet.slice\", \"interval_s\": 0.3, \"dry_run\": true,"
		" \"fast_path\": false, \"state_dir\": \"/var/lib/q\","
		" \"decisions\": {\"file\": \"\", \"ring\": 16},"
		" \"classes\": [{\"glob\": \"batch/*\", \"class\": \"BE\"},"
		"              {\"glob\": \"system.slice/*\", \"class\": \"SYSTEM\"},"
		"              {\"glob\": \"lse\", \"class\": \"LSE\"}],"
		" \"qos_label\": {\"enabled\": false, \"production_priority\": 1000000},"
		" \"suppress\": {\"enabled\": false, \"policy\": \"cpuset\", \"threshold_percent\": 57.3,"
		"              \"min_cpus\": 0.7, \"max_growth_percent\": 33.3333333333333,"
		"              \"min_change_percent\": 0.1, \"cpu_idle\": false},"
		" \"burst\": {\"policy\": \"cfsQuotaBurstOnly\", \"burst_percent\": 0, \"scale_up\": 1.01,"
		"           \"scale_down\": 0.99, \"max_percent\": 100, \"throttled_min_percent\": 7,"
		"           \"shared_pool_busy_percent\": 99.9, \"budget_cpu_s\": 12.5,"
		"           \"budget_period_s\": 1},"
		" \"evict\": {\"action\": \"kubernetes\", \"nodes\": \"canary-[0-9]*\","
		"           \"opt_out_namespaces\": [\"kube-*\", \"db\"],"
		"           \"memory\": {\"threshold_percent\": 95.55, \"release_percent\": 0.07e2},"
		"           \"cpu\": {\"satisfaction_lower_percent\": 29, \"window_s\": 1,"
		"                     \"satisfaction_upper_percent\": 29.000000000000004}},"
		" \"interference\": {\"runq\": {\"p99_us\": 250.5, \"k\": 64, \"n\": 64,"
		"                   \"min_waits\": 1000000}, \"cpi\": {\"sigma\": 0.5,"
		"                   \"correlation\": 0.1234567890123456, \"outliers\": 16}},"
		" \"kubernetes\": {\"enabled\": true, \"kubeconfig\": \"/etc/kube.conf\","
		"                \"node_name\": \"node-7.zone-b\", \"resync_s\": 2.5,"
		"                \"timeout_s\": 120, \"events\": {\"enabled\": false,"
		"                \"interval_s\": 86400, \"per_minute\": 1}, \"node_condition\":"
		"                {\"enabled\": false, \"hold_s\": 1}}}",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(docs); i++) {
		struct agent_config a, b;
		char err[512], *text;
		json_t *j;

		if (config_parse(&a, docs[i], err, sizeof(err)))
			fail_msg("case %zu: %s", i, err);
		j = config_to_json(&a);
		assert_non_null(j);
		text = json_dumps(j, 0);
		assert_non_null(text);
		if (config_parse(&b, text, err, sizeof(err)))
			fail_msg("case %zu: %s\n%s", i, err, text);
		assert_memory_equal(&a, &b, sizeof(a));
		free(text);
		json_decref(j);
	}
}

/* -0 is stored as 0, so that it compares equal after a round trip. */
static void test_negative_zero(void **state)
{
	struct agent_config c, d;
	char err[256];

	(void)state;
	assert_int_equal(
		config_parse(&c, "{\"burst\": {\"budget_cpu_s\": -0.0}}", err, sizeof(err)), 0);
	config_defaults(&d);
	assert_memory_equal(&c, &d, sizeof(c));
}

static void test_load(void **state)
{
	char path[] = "/tmp/qoslet-config-XXXXXX", err[512], want[600];
	struct agent_config c;
	int fd;

	(void)state;
	assert_int_equal(config_load(&c, "/nonexistent/qoslet.json", err, sizeof(err)), -ENOENT);
	assert_string_equal(err,
			    "/nonexistent/qoslet.json: cannot read: No such file or directory");
	assert_is_defaults(&c);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"dry_run\": true}", 17), 17);
	assert_int_equal(config_load(&c, path, err, sizeof(err)), 0);
	assert_true(c.dry_run);

	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, "{\"dry_run\": 2}", 14, 0), 14);
	assert_int_equal(config_load(&c, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: dry_run: expected true or false, got a number", path);
	assert_string_equal(err, want);
	assert_is_defaults(&c);
	close(fd);
	unlink(path);
}

/* ---- overrides by node pool ----------------------------------------------- */

#define POOLS                                                                                       \
	"{\"suppress\": {\"threshold_percent\": 50}, \"overrides\": ["                              \
	"{\"name\": \"gpu\", \"nodeSelector\": {\"matchLabels\": {\"pool\": \"gpu\"}},"             \
	" \"config\": {\"suppress\": {\"threshold_percent\": 30}}},"                                \
	"{\"name\": \"latency\", \"nodeSelector\": {\"matchExpressions\": [{\"key\": \"tier\","     \
	" \"operator\": \"In\", \"values\": [\"gold\", \"silver\"]}, {\"key\": \"spot\","           \
	" \"operator\": \"DoesNotExist\"}]},"                                                       \
	" \"config\": {\"suppress\": {\"threshold_percent\": 20}, \"burst\": {\"scale_up\": 1.5}}}" \
	"]}"

/* The overrides whose selector matches the node's labels apply, in order, over the rest. */
static void test_overrides_apply(void **state)
{
	static const struct {
		const char *labels, *applied;
		double threshold;
	} cases[] = {
		{NULL, "", 0.50},
		{"{}", "", 0.50},
		{"{\"pool\": \"gpu\"}", "gpu", 0.30},
		{"{\"pool\": \"cpu\", \"tier\": \"gold\"}", "latency", 0.20},
		{"{\"pool\": \"gpu\", \"tier\": \"silver\"}", "gpu, latency", 0.20},
		{"{\"pool\": \"gpu\", \"tier\": \"silver\", \"spot\": \"\"}", "gpu", 0.30},
		{"{\"tier\": \"bronze\"}", "", 0.50},
	};
	struct agent_config c, base;
	char err[512];

	(void)state;
	assert_int_equal(config_parse(&base, POOLS, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *labels = cases[i].labels ? json_loads(cases[i].labels, 0, NULL) : NULL;
		struct config_node node = {.labels = labels};

		if (config_parse_node(&c, POOLS, &node, err, sizeof(err)))
			fail_msg("case %zu: %s", i, err);
		assert_string_equal(node.applied, cases[i].applied);
		assert_true(fabs(c.policy.suppress.threshold - cases[i].threshold) < 1e-9);
		assert_true((c.policy.burst.scale_up == 1.5) ==
			    (strstr(node.applied, "latency") != NULL));
		if (!node.applied[0])
			assert_memory_equal(&c, &base, sizeof(c));
		json_decref(labels);
	}
}

/*
 * A bad override refuses the whole document, with the reason, whatever the
 * labels (it is not half-applied on the nodes it would match, nor kept on
 * the others); *c is the defaults.
 */
static void test_overrides_refused(void **state)
{
	static const struct {
		const char *overrides, *want;
	} cases[] = {
		{"{}", "overrides: expected an array"},
		{"[1]", "overrides[0]: expected an object"},
		{"[{\"name\": \"a\", \"nodeSelector\": {}, \"config\": {}, \"x\": 1}]",
		 "overrides[0].x: unknown key"},
		{"[{\"nodeSelector\": {}, \"config\": {}}]", "overrides[0].name: missing"},
		{"[{\"name\": \"GPU\", \"nodeSelector\": {}, \"config\": {}}]",
		 "overrides[0].name: is not a DNS label"},
		{"[{\"name\": \"a\", \"nodeSelector\": {}, \"config\": {}},"
		 " {\"name\": \"a\", \"nodeSelector\": {}, \"config\": {}}]",
		 "overrides[1].name: \"a\" is taken by overrides[0]"},
		{"[{\"name\": \"a\", \"config\": {}}]", "overrides[0] (a).nodeSelector: missing"},
		{"[{\"name\": \"a\", \"nodeSelector\": {\"matchLabels\": {\"pool\": 1}}, \"config\": {}}]",
		 "overrides[0] (a).nodeSelector: matchLabels.pool: expected a string"},
		{"[{\"name\": \"a\", \"nodeSelector\": {\"matchLabels\": {\"p ool\": \"x\"}},"
		 " \"config\": {}}]",
		 "invalid key name"},
		{"[{\"name\": \"a\", \"nodeSelector\": {\"matchExpressions\": [{\"key\": \"k\","
		 " \"operator\": \"Gt\", \"values\": [\"1\"]}]}, \"config\": {}}]",
		 "matchExpressions[0].operator: unknown (allowed: In, NotIn, Exists, DoesNotExist)"},
		{"[{\"name\": \"a\", \"nodeSelector\": {\"matchExpressions\": [{\"key\": \"k\","
		 " \"operator\": \"In\"}]}, \"config\": {}}]",
		 "matchExpressions[0].values: needed (at least one) with operator In"},
		{"[{\"name\": \"a\", \"nodeSelector\": {\"matchExpressions\": [{\"key\": \"k\","
		 " \"operator\": \"Exists\", \"values\": [\"x\"]}]}, \"config\": {}}]",
		 "matchExpressions[0].values: not allowed with operator Exists"},
		{"[{\"name\": \"a\", \"nodeSelector\": {\"nodeSelectorTerms\": []}, \"config\": {}}]",
		 "nodeSelectorTerms: unknown key"},
		{"[{\"name\": \"a\", \"nodeSelector\": {}}]", "overrides[0] (a).config: missing"},
		{"[{\"name\": \"a\", \"nodeSelector\": {}, \"config\": {\"suppress\":"
		 " {\"threshold_percent\": 150}}}]",
		 "overrides[0].config.suppress.threshold_percent: 150 is out of range"},
		{"[{\"name\": \"a\", \"nodeSelector\": {}, \"config\": {\"overrides\": []}}]",
		 "overrides[0].config.overrides: unknown key"},
		{"[{\"name\": \"a\", \"nodeSelector\": {}, \"config\": {\"http\": {\"port\": 1}}}]",
		 "overrides[0] (a).config: sets http, which takes a restart"},
		{"[{\"name\": \"a\", \"nodeSelector\": {}, \"config\": {\"kubernetes\":"
		 " {\"timeout_s\": 3}}}]",
		 "sets kubernetes, which takes a restart"},
		{"[{\"name\": \"a\", \"nodeSelector\": {}, \"config\": {\"evict\": {\"memory\":"
		 " {\"release_percent\": 75}}}}]",
		 "overrides[0] (a): evict.memory.release_percent"},
		/* each fine alone, not together: refused on the nodes both match */
		{"[{\"name\": \"low\", \"nodeSelector\": {}, \"config\": {\"evict\": {\"memory\":"
		 " {\"threshold_percent\": 60, \"release_percent\": 58}}}},"
		 " {\"name\": \"late\", \"nodeSelector\": {}, \"config\": {\"evict\": {\"memory\":"
		 " {\"release_percent\": 65}}}}]",
		 "overrides low, late together: evict.memory.release_percent"},
	};
	json_t *labels = json_object();
	struct agent_config c, def;
	char doc[1024], err[512];

	(void)state;
	config_defaults(&def);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config_node node = {.labels = labels};

		snprintf(doc, sizeof(doc), "{\"overrides\": %s}", cases[i].overrides);
		if (config_parse_node(&c, doc, &node, err, sizeof(err)) != -EINVAL)
			fail_msg("case %zu accepted: %s", i, doc);
		if (!strstr(err, cases[i].want))
			fail_msg("case %zu: \"%s\", want \"%s\"", i, err, cases[i].want);
		assert_string_equal(node.applied, "");
		assert_memory_equal(&c, &def, sizeof(c));
	}
	json_decref(labels);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_documented),
		cmocka_unit_test(test_default_json_is_complete),
		cmocka_unit_test(test_overlay),
		cmocka_unit_test(test_bad_docs),
		cmocka_unit_test(test_valid_edges),
		cmocka_unit_test(test_class_rule_limit),
		cmocka_unit_test(test_string_length),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_negative_zero),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_overrides_apply),
		cmocka_unit_test(test_overrides_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
