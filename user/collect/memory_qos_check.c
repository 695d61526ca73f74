// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "collect/memory_qos_check.h"

#include <errno.h>
#include <string.h>

#include "cgroup/path.h"
#include "log.h"

static int find_recursiveprot(void *ctx, const char *mnt, bool v2, const char *superopts)
{
	(void)mnt;
	if (!v2)
		return 0;
	*(bool *)ctx = cgroup_has_option(superopts, "memory_recursiveprot");
	return 1; /* the first cgroup2 mount is the one the controllers were found on */
}

void memory_qos_check(const struct cgroup_ctrls *c, const char *subtree, const char *mountinfo)
{
	bool recursive = false;
	char text[64];
	int err;

	if (!c->root[CTRL_MEMORY][0]) {
		log_warn("memory QoS: no memory controller is mounted: memory QoS is off");
		return;
	}
	if (!c->v2[CTRL_MEMORY]) {
		log_warn("memory QoS: memory.min/low/high need cgroup v2; on v1 (this host) the "
			 "memory controller has none of them: no protection for LS, no memory.high "
			 "for BE; memory eviction still runs");
		return;
	}
	/* The root cgroup has no memory.min: a subtree of "" is checked through its units. */
	if (!*subtree)
		return;
	err = cg_read_knob(c, CG_KNOB_MEM_MIN, subtree, text, sizeof(text));
	if (err == -EOPNOTSUPP && cg_read_knob(c, CG_KNOB_MEM_HIGH, subtree, text, sizeof(text)))
		log_warn("memory QoS: the memory controller is not enabled for /%s (its parent's "
			 "cgroup.subtree_control): memory QoS is off",
			 subtree);
	else if (err == -EOPNOTSUPP)
		log_warn("memory QoS: this kernel has no memory.min (before 4.18): memory.min is "
			 "off (its decisions fail), memory.low and memory.high run");
	if (cgroup_mounts_foreach(mountinfo, find_recursiveprot, &recursive) >= 0 && !recursive)
		log_warn("memory QoS: cgroup2 is mounted without memory_recursiveprot: a pod's "
			 "memory.min/low protects only tasks in the pod's own cgroup, not its "
			 "containers' (docs/memory-qos.md)");
}

void io_suppress_check(const struct cgroup_ctrls *c, const char *subtree)
{
	const char *r = cg_knob_file(c, CG_KNOB_IO_RBPS), *w = cg_knob_file(c, CG_KNOB_IO_WBPS);

	if (!c->root[CTRL_IO][0])
		log_warn("I/O suppression: no blkio or io controller is mounted: it is off (the BE "
			 "culprits of I/O stalls are reported, not throttled)");
	else if (!cg_has_file(c, CG_KNOB_IO_RBPS, subtree))
		log_warn(
			"I/O suppression: /%s has no %s (a kernel without "
			"CONFIG_BLK_DEV_THROTTLING, or on v2 the io controller not enabled for "
			"it): it is off (the BE culprits of I/O stalls are reported, not throttled)",
			subtree, r);
	else if (!c->v2[CTRL_IO])
		log_info("I/O suppression: stepping %s and %s on the disk of each BE culprit's "
			 "block I/O",
			 r, w);
	else
		log_info("I/O suppression: stepping io.max rbps and wbps on the disk of each BE "
			 "culprit's block I/O (io.weight is not used: only BFQ and io.cost honour "
			 "it)");
}

void mem_suppress_check(const struct cgroup_ctrls *c, const char *subtree)
{
	if (!c->root[CTRL_MEMORY][0])
		log_warn("memory suppression: no memory controller is mounted: it is off");
	else if (!c->v2[CTRL_MEMORY])
		log_info("memory suppression: memory.reclaim absent (cgroup v1): stepping "
			 "memory.limit_in_bytes only (the kernel reclaims a BE pod's page cache at "
			 "the write)");
	else if (!cg_has_file(c, CG_FILE_MEM_RECLAIM, subtree))
		log_info("memory suppression: memory.reclaim absent (kernel < 5.19): stepping "
			 "memory.high only");
	else
		log_info("memory suppression: memory.reclaim, then memory.high");
}
