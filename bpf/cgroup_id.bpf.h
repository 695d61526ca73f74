/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The cgroup that identifies a task, for every qoslet probe. On cgroup v2 it
 * is the task's cgroup in the default hierarchy; on v1 (or hybrid) nodes the
 * cpu controller lives in a v1 hierarchy, so bpf_get_current_cgroup_id()
 * (default hierarchy, and only for current) would name the wrong cgroup.
 * The returned id is kernfs_node->id, which on 64-bit kernels equals the
 * cgroup directory's inode number, so user space maps it with stat().
 */
#ifndef QOSLET_CGROUP_ID_BPF_H
#define QOSLET_CGROUP_ID_BPF_H

#include "sched_maps.h"

/* Set by user space before load (see user/cgroup/path.c: cgroup_fs_detect). */
const volatile __u32 cgroup_mode = QOSLET_CGROUP_V2;
/* The hierarchy's number, as in /proc/PID/cgroup (0 for v2). */
const volatile __s32 cgroup_hierarchy_id = 0;

/*
 * subsys[] is indexed by enum cgroup_subsys_id, whose values depend on the
 * kernel's config: the index is relocated at load time like a field offset.
 */
#define CPU_SUBSYS_IDX bpf_core_enum_value(enum cgroup_subsys_id, cpu_cgrp_id)

/*
 * For BTF-typed task pointers (tp_btf, fentry): plain loads, which the JIT
 * turns into guarded moves; a NULL on the way reads as 0. No helper calls:
 * on hosts with return-thunk mitigations each call costs tens of ns, and
 * this runs twice per context switch.
 */
static __always_inline __u64 task_cgroup_id_btf(struct task_struct *task)
{
	struct css_set *cset = task->cgroups;
	struct cgroup *cgrp;

	if (cgroup_mode == QOSLET_CGROUP_V1_CPU)
		cgrp = cset->subsys[CPU_SUBSYS_IDX]->cgroup;
	else
		cgrp = cset->dfl_cgrp;
	return cgrp->kn->id;
}

/* For raw pointers (raw_tp): the same walk through bpf_probe_read_kernel. */
static __always_inline __u64 task_cgroup_id_raw(struct task_struct *task)
{
	struct css_set *cset = BPF_CORE_READ(task, cgroups);
	struct cgroup_subsys_state *css;
	struct cgroup *cgrp;

	if (!cset)
		return QOSLET_CGROUP_UNKNOWN;
	if (cgroup_mode == QOSLET_CGROUP_V1_CPU) {
		css = BPF_CORE_READ(cset, subsys[CPU_SUBSYS_IDX]);
		cgrp = css ? BPF_CORE_READ(css, cgroup) : NULL;
	} else {
		cgrp = BPF_CORE_READ(cset, dfl_cgrp);
	}
	return cgrp ? BPF_CORE_READ(cgrp, kn, id) : QOSLET_CGROUP_UNKNOWN;
}

/*
 * Is this cgroup in the hierarchy our ids come from? Ids are numbered per
 * hierarchy, so on v1 an rmdir in (say) the memory hierarchy carries an id
 * that may name a live cgroup of the cpu hierarchy.
 */
static __always_inline bool cgroup_is_ours_btf(struct cgroup *cgrp)
{
	return cgrp->root->hierarchy_id == cgroup_hierarchy_id;
}

static __always_inline bool cgroup_is_ours_raw(struct cgroup *cgrp)
{
	return BPF_CORE_READ(cgrp, root, hierarchy_id) == cgroup_hierarchy_id;
}

#endif
