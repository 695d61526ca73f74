/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pods on this node, from GET /api/v1/pods?fieldSelector=spec.nodeName=NODE:
 * what the agent needs to map pod UIDs (in cgroup paths) to names, classes
 * and owners. Parsing is separate from the call so it can be tested on
 * fixtures and fuzzed.
 */
#ifndef QOSLET_KUBE_PODS_H
#define QOSLET_KUBE_PODS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"

/* A container of a pod, as status.containerStatuses shows it once it started. */
struct kube_container {
	char id[72];   /* containerID without its "<runtime>://" prefix: the id in cgroup paths */
	char name[64]; /* the container's name (a DNS label, <= 63) */
	/*
	 * Its kubernetes.io/batch-cpu request (milli-CPUs; absent, the limit, as
	 * the API server defaults it) and limit, and batch-memory limit (bytes),
	 * from the spec entry of the same name; 0 when none. What its cgroup
	 * gets (docs/batch-resources.md).
	 */
	uint64_t batch_cpu_request, batch_cpu_limit, batch_mem_limit;
};

struct kube_pod {
	char uid[40];	      /* metadata.uid */
	char rv[32];	      /* metadata.resourceVersion; "" absent or longer than this holds */
	char ns[64];	      /* metadata.namespace (DNS label, <= 63) */
	char name[254];	      /* metadata.name (DNS subdomain, <= 253) */
	char koord_qos[64];   /* label koordinator.sh/qosClass (label value, <= 63); "" if absent */
	bool has_priority;    /* spec.priority is set */
	int32_t priority;     /* spec.priority */
	char qos_class[16];   /* status.qosClass: Guaranteed, Burstable, BestEffort; "" if absent */
	char owner_kind[64];  /* controller ownerReference (else the first): kind; "" if none */
	char owner_name[254]; /* ... and name */
	/*
	 * The controller reference (controller: true) is an apps/v1 DaemonSet.
	 * Only the controller's counts: other references are anyone's to add,
	 * and a kind alone names no API group.
	 */
	bool daemonset;
	char node[254]; /* spec.nodeName; "" when not scheduled */
	/*
	 * The pod's memory request as the scheduler counts it: the larger of
	 * its containers' sum and its largest init container, plus the pod
	 * overhead; bytes, 0 when none is set.
	 */
	uint64_t request_mem;
	/* The pod's CPU request, counted the same way (no overhead), milli-CPUs; 0 none. */
	uint64_t request_cpu;
	/*
	 * kubernetes.io/batch-cpu (milli-CPUs) and batch-memory (bytes), counted
	 * the same way (no overhead: it names no batch resource); a limit is 0
	 * when some container sets none. Shaped as the policies' struct pol_batch.
	 */
	uint64_t batch_cpu_request, batch_cpu_limit, batch_mem_request, batch_mem_limit;
	bool mirror; /* annotation kubernetes.io/config.mirror: a static pod the kubelet runs */
	/*
	 * Eviction controls (docs/agent-policies.md, "Eviction order"): the
	 * pod asks to be kept by qoslet.io/eviction-disabled "true" (that value
	 * only: the owner's word counts only where the config allows it, and
	 * only when said plainly), else by Koordinator's
	 * scheduling.koordinator.sh/eviction-cost 2147483647; the priority from
	 * qoslet.io/eviction-priority, else koordinator.sh/eviction-priority
	 * (int32; absent or not a number: 0, as koordlet reads it).
	 */
	bool evict_opt_out;
	int32_t evict_priority;
	/*
	 * qoslet.io/runq-p99-target-us: the pod's run-queue p99 target for the
	 * SLO controller (docs/slo-control.md), a positive integer of us; 0
	 * absent or not one (the config's target applies).
	 */
	uint32_t rq_target_us;
	uint64_t start_ns; /* status.startTime, CLOCK_REALTIME ns; 0 absent or unreadable */
	/* metadata.labels as "key=value" strings one after another, each with its NUL, then an
	 * empty one; NULL when the pod has none. Freed with the list. */
	char *labels;
	/* started containers: init, regular and ephemeral; caller frees with the list */
	struct kube_container *containers;
	size_t n_containers;
};

struct kube_pod_list {
	struct kube_pod *pods; /* caller frees with kube_pod_list_free() */
	size_t n;
	size_t skipped; /* items without a usable uid/namespace/name or with over-long fields */
};

/*
 * Parses a PodList document. Returns 0 (items that are not usable pods are
 * skipped and counted, not fatal), or a negative errno with err set when the
 * document itself is not a PodList (-EBADMSG) or memory ran out (-ENOMEM).
 */
int kube_pods_parse(const json_t *doc, struct kube_pod_list *out, char *err, size_t errlen);

/*
 * Parses one Pod object (a list's item, a watch event's object) into p,
 * which kube_pod_free() frees whatever the result. False when it is not a
 * usable pod (no uid, namespace or name, a field of the wrong type or over
 * its API length).
 */
bool kube_pod_parse(const json_t *item, struct kube_pod *p);

void kube_pod_free(struct kube_pod *p);

/*
 * Lists the pods whose spec.nodeName is node. 0, or a negative errno with err
 * set (the transport's, -EACCES/-EPROTO for an error status, the parser's).
 */
int kube_pods_list(struct kube_client *c, const char *node, struct kube_pod_list *out, char *err,
		   size_t errlen);

void kube_pod_list_free(struct kube_pod_list *list);

/* Sorts the list by uid, which kube_pod_find() needs. */
void kube_pod_list_sort(struct kube_pod_list *list);

/* The pod with this uid in a sorted list, or NULL. */
const struct kube_pod *kube_pod_find(const struct kube_pod_list *list, const char *uid);

/* The name of the pod's container with this id (as in cgroup paths), or NULL. */
const char *kube_pod_container_name(const struct kube_pod *p, const char *container_id);

/*
 * Whether the pod has the label: sel is "key" (any value) or "key=value"
 * (exactly), as in a Kubernetes equality selector.
 */
bool kube_pod_has_label(const struct kube_pod *p, const char *sel);

/*
 * Pods that keep the node or the cluster running, which the agent must not
 * take for batch work on the kubelet's word (BestEffort) or a label's:
 * kube-system's and static (mirror) pods. Sets *why to a short reason when
 * true. DaemonSet pods count only where the config trusts their owner
 * (collect/pod_trust.h, pod_trust_daemonset()).
 */
bool kube_pod_protected(const struct kube_pod *p, const char **why);

/* True when s is a DNS-1123 name (lowercase alphanumerics, '-', '.'), safe in a URL path. */
bool kube_name_valid(const char *s);

#endif
