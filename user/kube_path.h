/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a cgroup path says about Kubernetes: QoS tier, pod UID and container
 * id, for the kubelet's two layouts:
 *   cgroupfs: kubepods/[burstable|besteffort/]pod<uid>/<container-id>
 *   systemd:  kubepods.slice/[kubepods-<qos>.slice/]kubepods-<qos>-pod<uid_>.slice/
 *             <runtime>-<container-id>.scope
 * (Guaranteed pods sit directly under kubepods.) Pure string handling.
 */
#ifndef QOSLET_KUBE_PATH_H
#define QOSLET_KUBE_PATH_H

#include <stdbool.h>

enum kube_qos { KUBE_QOS_NONE = 0, KUBE_QOS_GUARANTEED, KUBE_QOS_BURSTABLE, KUBE_QOS_BESTEFFORT };

struct kube_ids {
	enum kube_qos qos;
	char pod_uid[40];      /* with dashes, as the API shows it; "" if none */
	char container_id[72]; /* "" for the pod-level cgroup */
};

/*
 * Fills ids from a cgroup path (relative or with a leading '/'). Returns
 * true when the path is a pod or container cgroup under kubepods.
 */
bool kube_path_parse(const char *path, struct kube_ids *ids);

/* "guaranteed", "burstable", "besteffort", or NULL for KUBE_QOS_NONE. */
const char *kube_qos_name(enum kube_qos qos);

#endif
