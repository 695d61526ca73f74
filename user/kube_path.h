/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a cgroup path says about Kubernetes: QoS tier, pod UID and container
 * id, for the kubelet's two layouts:
 *   cgroupfs: kubepods/[burstable|besteffort/]pod<uid>/<container>
 *   systemd:  kubepods.slice/[kubepods-<qos>.slice/]kubepods-<qos>-pod<uid_>.slice/
 *             <container>
 * (Guaranteed pods sit directly under kubepods.) <container> is named by the
 * runtime (docs/kubernetes.md, "Container runtimes"):
 *   <id>                          containerd, Docker (cri-dockerd), cgroupfs driver
 *   crio-<id>                     CRI-O, cgroupfs driver (and its pod sandbox's cgroup)
 *   <prefix>-<id>.scope           systemd driver: cri-containerd-, crio-, docker-
 *   crio-conmon-<id>[.scope]      CRI-O's container monitor (conmon): not a container
 * Pure string handling.
 */
#ifndef QOSLET_KUBE_PATH_H
#define QOSLET_KUBE_PATH_H

#include <stdbool.h>

enum kube_qos { KUBE_QOS_NONE = 0, KUBE_QOS_GUARANTEED, KUBE_QOS_BURSTABLE, KUBE_QOS_BESTEFFORT };

/* What the path names: the pod's own cgroup, or which kind of cgroup inside it. */
enum kube_part {
	KUBE_PART_POD = 0,
	/* a container's, or a pod sandbox's ("pause"): only the pod list tells them apart */
	KUBE_PART_CONTAINER,
	/* the runtime's monitor of a container (CRI-O's conmon): never a container */
	KUBE_PART_MONITOR,
	/* a name no runtime gives a container (a slice, an id too long) */
	KUBE_PART_OTHER,
};

struct kube_ids {
	enum kube_qos qos;
	enum kube_part part;
	/* the path goes on below the container (crun's "container" child, the container's own) */
	bool nested;
	char pod_uid[40];      /* with dashes, as the API shows it */
	char container_id[72]; /* KUBE_PART_CONTAINER: the id as the pod list has it; else "" */
};

/*
 * Fills ids from a cgroup path (relative or with a leading '/'). Returns
 * true when the path is a pod cgroup or one inside it, under kubepods.
 */
bool kube_path_parse(const char *path, struct kube_ids *ids);

/* "guaranteed", "burstable", "besteffort", or NULL for KUBE_QOS_NONE. */
const char *kube_qos_name(enum kube_qos qos);

#endif
