// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/cpi_events.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct cpi_event generic(uint32_t type, uint64_t config, const char *name)
{
	struct cpi_event ev = {.type = type, .config = config};

	snprintf(ev.name, sizeof(ev.name), "%s", name);
	return ev;
}

int cpi_events_resolve(const struct cpi_spec *spec, bool software, struct cpi_event ev[2],
		       char *why, size_t len)
{
	int err;

	if (software) {
		/*
		 * Two clocks (CPU-wide, both count ns while enabled): they run the
		 * same reads, deltas and scaling as cycles/instructions, and, unlike
		 * context-switches, cost the node nothing at each context switch
		 * (that event alone added ~3% to a switch-bound benchmark).
		 */
		ev[0] = generic(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock");
		ev[1] = generic(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock");
		return 0;
	}
	if (spec->kind == CPI_SPEC_AUTO || spec->kind == CPI_SPEC_HARDWARE) {
		/* The kernel's generic ids: no libpfm4 tables needed for the default. */
		ev[0] = generic(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, spec->num);
		ev[1] = generic(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, spec->den);
		return 0;
	}
	err = cpi_pfm_resolve(spec->num, &ev[0], why, len);
	if (!err)
		err = cpi_pfm_resolve(spec->den, &ev[1], why, len);
	return err;
}

int cpi_event_open(const struct cpi_event *ev, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = ev->type,
		.config = ev->config,
		.config1 = ev->config1,
		.config2 = ev->config2,
		/* What bpf_perf_event_read_value reports too: for reading by hand. */
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
	};
	/* pid -1, cpu N: every task on that CPU; not pinned, so it may be multiplexed. */
	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int cpi_events_try(const struct cpi_event ev[2], int cpu, char *why, size_t len)
{
	for (int i = 0; i < 2; i++) {
		int fd = cpi_event_open(&ev[i], cpu);

		if (fd < 0) {
			snprintf(why, len, "%s: %s", ev[i].name, strerror(-fd));
			return fd;
		}
		close(fd);
	}
	return 0;
}
