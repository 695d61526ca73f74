/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Directories only the agent's user may change: the state directory (the
 * journal of originals, which a restore writes back as root) and the cgroup
 * tree's lock directory. Anyone else who could write there could plant a
 * journal, a symlink for a lock or temp file, or hold a lock the agent needs.
 */
#ifndef QOSLET_PRIVATE_DIR_H
#define QOSLET_PRIVATE_DIR_H

#include <stddef.h>

/*
 * Makes `path` (mode 0700) when it is absent and opens it (O_DIRECTORY,
 * O_NOFOLLOW: the last component is no symlink). It must belong to the
 * effective user and be writable by no one else; read or search bits for
 * others (a hostPath that Kubernetes made 0755) are taken away. Returns
 * the directory's fd, or -errno with the reason in err (-EPERM for an
 * owner or mode that is not the agent's alone: nothing is changed then).
 */
int private_dir_open(const char *path, char *err, size_t errlen);

#endif
