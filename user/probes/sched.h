/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The scheduler probe (bpf/sched.bpf.c): run-queue latency per cgroup and
 * who-delayed-whom. Fills CG_RQ and the snapshot's blame pairs.
 */
#ifndef QOSLET_PROBES_SCHED_H
#define QOSLET_PROBES_SCHED_H

#include "probes/probes.h"

extern const struct probe_ops sched_probe_ops;

#endif
