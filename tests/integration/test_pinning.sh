#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Several qoslet processes share one set of pinned maps and only one of them
# attaches, so nothing is counted twice:
#   phase 1  instance 1 alone: the baseline wait rate of a test cgroup
#   phase 2  instance 2 joins: it uses the same maps (same map ids, pinned and
#            held open by both) and both report the baseline rate, not 2x
#   phase 3  instance 1 exits: instance 2 takes over attaching, still 1x
# Then --hook raw_tp and --hook tp_btf each load, count at the same rate and
# say which hook they used in the JSON.
#
# The load is a 200 us work / 800 us sleep duty cycle alone on CPU 0: about
# one wait per cycle, so the count per second is steady and a double count
# would show as twice the rate.
# shellcheck disable=SC2016 # jq filters are single-quoted
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_root
require_cmds jq taskset bpftool
require_binaries
test_setup

E=$(kube_cgroup burstable)
E_REL=$(cg_rel "$E")
E_ID=$(cg_id "$E")
cg_run "$E" 0 "$DUTYCYCLE" 200 800 60
log "E $E_REL ($E_ID)"

# rates FILE [MIN_START [MAX_END]]: E's waits per second in each interval of
# FILE that lies within [MIN_START, MAX_END], one per line.
rates() {
	jq -r --arg p "$E_REL" --argjson lo "${2:-0}" --argjson hi "${3:-1e18}" '
		select(.ts - .interval_s >= $lo and .ts <= $hi)
		| ((.cgroups // []) | map(select(.path == $p)) | .[0].count // 0) / .interval_s' "$1"
}

mean() {
	awk '{ s += $1; n++ } END { if (n) printf "%.1f\n", s / n; else print "nan" }'
}

# "id name" of every BPF map process PID holds open.
held_maps() {
	local id
	grep -h "^map_id:" /proc/"$1"/fdinfo/* 2>/dev/null | awk "{ print \$2 }" | sort -un | while read -r id; do
		echo "$id $(bpftool -j map show id "$id" 2>/dev/null | jq -r .name)"
	done
}

pinned_id() {
	bpftool -j map show pinned "$PIN_DIR/$1" | jq -r .id
}

# Sends SIGINT to one of our qoslet instances and expects a clean exit.
stop_instance() {
	local pid=$1 what=$2 rc=0
	kill -INT "$pid"
	wait_exit "$pid" 10 "$what" || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 130 ] || fail "$what exited $rc on SIGINT: $(cat "$TMP/$3.err")"
	log "$what stopped (exit $rc)"
}

# ---- phase 1: one instance ----
qoslet_bg "$TMP/i1.out" "$TMP/i1.err" runqlat -j --pin-dir "$PIN_DIR" -c "$TEST_PARENT_REL" 1
I1=$QOSLET_PID
wait_lines "$TMP/i1.out" 3 "$I1" 20
for m in rq_hist rq_blame sched_drops; do
	[ -e "$PIN_DIR/$m" ] || fail "$PIN_DIR/$m is not pinned"
done
HIST_ID=$(pinned_id rq_hist)
BLAME_ID=$(pinned_id rq_blame)
DROPS_ID=$(pinned_id sched_drops)
log "pinned map ids: rq_hist $HIST_ID, rq_blame $BLAME_ID, sched_drops $DROPS_ID"
BASE=$(rates "$TMP/i1.out" | mean)
log "phase 1 (instance 1 alone): $(rates "$TMP/i1.out" | tr '\n' ' ')-> mean $BASE waits/s"
assert_cmp "$BASE" ">" 200 "E's baseline wait rate is measurable"

# ---- phase 2: a second instance joins ----
T2=$EPOCHREALTIME
qoslet_bg "$TMP/i2.out" "$TMP/i2.err" runqlat -j --pin-dir "$PIN_DIR" -c "$TEST_PARENT_REL" 1
I2=$QOSLET_PID
wait_lines "$TMP/i2.out" 3 "$I2" 20
kill -0 "$I1" 2>/dev/null || fail "instance 1 died when instance 2 started: $(cat "$TMP/i1.err")"

assert_eq "$(pinned_id rq_hist)" "$HIST_ID" "rq_hist still pinned under the same id"
assert_eq "$(pinned_id rq_blame)" "$BLAME_ID" "rq_blame still pinned under the same id"
assert_eq "$(pinned_id sched_drops)" "$DROPS_ID" "sched_drops still pinned under the same id"
for who in 1 2; do
	pid_var=I$who
	held_maps "${!pid_var}" >"$TMP/held.$who"
	for m in rq_hist rq_blame sched_drops; do
		held=$(awk -v m="$m" '$2 == m { print $1 }' "$TMP/held.$who" | tr '\n' ' ')
		assert_eq "${held% }" "$(pinned_id "$m")" "instance $who holds exactly the pinned $m"
	done
done

T3=$EPOCHREALTIME
R1=$(rates "$TMP/i1.out" "$T2" "$T3" | mean)
R2=$(rates "$TMP/i2.out" "$T2" "$T3" | mean)
log "phase 2 (both): instance 1 $(rates "$TMP/i1.out" "$T2" "$T3" | tr '\n' ' ')-> $R1;" \
	"instance 2 $(rates "$TMP/i2.out" "$T2" "$T3" | tr '\n' ' ')-> $R2 waits/s"
assert_cmp "$(ratio "$R2" "$R1")" ">=" 0.8 "both instances report the same rate (2 vs 1)"
assert_cmp "$(ratio "$R2" "$R1")" "<=" 1.25 "both instances report the same rate (2 vs 1)"
assert_cmp "$(ratio "$R1" "$BASE")" "<=" 1.33 "instance 1 does not count twice once instance 2 runs"
assert_cmp "$(ratio "$R1" "$BASE")" ">=" 0.75 "instance 1 still counts once instance 2 runs"
assert_cmp "$(ratio "$R2" "$BASE")" "<=" 1.33 "instance 2 does not count twice"

# ---- phase 3: the attaching instance goes away ----
stop_instance "$I1" "instance 1" i1
T4=$EPOCHREALTIME
n=$(wc -l <"$TMP/i2.out")
wait_lines "$TMP/i2.out" $((n + 4)) "$I2" 20
# Allow one interval for the take-over (re-checked once per interval).
R3=$(rates "$TMP/i2.out" "$(awk -v t="$T4" 'BEGIN { print t + 1.0 }')" | mean)
log "phase 3 (instance 2 alone): $(rates "$TMP/i2.out" "$(awk -v t="$T4" 'BEGIN { print t + 1.0 }')" |
	tr '\n' ' ')-> $R3 waits/s; hook $(tail -n 1 "$TMP/i2.out" | jq -r .hook)"
[ "$R3" != nan ] || fail "instance 2 printed no interval after instance 1 exited"
assert_cmp "$(ratio "$R3" "$BASE")" ">=" 0.75 "instance 2 took over attaching (still counting)"
assert_cmp "$(ratio "$R3" "$BASE")" "<=" 1.33 "instance 2 counts once after taking over"
assert_eq "$(pinned_id rq_hist)" "$HIST_ID" "rq_hist outlives instance 1, same id"
stop_instance "$I2" "instance 2" i2

# ---- hooks ----
for hook in raw_tp tp_btf; do
	rc=0
	timeout -k 5 30 "$QOSLET" runqlat -j --hook "$hook" --pin-dir "$PIN_DIR" -c "$TEST_PARENT_REL" 1 2 \
		>"$TMP/$hook.out" 2>"$TMP/$hook.err" || rc=$?
	[ "$rc" = 0 ] || fail "qoslet runqlat --hook $hook exited $rc: $(cat "$TMP/$hook.err")"
	assert_json_lines "$TMP/$hook.out"
	assert_eq "$(jq -r .hook "$TMP/$hook.out" | sort -u | tr '\n' ' ')" "$hook " \
		"--hook $hook reports \"hook\":\"$hook\""
	RH=$(rates "$TMP/$hook.out" | mean)
	log "--hook $hook: $(rates "$TMP/$hook.out" | tr '\n' ' ')-> $RH waits/s"
	assert_cmp "$(ratio "$RH" "$BASE")" ">=" 0.75 "--hook $hook counts E's waits"
	assert_cmp "$(ratio "$RH" "$BASE")" "<=" 1.33 "--hook $hook counts E's waits once"
done

log "all pinning checks passed"
