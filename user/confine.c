// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "confine.h"

#include <errno.h>
#include <linux/landlock.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The kernel's struct landlock_ruleset_attr as of ABI 6. The installed
 * header may be older than the running kernel; the layout is the kernel's
 * stable ABI, so it is spelled here, and only as much of it is passed as
 * the running kernel knows (a longer struct with nonzero unknown fields is
 * refused with E2BIG).
 */
struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};

/* Every filesystem right of each ABI: EXECUTE to MAKE_SYM (1), REFER (2), TRUNCATE (3), IOCTL_DEV
 * (5). */
static uint64_t fs_rights(int abi)
{
	uint64_t r = (1ull << 13) - 1;

	if (abi >= 2)
		r |= 1ull << 13;
	if (abi >= 3)
		r |= 1ull << 14;
	if (abi >= 5)
		r |= 1ull << 15;
	return r;
}

#define NET_BIND_TCP		   (1ull << 0)
#define NET_CONNECT_TCP		   (1ull << 1)
#define SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0)
#define SCOPE_SIGNAL		   (1ull << 1)

int confine_thread_no_files(void)
{
	struct ruleset_attr attr = {0};
	size_t size = sizeof(attr.handled_access_fs);
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	int fd, err = 0;

	if (abi < 0)
		return -errno;
	attr.handled_access_fs = fs_rights((int)abi);
	if (abi >= 4) {
		attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP;
		size = offsetof(struct ruleset_attr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	/* No rule is added: every handled access is denied everywhere. */
	fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (fd < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_landlock_restrict_self, fd, 0))
		err = -errno;
	close(fd);
	return err ? err : (int)abi;
}
