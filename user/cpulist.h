/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Kernel CPU lists ("0-3,8"): cpuset files, /sys/devices/system/cpu/online. */
#ifndef QOSLET_CPULIST_H
#define QOSLET_CPULIST_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Parses a kernel CPU list ("0-3,5\n", as in /sys/devices/system/cpu/online)
 * into online[0..n): true for each CPU listed. CPUs >= n are ignored.
 * -EINVAL on a malformed list.
 */
int cpu_list_parse(const char *s, bool *online, int n);

/*
 * How many CPUs a list names, without a table of every CPU: the kernel's
 * lists name each CPU once. -EINVAL on a malformed list.
 */
int cpu_list_count(const char *s);

/*
 * The canonical list of the CPUs set in on[0..n) ("" for none), ranges
 * merged. -ENAMETOOLONG when it does not fit in size bytes.
 */
int cpu_list_format(const bool *on, int n, char *buf, size_t size);

#endif
