// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libpfm4 lives in its own file: its perfmon/perf_event.h redefines what
 * linux/perf_event.h defines, so the two cannot meet in one translation unit.
 */
#include "cpi_events.h"

#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <string.h>

int cpi_pfm_resolve(const char *name, struct cpi_event *ev, char *why, size_t len)
{
	static bool initialized; /* pfm_initialize once per process */
	static int init_err;
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	int ret;

	if (!initialized) {
		init_err = pfm_initialize();
		initialized = true;
	}
	if (init_err != PFM_SUCCESS) {
		snprintf(why, len, "%s: libpfm4: %s", name, pfm_strerror(init_err));
		return -ENOENT;
	}
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	/* User and kernel (PLM3, PLM0): CPI of everything the cgroup's tasks ran. */
	ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
	if (ret != PFM_SUCCESS) {
		snprintf(why, len, "%s: libpfm4: %s on this CPU", name, pfm_strerror(ret));
		return -ENOENT;
	}
	memset(ev, 0, sizeof(*ev));
	ev->type = attr.type;
	ev->config = attr.config;
	ev->config1 = attr.config1;
	ev->config2 = attr.config2;
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	return 0;
}
