/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPU time and CPI per cgroup, from one pair of counting perf events per
 * CPU (not per CPU and container, as koordlet does).
 *
 * Each CPU keeps an open period: since its start, the CPU has run tasks of
 * one cgroup only. When a switch hands the CPU to another cgroup (or after
 * PERIOD_MAX_SWITCHES switches within one cgroup), the CPU's two events are read: what they
 * grew by during the period is charged to its cgroup, with the period's
 * length (cpu_ns). Switches between tasks of one cgroup cost no counter
 * read, the most expensive step (two helper calls into perf). The idle
 * task is charged nothing. Both counter deltas are published together
 * or not at all: a slice whose reading failed at either end, or whose event
 * never reached the PMU, is counted in cpi_drops instead of half-published.
 *
 * User space opens the events (hardware cycles/instructions, or software
 * stand-ins) and fills the two perf event arrays, index = CPU.
 *
 * Included by bpf/cpi.bpf.c (maps, cgroup-removal hooks) and
 * bpf/switch.bpf.c (the one sched_switch program every probe shares).
 */
#ifndef QOSLET_CPI_SWITCH_BPF_H
#define QOSLET_CPI_SWITCH_BPF_H

#include "cpi_maps.h"
#include "cgroup_id.bpf.h"
#include "cg_maps.bpf.h"

_Static_assert(sizeof(struct cpi_reading) == sizeof(struct bpf_perf_event_value),
	       "cpi_reading mirrors bpf_perf_event_value");

/* Set by user space before load: false when no counter event could be opened. */
const volatile bool counters_on = true;

/* max_entries 0: libbpf sizes perf event arrays to the possible CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
} cpi_num_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(int));
	__uint(value_size, sizeof(int));
} cpi_den_events SEC(".maps");

/*
 * A period is also closed after this many switches within one cgroup, so
 * a cgroup that keeps a CPU (its tasks switching among themselves) is
 * still reported every fraction of a second: a CPU that one cgroup
 * saturates switches every few ms (CFS slices), else idle would run and
 * close the period. Counting switches rather than reading the clock keeps
 * the fast path free of helper calls.
 */
#define PERIOD_MAX_SWITCHES 64

/* This CPU's open period. */
struct cpi_last {
	__u64 ts;	/* start of the period; 0: no switch seen yet on this CPU */
	__u64 cgid;	/* the cgroup whose tasks ran during it; 0: idle */
	__u32 switches; /* within the cgroup since the period began */
	struct cpi_reading num, den;
	bool have_counts; /* num and den hold a successful reading */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpi_last);
} cpi_last SEC(".maps");

/* Per-CPU for the reasons rq_hist is (bpf/sched_switch.bpf.h), and shared before 6.1 likewise. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct cpi_val);
} cpi_usage SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CPI_DROP_NR);
	__type(key, __u32);
	__type(value, __u64);
} cpi_drops SEC(".maps");

/*
 * The mode of the attaching process (enum cpi_mode), written by it before
 * it attaches: a process that only reads labels the numbers by this, not
 * by what it would have chosen itself.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cpi_info SEC(".maps");

static __always_inline void cpi_count_drop(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&cpi_drops, &why);

	if (n)
		(*n)++;
}

static __always_inline void cpi_charge(__u64 cgid, const struct cpi_val *d)
{
	struct cpi_val *v = bpf_map_lookup_elem(&cpi_usage, &cgid);

	if (!v) {
		/* The first slice initialises the entry: nothing to add to. */
		if (bpf_map_update_elem(&cpi_usage, &cgid, d, BPF_NOEXIST) &&
		    !(v = bpf_map_lookup_elem(&cpi_usage, &cgid)))
			cpi_count_drop(CPI_DROP_MAP_FULL);
		if (!v)
			return;
	}
	CG_ADD(&v->cpu_ns, d->cpu_ns);
	CG_ADD(&v->numerator, d->numerator);
	CG_ADD(&v->denominator, d->denominator);
}

/* Both events of this CPU, or false when either read fails. */
static __always_inline bool cpi_read_counts(struct cpi_reading *num, struct cpi_reading *den)
{
	return !bpf_perf_event_read_value(&cpi_num_events, BPF_F_CURRENT_CPU, (void *)num,
					  sizeof(*num)) &&
	       !bpf_perf_event_read_value(&cpi_den_events, BPF_F_CURRENT_CPU, (void *)den,
					  sizeof(*den));
}

/* The counter deltas of the slice, or false (and counted) when there are none. */
static __always_inline bool cpi_slice_counts(const struct cpi_last *last, bool have,
					     const struct cpi_reading *num,
					     const struct cpi_reading *den, struct cpi_val *d)
{
	if (!have || !last->have_counts) {
		cpi_count_drop(CPI_DROP_READ);
		return false;
	}
	if (!cpi_event_delta(&last->num, num, &d->numerator) ||
	    !cpi_event_delta(&last->den, den, &d->denominator)) {
		cpi_count_drop(CPI_DROP_NOT_COUNTED);
		d->numerator = d->denominator = 0;
		return false;
	}
	return true;
}

/* `cgid`: the cgroup of the task switched in, 0 for the idle task. */
static __always_inline void cpi_on_switch(__u64 cgid)
{
	struct cpi_reading num = {}, den = {};
	__u32 zero = 0;
	struct cpi_last *last = bpf_map_lookup_elem(&cpi_last, &zero);
	__u64 now;
	bool have;

	if (!last)
		return;
	if (last->ts && cgid == last->cgid && ++last->switches < PERIOD_MAX_SWITCHES)
		return; /* the same cgroup keeps the CPU: its period goes on */
	now = bpf_ktime_get_ns();
	have = counters_on && cpi_read_counts(&num, &den);
	if (last->ts && last->cgid) {
		struct cpi_val d = {.cpu_ns = now - last->ts};

		if (counters_on)
			cpi_slice_counts(last, have, &num, &den, &d);
		cpi_charge(last->cgid, &d);
	}
	/* A failed read leaves no baseline: the next period is dropped, not mischarged. */
	last->ts = now;
	last->cgid = cgid;
	last->switches = 0;
	last->num = num;
	last->den = den;
	last->have_counts = have;
}

#endif
