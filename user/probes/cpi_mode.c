// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/cpi_mode.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies one event name of a spec; names are non-empty and without blanks. */
static int copy_name(char *dst, const char *src, size_t n)
{
	if (!n || n >= CPI_EVENT_NAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (isspace((unsigned char)src[i]))
			return -EINVAL;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return 0;
}

int cpi_spec_parse(const char *s, struct cpi_spec *spec)
{
	const char *comma;

	memset(spec, 0, sizeof(*spec));
	if (!s || !strcmp(s, "auto")) {
		spec->kind = CPI_SPEC_AUTO;
		snprintf(spec->num, sizeof(spec->num), "cycles");
		snprintf(spec->den, sizeof(spec->den), "instructions");
		return 0;
	}
	if (!strcmp(s, "hardware")) {
		spec->kind = CPI_SPEC_HARDWARE;
		snprintf(spec->num, sizeof(spec->num), "cycles");
		snprintf(spec->den, sizeof(spec->den), "instructions");
		return 0;
	}
	if (!strcmp(s, "software")) {
		spec->kind = CPI_SPEC_SOFTWARE;
		snprintf(spec->num, sizeof(spec->num), "task-clock");
		snprintf(spec->den, sizeof(spec->den), "cpu-clock");
		return 0;
	}
	comma = strchr(s, ',');
	if (!comma || strchr(comma + 1, ','))
		return -EINVAL;
	spec->kind = CPI_SPEC_NAMED;
	if (copy_name(spec->num, s, comma - s) ||
	    copy_name(spec->den, comma + 1, strlen(comma + 1)))
		return -EINVAL;
	return 0;
}

bool cpi_needs_software(const struct cpi_spec *spec, int hw_err)
{
	return spec->kind == CPI_SPEC_SOFTWARE || (spec->kind == CPI_SPEC_AUTO && hw_err);
}

/* ENOENT/ENODEV/EOPNOTSUPP: the kernel has no PMU (or no such event) at all. */
static const char *hw_failure(int err)
{
	return err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP ? "no hardware PMU"
								      : "hardware events refused";
}

enum cpi_mode choose_cpi_mode(const struct cpi_spec *spec, int hw_err, const char *hw_why,
			      int sw_err, const char *sw_why, char *reason, size_t len)
{
	reason[0] = '\0';
	switch (spec->kind) {
	case CPI_SPEC_HARDWARE:
		if (!hw_err)
			return CPI_MODE_HARDWARE;
		snprintf(reason, len, "%s: %s", hw_failure(hw_err), hw_why);
		return CPI_MODE_OFF;
	case CPI_SPEC_NAMED:
		if (!hw_err)
			return CPI_MODE_HARDWARE;
		snprintf(reason, len, "%s", hw_why);
		return CPI_MODE_OFF;
	case CPI_SPEC_SOFTWARE:
		if (!sw_err) {
			snprintf(reason, len, "forced by --cpi-events software");
			return CPI_MODE_SOFTWARE;
		}
		snprintf(reason, len, "software events: %s", sw_why);
		return CPI_MODE_OFF;
	case CPI_SPEC_AUTO:
	default:
		if (!hw_err)
			return CPI_MODE_HARDWARE;
		if (!sw_err) {
			snprintf(reason, len, "%s: %s", hw_failure(hw_err), hw_why);
			return CPI_MODE_SOFTWARE;
		}
		snprintf(reason, len, "%s: %s; software events: %s", hw_failure(hw_err), hw_why,
			 sw_why);
		return CPI_MODE_OFF;
	}
}

void cpi_describe(enum cpi_mode mode, const struct cpi_spec *spec, const char *reason, char *buf,
		  size_t len)
{
	const char *open = *reason ? " (" : "", *close = *reason ? ")" : "";

	switch (mode) {
	case CPI_MODE_HARDWARE:
		snprintf(buf, len, "hardware %s/%s%s%s%s", spec->num, spec->den, open, reason,
			 close);
		break;
	case CPI_MODE_SOFTWARE:
		snprintf(buf, len, "software task-clock/cpu-clock, not CPI%s%s%s", open, reason,
			 close);
		break;
	case CPI_MODE_OFF:
	default:
		snprintf(buf, len, "CPU time only, CPI unavailable%s%s%s", open, reason, close);
		break;
	}
}

const char *cpi_mode_name(enum cpi_mode mode)
{
	switch (mode) {
	case CPI_MODE_HARDWARE:
		return "hardware";
	case CPI_MODE_SOFTWARE:
		return "software";
	case CPI_MODE_OFF:
	default:
		return "off";
	}
}

struct cpi_labels cpi_mode_labels(enum cpi_mode mode)
{
	switch (mode) {
	case CPI_MODE_HARDWARE:
		return (struct cpi_labels){"cycles", "instructions", "cpi"};
	case CPI_MODE_SOFTWARE:
		return (struct cpi_labels){"task_clock_ns", "cpu_clock_ns", "clock_ratio"};
	case CPI_MODE_OFF:
	default:
		return (struct cpi_labels){NULL, NULL, NULL};
	}
}

bool cpi_ratio(uint64_t numerator, uint64_t denominator, double *out)
{
	if (!denominator)
		return false;
	*out = (double)numerator / (double)denominator;
	return true;
}
