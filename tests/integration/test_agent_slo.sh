#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# SLO control (docs/slo-control.md) on real cgroups, every other policy off.
# (a) Replay: a dry-run agent with slo on records an LS wake-up loop and a BE
#     hog sharing CPU 0, against a 100 us target it breaks. Its slo decisions
#     cut the BE unit (cpu.idle first, then, on 2 CPUs or more, BE confined
#     to half of them, then the quota) with the LS latency, the target, the
#     culprit's share (0 when blame named no BE unit) and the factor as
#     evidence, and
#     `qoslet replay` of the recording gives exactly the live decisions.
# (b) Each LS unit alerts at its own target: with a second LS unit under a
#     300 us glob target, the sched probe's watch map holds the first at
#     100 us and the second at 300 us, the pre-filter at the smaller; the
#     clean stop empties the map and turns alerts off.
# (c) A busy LS unit alone (2 x CPUs spinners; the BE unit only sleeps)
#     over the same target cuts nothing: no slo decision, BE's quota and
#     cpu.idle as they were, while the recording shows the LS windows were
#     over the target (the controller was armed). Not under TCG emulation,
#     where the load is the emulator's as much as the test's.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq taskset
require_binaries
test_setup
agent_setup

TARGET_US=100
RUN_S=4
NCPU=$(nproc)
cg_weight "$TEST_PARENT" 10240
ls=$(agent_cgroup ls)
be=$(agent_cgroup be)
[ -e "$be/cpu.cfs_quota_us" ] || [ -e "$be/cpu.max" ] || skip "no CFS bandwidth control"
LS_REL=${ls#"$CG_ROOT"/}
BE_REL=${be#"$CG_ROOT"/}
# slo_config [JSON]: LS and BE by glob, every other policy off, the LS target
# TARGET_US; JSON merged over it.
slo_config() {
	agent_config "$(jq -c --argjson x "${1:-{\}}" '. * $x' <<<'{"classes": [{"glob": "'"$LS_REL"'", "class": "LS"},
		{"glob": "'"$BE_REL"'", "class": "BE"}], '"$AGENT_POLICIES_OFF"', "batch_resources": {"enabled": false},
		"slo": {"enabled": true, "targets": {"ls_p99_us": '"$TARGET_US"'}}}')"
}
slo_config

# ---- (a) the controller's decisions replay exactly ----
agent_run "$ls" 0 "$DUTYCYCLE" 200 2000 "$(load_lifetime_s)"
agent_run "$be" 0 "$DUTYCYCLE" 100000 0 "$(load_lifetime_s)"
agent_start --dry-run --record "$TMP/a.rec"
cut=$(wait_decision '.rule == "slo.cut"' $(($(time_bound_ms 15000) / 1000))) ||
	fail "no slo.cut decision: $(decisions 'true' | jq -c 'map([.rule, .target.cgroup])')"
sleep 1
agent_stop
log "cut: $(echo "$cut" | jq -c '{target: .target.cgroup, value, evidence}')"
assert_eq "$(jget "$cut" .target.cgroup)" "/$BE_REL" "the cut is on the BE unit"
assert_eq "$(jget "$cut" .related.cgroup)" "/$LS_REL" "the cut names the LS unit"
assert_eq "$(jget "$cut" '.evidence.ls_target_us | floor')" "$TARGET_US" "evidence: the target"
assert_cmp "$(jget "$cut" .evidence.ls_rq_p99_us)" ">" "$TARGET_US" "evidence: the LS p99 over the target"
assert_eq "$(jget "$cut" .evidence.factor)" 0.5 "evidence: the factor"
# the BE unit's share of the LS wait, or 0 when blame named no BE unit (every BE is cut
# then): on a shared machine other people's load may hold most of the LS unit's waits
share=$(jget "$cut" .evidence.culprit_share)
assert_json "$share" '. == 0 or . >= 0.2' "evidence: the culprit's share ($share) is 0 or at least 20%"
if [ -e "$be/cpu.idle" ]; then
	assert_cmp "$(decisions '.rule == "slo.cut_idle"' | jq length)" ">=" 1 "cpu.idle came first"
fi
# The confinement before the quota: half of the CPUs (every one a cpuset may
# name here: the test's parent has them all), rounded down.
if [ "$NCPU" -ge 2 ]; then
	confine=$(decisions '.rule == "slo.confine" and .kind == "cpuset"' | jq -c '.[0] // empty')
	[ -n "$confine" ] || fail "no slo.confine decision: $(decisions 'true' | jq -c 'map([.rule, .kind])')"
	assert_eq "$(jget "$confine" .target.cgroup)" "/$BE_REL" "the confinement is on the BE unit"
	assert_eq "$(jget "$confine" '.evidence.be_cpuset_cpus | floor')" $((NCPU / 2)) "confined to half the CPUs"
	assert_cmp "$(jget "$confine" .ts_ns)" "<" "$(jget "$cut" .ts_ns)" "the confinement came before the quota"
else
	log "one CPU: nothing to confine BE to, the quota follows cpu.idle (not checked)"
fi
assert_replay "$TMP/a.rec"
agent_loads_stop

# ---- (b) each LS unit alerts at its own target ----
ls2=$(agent_cgroup ls2)
LS2_REL=${ls2#"$CG_ROOT"/}
# (jq's * replaces arrays: the classes come whole)
slo_config '{"classes": [{"glob": "'"$LS_REL"'", "class": "LS"}, {"glob": "'"$LS2_REL"'", "class": "LS"},
	{"glob": "'"$BE_REL"'", "class": "BE"}], "slo": {"targets": {"globs": [{"glob": "'"$LS2_REL"'", "p99_us": 300}]}}}'
: >"$AGENT_OUT"
agent_start --dry-run
# watch_thresholds: "CGID THRESHOLD_NS" lines of the pinned watch map (its BTF names the fields).
watch_thresholds() {
	bpftool -j map dump pinned "$PIN_DIR/rq_alert_watch" |
		jq -r '.[] | .formatted // error("no BTF in the dump") | "\(.key) \(.value.threshold_ns)"' | sort
}
want=$(printf '%s %s\n' "$(cg_id "$ls")" 100000 "$(cg_id "$ls2")" 300000 | sort)
for _ in $(seq 1 $(($(time_bound_ms 5000) / 100))); do
	[ "$(watch_thresholds)" = "$want" ] && break
	sleep 0.1
done
assert_eq "$(watch_thresholds | tr '\n' ' ')" "$(echo "$want" | tr '\n' ' ')" "(b) each LS cgroup at its own target, in ns"
min=$(bpftool -j map dump pinned "$PIN_DIR/rq_alert_cfg" | jq -r '.[0].formatted.value.min_ns')
assert_eq "$min" 100000 "(b) the pre-filter at the smallest"
agent_stop
assert_eq "$(watch_thresholds | wc -l)" 0 "(b) the clean stop empties the watch map"
assert_eq "$(bpftool -j map dump pinned "$PIN_DIR/rq_alert_cfg" | jq -r '.[0].formatted.value.min_ns')" 0 \
	"(b) and turns alerts off"
slo_config

# ---- (c) a busy LS unit alone cuts nothing ----
if [ "${QOSLET_VM:-}" = tcg ]; then
	skip_part "(c) under TCG emulation: it judges whether a busy LS unit's own load is over its target"
	test_end
fi
: >"$AGENT_OUT"
before="$(cfs_quota "$be") $(cat "$be/cpu.idle" 2>/dev/null || echo -)"
agent_run "$be" 0 sleep "$(load_lifetime_s)"
CPUS=$(seq -s, 0 $((NCPU - 1)))
for _ in $(seq 1 $((2 * NCPU))); do
	agent_run "$ls" "$CPUS" "$DUTYCYCLE" 100000 0 "$(load_lifetime_s)"
done
agent_start --record "$TMP/b.rec"
sleep "$RUN_S"
agent_stop
assert_eq "$(decisions '.rule | startswith("slo.")' | jq -c 'map([.rule, .target.cgroup])')" "[]" \
	"(c) no slo decision for a busy LS unit alone"
assert_eq "$(cfs_quota "$be") $(cat "$be/cpu.idle" 2>/dev/null || echo -)" "$before" "(c) BE's quota and cpu.idle untouched"
over=$(jq -sc --arg p "$LS_REL" --argjson thr $((TARGET_US * 1000)) "$RQ_P99_JQ"'
	[.[1:][] | .units[] | select(.path == $p and .rq != null and .rq.count >= 20)
		| .rq | p99 | select(. > $thr)] | length' "$TMP/b.rec")
log "(c) LS windows over ${TARGET_US} us: $over"
assert_cmp "$over" ">=" 1 "(c) the controller was armed: LS windows over the target"
log "pass"
test_end
