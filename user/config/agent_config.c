// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The config document, described once by tables of fields (key, member,
 * type, allowed values) that drive both parsing and config_to_json(), so the
 * two cannot drift apart. docs/agent-config.md explains every field.
 */
#include "config/agent_config.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config_reload.h"
#include "config/node_selector.h"
#include "kube/pods.h"
#include "policy/interference.h"

/* The defaults, in the binary's read-only data: make runs from the repo root. */
__asm__(".section .rodata\n"
	".global config_default_json_text\n"
	"config_default_json_text:\n"
	".incbin \"user/config/default-config.json\"\n"
	".byte 0\n"
	".previous\n");
extern const char config_default_json_text[];

#define CONFIG_FILE_MAX (1 << 20) /* a config is a few KB; this stops `--config /dev/zero` */

enum ftype {
	F_BOOL,
	F_NUM,	   /* double */
	F_INT,	   /* unsigned integer of 4 or 8 bytes */
	F_STR,	   /* char array */
	F_ENUM,	   /* int-sized enum, named by names[] */
	F_CLASS,   /* enum qos_class, UNMANAGED excluded */
	F_OBJ,	   /* nested object: sub[] (offsets still from the same base) */
	F_RULES,   /* the "classes" array */
	F_GLOBS,   /* slo.targets.globs: an array of {"glob", "p99_us"} */
	F_NS_LIST, /* struct ns_globs: an array of namespace globs */
};

/* What a string must look like. */
enum str_rule {
	S_REL,	     /* relative path without "..", or "" */
	S_GLOB,	     /* the same, or "" (a class rule's path glob: any path) */
	S_ABS,	     /* absolute path */
	S_OUTPUT,    /* "-", "" or an absolute path */
	S_ADDR,	     /* an IPv4 or IPv6 address literal (no host names: nothing to resolve) */
	S_ABS_OPT,   /* an absolute path, or "" */
	S_NAME,	     /* a Kubernetes (DNS-1123) name, or "" */
	S_NS_GLOB,   /* a glob of namespace names, or "" */
	S_LABEL,     /* "key" or "key=value" of a Kubernetes label, or "" */
	S_NODE_GLOB, /* a glob of node names, or "" */
};

#define OPEN_LO 1 /* lo itself not allowed */
#define OPEN_HI 2

struct field {
	const char *key;
	enum ftype type;
	size_t off;  /* of the member, from the base struct */
	size_t size; /* F_INT: the member's width; F_STR: the array's size */
	double lo, hi;
	unsigned int open;
	double scale; /* F_NUM: the member is the JSON value / scale (100: percent to fraction) */
	const char *const *names; /* F_ENUM, NULL-terminated */
	enum str_rule rule;
	const struct field *sub; /* F_OBJ, ending with a zero entry */
	bool required;		 /* always needed, even over defaults */
};

#define AC	struct agent_config
#define OFF(m)	offsetof(AC, m)
#define SIZE(m) sizeof(((AC *)0)->m)
/* clang-format off */
#define BOOL(k, m)          {.key = k, .type = F_BOOL, .off = OFF(m)}
#define NUMO(k, m, l, h, o) {.key = k, .type = F_NUM, .off = OFF(m), .lo = l, .hi = h, .open = o, .scale = 1}
#define NUM(k, m, l, h)     NUMO(k, m, l, h, 0)
#define PCT(k, m, l, h)     {.key = k, .type = F_NUM, .off = OFF(m), .lo = l, .hi = h, .scale = 100}
#define INT(k, m, l, h)     {.key = k, .type = F_INT, .off = OFF(m), .size = SIZE(m), .lo = l, .hi = h}
#define STR(k, m, r)        {.key = k, .type = F_STR, .off = OFF(m), .size = SIZE(m), .rule = r}
#define ENUM(k, m, n)       {.key = k, .type = F_ENUM, .off = OFF(m), .names = n}
#define OBJ(k, s)           {.key = k, .type = F_OBJ, .sub = s}
/* clang-format on */

/* Enum members are stored through an int. */
_Static_assert(sizeof(enum suppress_policy) == sizeof(int) &&
		       sizeof(enum burst_policy) == sizeof(int) &&
		       sizeof(enum evict_action) == sizeof(int) &&
		       sizeof(enum qos_class) == sizeof(int),
	       "enums are int-sized");

static const char *const suppress_policies[] = {
	[SUPPRESS_CFS_QUOTA] = "cfsQuota",
	[SUPPRESS_CPUSET] = "cpuset",
	[SUPPRESS_SPLIT] = "split",
	NULL,
};
static const char *const burst_policies[] = {
	[BURST_NONE] = "none",
	[BURST_CPU_BURST_ONLY] = "cpuBurstOnly",
	[BURST_CFS_QUOTA_ONLY] = "cfsQuotaBurstOnly",
	[BURST_AUTO] = "auto",
	NULL,
};
static const char *const metrics_scopes[] = {
	[METRICS_SCOPE_UNITS] = "units",
	[METRICS_SCOPE_ALL] = "all",
	NULL,
};

static const char *const evict_actions[] = {
	[EVICT_REPORT] = "report",
	[EVICT_KILL] = "kill",
	[EVICT_KUBERNETES] = "kubernetes",
	NULL,
};

/* The ranges are explained in docs/agent-config.md; keep the two in step. */
static const struct field decisions_fields[] = {
	STR("file", decisions_file, S_OUTPUT),
	INT("ring", decisions_ring, 16, 1000000),
	{0},
};

static const struct field suppress_fields[] = {
	BOOL("enabled", policy.suppress.enabled),
	ENUM("policy", policy.suppress.policy, suppress_policies),
	PCT("threshold_percent", policy.suppress.threshold, 1, 100),
	NUM("min_cpus", policy.suppress.min_cpus, 0, 4096),
	PCT("max_growth_percent", policy.suppress.max_growth, 1, 100),
	PCT("min_change_percent", policy.suppress.min_change, 0, 100),
	BOOL("cpu_idle", policy.suppress.cpu_idle),
	{0},
};

static const struct field burst_fields[] = {
	ENUM("policy", policy.burst.policy, burst_policies),
	NUM("burst_percent", policy.burst.burst_percent, 0, 10000),
	NUMO("scale_up", policy.burst.scale_up, 1, 10, OPEN_LO),
	NUMO("scale_down", policy.burst.scale_down, 0, 1, OPEN_LO | OPEN_HI),
	NUM("max_percent", policy.burst.max_percent, 100, 10000),
	PCT("shared_pool_busy_percent", policy.burst.shared_pool_busy, 1, 100),
	PCT("throttled_min_percent", policy.burst.throttled_min, 0, 100),
	NUM("budget_cpu_s", policy.burst.budget_cpu_s, 0, 1000000),
	NUM("budget_period_s", policy.burst.budget_period_s, 1, 86400),
	{0},
};

static const struct field evict_memory_fields[] = {
	BOOL("enabled", policy.evict_memory.enabled),
	PCT("threshold_percent", policy.evict_memory.threshold, 1, 100),
	PCT("release_percent", policy.evict_memory.release, 1, 100),
	NUM("cooldown_s", policy.evict_memory.cooldown_s, 0, 3600),
	{0},
};

static const struct field evict_cpu_fields[] = {
	BOOL("enabled", policy.evict_cpu.enabled),
	PCT("satisfaction_lower_percent", policy.evict_cpu.satisfaction_lower, 1, 100),
	PCT("satisfaction_upper_percent", policy.evict_cpu.satisfaction_upper, 1, 100),
	PCT("be_usage_min_percent", policy.evict_cpu.be_usage_min, 1, 100),
	NUM("window_s", policy.evict_cpu.window_s, 1, 3600),
	NUM("cooldown_s", policy.evict_cpu.cooldown_s, 0, 3600),
	{0},
};

static const struct field evict_fields[] = {
	ENUM("action", evict_action, evict_actions),
	STR("nodes", evict_nodes, S_NODE_GLOB),
	OBJ("memory", evict_memory_fields),
	OBJ("cpu", evict_cpu_fields),
	BOOL("kube_system", policy.evict_order.kube_system),
	{.key = "opt_out_namespaces", .type = F_NS_LIST, .off = OFF(trust.opt_out_ns)},
	{0},
};

static const struct field runq_fields[] = {
	NUM("p99_us", policy.interference.rq_p99_us, 1, 10000000),
	INT("k", policy.interference.rq_k, 1, INTERFERENCE_RQ_N_MAX),
	INT("n", policy.interference.rq_n, 1, INTERFERENCE_RQ_N_MAX),
	INT("min_waits", policy.interference.rq_min_waits, 0, 1000000),
	{0},
};

static const struct field cpi_fields[] = {
	BOOL("enabled", policy.interference.cpi_enabled),
	NUM("sigma", policy.interference.cpi_sigma, 0.5, 10),
	NUM("min_cpus", policy.interference.cpi_min_cpus, 0, 4096),
	INT("min_samples", policy.interference.cpi_min_samples, 2, 100000),
	INT("outliers", policy.interference.cpi_outliers, 1, INTERFERENCE_CPI_OUTLIERS_MAX),
	NUM("window_s", policy.interference.cpi_window_s, 1, 86400),
	NUM("correlation", policy.interference.cpi_correlation, 0, 1),
	{0},
};

static const struct field mem_interference_fields[] = {
	BOOL("enabled", policy.mem_interference.enabled),
	PCT("stall_threshold_percent", policy.mem_interference.stall_share, 0.1, 100),
	PCT("io_threshold_percent", policy.mem_interference.io_share, 0, 100),
	INT("k", policy.mem_interference.k, 1, BREACH_N_MAX),
	INT("n", policy.mem_interference.n, 1, BREACH_N_MAX),
	PCT("culprit_min_share_percent", policy.mem_interference.culprit_min_share, 1, 100),
	NUM("report_s", policy.mem_interference.report_s, 1, 86400),
	{0},
};

static const struct field interference_fields[] = {
	BOOL("enabled", policy.interference.enabled),
	OBJ("runq", runq_fields),
	OBJ("cpi", cpi_fields),
	OBJ("memory", mem_interference_fields),
	PCT("culprit_min_share_percent", policy.interference.culprit_min_share, 1, 100),
	NUM("cap_cpus", policy.interference.cap_cpus, 0.01, 4096),
	NUM("cap_s", policy.interference.cap_s, 1, 86400),
	{0},
};

/* SLO control (docs/slo-control.md): one block, kept together. */
static const struct field slo_glob_fields[] = {
	{.key = "glob",
	 .type = F_STR,
	 .off = offsetof(struct slo_glob_target, glob),
	 .size = sizeof(((struct slo_glob_target *)0)->glob),
	 .rule = S_GLOB,
	 .required = true},
	{.key = "p99_us",
	 .type = F_NUM,
	 .off = offsetof(struct slo_glob_target, p99_us),
	 .lo = 1,
	 .hi = 10000000,
	 .scale = 1,
	 .required = true},
	{0},
};

static const struct field slo_target_fields[] = {
	NUM("lse_p99_us", policy.slo.lse_p99_us, 1, 10000000),
	NUM("lsr_p99_us", policy.slo.lsr_p99_us, 1, 10000000),
	NUM("ls_p99_us", policy.slo.ls_p99_us, 1, 10000000),
	NUM("annotation_min_us", policy.slo.annotation_min_us, 1, 10000000),
	{.key = "globs", .type = F_GLOBS},
	{0},
};

static const struct field slo_fields[] = {
	BOOL("enabled", policy.slo.enabled),
	OBJ("targets", slo_target_fields),
	INT("min_waits", policy.slo.min_waits, 1, 1000000),
	PCT("culprit_min_share_percent", policy.slo.culprit_min_share, 1, 100),
	PCT("displaced_percent", policy.slo.displaced_share, 0, 100),
	NUMO("cut_factor", policy.slo.cut_factor, 0, 1, OPEN_LO | OPEN_HI),
	NUMO("grow_cpus", policy.slo.grow_cpus, 0, 4096, OPEN_LO),
	NUMO("slack_ratio", policy.slo.slack_ratio, 0, 1, OPEN_LO),
	NUM("dwell_s", policy.slo.dwell_s, 0, 3600),
	NUM("floor_cpus", policy.slo.floor_cpus, 0.01, 4096),
	{0},
};

/* Batch capacity (docs/capacity.md): one block, kept together. */
static const struct field capacity_node_status_fields[] = {
	BOOL("enabled", kube.batch_status),
	/* more than half would publish less than half of what the node can keep */
	PCT("step_percent", policy.capacity.step, 0, 50),
	NUM("hold_s", policy.capacity.hold_s, 1, 86400),
	NUM("min_interval_s", kube.batch_min_interval_s, 1, 86400),
	{0},
};

static const struct field capacity_fields[] = {
	BOOL("enabled", policy.capacity.enabled),
	PCT("cpu_threshold_percent", policy.capacity.cpu_threshold, 1, 100),
	PCT("memory_threshold_percent", policy.capacity.mem_threshold, 1, 100),
	NUM("window_s", policy.capacity.window_s, 1, 86400),
	PCT("percentile", policy.capacity.percentile, 50, 100),
	NUM("cpu_reserve_cpus", policy.capacity.cpu_reserve, 0, 4096),
	NUM("memory_reserve_bytes", policy.capacity.mem_reserve, 0, 1e15),
	NUM("stale_s", policy.capacity.stale_s, 1, 86400),
	PCT("min_change_percent", policy.capacity.min_change, 0, 100),
	OBJ("node_status", capacity_node_status_fields),
	{0},
};

/* Batch resources into BE cgroups, and their overcommit eviction (docs/batch-resources.md). */
static const struct field batch_evict_fields[] = {
	BOOL("enabled", policy.batch.evict),
	NUM("after_s", policy.batch.evict_after_s, 1, 86400),
	NUM("cooldown_s", policy.batch.evict_cooldown_s, 0, 3600),
	{0},
};

static const struct field batch_fields[] = {
	BOOL("enabled", policy.batch.enabled),
	BOOL("cpu_quota", policy.batch.cpu_quota),
	BOOL("memory_limit", policy.batch.memory_limit),
	OBJ("evict", batch_evict_fields),
	{0},
};

/* Memory QoS (docs/memory-qos.md): one block, kept together. */
/* clang-format off */
#define MEMORY_QOS_CLASS_FIELDS(c) {                                       \
	PCT("min_percent", policy.memory_qos.c.min_share, 0, 100),         \
	PCT("low_percent", policy.memory_qos.c.low_share, 0, 100),         \
	{0},                                                               \
}
/* clang-format on */
static const struct field memory_qos_lse_fields[] = MEMORY_QOS_CLASS_FIELDS(lse);
static const struct field memory_qos_lsr_fields[] = MEMORY_QOS_CLASS_FIELDS(lsr);
static const struct field memory_qos_ls_fields[] = MEMORY_QOS_CLASS_FIELDS(ls);
static const struct field memory_qos_fields[] = {
	BOOL("enabled", policy.memory_qos.enabled),
	OBJ("lse", memory_qos_lse_fields),
	OBJ("lsr", memory_qos_lsr_fields),
	OBJ("ls", memory_qos_ls_fields),
	/* below 100: protection equal to the limit leaves page cache unreclaimable (OOM kills) */
	PCT("limit_cap_percent", policy.memory_qos.limit_cap, 1, 99),
	PCT("be_throttling_percent", policy.memory_qos.throttling, 1, 100),
	PCT("be_free_percent", policy.memory_qos.free_share, 1, 100),
	PCT("min_change_percent", policy.memory_qos.min_change, 0, 100),
	{0},
};

/* Memory suppression (docs/agent-policies.md): MiB in the file, bytes in the policy. */
#define MIB_TO_BYTES(k, m, l, h)                                                                   \
	{                                                                                          \
		.key = k, .type = F_NUM, .off = OFF(m), .lo = l, .hi = h, .scale = 1.0 / (1 << 20) \
	}
static const struct field mem_suppress_evict_fields[] = {
	BOOL("enabled", policy.mem_suppress.evict),
	NUM("after_s", policy.mem_suppress.evict_after_s, 1, 86400),
	NUM("cooldown_s", policy.mem_suppress.evict_cooldown_s, 0, 3600),
	{0},
};

static const struct field mem_suppress_fields[] = {
	BOOL("enabled", policy.mem_suppress.enabled),
	PCT("reclaim_percent", policy.mem_suppress.reclaim_share, 1, 100),
	NUM("reclaim_interval_s", policy.mem_suppress.reclaim_interval_s, 0, 3600),
	PCT("cut_percent", policy.mem_suppress.steps.cut_share, 1, 100),
	/* at least 16 MiB: a v1 limit right at anon OOM-kills on the next allocation burst */
	MIB_TO_BYTES("margin_mib", policy.mem_suppress.margin_bytes, 16, 1048576),
	NUM("well_s", policy.mem_suppress.steps.well_s, 0, 86400),
	PCT("grow_percent", policy.mem_suppress.steps.grow_share, 0.1, 100),
	MIB_TO_BYTES("min_change_mib", policy.mem_suppress.steps.min_change, 0, 1048576),
	OBJ("evict", mem_suppress_evict_fields),
	{0},
};

/* I/O suppression (docs/agent-policies.md): MiB a second in the file, bytes a second in the policy.
 */
static const struct field io_suppress_fields[] = {
	BOOL("enabled", policy.io_suppress.enabled),
	PCT("cut_percent", policy.io_suppress.steps.cut_share, 1, 100),
	/* at least 1 MiB/s: a throttle near 0 stalls the pod's every read (its own fsync included)
	 */
	MIB_TO_BYTES("floor_mib_s", policy.io_suppress.floor_bps, 1, 1048576),
	NUM("well_s", policy.io_suppress.steps.well_s, 0, 86400),
	PCT("grow_percent", policy.io_suppress.steps.grow_share, 0.1, 100),
	MIB_TO_BYTES("min_change_mib_s", policy.io_suppress.steps.min_change, 0, 1048576),
	{0},
};

static const struct field http_fields[] = {
	BOOL("enabled", http.enabled),
	STR("address", http.address, S_ADDR),
	INT("port", http.port, 1, 65535),
	INT("health_port", http.health_port, 0, 65535),
	STR("health_socket", http.health_socket, S_ABS_OPT),
	ENUM("cgroups", http.cgroups, metrics_scopes),
	{0},
};

static const struct field kube_event_fields[] = {
	BOOL("enabled", kube.events),
	NUM("interval_s", kube.event_interval_s, 1, 86400),
	INT("per_minute", kube.events_per_minute, 1, 6000),
	BOOL("name_culprits", kube.event_name_culprits),
	{0},
};

static const struct field kube_condition_fields[] = {
	BOOL("enabled", kube.node_condition),
	NUM("hold_s", kube.condition_hold_s, 1, 86400),
	{0},
};

static const struct field kube_fields[] = {
	BOOL("enabled", kube.enabled),
	STR("kubeconfig", kube.kubeconfig, S_ABS_OPT),
	STR("node_name", kube.node_name, S_NAME),
	NUM("resync_s", kube.resync_s, 0, 86400),
	NUM("timeout_s", kube.timeout_s, 1, 120),
	OBJ("events", kube_event_fields),
	OBJ("node_condition", kube_condition_fields),
	{0},
};

/* What a pod's koordinator.sh/qosClass label may decide (user/collect/pod_trust.h). */
static const struct field qos_label_fields[] = {
	BOOL("enabled", trust.qos_label),
	INT("production_priority", trust.production_priority, 1, 2147483647),
	{0},
};

static const struct field top_fields[] = {
	STR("cgroup_root", cgroup_root, S_REL),
	NUM("interval_s", interval_s, 0.1, 60),
	BOOL("dry_run", dry_run),
	BOOL("fast_path", fast_path),
	STR("state_dir", state_dir, S_ABS),
	STR("cpu_manager_state", cpu_manager_state, S_ABS_OPT),
	OBJ("decisions", decisions_fields),
	{.key = "classes", .type = F_RULES},
	OBJ("qos_label", qos_label_fields),
	{.key = "daemonset_namespaces", .type = F_NS_LIST, .off = OFF(trust.daemonset_ns)},
	OBJ("suppress", suppress_fields),
	OBJ("burst", burst_fields),
	OBJ("evict", evict_fields),
	OBJ("interference", interference_fields),
	OBJ("capacity", capacity_fields),
	OBJ("batch_resources", batch_fields),
	OBJ("memory_qos", memory_qos_fields),
	OBJ("memory_suppress", mem_suppress_fields),
	OBJ("io_suppress", io_suppress_fields),
	OBJ("slo", slo_fields),
	OBJ("http", http_fields),
	OBJ("kubernetes", kube_fields),
	{0},
};

/* One element of "classes": offsets from struct class_rule. */
static const struct field rule_fields[] = {
	{.key = "glob",
	 .type = F_STR,
	 .off = offsetof(struct class_rule, glob),
	 .size = sizeof(((struct class_rule *)0)->glob),
	 .rule = S_GLOB},
	{.key = "namespace",
	 .type = F_STR,
	 .off = offsetof(struct class_rule, ns),
	 .size = sizeof(((struct class_rule *)0)->ns),
	 .rule = S_NS_GLOB},
	{.key = "label",
	 .type = F_STR,
	 .off = offsetof(struct class_rule, label),
	 .size = sizeof(((struct class_rule *)0)->label),
	 .rule = S_LABEL},
	{.key = "class",
	 .type = F_CLASS,
	 .off = offsetof(struct class_rule, cls),
	 .required = true},
	{0},
};

/* Where an error message is being written. */
struct ctx {
	char *err;
	size_t len, pos;
	bool complete; /* every key must be present: the embedded defaults */
};

static void put(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct ctx *x, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (x->pos >= x->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(x->err + x->pos, x->len - x->pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		x->pos += (size_t)n;
}

/* Starts the message "<path>.<key>: " (either may be empty). */
static void start(struct ctx *x, const char *path, const char *key)
{
	x->pos = 0;
	if (x->len)
		x->err[0] = '\0';
	if (!*path && !key)
		put(x, "top level: ");
	else
		put(x, "%s%s%s: ", path, *path && key ? "." : "", key ? key : "");
}

/* The shortest decimal that reads back as v: messages say what the user wrote. */
struct num {
	char s[32];
};

static struct num num(double v)
{
	struct num n;

	if (v == trunc(v) && fabs(v) < 1e15) { /* 1000000, not 1e+06 */
		snprintf(n.s, sizeof(n.s), "%.0f", v);
		return n;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(n.s, sizeof(n.s), "%.*g", prec, v);
		if (strtod(n.s, NULL) == v)
			break;
	}
	return n;
}

/*
 * The JSON value q that config_parse() stores as `stored` (q / scale ==
 * stored), written as briefly as possible: 65, not 65.00000000000001.
 */
static double json_units(double stored, double scale)
{
	double x = stored * scale, up = x, down = x;

	for (int prec = 1; prec <= 17; prec++) {
		char s[32];
		double q;

		snprintf(s, sizeof(s), "%.*g", prec, x);
		q = strtod(s, NULL);
		if (q / scale == stored)
			return q;
	}
	/* Not seen in tests (the loop above finds the decimal the user wrote), but x
	 * can be a few ulps from it after two roundings: its neighbours then. */
	for (int i = 0; i < 4; i++) {
		up = nextafter(up, INFINITY);
		down = nextafter(down, -INFINITY);
		if (up / scale == stored)
			return up;
		if (down / scale == stored)
			return down;
	}
	return x;
}

static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
		return "true";
	case JSON_FALSE:
		return "false";
	default:
		return "null";
	}
}

static const char *const str_allowed[] = {
	[S_REL] = "a path relative to the cpu controller's root, without a leading '/' or \"..\"; "
		  "\"\" to detect the kubepods root",
	[S_GLOB] = "a glob of cgroup paths relative to the cpu controller's root, without a "
		   "leading '/' or \"..\", or \"\" for any path",
	[S_ABS] = "an absolute path",
	[S_OUTPUT] = "\"-\" for stdout, \"\" for none, or an absolute path",
	[S_ADDR] = "an IPv4 or IPv6 address such as \"127.0.0.1\", \"0.0.0.0\" or \"::1\"",
	[S_ABS_OPT] = "an absolute path, or \"\"",
	[S_NAME] = "a node name (lowercase letters, digits, '-' and '.'), or \"\"",
	[S_NS_GLOB] = "a glob of namespace names (lowercase letters, digits, '-' and the glob "
		      "characters *?[]!), or \"\" for any namespace",
	[S_LABEL] = "a label \"key\" (any value) or \"key=value\", or \"\" for any labels",
	[S_NODE_GLOB] = "a glob of node names (lowercase letters, digits, '-', '.' and the glob "
			"characters *?[]!), or \"\" for every node",
};

/* Appends " (allowed: ...)" for f and returns -EINVAL. */
static int allowed(struct ctx *x, const struct field *f)
{
	put(x, " (allowed: ");
	switch (f->type) {
	case F_BOOL:
		put(x, "true, false");
		break;
	case F_NUM:
	case F_INT:
		if (!f->open)
			put(x, "%s to %s", num(f->lo).s, num(f->hi).s);
		else
			put(x, "%s %s, %s %s", f->open & OPEN_LO ? "more than" : "at least",
			    num(f->lo).s, f->open & OPEN_HI ? "less than" : "at most",
			    num(f->hi).s);
		break;
	case F_STR:
		put(x, "%s, at most %zu bytes", str_allowed[f->rule], f->size - 1);
		break;
	case F_ENUM:
		for (int i = 0; f->names[i]; i++)
			put(x, "%s%s", i ? ", " : "", f->names[i]);
		break;
	case F_CLASS:
		for (int i = QOS_SYSTEM; i < QOS_NR; i++)
			put(x, "%s%s", i > QOS_SYSTEM ? ", " : "", qos_class_name(i));
		break;
	case F_OBJ:
		put(x, "an object");
		break;
	case F_RULES:
		put(x,
		    "an array of at most %d rules {\"glob\", \"namespace\", \"label\", "
		    "\"class\"}, each with a class and at least one of the others",
		    CONFIG_MAX_CLASS_RULES);
		break;
	case F_GLOBS:
		put(x, "an array of at most %d targets {\"glob\", \"p99_us\"}", SLO_MAX_GLOBS);
		break;
	case F_NS_LIST:
		put(x,
		    "an array of at most %d namespace globs (lowercase letters, digits, '-' and "
		    "the glob characters *?[]!, 1 to 63 bytes each)",
		    POD_TRUST_MAX_NS);
		break;
	}
	put(x, ")");
	return -EINVAL;
}

static int wrong_type(struct ctx *x, const char *path, const struct field *f, const json_t *v,
		      const char *want)
{
	start(x, path, f->key);
	put(x, "expected %s, got %s", want, json_kind(v));
	return -EINVAL;
}

/* Why s breaks rule r, or NULL. */
static const char *str_problem(enum str_rule r, const char *s)
{
	size_t n = strlen(s);

	switch (r) {
	case S_ABS:
		return s[0] == '/' ? NULL : "is not an absolute path";
	case S_ABS_OPT:
		return !n || s[0] == '/' ? NULL : "is not an absolute path";
	case S_NAME:
		return !n || kube_name_valid(s) ? NULL : "is not a valid node name";
	case S_OUTPUT:
		return !strcmp(s, "-") || !n || s[0] == '/' ? NULL : "is not an absolute path";
	case S_ADDR: {
		struct in6_addr a;

		return inet_pton(AF_INET, s, &a) == 1 || inet_pton(AF_INET6, s, &a) == 1
			       ? NULL
			       : "is not an IP address";
	}
	case S_NS_GLOB:
		return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-*?[]!") == n
			       ? NULL
			       : "is not a glob of namespace names";
	case S_NODE_GLOB:
		return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-.*?[]!") == n
			       ? NULL
			       : "is not a glob of node names";
	case S_LABEL:
		return label_problem(s);
	case S_GLOB:
	case S_REL:
		if (s[0] == '/')
			return "starts with '/'";
		/* a ".." component could leave the managed subtree */
		for (const char *p = s; (p = strstr(p, "..")); p += 2)
			if ((p == s || p[-1] == '/') && (p[2] == '/' || !p[2]))
				return "has a \"..\" component";
		return NULL;
	}
	return NULL;
}

static int apply_object(struct ctx *x, const struct field *fields, void *base, const json_t *obj,
			const char *path);
static int apply_rules(struct ctx *x, struct agent_config *c, const json_t *v, const char *path);
static int apply_slo_globs(struct ctx *x, struct agent_config *c, const json_t *v,
			   const char *path);
static int apply_ns_list(struct ctx *x, const struct field *f, struct ns_globs *list,
			 const json_t *v, const char *path);

static void store_uint(void *p, size_t size, uint64_t v)
{
	if (size == sizeof(uint32_t)) {
		uint32_t u = (uint32_t)v;

		memcpy(p, &u, sizeof(u));
	} else {
		memcpy(p, &v, sizeof(v));
	}
}

static uint64_t load_uint(const void *p, size_t size)
{
	uint32_t u;
	uint64_t v;

	if (size == sizeof(uint32_t)) {
		memcpy(&u, p, sizeof(u));
		return u;
	}
	memcpy(&v, p, sizeof(v));
	return v;
}

static int check_range(struct ctx *x, const char *path, const struct field *f, double v)
{
	bool low = f->open & OPEN_LO ? v <= f->lo : v < f->lo;
	bool high = f->open & OPEN_HI ? v >= f->hi : v > f->hi;

	if (!low && !high)
		return 0;
	start(x, path, f->key);
	put(x, "%s is out of range", num(v).s);
	return allowed(x, f);
}

static int apply_value(struct ctx *x, const struct field *f, void *base, const json_t *v,
		       const char *path)
{
	char *p = (char *)base + f->off;
	char sub[96];
	double d;
	int r;

	switch (f->type) {
	case F_BOOL:
		if (!json_is_boolean(v))
			return wrong_type(x, path, f, v, "true or false");
		*(bool *)p = json_is_true(v);
		return 0;
	case F_NUM:
		if (!json_is_number(v))
			return wrong_type(x, path, f, v, "a number");
		d = json_number_value(v);
		r = check_range(x, path, f, d);
		if (r)
			return r;
		/* + 0.0 turns -0 into 0: a config must compare equal to its round trip */
		*(double *)p = d / f->scale + 0.0;
		return 0;
	case F_INT:
		if (!json_is_number(v))
			return wrong_type(x, path, f, v, "an integer");
		d = json_number_value(v);
		if (d != trunc(d)) { /* 3.0 is 3, 1.5 is no count */
			start(x, path, f->key);
			put(x, "expected an integer, got %s", num(d).s);
			return -EINVAL;
		}
		r = check_range(x, path, f, d);
		if (r)
			return r;
		store_uint(p, f->size, (uint64_t)d);
		return 0;
	case F_STR: {
		const char *s, *why;

		if (!json_is_string(v))
			return wrong_type(x, path, f, v, "a string");
		s = json_string_value(v);
		if (json_string_length(v) >= f->size) {
			start(x, path, f->key);
			put(x, "%zu bytes is too long", json_string_length(v));
			return allowed(x, f);
		}
		why = str_problem(f->rule, s);
		if (why) {
			start(x, path, f->key);
			put(x, "\"%s\" %s", s, why);
			return allowed(x, f);
		}
		strncpy(p, s, f->size); /* zero-fills the tail: configs compare with memcmp */
		return 0;
	}
	case F_ENUM:
	case F_CLASS: {
		const char *s;
		enum qos_class cls;

		if (!json_is_string(v))
			return wrong_type(x, path, f, v, "a string");
		s = json_string_value(v);
		if (f->type == F_CLASS) {
			if (!qos_class_parse(s, &cls) && cls != QOS_UNMANAGED) {
				*(int *)p = cls;
				return 0;
			}
		} else {
			for (int i = 0; f->names[i]; i++)
				if (!strcmp(s, f->names[i])) {
					*(int *)p = i;
					return 0;
				}
		}
		start(x, path, f->key);
		put(x, "unknown value \"%s\"", s);
		return allowed(x, f);
	}
	case F_OBJ:
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", f->key);
		return apply_object(x, f->sub, base, v, sub);
	case F_RULES:
		return apply_rules(x, base, v, path);
	case F_GLOBS:
		return apply_slo_globs(x, base, v, path);
	case F_NS_LIST:
		return apply_ns_list(x, f, (struct ns_globs *)p, v, path);
	}
	return 0;
}

static const struct field *find_field(const struct field *fields, const char *key)
{
	for (const struct field *f = fields; f->key; f++)
		if (!strcmp(f->key, key))
			return f;
	return NULL;
}

static int apply_object(struct ctx *x, const struct field *fields, void *base, const json_t *obj,
			const char *path)
{
	const char *key;
	json_t *v;
	int r;

	if (!json_is_object(obj)) {
		start(x, path, NULL);
		put(x, "expected an object, got %s", json_kind(obj));
		return -EINVAL;
	}
	json_object_foreach((json_t *)obj, key, v)
	{
		const struct field *f = find_field(fields, key);

		if (!f) {
			start(x, path, key);
			put(x, "unknown key (allowed keys: ");
			for (f = fields; f->key; f++)
				put(x, "%s%s", f == fields ? "" : ", ", f->key);
			put(x, ")");
			return -EINVAL;
		}
		r = apply_value(x, f, base, v, path);
		if (r)
			return r;
	}
	for (const struct field *f = fields; f->key; f++)
		if ((f->required || x->complete) && !json_object_get(obj, f->key)) {
			start(x, path, f->key);
			put(x, "missing");
			return allowed(x, f);
		}
	return 0;
}

/* An array field (self, at path) of at most max elements ("what"s). */
static int check_array(struct ctx *x, const char *path, const struct field *self, const json_t *v,
		       size_t max, const char *what)
{
	if (!json_is_array(v))
		return wrong_type(x, path, self, v, "an array");
	if (json_array_size(v) <= max)
		return 0;
	start(x, path, self->key);
	put(x, "%zu %s is too many", json_array_size(v), what);
	return allowed(x, self);
}

static int apply_rules(struct ctx *x, struct agent_config *c, const json_t *v, const char *path)
{
	static const struct field self = {.key = "classes", .type = F_RULES};
	char sub[32];
	size_t i;
	json_t *e;
	int r;

	r = check_array(x, path, &self, v, CONFIG_MAX_CLASS_RULES, "rules");
	if (r)
		return r;
	memset(c->classes, 0, sizeof(c->classes));
	c->n_classes = json_array_size(v);
	json_array_foreach(v, i, e)
	{
		struct class_rule *rule = &c->classes[i];

		snprintf(sub, sizeof(sub), "classes[%zu]", i);
		r = apply_object(x, rule_fields, rule, e, sub);
		if (r)
			return r;
		/* a rule with no matcher would class every cgroup under the root */
		if (!rule->glob[0] && !rule->ns[0] && !rule->label[0]) {
			start(x, sub, NULL);
			put(x, "no glob, namespace or label: the rule would match every cgroup");
			return allowed(x, &self);
		}
	}
	return 0;
}

/* slo.targets.globs replaces the default list whole, as "classes" does. */
static int apply_slo_globs(struct ctx *x, struct agent_config *c, const json_t *v, const char *path)
{
	static const struct field self = {.key = "globs", .type = F_GLOBS};
	struct slo_config *slo = &c->policy.slo;
	char sub[64];
	size_t i;
	json_t *e;
	int r;

	r = check_array(x, path, &self, v, SLO_MAX_GLOBS, "targets");
	if (r)
		return r;
	memset(slo->globs, 0, sizeof(slo->globs));
	slo->n_globs = json_array_size(v);
	json_array_foreach(v, i, e)
	{
		snprintf(sub, sizeof(sub), "%s.globs[%zu]", path, i);
		r = apply_object(x, slo_glob_fields, &slo->globs[i], e, sub);
		if (r)
			return r;
	}
	return 0;
}

/* A list of namespace globs replaces the default list whole; "" would match any namespace. */
static int apply_ns_list(struct ctx *x, const struct field *f, struct ns_globs *list,
			 const json_t *v, const char *path)
{
	size_t i;
	json_t *e;
	int r = check_array(x, path, f, v, POD_TRUST_MAX_NS, "namespaces");

	if (r)
		return r;
	memset(list, 0, sizeof(*list));
	json_array_foreach(v, i, e)
	{
		const char *s = json_string_value(e);

		if (!s || !s[0] || json_string_length(e) >= sizeof(list->ns[0]) ||
		    str_problem(S_NS_GLOB, s)) {
			start(x, path, f->key);
			put(x, "element %zu is not a namespace glob", i);
			return allowed(x, f);
		}
		strncpy(list->ns[i], s, sizeof(list->ns[i]));
	}
	list->n = json_array_size(v);
	return 0;
}

enum rel { LT, LE, GE };

/* Cross-field rule: the field at path (value v) must be rel bound (other's value). */
static int need(struct ctx *x, const char *path, double v, enum rel rel, const char *other,
		double bound)
{
	static const char *const words[] = {
		[LT] = "less than", [LE] = "at most", [GE] = "at least"};
	bool ok = rel == LT ? v < bound : rel == LE ? v <= bound : v >= bound;

	if (ok)
		return 0;
	start(x, path, NULL);
	put(x, "%s must be %s %s (allowed: %s %s)", num(v).s, words[rel], other, words[rel],
	    num(bound).s);
	return -EINVAL;
}

static int check_cross(struct ctx *x, const struct agent_config *c)
{
	const struct policy_config *p = &c->policy;
	const struct interference_config *in = &p->interference;
	/* One CPI sample per tick: the window must hold `outliers` of them (the
	 * epsilon keeps 1.2 / 0.1 from flooring to 11). */
	double samples = floor(in->cpi_window_s / c->interval_s + 1e-9);

	int r = need(x, "suppress.min_change_percent", json_units(p->suppress.min_change, 100), LE,
		     "suppress.max_growth_percent", json_units(p->suppress.max_growth, 100)) ?:
		need(x, "evict.memory.release_percent", json_units(p->evict_memory.release, 100), LT,
		     "evict.memory.threshold_percent", json_units(p->evict_memory.threshold, 100)) ?:
		need(x, "evict.cpu.satisfaction_lower_percent",
		     json_units(p->evict_cpu.satisfaction_lower, 100), LT,
		     "evict.cpu.satisfaction_upper_percent",
		     json_units(p->evict_cpu.satisfaction_upper, 100)) ?:
		need(x, "evict.cpu.window_s", p->evict_cpu.window_s, GE, "interval_s", c->interval_s) ?:
		need(x, "interference.runq.k", in->rq_k, LE, "interference.runq.n", in->rq_n) ?:
		need(x, "interference.memory.k", p->mem_interference.k, LE,
		     "interference.memory.n", p->mem_interference.n) ?:
		need(x, "interference.cpi.outliers", in->cpi_outliers, LE,
		     "interference.cpi.window_s / interval_s", samples);

	/*
	 * capacity: a window of one tick has no percentile; staleness needs ticks
	 * to miss; a hold shorter than the window would let the published figure
	 * grow on a peak the formula still counts
	 */
	r = r ?: need(x, "capacity.window_s", p->capacity.window_s, GE, "interval_s",
		      c->interval_s) ?:
		 need(x, "capacity.stale_s", p->capacity.stale_s, GE, "2 x interval_s",
		      2 * c->interval_s) ?:
		 need(x, "capacity.node_status.hold_s", p->capacity.hold_s, GE,
		      "capacity.window_s", p->capacity.window_s);
	/*
	 * LS units confined by a split use at most their CPUs: only the
	 * threshold's headroom lets their use cross it when they need more.
	 */
	if (!r && p->suppress.policy == SUPPRESS_SPLIT)
		r = need(x, "suppress.threshold_percent", json_units(p->suppress.threshold, 100),
			 LE, "95 with policy \"split\"", 95);
	if (!r && c->evict_action == EVICT_KUBERNETES && !c->kube.enabled) {
		start(x, "evict.action", NULL);
		put(x, "\"kubernetes\" needs kubernetes.enabled: true");
		return -EINVAL;
	}
	if (!r && c->evict_nodes[0] && !c->kube.enabled) {
		start(x, "evict.nodes", NULL);
		put(x, "\"%s\" needs kubernetes.enabled: true (the node's name)", c->evict_nodes);
		return -EINVAL;
	}
	if (r || !p->burst.budget_cpu_s)
		return r;
	/* a budget renewed between two ticks could not be accounted */
	return need(x, "burst.budget_period_s", p->burst.budget_period_s, GE, "interval_s",
		    c->interval_s);
}

/* check_cross() on c, its message after prefix. */
static int check_cross_as(struct ctx *x, const struct agent_config *c, const char *prefix)
{
	char msg[512];
	struct ctx y = {.err = msg, .len = sizeof(msg)};

	if (!check_cross(&y, c))
		return 0;
	x->pos = 0;
	put(x, "%s: %s", prefix, msg);
	return -EINVAL;
}

/* One element of "overrides", checked over the base config (into *tmp). */
static int check_override(struct ctx *x, const struct agent_config *base, struct agent_config *tmp,
			  const json_t *o, size_t i, const json_t *list)
{
	const char *name = json_string_value(json_object_get(o, "name")), *key, *what;
	const json_t *sel = json_object_get(o, "nodeSelector"), *doc = json_object_get(o, "config");
	char path[64], msg[512];
	json_t *v;

	snprintf(path, sizeof(path), "overrides[%zu]", i);
	if (!json_is_object(o)) {
		start(x, path, NULL);
		put(x, "expected an object (name, nodeSelector, config)");
		return -EINVAL;
	}
	json_object_foreach((json_t *)o, key, v) if (strcmp(key, "name") &&
						     strcmp(key, "nodeSelector") &&
						     strcmp(key, "config"))
	{
		start(x, path, key);
		put(x, "unknown key (allowed keys: name, nodeSelector, config)");
		return -EINVAL;
	}
	if (!name || !name[0] || strlen(name) > 63 || !kube_name_valid(name) || strchr(name, '.')) {
		start(x, path, "name");
		put(x, "%s (allowed: a DNS label: 1 to 63 lowercase letters, digits and '-')",
		    name ? "is not a DNS label" : "missing");
		return -EINVAL;
	}
	for (size_t j = 0; j < i; j++)
		if (!strcmp(name,
			    json_string_value(json_object_get(json_array_get(list, j), "name")))) {
			start(x, path, "name");
			put(x, "\"%s\" is taken by overrides[%zu] (allowed: a name of its own)",
			    name, j);
			return -EINVAL;
		}
	snprintf(path, sizeof(path), "overrides[%zu] (%s)", i, name);
	if (!sel || node_selector_check(sel, msg, sizeof(msg))) {
		start(x, path, "nodeSelector");
		put(x, "%s", sel ? msg : "missing ({} selects every node)");
		return -EINVAL;
	}
	if (!doc) {
		start(x, path, "config");
		put(x, "missing (the settings this override changes)");
		return -EINVAL;
	}
	memcpy(tmp, base, sizeof(*tmp));
	snprintf(path, sizeof(path), "overrides[%zu].config", i);
	if (apply_object(x, top_fields, tmp, doc, path))
		return -EINVAL;
	snprintf(path, sizeof(path), "overrides[%zu] (%s)", i, name);
	if (check_cross_as(x, tmp, path))
		return -EINVAL;
	/* applied at a reload when the node's labels change: only what a reload may change */
	if ((what = config_restart_only_change(base, tmp))) {
		start(x, path, "config");
		put(x, "sets %s, which takes a restart (allowed: settings a reload may change)",
		    what);
		return -EINVAL;
	}
	return 0;
}

/*
 * The document's "overrides" over the base config *c: each is checked whole
 * over the base (a bad one refuses the document, whether or not it applies
 * on this node), then those whose nodeSelector matches labels are applied
 * in order, later ones over earlier ones. applied: their names.
 */
static int apply_overrides(struct ctx *x, struct agent_config *c, const json_t *list,
			   struct config_node *node)
{
	struct agent_config *tmp = malloc(sizeof(*tmp));
	const json_t *o;
	size_t i, n = 0;
	int r = 0;

	if (!tmp) {
		x->pos = 0;
		put(x, "out of memory");
		return -ENOMEM;
	}
	if (!json_is_array(list)) {
		start(x, "", "overrides");
		put(x, "expected an array of {name, nodeSelector, config}");
		r = -EINVAL;
	}
	json_array_foreach(list, i, o) if (!r) r = check_override(x, c, tmp, o, i, list);
	memcpy(tmp, c, sizeof(*tmp));
	json_array_foreach(list, i, o)
	{
		const char *name = json_string_value(json_object_get(o, "name"));
		char path[64];

		if (r || !node ||
		    !node_selector_match(json_object_get(o, "nodeSelector"), node->labels))
			continue;
		snprintf(path, sizeof(path), "overrides[%zu].config", i);
		r = apply_object(x, top_fields, tmp, json_object_get(o, "config"), path);
		snprintf(node->applied + strlen(node->applied),
			 sizeof(node->applied) - strlen(node->applied), "%s%s", n++ ? ", " : "",
			 name);
	}
	/* each one was fine alone: together they may not be */
	if (!r && n > 1) {
		char prefix[sizeof(node->applied) + 32];

		snprintf(prefix, sizeof(prefix), "overrides %s together", node->applied);
		r = check_cross_as(x, tmp, prefix);
	}
	if (!r)
		memcpy(c, tmp, sizeof(*tmp));
	free(tmp);
	return r;
}

/* Applies doc over *c (left half-applied on error: callers work on a copy). */
static int apply_text(struct ctx *x, struct agent_config *c, const char *text,
		      struct config_node *node)
{
	json_error_t je;
	json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &je), *overrides;
	int r;

	if (node)
		node->applied[0] = '\0';
	if (!doc) {
		x->pos = 0; /* no field yet: the position instead */
		put(x, "invalid JSON at line %d, column %d: %s", je.line, je.column, je.text);
		return -EINVAL;
	}
	overrides = json_incref(json_object_get(doc, "overrides"));
	if (node)
		node->listed = json_array_size(overrides);
	if (overrides)
		json_object_del(doc, "overrides");
	r = apply_object(x, top_fields, c, doc, "") ?: check_cross(x, c);
	if (!r && overrides)
		r = apply_overrides(x, c, overrides, node);
	json_decref(overrides);
	json_decref(doc);
	return r;
}

const char *config_default_json(void)
{
	return config_default_json_text;
}

void config_defaults(struct agent_config *c)
{
	char err[512];
	struct ctx x = {.err = err, .len = sizeof(err), .complete = true};

	memset(c, 0, sizeof(*c)); /* padding too: configs compare with memcmp */
	if (apply_text(&x, c, config_default_json_text, NULL)) {
		fprintf(stderr, "qoslet: embedded default config: %s\n", err);
		abort();
	}
}

int config_parse(struct agent_config *c, const char *json_text, char *err, size_t errlen)
{
	return config_parse_node(c, json_text, NULL, err, errlen);
}

int config_parse_node(struct agent_config *c, const char *json_text, struct config_node *node,
		      char *err, size_t errlen)
{
	struct ctx x = {.err = err, .len = err ? errlen : 0};
	struct agent_config tmp;
	int r;

	config_defaults(c);
	if (x.len)
		err[0] = '\0';
	memcpy(&tmp, c, sizeof(tmp));
	r = apply_text(&x, &tmp, json_text, node);
	if (!r)
		memcpy(c, &tmp, sizeof(tmp));
	else if (node)
		node->applied[0] = '\0';
	return r;
}

/* The whole file, NUL-terminated, in *text (free() it). Returns 0 or -errno. */
static int read_all(const char *path, char **text)
{
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r = 0;

	if (fd < 0 || !buf) {
		r = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t got = read(fd, buf + n, cap - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			goto out;
		}
		if (!got)
			break;
		n += (size_t)got;
		if (n == cap) {
			char *bigger;

			if (cap >= CONFIG_FILE_MAX) {
				r = -EFBIG;
				goto out;
			}
			cap *= 2;
			bigger = realloc(buf, cap + 1);
			if (!bigger) {
				r = -ENOMEM;
				goto out;
			}
			buf = bigger;
		}
	}
	buf[n] = '\0';
	*text = buf;
	buf = NULL;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

int config_load(struct agent_config *c, const char *path, char *err, size_t errlen)
{
	return config_load_node(c, path, NULL, err, errlen);
}

int config_load_node(struct agent_config *c, const char *path, struct config_node *node, char *err,
		     size_t errlen)
{
	char msg[1024];
	char *text = NULL;
	int r = read_all(path, &text);

	if (r) {
		config_defaults(c);
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot read: %s%s", path, strerror(-r),
				 r == -EFBIG ? " (allowed: at most 1 MiB)" : "");
		return r;
	}
	r = config_parse_node(c, text, node, msg, sizeof(msg));
	free(text);
	if (r && err && errlen)
		snprintf(err, errlen, "%s: %s", path, msg);
	return r;
}

static json_t *json_num(double v)
{
	/* integers stay integers: "ring": 1024, "threshold_percent": 65 */
	if (v == trunc(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}

static json_t *object_to_json(const struct field *fields, const void *base);

static json_t *rules_to_json(const struct agent_config *c)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < c->n_classes; i++)
		if (json_array_append_new(a, object_to_json(rule_fields, &c->classes[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *slo_globs_to_json(const struct agent_config *c)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < c->policy.slo.n_globs; i++)
		if (json_array_append_new(
			    a, object_to_json(slo_glob_fields, &c->policy.slo.globs[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *ns_list_to_json(const struct ns_globs *list)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < list->n; i++)
		if (json_array_append_new(a, json_string(list->ns[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *value_to_json(const struct field *f, const void *base)
{
	const char *p = (const char *)base + f->off;

	switch (f->type) {
	case F_BOOL:
		return json_boolean(*(const bool *)p);
	case F_NUM:
		return json_num(json_units(*(const double *)p, f->scale));
	case F_INT:
		return json_integer((json_int_t)load_uint(p, f->size));
	case F_STR:
		return json_string(p);
	case F_ENUM:
		return json_string(f->names[*(const int *)p]);
	case F_CLASS:
		return json_string(qos_class_name(*(const int *)p));
	case F_OBJ:
		return object_to_json(f->sub, base);
	case F_RULES:
		return rules_to_json(base);
	case F_GLOBS:
		return slo_globs_to_json(base);
	case F_NS_LIST:
		return ns_list_to_json((const struct ns_globs *)p);
	}
	return NULL;
}

static json_t *object_to_json(const struct field *fields, const void *base)
{
	json_t *o = json_object();

	for (const struct field *f = fields; o && f->key; f++)
		if (json_object_set_new(o, f->key, value_to_json(f, base))) {
			json_decref(o);
			return NULL;
		}
	return o;
}

json_t *config_to_json(const struct agent_config *c)
{
	return object_to_json(top_fields, c);
}

void config_collect_wants(const struct agent_config *cfg, struct collect_wants *w)
{
	*w = (struct collect_wants){
		.classes = cfg->classes,
		.n_classes = cfg->n_classes,
		.trust = cfg->trust,
		.rq_target_floor_us = cfg->policy.slo.annotation_min_us,
		.memory_protection = cfg->policy.memory_qos.enabled,
		.mem_suppress = cfg->policy.mem_suppress.enabled,
		.io_suppress = cfg->policy.io_suppress.enabled,
		.capacity = cfg->policy.capacity.enabled,
		.evict_memory = cfg->policy.evict_memory.enabled,
		.evict_memory_threshold = cfg->policy.evict_memory.threshold,
		.mem_interference = cfg->policy.mem_interference.enabled,
		.cpu_manager_state = cfg->cpu_manager_state,
	};
}
