#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The hardware path of the cpi probe, where the CPU has a PMU: a CPU hog in
# a test cgroup, counted by `qoslet cpi -j` and, for the same task over the
# same time, by `perf stat -e cycles,instructions`. Each of qoslet's cycles
# and instructions must match perf's own count of the same event within 20%
# (so a swapped pair, koordlet's old bug, fails), and cpi = cycles /
# instructions. Skips, with qoslet's reason, where no hardware PMU opens.
# shellcheck disable=SC2016 # jq filters are single-quoted
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_root
require_cmds jq taskset perf
require_binaries
test_setup

# Does this machine count hardware events? qoslet's own choice decides.
rc=0
timeout -k 5 30 "$QOSLET" cpi -j --pin-dir "$PIN_DIR" 0.2 1 >"$TMP/probe.out" 2>"$TMP/probe.err" || rc=$?
[ "$rc" = 0 ] || fail "qoslet cpi exited $rc: $(cat "$TMP/probe.err")"
mode=$(jq -r .counters.mode "$TMP/probe.out")
[ "$mode" = hardware ] ||
	skip "no hardware counters here (mode $mode): $(jq -r .probes.cpi.detail "$TMP/probe.out")"

CG=$TEST_PARENT/hog
mkdir "$CG" || fail "cannot create $CG"
cg_run "$CG" 0 "$DUTYCYCLE" 1000 0 20
HOG=$CG_PID
sleep 0.5

qoslet_bg "$TMP/cpi.out" "$TMP/cpi.err" cpi -j --pin-dir "$PIN_DIR" -c "$(cg_rel "$CG")" 4 1
QPID=$QOSLET_PID
sleep 0.5 # qoslet's interval starts after it attaches; perf's window lies inside it
perf stat -x, -e cycles,instructions -p "$HOG" -- sleep 3 2>"$TMP/perf.csv" >/dev/null ||
	fail "perf stat failed: $(cat "$TMP/perf.csv")"
rc=0
wait_exit "$QPID" 20 "qoslet cpi" || rc=$?
[ "$rc" = 0 ] || fail "qoslet cpi exited $rc: $(cat "$TMP/cpi.err")"
obj=$(json_cgroup "$TMP/cpi.out" "$(cg_rel "$CG")")
[ "$obj" != null ] || fail "the hog's cgroup is missing: $(cat "$TMP/cpi.out")"

# perf saw 3 of qoslet's ~4 s: compare rates per second of CPU time.
p_cyc=$(awk -F, '$3 ~ /^cycles/ { print $1 }' "$TMP/perf.csv")
p_ins=$(awk -F, '$3 ~ /^instructions/ { print $1 }' "$TMP/perf.csv")
p_ns=$(awk -F, '$3 ~ /^cycles/ { print $4 }' "$TMP/perf.csv") # counter run time, ns
q_ns=$(jget "$obj" .cpu_ns)
log "perf: cycles $p_cyc instructions $p_ins over $p_ns ns; qoslet: $(echo "$obj" | jq -c .)"
qc=$(awk -v a="$(jget "$obj" .cycles)" -v b="$q_ns" -v c="$p_cyc" -v d="$p_ns" 'BEGIN { printf "%.4f", (a / b) / (c / d) }')
qi=$(awk -v a="$(jget "$obj" .instructions)" -v b="$q_ns" -v c="$p_ins" -v d="$p_ns" 'BEGIN { printf "%.4f", (a / b) / (c / d) }')
assert_cmp "$qc" ">=" 0.8 "cycles per ns match perf's cycles (low)"
assert_cmp "$qc" "<=" 1.2 "cycles per ns match perf's cycles (high)"
assert_cmp "$qi" ">=" 0.8 "instructions per ns match perf's instructions (low)"
assert_cmp "$qi" "<=" 1.2 "instructions per ns match perf's instructions (high)"
assert_json "$obj" '((.cpi - .cycles / .instructions) | fabs) < 1e-6' "cpi = cycles / instructions"
log "all hardware cpi checks passed"
