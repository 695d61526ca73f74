// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a pod's own metadata may decide (user/collect/pod_trust.h): the
 * abuses a tenant can write into a pod's labels and annotations are refused
 * with their reason, and what lowers the pod is taken.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "collect/pod_trust.h"

static struct pod_trust_config config(void)
{
	struct pod_trust_config c = {.qos_label = true, .production_priority = 9000};

	snprintf(c.opt_out_ns.ns[0], sizeof(c.opt_out_ns.ns[0]), "db-*");
	snprintf(c.opt_out_ns.ns[1], sizeof(c.opt_out_ns.ns[1]), "kube-system");
	c.opt_out_ns.n = 2;
	snprintf(c.daemonset_ns.ns[0], sizeof(c.daemonset_ns.ns[0]), "kube-system");
	snprintf(c.daemonset_ns.ns[1], sizeof(c.daemonset_ns.ns[1]), "monitoring-*");
	c.daemonset_ns.n = 2;
	return c;
}

static struct kube_pod pod(const char *label, uint64_t request_cpu, int32_t priority)
{
	struct kube_pod p = {.uid = "u", .ns = "team-a", .name = "p"};

	snprintf(p.koord_qos, sizeof(p.koord_qos), "%s", label);
	p.request_cpu = request_cpu;
	p.has_priority = priority != 0;
	p.priority = priority;
	return p;
}

static void test_label(void **state)
{
	static const struct {
		const char *why;
		const char *label;
		enum kube_qos tier;
		uint64_t cpu; /* milli-CPUs requested */
		int32_t priority;
		enum qos_class want;
		enum pod_refusal refused;
	} cases[] = {
		/* the abuses: a BestEffort batch pod claiming more than it pays for */
		{"BestEffort labelled LSE", "LSE", KUBE_QOS_BESTEFFORT, 0, 0, QOS_BE,
		 POD_REFUSE_LABEL_NEEDS_GUARANTEED},
		{"BestEffort labelled SYSTEM", "SYSTEM", KUBE_QOS_BESTEFFORT, 0, 0, QOS_BE,
		 POD_REFUSE_LABEL_SYSTEM},
		{"BestEffort labelled UNMANAGED", "UNMANAGED", KUBE_QOS_BESTEFFORT, 0, 0, QOS_BE,
		 POD_REFUSE_LABEL_SYSTEM},
		{"BestEffort labelled LSR", "LSR", KUBE_QOS_BESTEFFORT, 0, 0, QOS_BE,
		 POD_REFUSE_LABEL_NEEDS_GUARANTEED},
		{"BestEffort labelled LS", "LS", KUBE_QOS_BESTEFFORT, 0, 0, QOS_BE,
		 POD_REFUSE_LABEL_NEEDS_REQUEST},
		{"Burstable labelled LSR", "LSR", KUBE_QOS_BURSTABLE, 4000, 0, QOS_LS,
		 POD_REFUSE_LABEL_NEEDS_GUARANTEED},
		{"Burstable labelled SYSTEM", "SYSTEM", KUBE_QOS_BURSTABLE, 1000, 0, QOS_LS,
		 POD_REFUSE_LABEL_SYSTEM},
		{"Guaranteed, 2.5 CPUs, labelled LSE", "LSE", KUBE_QOS_GUARANTEED, 2500, 0, QOS_LSR,
		 POD_REFUSE_LABEL_NEEDS_WHOLE_CPUS},
		{"Guaranteed, no CPU request, labelled LSE", "LSE", KUBE_QOS_GUARANTEED, 0, 0,
		 QOS_LSR, POD_REFUSE_LABEL_NEEDS_WHOLE_CPUS},
		{"production priority labelled BE", "BE", KUBE_QOS_BURSTABLE, 1000, 9000, QOS_LS,
		 POD_REFUSE_LABEL_BE_PRODUCTION},
		{"no class name", "NONE", KUBE_QOS_BURSTABLE, 1000, 0, QOS_LS,
		 POD_REFUSE_LABEL_UNKNOWN},
		{"a tier the path does not say, labelled LS", "LS", KUBE_QOS_NONE, 1000, 0,
		 QOS_UNMANAGED, POD_REFUSE_LABEL_NEEDS_REQUEST},
		/* what the pod's resources and priority allow */
		{"Guaranteed, 2 CPUs, labelled LSE", "LSE", KUBE_QOS_GUARANTEED, 2000, 0, QOS_LSE,
		 POD_REFUSE_NONE},
		{"Guaranteed labelled LSR", "LSR", KUBE_QOS_GUARANTEED, 500, 0, QOS_LSR,
		 POD_REFUSE_NONE},
		/* lowering is free */
		{"Guaranteed labelled LS", "LS", KUBE_QOS_GUARANTEED, 500, 0, QOS_LS,
		 POD_REFUSE_NONE},
		{"Guaranteed labelled BE", "BE", KUBE_QOS_GUARANTEED, 500, 8999, QOS_BE,
		 POD_REFUSE_NONE},
		{"Burstable labelled BE", "BE", KUBE_QOS_BURSTABLE, 100, -5, QOS_BE,
		 POD_REFUSE_NONE},
		{"no label", "", KUBE_QOS_BURSTABLE, 100, 0, QOS_LS, POD_REFUSE_NONE},
	};
	struct pod_trust_config cfg = config();

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kube_pod p = pod(cases[i].label, cases[i].cpu, cases[i].priority);
		enum pod_refusal why;
		enum qos_class got = pod_trust_class(&p, cases[i].tier, &cfg, &why);

		if (got != cases[i].want || why != cases[i].refused)
			fail_msg("%s: class %s refused %s, want %s %s", cases[i].why,
				 qos_class_name(got), pod_refusal_reason(why),
				 qos_class_name(cases[i].want),
				 pod_refusal_reason(cases[i].refused));
	}
}

/* qos_label.enabled false: the label is not read at all, so nothing is refused. */
static void test_label_off(void **state)
{
	struct pod_trust_config cfg = config();
	struct kube_pod p = pod("BE", 1000, 0);
	enum pod_refusal why;

	(void)state;
	cfg.qos_label = false;
	assert_int_equal(pod_trust_class(&p, KUBE_QOS_GUARANTEED, &cfg, &why), QOS_LSR);
	assert_int_equal(why, POD_REFUSE_NONE);
	assert_int_equal(pod_trust_class(NULL, KUBE_QOS_BESTEFFORT, &cfg, &why), QOS_BE);
}

/* The eviction opt-out counts in the namespaces the config lists, nowhere else. */
static void test_opt_out(void **state)
{
	struct pod_trust_config cfg = config();
	struct kube_pod p = pod("", 0, 0);
	enum pod_refusal why;

	(void)state;
	p.evict_opt_out = true;
	/* the abuse: an opt-out outside an allowed namespace */
	assert_false(pod_trust_opt_out(&p, &cfg, &why));
	assert_int_equal(why, POD_REFUSE_OPT_OUT_NAMESPACE);
	snprintf(p.ns, sizeof(p.ns), "db-orders");
	assert_true(pod_trust_opt_out(&p, &cfg, &why));
	assert_int_equal(why, POD_REFUSE_NONE);
	snprintf(p.ns, sizeof(p.ns), "kube-system");
	assert_true(pod_trust_opt_out(&p, &cfg, &why));
	/* the default list is empty: no pod keeps itself */
	cfg.opt_out_ns.n = 0;
	assert_false(pod_trust_opt_out(&p, &cfg, &why));
	assert_int_equal(why, POD_REFUSE_OPT_OUT_NAMESPACE);
	/* no opt-out asked: nothing refused */
	p.evict_opt_out = false;
	assert_false(pod_trust_opt_out(&p, &cfg, &why));
	assert_int_equal(why, POD_REFUSE_NONE);
}

/*
 * The abuse (issue 37, row 1): a tenant makes a DaemonSet of their own, or
 * writes a DaemonSet reference into a pod, to be SYSTEM: never suppressed,
 * capped or evicted. Only the apps/v1 controller reference counts, and only
 * in the namespaces the operator lists.
 */
static void test_daemonset(void **state)
{
	struct pod_trust_config cfg = config();
	struct kube_pod p = pod("", 0, 0);
	enum pod_refusal why;

	(void)state;
	assert_false(pod_trust_daemonset(&p, &cfg, &why));
	assert_int_equal(why, POD_REFUSE_NONE);
	assert_false(pod_trust_daemonset(NULL, &cfg, &why));
	snprintf(p.owner_kind, sizeof(p.owner_kind), "DaemonSet");
	p.daemonset = true;
	assert_false(pod_trust_daemonset(&p, &cfg, &why));
	assert_int_equal(why, POD_REFUSE_DAEMONSET_NAMESPACE);
	snprintf(p.ns, sizeof(p.ns), "monitoring-node");
	assert_true(pod_trust_daemonset(&p, &cfg, &why));
	assert_int_equal(why, POD_REFUSE_NONE);
	snprintf(p.ns, sizeof(p.ns), "kube-system");
	assert_true(pod_trust_daemonset(&p, &cfg, &why));
	/* the kind without the apps/v1 controller reference, even in a listed namespace */
	p.daemonset = false;
	assert_false(pod_trust_daemonset(&p, &cfg, &why));
	assert_int_equal(why, POD_REFUSE_DAEMONSET_NOT_CONTROLLER);
	/* an empty list trusts no DaemonSet */
	p.daemonset = true;
	cfg.daemonset_ns.n = 0;
	assert_false(pod_trust_daemonset(&p, &cfg, &why));
	assert_int_equal(why, POD_REFUSE_DAEMONSET_NAMESPACE);
}

/* Every refusal has an input, a reason and a sentence; the reasons are unique. */
static void test_names(void **state)
{
	(void)state;
	for (int r = 1; r < POD_REFUSE_NR; r++) {
		assert_true(pod_refusal_input(r)[0] && pod_refusal_reason(r)[0] &&
			    pod_refusal_text(r)[0]);
		for (int q = 1; q < r; q++)
			assert_true(strcmp(pod_refusal_reason(r), pod_refusal_reason(q)));
		/* sorted by (input, reason): the metric's series come out in label order */
		if (r > 1) {
			int by_input = strcmp(pod_refusal_input(r - 1), pod_refusal_input(r));

			assert_true(by_input < 0 ||
				    (!by_input &&
				     strcmp(pod_refusal_reason(r - 1), pod_refusal_reason(r)) < 0));
		}
	}
	assert_string_equal(pod_refusal_reason(POD_REFUSE_NR), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label),	cmocka_unit_test(test_label_off),
		cmocka_unit_test(test_opt_out), cmocka_unit_test(test_daemonset),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
