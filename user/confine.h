/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Confines the calling thread, and every thread it starts afterwards, with
 * Landlock: no file may be opened, listed, made or removed, and (Landlock
 * ABI 4, Linux 6.7, and later) no TCP port bound or connected to, nor
 * (ABI 6) an abstract UNIX socket reached or a signal sent outside. What is
 * already open stays usable: a server thread keeps its listening socket,
 * its connections and the log. The agent's other threads are untouched:
 * Landlock applies to a thread and its descendants, so the serving threads
 * can lose what the loop still needs (cgroup files, /proc).
 *
 * Why: the agent runs as root, and after it drops its capabilities root's
 * ordinary permissions remain, over the host paths mounted into the
 * DaemonSet and, through /proc/PID/root, over the files of processes that
 * hold no capabilities. A thread that parses what a network client sends
 * needs none of that (docs/security.md, ABUSES row 6).
 *
 * Sets no_new_privs on the calling thread (Landlock requires it; the agent
 * sets it process-wide anyway).
 */
#ifndef QOSLET_CONFINE_H
#define QOSLET_CONFINE_H

/*
 * The Landlock ABI version applied (1 or more), or -errno: -ENOSYS (a kernel
 * before 5.13) or -EOPNOTSUPP (Landlock not in the kernel's lsm= list) when
 * there is none; nothing is changed then.
 */
int confine_thread_no_files(void);

#endif
