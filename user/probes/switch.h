/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The shared sched_switch program (bpf/switch.bpf.c): one program runs the
 * context-switch step of every probe that has one, over the maps the
 * probes created. A probe joins through probe_ops.share_switch, which
 * hands its map fds and settings to the switch object before it loads.
 */
#ifndef QOSLET_PROBES_SWITCH_H
#define QOSLET_PROBES_SWITCH_H

#include <stdbool.h>
#include <stddef.h>

#include "probes/probes.h"
#include "switch.skel.h"

/*
 * Points each of the switch object's maps sw[i] at the probe's own map
 * own[i] (the same fd), or, with own NULL (the probe does not join), keeps
 * sw[i] from being created at all: its code is dead then. A map the probe
 * did not create is not created in the switch object either.
 * Returns 0 or -errno.
 */
int switch_share_maps(struct bpf_map *const *sw, struct bpf_map *const *own, size_t n);

/*
 * Loads the switch object for the probes that join, with `want`'s hook
 * (tp_btf falling back to raw_tp). *out is NULL when no probe joins.
 */
/* The switch object's ELF, as the skeleton embeds it. */
const void *switch_object(size_t *size);

int switch_load(struct switch_bpf **out, const struct cgroup_fs *fs, enum probe_hook want,
		int (*join)(void *ctx, struct switch_bpf *skel, enum probe_hook *hook), void *ctx);

#endif
