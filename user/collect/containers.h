/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The container cgroups that take their own batch settings
 * (docs/batch-resources.md): containers of BE pods whose spec asks for
 * kubernetes.io/batch-cpu or sets a batch-memory limit. The collector finds
 * them when it finds the units (a tree change or a new pod list), and reads
 * their weight, memory limit (and on v2 quota) at the settings' cadence
 * (COLLECT_SETTINGS_NS) and after the actuator wrote to them: two or
 * three files each, only for those few containers.
 */
#ifndef QOSLET_COLLECT_CONTAINERS_H
#define QOSLET_COLLECT_CONTAINERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/knob.h"
#include "kube/pods.h"
#include "policy/model.h"

struct container_state {
	struct pol_container c;
	uint64_t settings_ns; /* CLOCK_MONOTONIC of the last settings read; 0: due */
};

struct container_set {
	struct container_state *v; /* sorted by id */
	size_t n, cap;
	struct pol_container *out; /* the record's copy */
	size_t cap_out;
};

/*
 * Whether the cgroup at rel (id) is a container of the BE unit u (a pod)
 * with batch settings of its own in pod's spec; fills *t then (settings
 * unread). pod may be NULL (not listed: never).
 */
bool container_target(const char *rel, uint64_t id, const struct pol_unit *u,
		      const struct kube_pod *pod, struct container_state *t);

/*
 * The set becomes v[0..n) (allocated with cap entries; the set takes it):
 * a container seen before at the same path keeps its settings and their
 * read time. Sorts v. Frees the old list.
 */
void container_set_replace(struct container_set *s, struct container_state *v, size_t n,
			   size_t cap);

/*
 * Reads the settings that are due and returns the record's list (sorted by
 * id) in *out; containers that vanished are left out. 0 or -ENOMEM.
 */
int container_set_read(struct container_set *s, const struct cgroup_ctrls *ctrls, uint64_t mono_ns,
		       struct pol_container **out, size_t *n);

/* The actuator wrote to container id: read it at the next tick. False: not a container here. */
bool container_set_changed(struct container_set *s, uint64_t id);

void container_set_free(struct container_set *s);

#endif
