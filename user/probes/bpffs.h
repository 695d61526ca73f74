/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Filesystems: bpffs, which the pins need, and tracefs, which they do not
 * (every program attaches through bpf(2), by BTF id or raw tracepoint name)
 * but which people tracing on the node expect.
 */
#ifndef QOSLET_PROBES_BPFFS_H
#define QOSLET_PROBES_BPFFS_H

#include <stddef.h>

/*
 * Makes `pin_dir` exist on a bpf filesystem, mounting bpffs on
 * /sys/fs/bpf first when nothing is mounted there (fresh machines).
 * Returns 0 or -errno after logging what is wrong.
 */
int bpffs_prepare(const char *pin_dir);

/* Mounts tracefs on /sys/kernel/tracing when absent; a failure is only logged. */
void tracefs_prepare(void);

/*
 * Takes the attach lock on the pin directory without blocking: 1 if this
 * process now holds it (it stays held until *fd is closed or the process
 * dies), 0 if another process holds it, -errno on error. *fd is opened on
 * first use and kept.
 */
int bpffs_try_lock(const char *pin_dir, int *fd);

struct bpf_object;
struct bpf_map;

/*
 * Sets each map's pin path to pin_dir/<map name>, before obj loads: libbpf
 * then reuses the pinned map or pins the new one. First brings what is
 * pinned there to this qoslet's layout (pin_check(): keeps, copies into a
 * new map, or replaces). 0 or -errno.
 */
int bpffs_set_pins(const struct bpf_object *obj, struct bpf_map *const *maps, size_t n,
		   const char *pin_dir);

#endif
