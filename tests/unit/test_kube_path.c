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
	enum kube_part part;
	bool nested;
	const char *pod, *container;
};

/* Ids as the runtimes make them: 64 hex digits. */
#define CID  "4a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
#define SID  "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"
#define UID  "3f2a6b1c-8d4e-4f5a-9b6c-7d8e9f0a1b2c"
#define UID_ "3f2a6b1c_8d4e_4f5a_9b6c_7d8e9f0a1b2c"

/* The kubelet's pod cgroups (pkg/kubelet/cm: qos_container_manager_linux.go puts burstable and
 * besteffort under kubepods and Guaranteed pods directly in it; pod_container_manager_linux.go
 * names a pod "pod<uid>"; cgroup_manager_linux.go, with the systemd driver, turns each
 * component into a slice named after its ancestors and escapes the uid's '-' as '_'). */
#define FS_G  "/kubepods/pod" UID
#define FS_BU "/kubepods/burstable/pod" UID
#define FS_BE "/kubepods/besteffort/pod" UID
#define SD_G  "/kubepods.slice/kubepods-pod" UID_ ".slice"
#define SD_BU "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice"
#define SD_BE "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice"

#define G     KUBE_QOS_GUARANTEED
#define BU    KUBE_QOS_BURSTABLE
#define BE    KUBE_QOS_BESTEFFORT
#define POD   KUBE_PART_POD
#define CTR   KUBE_PART_CONTAINER
#define MON   KUBE_PART_MONITOR
#define OTHER KUBE_PART_OTHER

static const struct kube_case cases[] = {
	/* The pods themselves, both drivers, every tier. */
	{FS_G, true, G, POD, false, UID, ""},
	{FS_BU, true, BU, POD, false, UID, ""},
	{FS_BE "/", true, BE, POD, false, UID, ""},
	{SD_G, true, G, POD, false, UID, ""},
	{SD_BU, true, BU, POD, false, UID, ""},
	{SD_BE, true, BE, POD, false, UID, ""},

	/* containerd's CRI plugin, getCgroupsPath (pkg/cri/server/helpers_linux.go): cgroupfs
	 * "<parent>/<id>"; a parent that is a slice gives runc "<slice>:cri-containerd:<id>", which
	 * runc's systemd driver (libcontainer/cgroups/systemd/common.go, getUnitName) makes the
	 * scope "cri-containerd-<id>.scope". The pod sandbox (pause) container takes the same
	 * function with the sandbox's id: a container here, one the pod list never names. */
	{FS_G "/" CID, true, G, CTR, false, UID, CID},
	{FS_BU "/" CID, true, BU, CTR, false, UID, CID},
	{FS_BE "/" SID, true, BE, CTR, false, UID, SID},
	{SD_G "/cri-containerd-" CID ".scope", true, G, CTR, false, UID, CID},
	{SD_BU "/cri-containerd-" CID ".scope", true, BU, CTR, false, UID, CID},
	{SD_BE "/cri-containerd-" SID ".scope", true, BE, CTR, false, UID, SID},

	/* CRI-O (internal/config/cgmgr): cgroupfs_linux.go's ContainerCgroupPath
	 * "<parent>/crio-<id>" (no .scope) and MoveConmonToCgroup "<parent>/crio-conmon-<id>";
	 * systemd_linux.go's ContainerCgroupAbsolutePath "crio-<id>.scope", MoveConmonToCgroup
	 * (conmon_cgroup "pod") the scope "crio-conmon-<id>.scope", and CreateSandboxCgroup the
	 * dropped infra container's "crio-<sandbox id>", made with the cgroupfs manager under the
	 * pod slice; cgmgr_linux.go's crunContainerCgroupManager: crun runs the container in a
	 * "container" child of the scope. */
	{FS_G "/crio-" CID, true, G, CTR, false, UID, CID},
	{FS_BU "/crio-" CID, true, BU, CTR, false, UID, CID},
	{FS_BE "/crio-" CID, true, BE, CTR, false, UID, CID},
	{FS_BU "/crio-conmon-" CID, true, BU, MON, false, UID, ""},
	{FS_BE "/crio-conmon-" CID, true, BE, MON, false, UID, ""},
	{FS_BE "/crio-" SID, true, BE, CTR, false, UID, SID},
	{SD_G "/crio-" CID ".scope", true, G, CTR, false, UID, CID},
	{SD_BU "/crio-" CID ".scope", true, BU, CTR, false, UID, CID},
	{SD_BE "/crio-" CID ".scope", true, BE, CTR, false, UID, CID},
	{SD_G "/crio-conmon-" CID ".scope", true, G, MON, false, UID, ""},
	{SD_BE "/crio-conmon-" CID ".scope", true, BE, MON, false, UID, ""},
	{SD_BE "/crio-" SID, true, BE, CTR, false, UID, SID},
	{SD_BE "/crio-" CID ".scope/container", true, BE, CTR, true, UID, CID},

	/* Docker through cri-dockerd: the sandbox and its containers get the kubelet's parent as
	 * HostConfig.CgroupParent, in the driver's syntax (core/helpers_linux.go,
	 * updateCreateConfig and GenerateExpectedCgroupParent; the sandbox likewise); dockerd
	 * (moby daemon/oci_linux.go, WithCgroups) makes it "<parent>/<id>" with cgroupfs and
	 * "<parent>:docker:<id>" with systemd, runc's scope "docker-<id>.scope". */
	{FS_G "/" CID, true, G, CTR, false, UID, CID},
	{FS_BE "/" SID, true, BE, CTR, false, UID, SID},
	{SD_G "/docker-" CID ".scope", true, G, CTR, false, UID, CID},
	{SD_BU "/docker-" CID ".scope", true, BU, CTR, false, UID, CID},
	{SD_BE "/docker-" SID ".scope", true, BE, CTR, false, UID, SID},

	/* runc's getUnitName without a prefix: "<name>.scope". */
	{SD_BU "/" CID ".scope", true, BU, CTR, false, UID, CID},
	/* A container's own child cgroups are the container's. */
	{FS_BU "/" CID "/sub/deeper", true, BU, CTR, true, UID, CID},
	/* Nothing a runtime names a container: a slice, an id longer than any. */
	{SD_BU "/extra.slice", true, BU, OTHER, false, UID, ""},
	{FS_BU "/" CID CID, true, BU, OTHER, false, UID, ""},

	/* Earlier cases: any kubelet root, short ids. */
	{"/kubepods/burstable/pod1234-ab/c0ffee", true, BU, CTR, false, "1234-ab", "c0ffee"},
	{"kubepods/besteffort/podu1", true, BE, POD, false, "u1", ""},
	{"/qoslet-test-1/kubepods/burstable/podx/y", true, BU, CTR, false, "x", "y"},
	{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podaa_bb.slice", true, BE,
	 POD, false, "aa-bb", ""},

	/* Not a pod. */
	{"/kubepods", false, KUBE_QOS_NONE, POD, false, "", ""},
	{"/kubepods/burstable", false, KUBE_QOS_NONE, POD, false, "", ""},
	{"/kubepods.slice/kubepods-besteffort.slice", false, KUBE_QOS_NONE, POD, false, "", ""},
	{"/system.slice/sshd.service", false, KUBE_QOS_NONE, POD, false, "", ""},
	{"/system.slice/crio-conmon-" CID ".scope", false, KUBE_QOS_NONE, POD, false, "", ""},
	{"/kubepodsx/burstable/pod1/c", false, KUBE_QOS_NONE, POD, false, "", ""},
	{"", false, KUBE_QOS_NONE, POD, false, "", ""},
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct kube_case *c = &cases[i];
		struct kube_ids ids;
		bool ok = kube_path_parse(c->path, &ids);

		if (ok != c->ok || ids.qos != c->qos || ids.part != c->part ||
		    ids.nested != c->nested || strcmp(ids.pod_uid, c->pod) ||
		    strcmp(ids.container_id, c->container))
			fail_msg("%s: got ok=%d qos=%d part=%d nested=%d pod='%s' container='%s'",
				 c->path, ok, ids.qos, ids.part, ids.nested, ids.pod_uid,
				 ids.container_id);
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
