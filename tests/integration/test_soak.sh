#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The soak with churn, 120 s of it in CI (`make test-long`: 4 minutes;
# `make soak` is the long run;
# scripts/soak/soak.sh does the work, docs/soak/README.md explains it):
# `qoslet agent`, acting, manages a parent cgroup below which 50 cgroups with
# a task each are created and removed a second, while an LS latency loop and
# BE CPU hogs come and go every 20 s. After a 40 s warm-up:
#  - the agent's RSS level stays within 1 MiB and its peak does not grow;
#  - its open fds, each pinned map's entries of removed cgroups and its loop
#    duration do not grow from the first cycle to the last;
#  - once the churn stops, no map entry, actuator journal entry or /metrics
#    line names any of the removed cgroups.
# Everything made (cgroups in every hierarchy, processes, the pin dir) is
# removed at exit, also on failure. SOAK_SECONDS (default 120: a 40 s warm-up,
# then the two 40 s cycles it compares: the least it judges) lengthens it.
#
# Under TCG (the kernel matrix's VMs) the agent's RSS and loop time under
# load say nothing about a node's: skip there (lib.sh's skip_in_tcg).
if [ "${QOSLET_VM:-}" = tcg ]; then
	echo "SKIP: under TCG emulation (QOSLET_VM=tcg): judges the agent's growth under load and churn over time"
	exit 77
fi
# exec: the runner's SIGTERM on a timeout must reach the soak's own cleanup.
exec "$(dirname "$0")/../../scripts/soak/soak.sh" -d "${SOAK_SECONDS:-120}" -w 40
