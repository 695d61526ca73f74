// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libpfm4 lives in its own file: its perfmon/perf_event.h redefines what
 * linux/perf_event.h defines, so the two cannot meet in one translation unit.
 *
 * It is opened with dlopen() on first use, i.e. only when --cpi-events names
 * events: merely linking it costs about 2 MB of resident memory (the dynamic
 * linker touches its event tables), which the default generic events never
 * need.
 */
#include "probes/cpi_events.h"

#include <dlfcn.h>
#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <string.h>

static struct {
	int (*initialize)(void);
	int (*encode)(const char *, int, pfm_os_t, void *);
	const char *(*strerror)(int);
} pfm;

/* Opens libpfm4 and initialises it once; NULL, or why it failed. */
static const char *pfm_open(void)
{
	static bool tried;
	static char err[160];
	void *h;
	int ret;

	if (tried)
		return err[0] ? err : NULL;
	tried = true;
	h = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, sizeof(err), "libpfm4 unavailable (%s)", dlerror());
		return err;
	}
	pfm.initialize = (int (*)(void))dlsym(h, "pfm_initialize");
	pfm.encode =
		(int (*)(const char *, int, pfm_os_t, void *))dlsym(h, "pfm_get_os_event_encoding");
	pfm.strerror = (const char *(*)(int))dlsym(h, "pfm_strerror");
	if (!pfm.initialize || !pfm.encode || !pfm.strerror) {
		snprintf(err, sizeof(err), "libpfm4 lacks its API (%s)", dlerror());
		return err;
	}
	ret = pfm.initialize();
	if (ret != PFM_SUCCESS)
		snprintf(err, sizeof(err), "libpfm4: %s", pfm.strerror(ret));
	return err[0] ? err : NULL;
}

int cpi_pfm_resolve(const char *name, struct cpi_event *ev, char *why, size_t len)
{
	const char *open_err = pfm_open();
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	int ret;

	if (open_err) {
		snprintf(why, len, "%s: %s", name, open_err);
		return -ENOENT;
	}
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	/* User and kernel (PLM3, PLM0): CPI of everything the cgroup's tasks ran. */
	ret = pfm.encode(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
	if (ret != PFM_SUCCESS) {
		snprintf(why, len, "%s: libpfm4: %s on this CPU", name, pfm.strerror(ret));
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
