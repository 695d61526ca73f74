/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The latency histogram every probe keeps (run-queue waits, reclaim
 * stalls), shared by the BPF programs and user space.
 */
#ifndef QOSLET_BPF_LAT_HIST_H
#define QOSLET_BPF_LAT_HIST_H

#ifndef __VMLINUX_H__ /* user space: the BPF side has these from vmlinux.h */
#include <linux/types.h>
#endif

/*
 * Bucket i counts values v with 2^(i+QOSLET_LAT_MIN_SHIFT-1) < v <=
 * 2^(i+QOSLET_LAT_MIN_SHIFT) ns; bucket 0 also holds everything below, the
 * last bucket everything above. Upper bounds are inclusive, so they can be
 * published as Prometheus "le" bounds unchanged (bcc's log2 rounds down,
 * which Prometheus cannot express). 2^10 ns (~1 us) to 2^35 ns (~34 s).
 */
#define QOSLET_LAT_MIN_SHIFT 10
#define QOSLET_LAT_SLOTS     27

struct lat_hist {
	__u64 count;
	__u64 sum_ns;
	__u64 slots[QOSLET_LAT_SLOTS];
};

#ifdef __VMLINUX_H__
/* ceil(log2(v)) for v >= 1, without a loop the verifier has to walk. */
static __always_inline __u32 lat_log2_ceil(__u64 v)
{
	__u32 r = 0, s;

	if (v <= 1)
		return 0;
	v--;
	s = (v > 0xFFFFFFFFULL) << 5;
	v >>= s;
	r |= s;
	s = (v > 0xFFFF) << 4;
	v >>= s;
	r |= s;
	s = (v > 0xFF) << 3;
	v >>= s;
	r |= s;
	s = (v > 0xF) << 2;
	v >>= s;
	r |= s;
	s = (v > 0x3) << 1;
	v >>= s;
	r |= s;
	r |= (v >> 1);
	return r + 1;
}

/* The slot of one value in ns. */
static __always_inline __u32 lat_hist_slot(__u64 ns)
{
	__u32 slot = lat_log2_ceil(ns);

	slot = slot > QOSLET_LAT_MIN_SHIFT ? slot - QOSLET_LAT_MIN_SHIFT : 0;
	return slot < QOSLET_LAT_SLOTS ? slot : QOSLET_LAT_SLOTS - 1;
}

/* Adds one value in ns to a histogram owned by this CPU (no atomics). */
static __always_inline void lat_hist_add(struct lat_hist *h, __u64 ns)
{
	h->count++;
	h->sum_ns += ns;
	h->slots[lat_hist_slot(ns)]++;
}
#endif

#endif
