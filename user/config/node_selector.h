/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A Kubernetes label selector (matchLabels and matchExpressions, as a
 * Deployment's selector or a NodeSLO's nodeSelector), matched against the
 * agent's own Node's labels: it chooses which of the config's overrides
 * apply on this node (docs/agent-config.md, "Overrides by node pool").
 */
#ifndef QOSLET_CONFIG_NODE_SELECTOR_H
#define QOSLET_CONFIG_NODE_SELECTOR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Why s is no label "key" or "key=value" (Kubernetes' label syntax), or NULL. */
const char *label_problem(const char *s);

/*
 * Why sel is no selector: "<what>: <problem>" in err, -EINVAL; 0 when it is
 * one. An empty selector ({}) selects every node, as in Kubernetes.
 */
int node_selector_check(const json_t *sel, char *err, size_t errlen);

/* A checked selector against labels (an object of strings; NULL: a node without labels). */
bool node_selector_match(const json_t *sel, const json_t *labels);

#endif
