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
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config_reload.h"

/*
 * A config others may write is a way to make a privileged agent throttle
 * or kill anything: refused, as sshd refuses a writable authorized_keys. So
 * is one another user owns (its owner may chmod it at will): root's or the
 * agent's own user's only. stat() follows symlinks on purpose: a ConfigMap
 * volume's file is a symlink into root's ..data directory.
 */
static int check_mode(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(err, errlen,
			 "%s: owned by uid %u: refused, since the config decides what the agent "
			 "throttles and kills and its owner may change it at will; chown root it",
			 path, (unsigned int)st.st_uid);
		return -EPERM;
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

int config_read(struct agent_config *out, const char *path, struct config_node *node, char *err,
		size_t errlen)
{
	int rc;

	if (node) {
		node->applied[0] = '\0';
		node->listed = 0;
	}
	if (!path) {
		config_defaults(out);
		return 0;
	}
	rc = check_mode(path, err, errlen);
	return rc ? rc : config_load_node(out, path, node, err, errlen);
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

const char *config_restart_only_change(const struct agent_config *o, const struct agent_config *n)
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
	    o->http.port != n->http.port || o->http.health_port != n->http.health_port ||
	    strcmp(o->http.health_socket, n->http.health_socket))
		return "http";
	if (!kube_same(&o->kube, &n->kube))
		return "kubernetes";
	return NULL;
}
