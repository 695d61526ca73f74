#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Blame counts the hand-overs that have no wait. On one CPU:
#   A  a CPU hog under SCHED_IDLE (chrt -i 0: how cpu.idle=1 runs BE)
#   B  a 200 us work / 1 ms sleep duty cycle
# Every wake-up of B takes the CPU from A at once, and the kernel's clock
# often does not move between the wake-up and the switch: most of B's waits
# are 0 ns. Blame must still count them against A (docs/sched-probe.md):
# over one interval, the count of pair (B, A) is most of B's switch-ins as
# the kernel counts them (/proc/PID/schedstat, third field), less those that
# followed another cgroup's task on a loaded host, while the wait
# charged to A stays short per hand-over. Before hand-overs were counted,
# the pair held only the few waits the clock saw (under 1% of them here).
# shellcheck disable=SC2016 # jq filters are single-quoted
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_root
require_cmds jq taskset chrt
require_binaries
test_setup

INTERVAL=3
LOAD_S=60 # the loads exit by themselves even if cleanup never runs
CPU=$(($(nproc) - 1))
A=$(kube_cgroup besteffort)
B=$(kube_cgroup burstable)
A_REL=$(cg_rel "$A") B_REL=$(cg_rel "$B")
A_ID=$(cg_id "$A")
log "A $A_REL ($A_ID), B $B_REL, both on CPU $CPU"

cg_run "$A" "$CPU" chrt -i 0 "$DUTYCYCLE" 1000 0 "$LOAD_S"
cg_run "$B" "$CPU" "$DUTYCYCLE" 200 1000 "$LOAD_S"
B_PID=$CG_PID
schedstat_sampler "$B_PID" "$TMP/b.schedstat" "$CPU"
sleep 0.5

rc=0
timeout -k 5 60 "$QOSLET" blame -j --pin-dir "$PIN_DIR" -c "$B_REL" "$INTERVAL" 1 \
	>"$TMP/blame.out" 2>"$TMP/blame.err" || rc=$?
[ "$rc" = 0 ] || fail "qoslet blame exited $rc: $(cat "$TMP/blame.err")"
assert_json_lines "$TMP/blame.out"
T1=$(jq -r .ts "$TMP/blame.out")
T0=$(jq -r --argjson i "$INTERVAL" '.ts - (.interval_s // $i)' "$TMP/blame.out")
sampler_past "$TMP/b.schedstat" "$T1"
k0=$(schedstat_at "$TMP/b.schedstat" "$T0" pcount) || fail "no schedstat samples around $T0"
k1=$(schedstat_at "$TMP/b.schedstat" "$T1" pcount) || fail "no schedstat samples around $T1"
switch_ins=$((k1 - k0))

pair=$(jq -c --arg b "$B_REL" --argjson a "$A_ID" \
	'[.victims[] | select(.path == $b) | .culprits[] | select(.id == $a)] | .[0] // null' \
	"$TMP/blame.out")
[ "$pair" != null ] || fail "blame has no pair (B, A): $(cat "$TMP/blame.out")"
count=$(jget "$pair" .count)
wait_ns=$(jget "$pair" .wait_ns)
# On a loaded host other tasks (other jobs, kernel threads) also run on the
# CPU, and B's switch-ins after them are theirs, not A's: every switch-in of B
# follows either A (always runnable) or one of them, so A's part is B's
# switch-ins less the hand-overs blame charged to anyone else.
others=$(jq --arg b "$B_REL" --argjson a "$A_ID" \
	'[.victims[] | select(.path == $b) | .culprits[] | select(.id != $a) | .count] | add // 0' \
	"$TMP/blame.out")
from_a=$((switch_ins - others))
log "interval [$T0, $T1]: pair (B, A) count $count, wait $wait_ns ns; B's switch-ins $switch_ins, $others of them charged to other cgroups"
assert_cmp "$switch_ins" ">" 100 "B ran its duty cycle in the interval"
assert_cmp "$from_a" ">" 50 "most of B's switch-ins took the CPU from A (a quieter CPU $CPU needed)"
assert_cmp "$(ratio "$count" "$from_a")" ">=" 0.7 \
	"blame counts most of B's switch-ins after A against A (the zero waits too)"
assert_cmp "$(ratio "$((count + others))" "$switch_ins")" "<=" 1.1 \
	"blame counts no more hand-overs than B had switch-ins"
assert_cmp "$((wait_ns / count))" "<" "$(time_bound_ms 1)000000" \
	"the wait charged to A per hand-over is short (A is SCHED_IDLE)"
