/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The cpi probe's perf events: resolving the two events of a spec (generic
 * hardware ids, libpfm4 names, or the software stand-ins) and opening them
 * as counting events on one CPU. Only the attaching process opens them for
 * every CPU; the others open one pair once to choose their mode.
 */
#ifndef QOSLET_PROBES_CPI_EVENTS_H
#define QOSLET_PROBES_CPI_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "probes/cpi_mode.h"

/* What perf_event_open needs of one event (libpfm4's encoding, or ours). */
struct cpi_event {
	uint32_t type;
	uint64_t config, config1, config2;
	char name[CPI_EVENT_NAME_MAX];
};

/*
 * The pair (numerator, denominator) of a spec: software = the stand-ins,
 * else the spec's hardware pair. Returns 0, or -ENOENT with `why` when a
 * name is unknown to libpfm4 on this CPU.
 */
int cpi_events_resolve(const struct cpi_spec *spec, bool software, struct cpi_event ev[2],
		       char *why, size_t len);

/* One libpfm4 name to its encoding (user/probes/cpi_pfm.c); -ENOENT with `why`. */
int cpi_pfm_resolve(const char *name, struct cpi_event *ev, char *why, size_t len);

/* A counting event on `cpu`, all tasks: the fd, or -errno. */
int cpi_event_open(const struct cpi_event *ev, int cpu);

/*
 * Opens and closes the pair on `cpu`: 0 when both open, else -errno with
 * `why` ("cycles: No such file or directory").
 */
int cpi_events_try(const struct cpi_event ev[2], int cpu, char *why, size_t len);

#endif
