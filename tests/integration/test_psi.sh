#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# PSI per cgroup: a cgroup whose two CPU hogs share one CPU has CPU
# pressure (each waits while the other runs). `qoslet top -j` reports the
# cgroup's cpu "some avg10" as the kernel's own cpu.pressure file says it,
# and says PSI is on. The cgroup exists at the same path in the hierarchy
# qoslet names cgroups by and in the cgroup2 mount, where PSI lives (on a
# pure v2 node the two are one).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

require_root
require_cmds jq stress-ng taskset
require_binaries
test_setup

V2_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$V2_ROOT" ] || skip "no cgroup2 mount: per-cgroup PSI lives in cgroup2 files"
cat /proc/pressure/cpu >/dev/null 2>&1 || skip "PSI is off in this kernel (boot with psi=1)"

V2_PARENT=""
# The cgroup2 side first (its processes are the test's), then lib.sh's cleanup.
trap 'rc=$?; [ -z "$V2_PARENT" ] || cgroup_destroy "$V2_PARENT"; (exit $rc); _test_cleanup' EXIT

cg=$TEST_PARENT/psi
mkdir "$cg"
if [ "$V2_ROOT" != "$CG_ROOT" ]; then
	mkdir "$V2_ROOT$TEST_PARENT_REL"
	V2_PARENT=$V2_ROOT$TEST_PARENT_REL
	mkdir "$V2_PARENT/psi"
fi
v2cg=$V2_ROOT$TEST_PARENT_REL/psi

# Two hogs on CPU 1, in the cgroup in both hierarchies before they start.
sh -c 'echo $$ >"$1/cgroup.procs" && echo $$ >"$2/cgroup.procs" &&
	exec taskset -c 1 stress-ng --cpu 2 --timeout 40 --quiet' sh "$cg" "$v2cg" &
BG_PIDS+=($!)

# avg10 is a 10 s average, recomputed every 2 s: let it build up.
sleep 12
qoslet_bg "$TMP/out" "$TMP/err" top -j -c "$TEST_PARENT_REL/psi" --pin-dir "$PIN_DIR" 2 2
wait_exit "$QOSLET_PID" 30 qoslet
file=$(sed -n 's/^some avg10=\([0-9.]*\) .*/\1/p' "$v2cg/cpu.pressure")
line=$(tail -n 1 "$TMP/out")

assert_eq "$(jq -r '.probes.psi.on' <<<"$line")" true "the psi probe is on"
got=$(jq -r --arg p "$TEST_PARENT_REL/psi" \
	'.cgroups[] | select(.path == $p) | .psi_some_avg10.cpu' <<<"$line")
log "cpu some avg10: qoslet $got, cpu.pressure $file"
assert_cmp "$got" ">=" 20 "two hogs on one CPU show CPU pressure"
# Read up to 2 s apart, and avg10 moves little in 2 s under steady load.
diff=$(awk -v a="$got" -v b="$file" 'BEGIN { d = a - b; print d < 0 ? -d : d }')
assert_cmp "$diff" "<=" 15 "qoslet's avg10 agrees with the kernel's cpu.pressure"
