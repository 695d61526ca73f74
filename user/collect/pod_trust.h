/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a pod's own metadata may decide (docs/security.md, Trust model). A
 * pod's owner writes its labels and annotations; the agent reads from them
 * only what cannot raise the pod above what the cluster gave it:
 *
 * - the koordinator.sh/qosClass label may lower the class the kubelet's QoS
 *   tier gives (Guaranteed LSR, Burstable LS, BestEffort BE) freely, and
 *   raise it only as far as the pod's resources allow: LS needs a request
 *   (not BestEffort), LSR Guaranteed, LSE Guaranteed with a whole number of
 *   CPUs requested. SYSTEM and UNMANAGED never come from a label, and BE
 *   not at or above the production priority (Koordinator refuses that pair
 *   at admission). A refused label is ignored: the tier decides;
 * - the eviction opt-out counts only in the namespaces the config lists;
 * - a DaemonSet owner (SYSTEM, never evicted: it would come straight back)
 *   counts only as the pod's controller reference of apps/v1, in the
 *   namespaces the config lists: anyone who may edit a pod may write its
 *   ownerReferences, and a tenant may make a DaemonSet of their own;
 * - a run-queue target annotation is clamped to the config's floor (the
 *   SLO policy clamps, user/policy/slo.c; this module only reports it).
 *
 * Pure: the pod, its tier and the config in, a class and the refusals out.
 */
#ifndef QOSLET_COLLECT_POD_TRUST_H
#define QOSLET_COLLECT_POD_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/pods.h"
#include "kube_path.h"
#include "policy/model.h"

#define POD_TRUST_MAX_NS 16

/* Namespace globs (fnmatch), as `classes` matches namespaces. */
struct ns_globs {
	char ns[POD_TRUST_MAX_NS][64];
	size_t n;
};

struct pod_trust_config {
	bool qos_label;		      /* qos_label.enabled: read the label at all (true) */
	uint32_t production_priority; /* qos_label.production_priority: 9000 */
	struct ns_globs opt_out_ns;   /* evict.opt_out_namespaces: [] (nowhere) */
	struct ns_globs daemonset_ns; /* daemonset_namespaces: ["kube-system"] */
};

/*
 * Why a pod's metadata was not taken as it asked; in the order of their
 * (input, reason) names, as the metrics list them.
 */
enum pod_refusal {
	POD_REFUSE_NONE = 0,
	/* a DaemonSet owner reference */
	POD_REFUSE_DAEMONSET_NAMESPACE,	     /* outside daemonset_namespaces */
	POD_REFUSE_DAEMONSET_NOT_CONTROLLER, /* not the apps/v1 controller reference */
	/* qoslet.io/eviction-disabled, or Koordinator's eviction cost */
	POD_REFUSE_OPT_OUT_NAMESPACE, /* outside evict.opt_out_namespaces */
	/* the koordinator.sh/qosClass label */
	POD_REFUSE_LABEL_BE_PRODUCTION,	   /* BE at or above the production priority */
	POD_REFUSE_LABEL_NEEDS_GUARANTEED, /* LSR or LSE on a pod that is not Guaranteed */
	POD_REFUSE_LABEL_NEEDS_REQUEST,	   /* LS on a BestEffort pod */
	POD_REFUSE_LABEL_NEEDS_WHOLE_CPUS, /* LSE without a whole number of CPUs requested */
	POD_REFUSE_LABEL_SYSTEM,	   /* SYSTEM or UNMANAGED: never a pod's own word */
	POD_REFUSE_LABEL_UNKNOWN,	   /* no class name */
	/* qoslet.io/runq-p99-target-us */
	POD_REFUSE_TARGET_FLOOR, /* under slo.targets.annotation_min_us: clamped */
	POD_REFUSE_NR,
};

/* The metadata a refusal is about: "qos_label", "eviction_opt_out", "runq_target". */
const char *pod_refusal_input(enum pod_refusal r);

/* Its reason, a metric label value: "system_class", "needs_guaranteed", ... */
const char *pod_refusal_reason(enum pod_refusal r);

/* A sentence for the log: "SYSTEM never comes from a pod's label", ... */
const char *pod_refusal_text(enum pod_refusal r);

/*
 * The pod's class from its label within what it may claim, else from the
 * kubelet's tier (KUBE_QOS_NONE: unmanaged). *refused says why a label was
 * ignored (POD_REFUSE_NONE: taken, or none).
 */
enum qos_class pod_trust_class(const struct kube_pod *pod, enum kube_qos tier,
			       const struct pod_trust_config *cfg, enum pod_refusal *refused);

/*
 * Whether the pod counts as a DaemonSet's (SYSTEM when BE, guarded from
 * eviction); *refused set when it names a DaemonSet owner that does not count.
 */
bool pod_trust_daemonset(const struct kube_pod *pod, const struct pod_trust_config *cfg,
			 enum pod_refusal *refused);

/* Whether the pod's eviction opt-out counts; *refused set when it asks but may not. */
bool pod_trust_opt_out(const struct kube_pod *pod, const struct pod_trust_config *cfg,
		       enum pod_refusal *refused);

#endif
