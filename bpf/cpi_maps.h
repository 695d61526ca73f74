/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Layouts shared by bpf/cpi.bpf.c and user space: CPU time and the two
 * counter events per cgroup, the counting mode, the drop reasons, and the
 * scaling maths for multiplexed counters (pure, so user space unit-tests
 * exactly what the BPF program runs).
 */
#ifndef QOSLET_BPF_CPI_MAPS_H
#define QOSLET_BPF_CPI_MAPS_H

#ifndef __VMLINUX_H__ /* user space: the BPF side has these from vmlinux.h */
#include <linux/types.h>
#include <stdbool.h>
#endif

/* Per cgroup and per CPU (the map is a PERCPU_HASH keyed by cgroup id). */
struct cpi_val {
	__u64 cpu_ns;	   /* time the cgroup's tasks ran, from switch-in to switch-out */
	__u64 numerator;   /* cycles (hardware mode) or cpu-clock ns (software mode) */
	__u64 denominator; /* instructions (hardware) or context switches (software) */
};

/* What the two events are; the attaching process publishes it in cpi_info. */
enum cpi_mode {
	/* No counter events: cpu_ns only, numerator and denominator stay 0. */
	CPI_MODE_OFF = 0,
	/* numerator = cycles, denominator = instructions: the ratio is CPI. */
	CPI_MODE_HARDWARE = 1,
	/*
	 * numerator = cpu-clock ns, denominator = context switches: the same
	 * plumbing on machines without a PMU. The ratio is ns per switch, NOT CPI.
	 */
	CPI_MODE_SOFTWARE = 2,
};

/* Per-CPU counters of slices whose counter deltas were not published. */
enum cpi_drop {
	CPI_DROP_MAP_FULL = 0, /* cpi_usage had no room for a new cgroup: whole slice lost */
	CPI_DROP_READ,	       /* an event read failed at either end of the slice */
	CPI_DROP_NOT_COUNTED,  /* an event was multiplexed out for the whole slice */
	CPI_DROP_NR,
};

/* One event reading, as bpf_perf_event_read_value returns it. */
struct cpi_reading {
	__u64 counter;
	__u64 enabled; /* ns the event was enabled */
	__u64 running; /* ns it was on the PMU (< enabled when multiplexed) */
};

/* Fixed-point shift of the enabled/running ratio: 1/65536 resolution. */
#define CPI_SCALE_SHIFT 16

/*
 * count * enabled / running, the perf tools' estimate when the event ran
 * only part of the time, without 128-bit maths (BPF has none): the ratio
 * is fixed-point and count is split so no product can overflow unless the
 * result itself would. Absurd inputs (a slice of days, or an event on the
 * PMU for under 1/2^31 of it) take the coarse count / running * enabled.
 * running must be non-zero when running < enabled.
 */
static inline __u64 cpi_scale(__u64 count, __u64 enabled, __u64 running)
{
	const __u64 low = (1ULL << CPI_SCALE_SHIFT) - 1;
	__u64 ratio;

	if (running >= enabled)
		return count;
	if (enabled >> (64 - CPI_SCALE_SHIFT))
		return count / running * enabled;
	ratio = (enabled << CPI_SCALE_SHIFT) / running;
	if (ratio >> 47)
		return count / running * enabled;
	return (count >> CPI_SCALE_SHIFT) * ratio + (((count & low) * ratio) >> CPI_SCALE_SHIFT);
}

/*
 * The growth of one event between two readings, scaled for multiplexing.
 * False when there is no estimate: the event never ran in between although
 * it was enabled, or a value went backwards (the event was replaced).
 */
static inline bool cpi_event_delta(const struct cpi_reading *before, const struct cpi_reading *now,
				   __u64 *out)
{
	__u64 count = now->counter - before->counter;
	__u64 enabled = now->enabled - before->enabled;
	__u64 running = now->running - before->running;

	if (now->counter < before->counter || now->enabled < before->enabled ||
	    now->running < before->running)
		return false;
	if (!running && enabled)
		return false;
	*out = cpi_scale(count, enabled, running);
	return true;
}

#endif
