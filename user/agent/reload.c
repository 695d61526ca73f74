// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's side of a reload: the config read (user/config/config_reload.c)
 * with the command line applied over it, then swapped in whole at a tick
 * boundary, or refused with the reason while the running one stays.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actuate/actuator.h"
#include "agent/agent_state.h"
#include "config/config_reload.h"
#include "log.h"

int agent_config_read(const struct agent *a, struct agent_config *out, struct config_node *node,
		      char *err, size_t errlen)
{
	int rc;

	node->labels = a->node_labels;
	rc = config_read(out, a->args.config, node, err, errlen);
	if (rc)
		return rc;
	/* the command line and the start-up's findings outrank the file */
	out->dry_run |= a->args.dry_run || a->observe_only;
	return 0;
}

enum evict_action agent_evict_action(const struct agent *a, const struct agent_config *c)
{
	/* evict.nodes needs kubernetes.enabled (agent_config.c), so a->kube names the node */
	if (!c->evict_nodes[0] || !a->kube || !fnmatch(c->evict_nodes, kube_sync_node(a->kube), 0))
		return c->evict_action;
	return EVICT_REPORT;
}

void agent_reload(struct agent *a, bool ask_labels)
{
	struct config_node node;
	struct agent_config *next = malloc(sizeof(*next));
	const char *what = a->args.config ? a->args.config : "the embedded defaults";
	const char *field;
	char err[512];

	if (!next) {
		log_err("agent: reload of %s: out of memory; the running config stays", what);
		return;
	}
	/* a label may have moved the node to another pool: the next tick may reload again */
	if (ask_labels && a->kube)
		kube_sync_refresh_node(a->kube);
	if (agent_config_read(a, next, &node, err, sizeof(err))) {
		log_err("agent: reload refused, the running config stays: %s", err);
	} else if ((field = config_restart_only_change(&a->cfg, next))) {
		log_err("agent: reload of %s refused, the running config stays: %s changed, and "
			"that takes a restart",
			what, field);
	} else {
		enum evict_action was = agent_evict_action(a, &a->cfg),
				  now = agent_evict_action(a, next);

		/* to or from kill only where the config said kill already
		 * (config_restart_only_change())
		 */
		if (a->act && now != was)
			log_info("agent: evict.action is now \"%s\" on this node",
				 now == EVICT_KILL	   ? "kill"
				 : now == EVICT_KUBERNETES ? "kubernetes"
							   : "report");
		a->cfg = *next;
		config_collect_wants(&a->cfg, &a->wants);
		if (a->act)
			actuator_set_evict(a->act, now);
		collector_reclassify(a->coll);
		a->reloads++;
		log_info("agent: reloaded %s; config overrides on this node: %s", what,
			 node.applied[0] ? node.applied : "none");
	}
	free(next);
}

void agent_take_labels(struct agent *a)
{
	json_t *was = json_incref(a->node_labels);

	if (kube_sync_take_labels(a->kube, &a->node_labels) && !json_equal(was, a->node_labels)) {
		log_info("agent: node %s's labels changed: the config is read again for them",
			 kube_sync_node(a->kube));
		agent_reload(a, false);
	}
	json_decref(was);
}
