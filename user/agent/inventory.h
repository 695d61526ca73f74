/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Builds what the policies see each tick (struct pol_input): walks the
 * managed subtree, finds the units (pods, or cgroups a class rule names),
 * reads their settings and the kernel's counters, and folds the probes'
 * per-cgroup numbers into the unit each cgroup belongs to.
 */
#ifndef QOSLET_AGENT_INVENTORY_H
#define QOSLET_AGENT_INVENTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cgroup.h"
#include "../cgroup_knob.h"
#include "../kube/pods.h"
#include "config.h"
#include "../policy/model.h"
#include "../snapshot.h"

struct inventory_opts {
	const struct cgroup_ctrls *ctrls;
	const struct cgroup_fs *fs; /* the cpu hierarchy: cgroup ids */
	const char *subtree;	    /* managed subtree, relative to the roots */
	const struct agent_config *cfg;
	/* The owner's quota before qoslet changed it (the actuator knows); may be NULL. */
	bool (*original_quota)(void *ctx, const char *rel, int64_t *quota_us);
	/*
	 * What the Kubernetes API says about the pod with this uid, or NULL
	 * (unknown, or no API); may be NULL. Its koordinator.sh/qosClass label
	 * classes the pod ahead of the kubelet's tier, and it gives the priority.
	 */
	const struct kube_pod *(*pod)(void *ctx, const char *uid);
	void *ctx;
};

/* A cgroup of a unit (the unit's own directory included). */
struct inventory_member {
	uint64_t cgid;
	uint64_t unit; /* the unit's id */
	enum qos_class cls;
};

struct inventory;

/* NULL when out of memory. The options are borrowed and must outlive it. */
struct inventory *inventory_new(const struct inventory_opts *o);
void inventory_free(struct inventory *inv);

/*
 * One tick: fills out (freed first with pol_input_free) from the cgroup
 * files and the probes' interval `delta` (NULL when no probe runs);
 * parts: the enum cg_part bits the running probes provide.
 * ts_ns is CLOCK_REALTIME, mono_ns CLOCK_MONOTONIC (for the interval).
 * Returns 0 or -errno (the subtree itself vanished: -ENOENT).
 */
int inventory_read(struct inventory *inv, const struct snapshot *delta, unsigned int parts,
		   uint64_t ts_ns, uint64_t mono_ns, struct pol_input *out);

/* The members found by the last read, sorted by cgid. */
const struct inventory_member *inventory_members(const struct inventory *inv, size_t *n);

/* The member with cgroup id cgid in the last read, or NULL. */
const struct inventory_member *inventory_member_of(const struct inventory *inv, uint64_t cgid);

/*
 * Finds the kubelet's pod root under the cpu hierarchy: "kubepods" (cgroupfs
 * driver) or "kubepods.slice" (systemd driver). -ENOENT when neither exists.
 */
int inventory_detect_kubepods(const struct cgroup_ctrls *ctrls, char *rel, size_t size);

#endif
