/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The CPU-time and CPI probe (bpf/cpi.bpf.c): per cgroup, the time its
 * tasks ran and the growth of two counting perf events while they ran.
 * Fills CG_CPU, the snapshot's cpi_mode and cpi_drops.
 *
 * Modes (enum cpi_mode in bpf/cpi.h): hardware cycles/instructions where
 * the PMU opens; else, with --cpi-events auto or software, the software
 * stand-ins task-clock/cpu-clock, whose ratio is about 1 and NOT CPI; else CPU time only. The mode
 * of the attaching process is the one every reader labels the numbers with.
 */
#ifndef QOSLET_PROBES_CPI_H
#define QOSLET_PROBES_CPI_H

#include "probes/probes.h"

extern const struct probe_ops cpi_probe_ops;

#endif
