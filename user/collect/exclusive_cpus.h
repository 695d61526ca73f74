/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which CPUs pods hold alone: the kubelet's static CPU manager records
 * them in its checkpoint, /var/lib/kubelet/cpu_manager_state (JSON:
 * policyName, defaultCpuSet, entries pod UID -> container -> CPU list,
 * checksum). The file is the source, not the containers' cpusets:
 *  - the kubelet writes it at the pod's admission, before any container
 *    cgroup exists, so the CPUs are known before the pod starts on them;
 *  - it says which CPUs are exclusive, where a cpuset narrower than the
 *    pool says little: the shared containers' cpusets are narrower too
 *    (the pool less every exclusive CPU), and qoslet's own writes, other
 *    agents' and an owner's narrow cpusets as well;
 *  - only the kubelet writes it (root, on the node's disk), atomically
 *    (a temporary file renamed over it), so a reading is never torn;
 *  - a node without the static policy says so ("none", no entries).
 * It is read again only when its inode, size or mtime change. See
 * docs/agent-policies.md, "Exclusive CPUs".
 */
#ifndef QOSLET_COLLECT_EXCLUSIVE_CPUS_H
#define QOSLET_COLLECT_EXCLUSIVE_CPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "policy/model.h"

/* One pod holding exclusive CPUs. */
struct exclusive_pod {
	char uid[40];
	uint32_t cpus; /* how many, over all its containers */
};

struct exclusive_cpus {
	struct stat seen; /* the file as last read (st_ino 0: not read) */
	int err;	  /* the last reading's failure (logged once), 0 none */
	char policy[32];  /* policyName as last read */
	/* The last good reading: kept when a later one fails. */
	char list[POL_CPULIST_MAX]; /* every entry's CPUs, canonical; "" none */
	struct exclusive_pod *pods; /* sorted by uid */
	size_t n_pods;
};

/*
 * Brings x up to date with the file at path ("": no file, nothing is
 * exclusive). An absent file means none (said once in the log); one that
 * cannot be read or parsed keeps the last good reading (said once per
 * version of the file), so a bad write never frees a pinned pod's CPUs.
 * Returns 0, or the reading's -errno (-EINVAL: not the kubelet's format).
 */
int exclusive_cpus_update(struct exclusive_cpus *x, const char *path);

/* The CPUs pod uid holds alone; 0 when it holds none (or uid is ""). */
uint32_t exclusive_cpus_of_pod(const struct exclusive_cpus *x, const char *uid);

/*
 * Parses the checkpoint's JSON text into list and pods (malloc'd, sorted;
 * *pods NULL when none) and policy; -EINVAL when it is not the kubelet's
 * format. Also what the unit tests call.
 */
int exclusive_cpus_parse(const char *text, char *policy, size_t policy_size, char *list,
			 size_t list_size, struct exclusive_pod **pods, size_t *n_pods);

void exclusive_cpus_free(struct exclusive_cpus *x);

#endif
