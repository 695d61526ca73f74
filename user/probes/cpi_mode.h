/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pure decisions of the cpi probe, apart from the kernel so they can be
 * unit-tested: what --cpi-events asks for, which mode the outcome of opening
 * the events leads to, how the mode is described, which CPUs are online,
 * and the ratio the views print.
 */
#ifndef QOSLET_PROBES_CPI_MODE_H
#define QOSLET_PROBES_CPI_MODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/cpi_maps.h"

#define CPI_EVENT_NAME_MAX 128

enum cpi_spec_kind {
	CPI_SPEC_AUTO = 0, /* generic cycles/instructions, else software */
	CPI_SPEC_SOFTWARE, /* the software stand-ins only */
	CPI_SPEC_NAMED,	   /* these two libpfm4 events, nothing else */
	CPI_SPEC_HARDWARE, /* generic cycles/instructions or nothing: the agent's choice */
};

struct cpi_spec {
	enum cpi_spec_kind kind;
	char num[CPI_EVENT_NAME_MAX]; /* the cycles event (AUTO: "cycles") */
	char den[CPI_EVENT_NAME_MAX]; /* the instructions event (AUTO: "instructions") */
};

/*
 * Parses --cpi-events: NULL or "auto", "software", "hardware" (cycles and
 * instructions, never the stand-ins), or "CYCLES,INSTRUCTIONS"
 * (two non-empty names without blanks, cycles first). -EINVAL otherwise.
 */
int cpi_spec_parse(const char *s, struct cpi_spec *spec);

/*
 * The mode, from the outcome of opening the hardware pair (hw_err: 0 or
 * -errno, hw_why its text; not tried for CPI_SPEC_SOFTWARE) and the
 * software pair (not tried unless needed). `reason` says why the mode is
 * not hardware ("" when it is). Named events never fall back to the
 * stand-ins: the user asked for those events, not for any ratio.
 */
enum cpi_mode choose_cpi_mode(const struct cpi_spec *spec, int hw_err, const char *hw_why,
			      int sw_err, const char *sw_why, char *reason, size_t len);

/* Does choose_cpi_mode need the software pair tried after hw_err? */
bool cpi_needs_software(const struct cpi_spec *spec, int hw_err);

/* "hardware cycles/instructions", "software task-clock/cpu-clock (why)", ... */
void cpi_describe(enum cpi_mode mode, const struct cpi_spec *spec, const char *reason, char *buf,
		  size_t len);

/* "off", "hardware", "software". */
const char *cpi_mode_name(enum cpi_mode mode);

/* What the numbers of a mode are called in every output; all NULL when off. */
struct cpi_labels {
	const char *numerator;	 /* "cycles" or "task_clock_ns" */
	const char *denominator; /* "instructions" or "cpu_clock_ns" */
	const char *ratio;	 /* "cpi" or "clock_ratio" (never "cpi" in software mode) */
};

struct cpi_labels cpi_mode_labels(enum cpi_mode mode);

/* numerator / denominator; false when the denominator is 0 (no ratio). */
bool cpi_ratio(uint64_t numerator, uint64_t denominator, double *out);

#endif
