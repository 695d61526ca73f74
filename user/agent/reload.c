// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading the agent's config at start and again on SIGHUP. A reload is
 * atomic: the new document is read and checked whole, and either replaces
 * the running config at a tick boundary or is refused with the reason while
 * the running one stays. Settings that shape what was set up at start (the
 * subtree, the state directory, the endpoint, the API link, dry-run, an
 * eviction action of "kill", the fast path) take a restart: a reload that changes one
 * of them is refused and names it, rather than half-applied.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../actuate/actuator.h"
#include "../log.h"
#include "agent_state.h"
#include "fast_path.h"

/*
 * A config others may write is a way to make a privileged agent throttle
 * or kill anything: refused, as sshd refuses a writable authorized_keys.
 */
static int check_mode(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if ((st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && st.st_gid != 0)) {
		snprintf(err, errlen,
			 "%s: writable by %s (mode %04o): refused, since the config decides what "
			 "the agent throttles and kills; chmod go-w it",
			 path, st.st_mode & S_IWOTH ? "others" : "its group",
			 (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int agent_config_read(const struct agent *a, struct agent_config *out, char *err, size_t errlen)
{
	int rc;

	if (!a->args.config) {
		config_defaults(out);
	} else {
		rc = check_mode(a->args.config, err, errlen);
		if (!rc)
			rc = config_load(out, a->args.config, err, errlen);
		if (rc)
			return rc;
	}
	/* the command line and the start-up's findings outrank the file */
	out->dry_run |= a->args.dry_run || a->observe_only;
	return 0;
}

static bool kube_same(const struct kubernetes_config *o, const struct kubernetes_config *n)
{
	return o->enabled == n->enabled && !strcmp(o->kubeconfig, n->kubeconfig) &&
	       !strcmp(o->node_name, n->node_name) && o->resync_s == n->resync_s &&
	       o->timeout_s == n->timeout_s && o->events == n->events &&
	       o->event_interval_s == n->event_interval_s &&
	       o->events_per_minute == n->events_per_minute &&
	       o->node_condition == n->node_condition;
}

/* The first setting that only a restart can change, or NULL. */
static const char *restart_only_change(const struct agent_config *o, const struct agent_config *n)
{
	if (strcmp(o->cgroup_root, n->cgroup_root))
		return "cgroup_root";
	if (strcmp(o->state_dir, n->state_dir))
		return "state_dir";
	if (o->dry_run != n->dry_run)
		return "dry_run";
	if (o->fast_path != n->fast_path)
		return "fast_path";
	if (strcmp(o->decisions_file, n->decisions_file))
		return "decisions.file";
	if (o->decisions_ring != n->decisions_ring)
		return "decisions.ring";
	/* "kill" decides at start which privileges the agent keeps; report <-> kubernetes do not */
	if (o->evict_action != n->evict_action &&
	    (o->evict_action == EVICT_KILL || n->evict_action == EVICT_KILL))
		return "evict.action (to or from \"kill\")";
	if (o->http.enabled != n->http.enabled || strcmp(o->http.address, n->http.address) ||
	    o->http.port != n->http.port || o->http.health_port != n->http.health_port)
		return "http";
	if (!kube_same(&o->kube, &n->kube))
		return "kubernetes";
	return NULL;
}

enum evict_action agent_evict_action(const struct agent *a, const struct agent_config *c)
{
	/* evict.nodes needs kubernetes.enabled (config.c), so a->kube names the node */
	if (!c->evict_nodes[0] || !a->kube || !fnmatch(c->evict_nodes, kube_sync_node(a->kube), 0))
		return c->evict_action;
	return EVICT_REPORT;
}

void agent_reload(struct agent *a)
{
	struct agent_config *next = malloc(sizeof(*next));
	const char *what = a->args.config ? a->args.config : "the embedded defaults";
	const char *field;
	char err[512];

	if (!next) {
		log_err("agent: reload of %s: out of memory; the running config stays", what);
		return;
	}
	if (agent_config_read(a, next, err, sizeof(err))) {
		log_err("agent: reload refused, the running config stays: %s", err);
	} else if ((field = restart_only_change(&a->cfg, next))) {
		log_err("agent: reload of %s refused, the running config stays: %s changed, and "
			"that takes a restart",
			what, field);
	} else {
		enum evict_action was = agent_evict_action(a, &a->cfg),
				  now = agent_evict_action(a, next);

		/* to or from kill only where the config said kill already (restart_only_change())
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
		log_info("agent: reloaded %s", what);
	}
	free(next);
}
