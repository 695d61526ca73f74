/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's config: one JSON document (every field in docs/agent-config.md)
 * applied over defaults that are themselves a JSON document embedded in the
 * binary (user/config/default-config.json). Errors name the field's path and
 * what is allowed, e.g. "suppress.threshold_percent: 150 is out of range
 * (allowed: 1 to 100)".
 *
 * Each part lives with its reader: the policies' settings in
 * user/policy/config.h, the HTTP endpoint's in user/report/http.h, the
 * Kubernetes link's in user/kube/link.h; what only the agent reads is here.
 *
 * A parsed config is fully determined by its document: struct padding and
 * the bytes after each string's terminator are zero, so two configs compare
 * with memcmp().
 */
#ifndef QOSLET_CONFIG_AGENT_CONFIG_H
#define QOSLET_CONFIG_AGENT_CONFIG_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "collect/pod_trust.h"
#include "collect/wants.h"
#include "kube/link.h"
#include "policy/policy_config.h"
#include "report/http.h"

#define CONFIG_MAX_CLASS_RULES 32

struct agent_config {
	char cgroup_root[PATH_MAX]; /* managed subtree, relative to the cpu root; "" detect kubepods
				     */
	double interval_s;	    /* 1 */
	bool dry_run;		    /* false */
	bool fast_path;		    /* true: BPF wakes the loop on an LS wait over rq_p99_us */
	char state_dir[PATH_MAX];   /* /run/qoslet: what to restore after a crash */
	/* The kubelet's CPU manager checkpoint: exclusive CPUs; "" none */
	char cpu_manager_state[PATH_MAX];
	char decisions_file[PATH_MAX]; /* JSON lines; "-" stdout, "" none: "-" */
	size_t decisions_ring;	       /* decisions kept in memory: 1024 */
	enum evict_action evict_action;
	char evict_nodes[254]; /* glob of node names where evict_action applies; "" all */
	struct class_rule classes[CONFIG_MAX_CLASS_RULES];
	size_t n_classes;
	struct pod_trust_config trust; /* qos_label, evict.opt_out_namespaces */
	struct policy_config policy;   /* suppress, burst, evict.memory/cpu, interference */
	struct http_config http;       /* http */
	struct kubernetes_config kube; /* kubernetes */
};

/*
 * Fills the defaults, then applies the document: objects merge key by key
 * over the defaults, "classes" replaces the default list whole. Returns 0, or
 * -EINVAL with err set to "<field path>: <what is wrong> (allowed: ...)" and
 * *c left as the defaults (never half-applied). err may be NULL.
 */
int config_parse(struct agent_config *c, const char *json_text, char *err, size_t errlen);

/* The node a config is read for: its labels choose the document's "overrides". */
struct config_node {
	const json_t *labels; /* the Node's metadata.labels; NULL: no override applies */
	char applied[256];    /* out: the names of those applied, ", "-separated; "" none */
	size_t listed;	      /* out: how many the document lists */
};

/*
 * config_parse() for a node: the document's "overrides" whose nodeSelector
 * matches node->labels are applied over it, in order (docs/agent-config.md).
 * Every override is checked whatever the labels: a bad one refuses the
 * document. node NULL: none applies (config_parse()).
 */
int config_parse_node(struct agent_config *c, const char *json_text, struct config_node *node,
		      char *err, size_t errlen);

/*
 * config_parse() on the file's text; errors are prefixed with "<path>: ".
 * Returns 0, -EINVAL (invalid document), or -errno when the file cannot be
 * read (-EFBIG over 1 MiB). *c is the defaults on any error.
 */
int config_load(struct agent_config *c, const char *path, char *err, size_t errlen);

/* config_load() for a node (config_parse_node()). */
int config_load_node(struct agent_config *c, const char *path, struct config_node *node, char *err,
		     size_t errlen);

/* The embedded defaults, parsed. abort()s if they do not parse: a build bug. */
void config_defaults(struct agent_config *c);

/* The embedded document's text. */
const char *config_default_json(void);

/*
 * The effective config as a document with every key, which config_parse()
 * turns back into the same struct (for any config config_parse() made; the
 * default json_dumps() precision is exact, JSON_REAL_PRECISION(15) reads
 * better and is exact for values written with up to 15 digits). NULL on
 * allocation failure.
 */
json_t *config_to_json(const struct agent_config *c);

/* What the collector reads, from cfg (whose classes and paths it points at). */
void config_collect_wants(const struct agent_config *cfg, struct collect_wants *w);

#endif
