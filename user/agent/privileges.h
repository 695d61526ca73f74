/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * After start-up (programs loaded and attached, maps pinned, bpffs and
 * tracefs mounted, the journal reconciled) the agent needs almost none of
 * the privileges it started with: cgroup files belong to root and are
 * written through ordinary permissions, and the maps it reads are open file
 * descriptors. It drops every capability but the few its config and kernel
 * still need, from the effective, permitted, inheritable, ambient and (when
 * it may) bounding sets, and sets no_new_privs. Threads started afterwards
 * (the HTTP server, the API link) inherit the reduced set.
 */
#ifndef QOSLET_AGENT_PRIVILEGES_H
#define QOSLET_AGENT_PRIVILEGES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Before 6.5, with kernel.unprivileged_bpf_disabled set, every bpf() call,
 * even a map read through an open fd, needs CAP_BPF (CAP_SYS_ADMIN before
 * 5.8, which has no CAP_BPF).
 */
enum privileges_bpf { PRIV_BPF_NONE = 0, PRIV_BPF_CAP_BPF, PRIV_BPF_SYS_ADMIN };

struct privileges_kept {
	bool kill; /* CAP_KILL: evict.action "kill" signals other users' processes */
	enum privileges_bpf bpf;
};

/*
 * What the agent keeps, from its config and the running kernel: its release
 * ("6.18.0-...") and kernel.unprivileged_bpf_disabled (0, 1 or 2).
 */
struct privileges_kept privileges_needed(bool evict_kill, const char *release,
					 int unprivileged_bpf_disabled);

/*
 * Drops the rest. 0, or a negative errno with err set (then nothing was
 * dropped). *bounding says whether the bounding set could be cut too (that
 * needs CAP_SETPCAP).
 */
int privileges_drop(struct privileges_kept keep, bool *bounding, char *err, size_t errlen);

/* "none", "CAP_KILL", "CAP_BPF, CAP_KILL", ...: for the start-up log. */
void privileges_describe(struct privileges_kept keep, char *buf, size_t size);

#endif
