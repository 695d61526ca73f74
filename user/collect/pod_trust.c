// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "collect/pod_trust.h"

#include <fnmatch.h>
#include <string.h>

static const struct {
	const char *input, *reason, *text;
} refusals[POD_REFUSE_NR] = {
	[POD_REFUSE_NONE] = {"", "", ""},
	[POD_REFUSE_LABEL_SYSTEM] = {"qos_label", "system_class",
				     "SYSTEM and UNMANAGED never come from a pod's own label"},
	[POD_REFUSE_LABEL_UNKNOWN] = {"qos_label", "unknown_class", "not a class name"},
	[POD_REFUSE_LABEL_NEEDS_REQUEST] = {"qos_label", "needs_request",
					    "LS needs a CPU or memory request (the pod is "
					    "BestEffort)"},
	[POD_REFUSE_LABEL_NEEDS_GUARANTEED] = {"qos_label", "needs_guaranteed",
					       "LSR and LSE need Guaranteed QoS"},
	[POD_REFUSE_LABEL_NEEDS_WHOLE_CPUS] = {"qos_label", "needs_whole_cpus",
					       "LSE needs a whole number of CPUs requested"},
	[POD_REFUSE_LABEL_BE_PRODUCTION] = {"qos_label", "be_at_production_priority",
					    "BE is refused at or above "
					    "qos_label.production_priority"},
	[POD_REFUSE_OPT_OUT_NAMESPACE] = {"eviction_opt_out", "namespace_not_allowed",
					  "the namespace is not in evict.opt_out_namespaces"},
	[POD_REFUSE_DAEMONSET_NAMESPACE] = {"daemonset_owner", "namespace_not_trusted",
					    "the namespace is not in daemonset_namespaces"},
	[POD_REFUSE_DAEMONSET_NOT_CONTROLLER] = {"daemonset_owner", "not_apps_v1_controller",
						 "only an apps/v1 controller reference counts"},
	[POD_REFUSE_TARGET_FLOOR] = {"runq_target", "below_floor",
				     "under slo.targets.annotation_min_us: the floor applies"},
};

const char *pod_refusal_input(enum pod_refusal r)
{
	return (unsigned int)r < POD_REFUSE_NR ? refusals[r].input : "?";
}

const char *pod_refusal_reason(enum pod_refusal r)
{
	return (unsigned int)r < POD_REFUSE_NR ? refusals[r].reason : "?";
}

const char *pod_refusal_text(enum pod_refusal r)
{
	return (unsigned int)r < POD_REFUSE_NR ? refusals[r].text : "?";
}

static enum qos_class tier_class(enum kube_qos tier)
{
	switch (tier) {
	case KUBE_QOS_GUARANTEED:
		return QOS_LSR;
	case KUBE_QOS_BURSTABLE:
		return QOS_LS;
	case KUBE_QOS_BESTEFFORT:
		return QOS_BE;
	default:
		return QOS_UNMANAGED;
	}
}

/* Why the label may not give the pod this class, or POD_REFUSE_NONE. */
static enum pod_refusal label_refusal(const struct kube_pod *pod, enum kube_qos tier,
				      enum qos_class want, const struct pod_trust_config *cfg)
{
	switch (want) {
	case QOS_LSE:
		if (tier != KUBE_QOS_GUARANTEED)
			return POD_REFUSE_LABEL_NEEDS_GUARANTEED;
		/* exclusive CPUs come whole (the static CPU manager's rule too) */
		return pod->request_cpu && pod->request_cpu % 1000 == 0
			       ? POD_REFUSE_NONE
			       : POD_REFUSE_LABEL_NEEDS_WHOLE_CPUS;
	case QOS_LSR:
		return tier == KUBE_QOS_GUARANTEED ? POD_REFUSE_NONE
						   : POD_REFUSE_LABEL_NEEDS_GUARANTEED;
	case QOS_LS:
		return tier == KUBE_QOS_GUARANTEED || tier == KUBE_QOS_BURSTABLE
			       ? POD_REFUSE_NONE
			       : POD_REFUSE_LABEL_NEEDS_REQUEST;
	case QOS_BE:
		/* lowering is the owner's to choose, but not against the cluster's ranking */
		return pod->has_priority && pod->priority >= 0 &&
				       (uint32_t)pod->priority >= cfg->production_priority
			       ? POD_REFUSE_LABEL_BE_PRODUCTION
			       : POD_REFUSE_NONE;
	default:
		return POD_REFUSE_LABEL_SYSTEM;
	}
}

enum qos_class pod_trust_class(const struct kube_pod *pod, enum kube_qos tier,
			       const struct pod_trust_config *cfg, enum pod_refusal *refused)
{
	enum qos_class want;

	*refused = POD_REFUSE_NONE;
	if (!pod || !pod->koord_qos[0] || !cfg->qos_label)
		return tier_class(tier);
	if (qos_class_parse(pod->koord_qos, &want)) {
		*refused = POD_REFUSE_LABEL_UNKNOWN;
		return tier_class(tier);
	}
	*refused = label_refusal(pod, tier, want, cfg);
	return *refused ? tier_class(tier) : want;
}

static bool ns_listed(const struct ns_globs *g, const char *ns)
{
	for (size_t i = 0; i < g->n; i++)
		if (!fnmatch(g->ns[i], ns, 0))
			return true;
	return false;
}

bool pod_trust_daemonset(const struct kube_pod *pod, const struct pod_trust_config *cfg,
			 enum pod_refusal *refused)
{
	*refused = POD_REFUSE_NONE;
	if (!pod || (!pod->daemonset && strcmp(pod->owner_kind, "DaemonSet")))
		return false;
	if (!pod->daemonset)
		*refused = POD_REFUSE_DAEMONSET_NOT_CONTROLLER;
	else if (!ns_listed(&cfg->daemonset_ns, pod->ns))
		*refused = POD_REFUSE_DAEMONSET_NAMESPACE;
	return !*refused;
}

bool pod_trust_opt_out(const struct kube_pod *pod, const struct pod_trust_config *cfg,
		       enum pod_refusal *refused)
{
	*refused = POD_REFUSE_NONE;
	if (!pod || !pod->evict_opt_out)
		return false;
	if (ns_listed(&cfg->opt_out_ns, pod->ns))
		return true;
	*refused = POD_REFUSE_OPT_OUT_NAMESPACE;
	return false;
}
