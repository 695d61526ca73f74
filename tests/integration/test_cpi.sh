#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The acceptance test of per-cgroup CPU time (and the CPI plumbing):
#   - a duty-cycle load (2 ms work / 1 ms sleep, ~4 s, pinned to one CPU)
#     runs in a test cgroup, starting and ending inside one 8 s interval of
#     `qoslet cpi -j`; the cgroup's cpu_ns must agree with the kernel's own
#     accounting of the same cgroup over the same run within 5%: cpuacct.usage
#     (v1: the same path in the cpuacct hierarchy, with the same process in
#     it) or cpu.stat usage_usec (v2), read right before the load starts and
#     right after it exits;
#   - the numbers are labelled by mode: "cpi" only in hardware mode, and the
#     software stand-ins as clock_ratio with "mode":"software";
#   - --cpi-events cycles,instructions on a machine without a PMU reports CPI
#     unavailable with the reason and still runs and exits 0.
# tests/integration/test_cpi_hardware.sh covers the hardware numbers.
# shellcheck disable=SC2016 # jq filters are single-quoted
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_root
require_cmds jq taskset
require_binaries
test_setup

INTERVAL=8
LOAD_S=4
WORK_US=2000 SLEEP_US=1000 # ~2/3 busy: many periods, each ended by a switch to idle

CG=$TEST_PARENT/load
mkdir "$CG" || fail "cannot create $CG"
CG_REL=$(cg_rel "$CG")

# Where the kernel's own CPU time of CG is: cpuacct.usage (ns) next to cpu
# when co-mounted, else the same path in the separate v1 cpuacct hierarchy,
# else v2's cpu.stat usage_usec.
ACCT_PARENT="" ACCT=""
if [ -e "$CG/cpuacct.usage" ]; then
	ACCT=$CG
elif [ -e "$CG/cpu.stat" ] && grep -q '^usage_usec ' "$CG/cpu.stat"; then
	ACCT=$CG
else
	acct_root=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpuacct(,|$)/ { print $2; exit }' /proc/mounts)
	[ -n "$acct_root" ] || skip "no cpuacct hierarchy and no cpu.stat usage_usec to compare with"
	mkdir "$acct_root$TEST_PARENT_REL" || fail "cannot create $acct_root$TEST_PARENT_REL"
	ACCT_PARENT=$acct_root$TEST_PARENT_REL
	ACCT=$ACCT_PARENT/load
	mkdir "$ACCT" || fail "cannot create $ACCT"
	# Our cpuacct twin goes first (its processes are ours: killing them there
	# is what cgroup_destroy does), then lib.sh's cleanup, with the exit code.
	trap 'rc=$?; cgroup_destroy "$ACCT_PARENT"; (exit $rc); _test_cleanup' EXIT
fi
log "load cgroup $CG_REL; kernel CPU time from $ACCT"

# The kernel's CPU time of CG so far, in ns.
kernel_cpu_ns() {
	if [ -e "$ACCT/cpuacct.usage" ]; then
		cat "$ACCT/cpuacct.usage"
	else
		awk '$1 == "usage_usec" { printf "%.0f\n", $2 * 1000 }' "$ACCT/cpu.stat"
	fi
}

# The quieter CPU, so the load is not starved by other work on the node.
c0=$(cpu_jiffies 0) c1=$(cpu_jiffies 1)
sleep 0.5
b0=$(cpu_busy_fraction "$c0" "$(cpu_jiffies 0)")
b1=$(cpu_busy_fraction "$c1" "$(cpu_jiffies 1)")
LOAD_CPU=$(awk -v a="$b0" -v b="$b1" 'BEGIN { print (a <= b) ? 0 : 1 }')

# ---- CPU time against the kernel's accounting ----
qoslet_bg "$TMP/cpi.out" "$TMP/cpi.err" cpi -j -v --pin-dir "$PIN_DIR" -c "$TEST_PARENT_REL" \
	"$INTERVAL" 1
QPID=$QOSLET_PID
for _ in $(seq 1 200); do
	grep -q "cpi probe: attached" "$TMP/cpi.err" && break
	kill -0 "$QPID" 2>/dev/null || fail "qoslet cpi exited early: $(cat "$TMP/cpi.err")"
	sleep 0.05
done
grep -q "cpi probe: attached" "$TMP/cpi.err" || fail "qoslet cpi never attached: $(cat "$TMP/cpi.err")"
# The interval starts at the first reading, right after attaching.
sleep 0.5

# The load joins both hierarchies before it execs, so all its CPU time is in both.
k0=$(kernel_cpu_ns)
# shellcheck disable=SC2016
sh -c 'echo $$ > "$1/cgroup.procs" && echo $$ > "$2/cgroup.procs" || exit 126
	shift 2; exec taskset -c "$@"' sh "$CG" "$ACCT" "$LOAD_CPU" "$DUTYCYCLE" \
	"$WORK_US" "$SLEEP_US" "$LOAD_S" >"$TMP/load.log" 2>&1 &
LOAD_PID=$!
BG_PIDS+=("$LOAD_PID")
rc=0
wait_exit "$LOAD_PID" $((LOAD_S + 10)) "the load" || rc=$?
[ "$rc" = 0 ] || fail "the load exited $rc: $(cat "$TMP/load.log")"
k1=$(kernel_cpu_ns)

rc=0
wait_exit "$QPID" $((INTERVAL + 15)) "qoslet cpi" || rc=$?
[ "$rc" = 0 ] || fail "qoslet cpi exited $rc: $(cat "$TMP/cpi.err")"
assert_json_lines "$TMP/cpi.out"
report=$(tail -n 1 "$TMP/cpi.out")
obj=$(json_cgroup "$TMP/cpi.out" "$CG_REL")
[ "$obj" != null ] || fail "$CG_REL missing from: $report"
assert_eq "$(jget "$obj" .id)" "$(cg_id "$CG")" "the cgroup's id is its directory's inode"

K=$((k1 - k0))
Q=$(jget "$obj" .cpu_ns)
R=$(ratio "$Q" "$K")
log "cpu_ns $Q vs kernel $K over the load's run (ratio $R)"
assert_cmp "$K" ">" $((LOAD_S * 1000000000 / 3)) "the load ran (kernel: at least a third of its ${LOAD_S}s)"
assert_cmp "$R" ">=" 0.95 "cpu_ns within 5% of the kernel's CPU time (not under)"
assert_cmp "$R" "<=" 1.05 "cpu_ns within 5% of the kernel's CPU time (not over)"
pct=$(awk -v q="$Q" -v i="$(jget "$report" .interval_s)" 'BEGIN { printf "%.4f", q / i / 1e7 }')
assert_cmp "$(jget "$obj" .cpu_pct)" ">=" "$(awk -v p="$pct" 'BEGIN { print p * 0.99 }')" \
	"cpu_pct is cpu_ns over the interval (low)"
assert_cmp "$(jget "$obj" .cpu_pct)" "<=" "$(awk -v p="$pct" 'BEGIN { print p * 1.01 }')" \
	"cpu_pct is cpu_ns over the interval (high)"

# ---- labels: never "cpi" unless the counters are cycles and instructions ----
mode=$(jget "$report" .counters.mode)
detail=$(jget "$report" .probes.cpi.detail)
log "mode $mode: $detail"
assert_json "$report" '[.counters.drops[]] | all(. >= 0)' "drops are reported"
case $mode in
hardware)
	assert_json "$report" '.counters.ratio == "cpi" and .counters.numerator == "cycles"' "hardware labels"
	assert_json "$obj" '.cycles > 0 and .instructions > 0 and (.cpi | type == "number")' \
		"cycles, instructions and cpi"
	;;
software)
	assert_json "$report" '.counters.ratio == "clock_ratio" and .counters.numerator == "task_clock_ns"
		and .counters.denominator == "cpu_clock_ns"' "software labels"
	assert_json "$obj" 'has("cpi") | not' "software mode never reports a cpi"
	assert_json "$obj" '.task_clock_ns > 0 and .cpu_clock_ns > 0 and (.clock_ratio | type == "number")' \
		"task_clock_ns, cpu_clock_ns and clock_ratio"
	[[ $detail == *"not CPI"* ]] || fail "the software path does not say 'not CPI': $detail"
	# Both stand-ins are clocks read at the ends of the cgroup's periods: each
	# is read through the perf plumbing and must track cpu_ns.
	for c in task_clock_ns cpu_clock_ns; do
		assert_cmp "$(ratio "$(jget "$obj" ".$c")" "$Q")" ">=" 0.9 "$c tracks cpu_ns (low)"
		assert_cmp "$(ratio "$(jget "$obj" ".$c")" "$Q")" "<=" 1.1 "$c tracks cpu_ns (high)"
	done
	;;
*) fail "auto mode should count hardware or software events, got '$mode': $detail" ;;
esac

# ---- named hardware events where the PMU is missing ----
rc=0
timeout -k 5 30 "$QOSLET" cpi -j --pin-dir "$PIN_DIR" --cpi-events cycles,instructions 0.5 1 \
	>"$TMP/hw.out" 2>"$TMP/hw.err" || rc=$?
[ "$rc" = 0 ] || fail "qoslet cpi --cpi-events cycles,instructions exited $rc: $(cat "$TMP/hw.err")"
hw=$(tail -n 1 "$TMP/hw.out")
if [ "$mode" = software ]; then
	assert_json "$hw" '.counters.mode == "off" and .counters.ratio == null' "named events that fail: CPU time only"
	assert_json "$hw" '.probes.cpi.detail | test("CPI unavailable \\(cycles: ")' \
		"the reason is in the probe's detail"
	grep -q "CPI unavailable" "$TMP/hw.err" || fail "no warning on stderr: $(cat "$TMP/hw.err")"
	assert_json "$hw" 'all(.cgroups[]; has("cpi") | not)' "no cgroup has a cpi"
	log "ok: $(jget "$hw" .probes.cpi.detail)"
else
	assert_json "$hw" '.counters.mode == "hardware"' "named events open where the PMU is"
fi
log "all cpi checks passed"
