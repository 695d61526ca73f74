/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Pressure stall information per cgroup, from the cgroup2 files
 * cpu.pressure, memory.pressure and io.pressure (/proc/pressure for the
 * root). Not a BPF probe: the kernel already aggregates PSI. Fills CG_PSI
 * for the cgroups the other probes saw active in the same reading, so a
 * node with thousands of idle cgroups costs no reads.
 */
#ifndef QOSLET_PROBES_PSI_H
#define QOSLET_PROBES_PSI_H

#include "probes/probes.h"

extern const struct probe_ops psi_probe_ops;

/*
 * Parses one pressure file ("some avg10=.. avg60=.. avg300=.. total=.."
 * and an optional "full ..." line). Returns 0, or -EINVAL when the "some"
 * line is missing or malformed; *full is zeroed when absent.
 */
int psi_parse(const char *text, struct psi_line *some, struct psi_line *full);

#endif
