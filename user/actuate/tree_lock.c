// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One acting agent per cgroup tree. The state directory's lock only keeps two
 * agents off one journal; a systemd unit and a DaemonSet with different state
 * directories would both act on the same cgroups and journal each other's
 * values as originals. So the actuator also takes flock(2) for the cgroups
 * themselves, in the cpu controller's hierarchy (every agent writes there):
 * an exclusive lock for the managed subtree and a shared one for each of its
 * ancestors. Two agents on one subtree collide on the exclusive lock; an
 * agent on an ancestor (say the whole root) and one on a subtree below it
 * collide where one holds the exclusive lock and the other wants a shared
 * one; agents on sibling subtrees share their common ancestors. The kernel
 * drops the locks when the agent exits, however it exits.
 *
 * The lock of a cgroup is a file named by its id (its directory's inode) in
 * a directory only root may open, not the cgroup directory itself: any local
 * user may open a cgroup directory and flock it, and so keep every agent
 * from starting. Lock files stay after the agent exits (unlinking a lock
 * file another agent may be opening races); /run empties at boot.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "actuate/internal.h"
#include "cgroup/knob.h"
#include "private_dir.h"

/* The pid holding a flock on the file st names, from /proc/locks; 0 when not found. */
static long lock_holder(const struct stat *st)
{
	unsigned int maj, min;
	unsigned long ino;
	long pid, found = 0;
	char line[256], kind[16];
	FILE *f = fopen("/proc/locks", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%lu", kind, &pid, &maj, &min, &ino) ==
			    5 &&
		    !strcmp(kind, "FLOCK") && maj == major(st->st_dev) &&
		    min == minor(st->st_dev) && ino == st->st_ino)
			found = pid;
	fclose(f);
	return found;
}

/* Locks one cgroup of the tree; a refusal names the cgroup and, if found, the holder. */
static int lock_dir(struct actuator *a, const char *rel, bool exclusive, char *err, size_t errlen)
{
	char path[PATH_MAX], name[32], holder[32] = "";
	struct stat st;
	long pid;
	int fd, e;

	if (cg_path(a->c, CTRL_CPU, rel, "", path, sizeof(path)))
		return 0; /* no cpu hierarchy: nothing there for any agent to act on */
	if (stat(path, &st)) {
		if (errno == ENOENT)
			return -ENOENT;
		snprintf(err, errlen, "cgroup %s: %s", path, strerror(errno));
		return -errno;
	}
	snprintf(name, sizeof(name), "cpu-%llu", (unsigned long long)st.st_ino);
	fd = openat(a->tree_dir_fd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "opening the lock of cgroup %s: %s", path, strerror(e));
		return -e;
	}
	if (!flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB)) {
		a->tree_fd[a->tree_fds++] = fd;
		return 0;
	}
	e = errno;
	pid = fstat(fd, &st) ? 0 : lock_holder(&st);
	close(fd);
	if (e != EWOULDBLOCK) {
		snprintf(err, errlen, "locking cgroup %s: %s", path, strerror(e));
		return -e;
	}
	if (pid)
		snprintf(holder, sizeof(holder), " (pid %ld)", pid);
	snprintf(
		err, errlen,
		"cgroup %s is locked by another acting qoslet agent%s whose managed tree overlaps "
		"this one's (%s): one acting agent per cgroup tree; this one changes nothing (stop "
		"the other one, or run this one with dry_run)",
		path, holder, a->subtree[0] ? a->subtree : "the whole hierarchy");
	return -EBUSY;
}

int tree_lock(struct actuator *a, const char *dir, char *err, size_t errlen)
{
	size_t len = strlen(a->subtree), i = 0;
	char rel[sizeof(a->subtree)];
	int ret;

	if (a->dry_run)
		return 0;
	a->tree_dir_fd = private_dir_open(dir, err, errlen);
	if (a->tree_dir_fd < 0)
		return a->tree_dir_fd;
	/* "", "a", "a/b", then the subtree "a/b/c": shared on the way down, exclusive at the end */
	for (;;) {
		bool last = i == len;

		if (a->tree_fds == TREE_LOCK_MAX) {
			snprintf(err, errlen, "managed subtree %s is deeper than %d cgroups",
				 a->subtree, TREE_LOCK_MAX - 1);
			return -ENAMETOOLONG;
		}
		memcpy(rel, a->subtree, i);
		rel[i] = '\0';
		ret = lock_dir(a, rel, last, err, errlen);
		if (ret == -ENOENT && a->tree_fds) {
			/*
			 * The subtree is not there yet (the kubelet makes it): its nearest
			 * ancestor stands in for it, exclusively, so a second agent for the
			 * same subtree still collides.
			 */
			close(a->tree_fd[--a->tree_fds]);
			*(strrchr(rel, '/') ?: rel) = '\0'; /* the prefix before this one */
			return lock_dir(a, rel, true, err, errlen);
		}
		if (ret || last)
			return ret == -ENOENT ? 0 : ret;
		i = (size_t)((strchr(a->subtree + i + (i > 0), '/') ?: a->subtree + len) -
			     a->subtree);
	}
}

void tree_unlock(struct actuator *a)
{
	while (a->tree_fds)
		close(a->tree_fd[--a->tree_fds]);
	if (a->tree_dir_fd >= 0)
		close(a->tree_dir_fd);
	a->tree_dir_fd = -1;
}
