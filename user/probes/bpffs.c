// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/bpffs.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "log.h"
#include "probes/pin_check.h"

#define BPFFS_MOUNT   "/sys/fs/bpf"
#define TRACEFS_MOUNT "/sys/kernel/tracing"

static int fs_is(const char *path, long magic)
{
	struct statfs sf;

	return !statfs(path, &sf) && sf.f_type == magic;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int bpffs_prepare(const char *pin_dir)
{
	int err;

	/*
	 * A pin directory already on bpffs is used as it is: in a container it
	 * may be the one host directory bind-mounted (the DaemonSet mounts only
	 * /sys/fs/bpf/qoslet), under a /sys/fs/bpf that is not bpffs. Mounting
	 * a bpffs there would hide that bind mount behind a private filesystem
	 * whose pins die with the container.
	 */
	if (fs_is(pin_dir, BPF_FS_MAGIC))
		return 0;
	if (!strncmp(pin_dir, BPFFS_MOUNT "/", strlen(BPFFS_MOUNT) + 1) &&
	    !fs_is(BPFFS_MOUNT, BPF_FS_MAGIC)) {
		if (mount("bpf", BPFFS_MOUNT, "bpf", 0, "mode=0700")) {
			err = -errno;
			log_err("no bpffs on %s and mounting one failed: %s; mount it (mount -t bpf "
				"bpf %s), give qoslet CAP_SYS_ADMIN, or point --pin-dir at a bpf "
				"filesystem",
				BPFFS_MOUNT, strerror(-err), BPFFS_MOUNT);
			return err;
		}
		log_warn("nothing was mounted on %s: mounted bpffs there", BPFFS_MOUNT);
	}
	err = mkdir_p(pin_dir);
	if (err) {
		log_err("cannot create pin directory %s: %s", pin_dir, strerror(-err));
		return err;
	}
	if (!fs_is(pin_dir, BPF_FS_MAGIC)) {
		log_err("pin directory %s is not on a bpf filesystem: mount one there (mount -t "
			"bpf bpf DIR) or choose another --pin-dir",
			pin_dir);
		return -EINVAL;
	}
	return 0;
}

void tracefs_prepare(void)
{
	if (fs_is(TRACEFS_MOUNT, TRACEFS_MAGIC))
		return;
	/*
	 * The probes attach through bpf(2) alone (BTF ids, raw tracepoint names),
	 * so nothing here depends on it; but a node where qoslet runs is one
	 * where people trace (bpftool prog tracelog, perf, bpftrace), and they
	 * expect it where the kernel documents it.
	 */
	if (mount("tracefs", TRACEFS_MOUNT, "tracefs", 0, NULL))
		log_info("no tracefs on %s (mounting it failed: %s); the probes do not need it",
			 TRACEFS_MOUNT, strerror(errno));
	else
		log_info("nothing was mounted on %s: mounted tracefs there", TRACEFS_MOUNT);
}

int bpffs_try_lock(const char *pin_dir, int *fd)
{
	if (*fd < 0) {
		*fd = open(pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (*fd < 0)
			return -errno;
	}
	if (!flock(*fd, LOCK_EX | LOCK_NB))
		return 1;
	return errno == EWOULDBLOCK ? 0 : -errno;
}

int bpffs_set_pins(const struct bpf_object *obj, struct bpf_map *const *maps, size_t n,
		   const char *pin_dir)
{
	int err = pin_check(obj, maps, n, pin_dir);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", pin_dir, bpf_map__name(maps[i]));
		err = bpf_map__set_pin_path(maps[i], path);
		if (err)
			return err;
	}
	return 0;
}
