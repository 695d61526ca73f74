// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which cgroups inside a BE pod take a container's batch settings
 * (user/collect/containers.c): the container's own cgroup under each
 * runtime's name for it, never CRI-O's conmon scope (it carries the same id),
 * never a cgroup below the container, never one whose id the pod list does
 * not name (the pod sandbox's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "collect/containers.h"

#define CID "4a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
#define SID "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"
#define FS  "kubepods/besteffort/pod3f2a6b1c-8d4e-4f5a-9b6c-7d8e9f0a1b2c"
#define SD                                                                                         \
	"kubepods.slice/kubepods-besteffort.slice/"                                                \
	"kubepods-besteffort-pod3f2a6b1c_8d4e_4f5a_9b6c_7d8e9f0a1b2c.slice"

static const struct {
	const char *rel;
	bool target;
} cases[] = {
	{FS "/" CID, true},			     /* containerd, Docker: cgroupfs */
	{FS "/crio-" CID, true},		     /* CRI-O: cgroupfs */
	{SD "/cri-containerd-" CID ".scope", true},  /* containerd: systemd */
	{SD "/crio-" CID ".scope", true},	     /* CRI-O: systemd */
	{SD "/docker-" CID ".scope", true},	     /* Docker (cri-dockerd): systemd */
	{FS "/crio-conmon-" CID, false},	     /* CRI-O's conmon: cgroupfs */
	{SD "/crio-conmon-" CID ".scope", false},    /* and systemd */
	{SD "/crio-" CID ".scope/container", false}, /* crun's child of the container's scope */
	{FS "/" SID, false},			     /* the pod sandbox: not in the pod list */
	{SD "/crio-" SID, false},		     /* CRI-O's sandbox cgroup */
	{FS, false},				     /* the pod itself */
};

static void test_runtime_names(void **state)
{
	struct kube_container k = {.id = CID, .name = "c", .batch_cpu_request = 500};
	struct kube_pod pod = {.containers = &k, .n_containers = 1};
	struct pol_unit u = {.id = 7, .cls = QOS_BE};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct container_state t;
		bool got = container_target(cases[i].rel, 100 + i, &u, &pod, &t);

		if (got != cases[i].target)
			fail_msg("%s: target %d, expected %d", cases[i].rel, got, cases[i].target);
		if (got && (t.c.id != 100 + i || t.c.unit != 7 || t.c.batch_cpu_request != 500 ||
			    strcmp(t.c.path, cases[i].rel)))
			fail_msg("%s: wrong target filled in", cases[i].rel);
	}
}

/* An LS pod's containers, or a pod the list lacks, are never targets. */
static void test_not_be_or_unlisted(void **state)
{
	struct kube_container k = {.id = CID, .name = "c", .batch_mem_limit = 1 << 20};
	struct kube_pod pod = {.containers = &k, .n_containers = 1};
	struct pol_unit ls = {.id = 7, .cls = QOS_LS}, be = {.id = 8, .cls = QOS_BE};
	struct container_state t;

	(void)state;
	assert_false(container_target(FS "/" CID, 1, &ls, &pod, &t));
	assert_false(container_target(FS "/" CID, 1, &be, NULL, &t));
	assert_true(container_target(FS "/" CID, 1, &be, &pod, &t));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtime_names),
		cmocka_unit_test(test_not_be_or_unlisted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
