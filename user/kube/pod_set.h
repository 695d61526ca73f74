/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pods on this node as a watch keeps them: a kube_pod_list sorted by
 * uid (kube_pod_find() works on it), changed one pod at a time.
 */
#ifndef QOSLET_KUBE_POD_SET_H
#define QOSLET_KUBE_POD_SET_H

#include <stdbool.h>

#include "kube/pods.h"

/* Puts p (taken: the set owns its memory now) in place of the pod with its uid, or adds it.
 * 0, or -ENOMEM with p freed. */
int kube_pod_set_put(struct kube_pod_list *set, struct kube_pod *p);

/* Removes the pod with this uid; false when there was none. */
bool kube_pod_set_remove(struct kube_pod_list *set, const char *uid);

/* A deep copy of src into dst (which holds nothing). 0 or -ENOMEM (dst empty). */
int kube_pod_set_copy(struct kube_pod_list *dst, const struct kube_pod_list *src);

#endif
