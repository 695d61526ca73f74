// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kube_path.h"

struct kube_case {
	const char *path;
	bool ok;
	enum kube_qos qos;
	const char *pod, *container;
};

static const struct kube_case cases[] = {
	{"/kubepods/burstable/pod1234-ab/c0ffee", true, KUBE_QOS_BURSTABLE, "1234-ab", "c0ffee"},
	{"kubepods/besteffort/podu1", true, KUBE_QOS_BESTEFFORT, "u1", ""},
	{"/kubepods/podg1/abc", true, KUBE_QOS_GUARANTEED, "g1", "abc"},
	{"/qoslet-test-1/kubepods/burstable/podx/y", true, KUBE_QOS_BURSTABLE, "x", "y"},
	{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12_34.slice/"
	 "cri-containerd-f00d.scope",
	 true, KUBE_QOS_BURSTABLE, "12-34", "f00d"},
	{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podaa_bb.slice", true,
	 KUBE_QOS_BESTEFFORT, "aa-bb", ""},
	{"/kubepods.slice/kubepods-podcc_dd.slice/crio-beef.scope", true, KUBE_QOS_GUARANTEED,
	 "cc-dd", "beef"},
	{"/kubepods", false, KUBE_QOS_NONE, "", ""},
	{"/kubepods/burstable", false, KUBE_QOS_NONE, "", ""},
	{"/system.slice/sshd.service", false, KUBE_QOS_NONE, "", ""},
	{"/kubepodsx/burstable/pod1/c", false, KUBE_QOS_NONE, "", ""},
	{"", false, KUBE_QOS_NONE, "", ""},
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct kube_case *c = &cases[i];
		struct kube_ids ids;
		bool ok = kube_path_parse(c->path, &ids);

		if (ok != c->ok || ids.qos != c->qos || strcmp(ids.pod_uid, c->pod) ||
		    strcmp(ids.container_id, c->container))
			fail_msg("%s: got ok=%d qos=%d pod='%s' container='%s'", c->path, ok,
				 ids.qos, ids.pod_uid, ids.container_id);
	}
}

static void test_qos_names(void **state)
{
	(void)state;
	assert_null(kube_qos_name(KUBE_QOS_NONE));
	assert_string_equal(kube_qos_name(KUBE_QOS_GUARANTEED), "guaranteed");
	assert_string_equal(kube_qos_name(KUBE_QOS_BURSTABLE), "burstable");
	assert_string_equal(kube_qos_name(KUBE_QOS_BESTEFFORT), "besteffort");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_qos_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
