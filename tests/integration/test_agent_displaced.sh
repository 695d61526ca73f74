#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The fast path's displacement alert (docs/slo-control.md) on real cgroups,
# SLO control on with a run-queue target no wait reaches (so only the
# displacement leg can act), every other policy off. An LS wake-up loop
# runs on the last CPU; then a BE hog under SCHED_IDLE (chrt -i 0: how cpu.idle
# runs BE) starts on that CPU too, and every wake-up of the LS task takes the
# CPU from it.
# (a) Armed: before BE starts, the probe's displacers map holds the BE
#     cgroup and the alert config counts displacements.
# (b) The sched probe sends displacement alerts (the agent's stop line
#     counts them), and the agent confines BE (slo.confine, on the BE unit,
#     half of the CPUs, the displaced share at least displaced_percent as
#     evidence) on the tick that the alert's series made LOOP_QUICK_NS
#     (10 ms) after its first: the tick before it is that series' first.
#     That window is 10 ms: a slower LS loop switches in fewer times in it
#     than slo.min_waits (20), and the share counts from the alert's 8. The
#     log shows each tick's LS switch-ins and how many came after BE.
# (c) On 2 CPUs, BE confined to one is as far as the leg goes: the agent
#     disarms (an empty displacers map, displacement alerts off).
# (d) `qoslet replay` of the recording gives exactly the live decisions.
# Not under TCG emulation: the LS loop must switch in thousands of times a
# second for the alert (8 displacements in 10 ms) to mean what it means.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq taskset chrt bpftool
require_binaries
skip_in_tcg "the LS loop's switch-in rate sets when the alert fires"
NCPU=$(nproc)
[ "$NCPU" -ge 2 ] || skip "one CPU: there is nothing to confine BE to"
test_setup
agent_setup

ls=$(agent_cgroup ls)
be=$(agent_cgroup be)
LS_REL=${ls#"$CG_ROOT"/}
BE_REL=${be#"$CG_ROOT"/}
agent_config "$(jq -nc --arg ls "$LS_REL" --arg be "$BE_REL" --argjson off "{${AGENT_POLICIES_OFF}}" \
	'{classes: [{glob: $ls, class: "LS"}, {glob: $be, class: "BE"}], batch_resources: {enabled: false},
	  slo: {enabled: true, targets: {ls_p99_us: 1000000}}} * $off')"

# cfg_field FIELD: the pinned alert config's FIELD (its BTF names the fields).
cfg_field() {
	bpftool -j map dump pinned "$PIN_DIR/rq_alert_cfg" | jq -r ".[0].formatted.value.$1"
}
displacers() {
	bpftool -j map dump pinned "$PIN_DIR/rq_displacers" | jq -r '.[].formatted.key' | sort | tr '\n' ' '
}

CPU=$((NCPU - 1))
# The harness (this shell and what it starts: the agent, jq, bpftool) stays
# off CPU, the LS and BE loads' own: the kernel places a waking task on a CPU
# that runs only SCHED_IDLE work as on an idle one, and each of the LS task's
# switch-ins behind such a task is one not taken from BE, in the 10 ms the
# quick tick judges (the agent's own tick is one, and under ASan a long one).
taskset -pc "0-$((CPU - 1))" $$ >/dev/null
agent_run "$ls" "$CPU" "$DUTYCYCLE" 20 100 "$(load_lifetime_s)"
agent_start --record "$TMP/d.rec"

# ---- (a) armed ----
BE_ID=$(cg_id "$be")
for _ in $(seq 1 $(($(time_bound_ms 5000) / 100))); do
	[ "$(displacers)" = "$BE_ID " ] && break
	sleep 0.1
done
assert_eq "$(displacers)" "$BE_ID " "(a) the BE cgroup is the displacer"
assert_eq "$(cfg_field displaced_min)" 8 "(a) displacement alerts on"

# ---- (b) the alert, and the confinement on the quick tick ----
agent_run "$be" "$CPU" chrt -i 0 "$DUTYCYCLE" 100000 0 "$(load_lifetime_s)"
confine=$(wait_decision '.rule == "slo.confine" and .kind == "cpuset"' $(($(time_bound_ms 10000) / 1000))) ||
	fail "no slo.confine decision: $(decisions 'true' | jq -c 'map([.rule, .kind])')"
log "confine: $(echo "$confine" | jq -c '{target: .target.cgroup, value, evidence}')"
assert_eq "$(jget "$confine" .target.cgroup)" "/$BE_REL" "(b) the confinement is on the BE unit"
assert_eq "$(jget "$confine" .related.cgroup)" "/$LS_REL" "(b) it names the displaced LS unit"
assert_eq "$(jget "$confine" '.evidence.be_cpuset_cpus | floor')" $((NCPU / 2)) "(b) confined to half the CPUs"
assert_cmp "$(jget "$confine" .evidence.ls_displaced_share)" ">=" 0.25 "(b) the displaced share is the evidence"

# ---- (c) disarmed once BE is on one CPU ----
if [ "$NCPU" -eq 2 ]; then
	for _ in $(seq 1 $(($(time_bound_ms 5000) / 100))); do
		[ -z "$(displacers)" ] && break
		sleep 0.1
	done
	assert_eq "$(displacers)" "" "(c) no displacers once BE is confined to one CPU"
	assert_eq "$(cfg_field displaced_min)" 0 "(c) displacement alerts off"
else
	skip_part "(c) $NCPU CPUs: BE confined to half of them may be displacing no more"
fi
agent_stop
line=$(grep -o 'stopping after.*' "$AGENT_ERR")
log "$line"
n=$(sed -n 's/.*, \([0-9]*\) displacements$/\1/p' <<<"$line")
assert_cmp "${n:-0}" ">=" 1 "(b) the probe sent a displacement alert"

# The tick before the confinement's: the series' first, LOOP_QUICK_NS before
# (plus the time a tick takes), not a follow-up 100 ms before nor a regular one.
ts=$(jget "$confine" .ts_ns)
prev=$(jq -s --argjson ts "$ts" '[.[1:][] | .ts_ns | select(. < $ts)] | max' "$TMP/d.rec")
gap_ms=$(((ts - prev) / 1000000))
log "the confinement's tick came $gap_ms ms after the one before"
# Each recorded tick: ms since the first, the LS unit's switch-ins, those after BE.
log "ticks [ms, LS switch-ins, after BE]: $(jq -sc --argjson ls "$(cg_id "$ls")" --argjson be "$BE_ID" '
	[.[1:][]] | .[0].ts_ns as $t0 | map([((.ts_ns - $t0) / 1000000 | floor),
	  ([.units[] | select(.id == $ls) | .rq.count // 0] | add // 0),
	  ([.blame[] | select(.[0] == $ls and .[1] == $be) | .[3]] | add // 0)])' "$TMP/d.rec")"
assert_cmp "$gap_ms" "<" 50 "(b) the confinement came on the alert's quick tick"

# ---- (d) the replay ----
assert_replay "$TMP/d.rec"
log "pass"
test_end
