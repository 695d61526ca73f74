// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Drives the Kubernetes client library (user/kube/) against a test API
 * server, with one long-lived client as the agent will have.
 *
 *   kubecheck [--kubeconfig F | --token F --ca F] [--max-body N] < commands
 *
 * Without --kubeconfig the in-cluster configuration is used
 * (KUBERNETES_SERVICE_HOST/PORT). Commands, one a line on stdin:
 *   list NODE            -> "pod UID NS NAME KOORDQOS PRIORITY QOSCLASS OWNERKIND OWNERNAME"
 *                           lines ("-" for absent), then "list ok N SKIPPED"
 *   evict NS NAME UID    -> "evict OUTCOME STATUS", then the server's message unless evicted
 * A failed command prints "error RC MESSAGE". At the end: "stats requests=N
 * transport_errors=N http_errors=N parse_errors=N". Exit 0, or 2 when the
 * configuration is unusable.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/evict.h"
#include "kube/pods.h"

static const char *dash(const char *s)
{
	return *s ? s : "-";
}

static void list(struct kube_client *c, const char *node)
{
	struct kube_pod_list l;
	char err[512];
	int rc = kube_pods_list(c, node, &l, err, sizeof(err));

	if (rc) {
		printf("error %d %s\n", rc, err);
		return;
	}
	for (size_t i = 0; i < l.n; i++) {
		const struct kube_pod *p = &l.pods[i];
		char prio[16] = "-";

		if (p->has_priority)
			snprintf(prio, sizeof(prio), "%d", p->priority);
		printf("pod %s %s %s %s %s %s %s %s\n", p->uid, p->ns, p->name, dash(p->koord_qos),
		       prio, dash(p->qos_class), dash(p->owner_kind), dash(p->owner_name));
	}
	printf("list ok %zu %zu\n", l.n, l.skipped);
	kube_pod_list_free(&l);
}

static void evict(struct kube_client *c, const char *ns, const char *name, const char *uid)
{
	enum kube_evict_outcome o;
	char err[512];
	long status;
	int rc = kube_evict(c, ns, name, uid, &o, &status, err, sizeof(err));

	if (rc)
		printf("error %d %s\n", rc, err);
	else if (o == KUBE_EVICT_EVICTED)
		printf("evict %s %ld\n", kube_evict_outcome_name(o), status);
	else
		printf("evict %s %ld %s\n", kube_evict_outcome_name(o), status, err);
}

static void run(struct kube_client *c, char *line)
{
	char *cmd = strtok(line, " \t\n"), *a = strtok(NULL, " \t\n"), *b = strtok(NULL, " \t\n"),
	     *u = strtok(NULL, " \t\n");

	if (cmd && !strcmp(cmd, "list") && a)
		list(c, a);
	else if (cmd && !strcmp(cmd, "evict") && u)
		evict(c, a, b, u);
	else if (cmd)
		printf("error 0 unknown command %s\n", cmd);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"kubeconfig", required_argument, NULL, 'k'},
		{"token", required_argument, NULL, 't'},
		{"ca", required_argument, NULL, 'c'},
		{"max-body", required_argument, NULL, 'm'},
		{NULL, 0, NULL, 0},
	};
	const char *kubeconfig = NULL, *token = NULL, *ca = NULL;
	struct kube_config cfg;
	struct kube_client c;
	char err[512], line[1024];
	size_t max_body = 0;
	int o, rc;

	/* Line-buffered: the test reads each answer before it sends the next command. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == 'k')
			kubeconfig = optarg;
		else if (o == 't')
			token = optarg;
		else if (o == 'c')
			ca = optarg;
		else if (o == 'm')
			max_body = strtoul(optarg, NULL, 10);
		else
			return 2;
	}
	rc = kubeconfig ? kube_config_from_kubeconfig(&cfg, kubeconfig, err, sizeof(err))
			: kube_config_in_cluster(&cfg, token, ca, err, sizeof(err));
	if (!rc)
		rc = kube_client_init(&c, &cfg, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "kubecheck: %s\n", err);
		return 2;
	}
	if (max_body)
		c.max_body = max_body;
	printf("server %s\n", c.cfg.server);
	while (fgets(line, sizeof(line), stdin))
		run(&c, line);
	printf("stats requests=%lu transport_errors=%lu http_errors=%lu parse_errors=%lu\n",
	       c.stats.requests, c.stats.transport_errors, c.stats.http_errors,
	       c.stats.parse_errors);
	kube_client_free(&c);
	return 0;
}
