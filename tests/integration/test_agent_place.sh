#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# SLO control's arrival step (slo.place, docs/slo-control.md) on real
# cgroups: with the agent running and an LS unit using CPU, a BE unit that
# appears starts confined, on the tick that finds it, to the most CPUs LS's
# use leaves (NCPU - 1 for a light LS load), with LS's use as the evidence;
# its cpuset.cpus (cpuset.cpus.effective on v2) shows the applied decision;
# the agent's stop gives the CPUs back; the replay of the recording gives
# the live decisions. A BE unit that was there when the agent started is
# no arrival: the first run makes no slo.place decision.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq taskset
require_binaries
NCPU=$(nproc)
[ "$NCPU" -ge 2 ] || skip "one CPU: there is nothing to confine BE to"
test_setup
agent_setup

ls=$(agent_cgroup ls)
LS_REL=${ls#"$CG_ROOT"/}
BE_REL=${TEST_PARENT#"$CG_ROOT"/}/be
agent_config "$(jq -nc --arg ls "$LS_REL" --arg be "$BE_REL" --argjson off "{${AGENT_POLICIES_OFF}}" \
	'{classes: [{glob: $ls, class: "LS"}, {glob: $be, class: "BE"}], batch_resources: {enabled: false},
	  slo: {enabled: true, targets: {ls_p99_us: 1000000}}} * $off')"
PLACE='.rule == "slo.place" and .kind == "cpuset"'

# be_cgroup: the BE unit (as agent_cgroup makes it), in the cpu hierarchy
# last: its directory there is what the agent finds, and on v1 the cpuset
# the agent writes must not be overwritten by the test's inheriting after.
be_cgroup() {
	local mnt
	for mnt in "${AGENT_CTRLS[@]}"; do
		mkdir "$mnt$TEST_PARENT_REL/be" || fail "cannot create $mnt$TEST_PARENT_REL/be"
		if [ -e "$mnt$TEST_PARENT_REL/be/cpuset.cpus" ]; then
			_cpuset_inherit "$mnt$TEST_PARENT_REL/be"
		fi
	done
	mkdir "$TEST_PARENT/be" || fail "cannot create $TEST_PARENT/be"
	echo "$TEST_PARENT/be"
}

# LS uses a fifth of a CPU: every placement leaves BE all CPUs but one.
agent_run "$ls" 0 "$DUTYCYCLE" 200 800 "$(load_lifetime_s)"

# ---- a BE unit there before the agent is no arrival ----
be=$(be_cgroup)
agent_run "$be" 0 "$DUTYCYCLE" 100000 0 "$(load_lifetime_s)"
agent_start --dry-run
sleep 2.5
agent_stop
assert_eq "$(decisions "$PLACE" | jq length)" 0 "a BE unit there at the agent's start is not placed"
agent_loads_stop
for d in "${AGENT_CTRLS[@]}" "$CG_ROOT"; do
	rmdir "$d$TEST_PARENT_REL/be"
done

# ---- an arrival starts confined ----
: >"$AGENT_OUT"
agent_run "$ls" 0 "$DUTYCYCLE" 200 800 "$(load_lifetime_s)"
agent_start --record "$TMP/p.rec"
sleep 2.5 # LS's use is in the agent's window
parent_set=$(agent_cg_in "$TEST_PARENT" cpuset)
[ -e "$parent_set/cpuset.cpus" ] || skip "no cpuset controller for $TEST_PARENT"
parent_eff=$(cat "$parent_set/cpuset.cpus.effective" 2>/dev/null || true)
# What BE's cpuset holds before the agent: v1 the parent's CPUs (be_cgroup
# copies them), v2 "" (inherit). Read before, as the agent may come first.
orig_cpus=""
cg_is_v2 || orig_cpus=$(cat "$parent_set/cpuset.cpus")
be=$(be_cgroup)
be_set=$(agent_cg_in "$be" cpuset)
CPUS=$(seq -s, 0 $((NCPU - 1)))
agent_run "$be" "$CPUS" "$DUTYCYCLE" 100000 0 "$(load_lifetime_s)"
d=$(wait_decision "$PLACE and .outcome == \"applied\"" $(($(time_bound_ms 5000) / 1000))) ||
	fail "no applied slo.place decision: $(decisions 'true' | jq -c 'map([.rule, .kind, .outcome])')"
log "place: $(echo "$d" | jq -c '{target: .target.cgroup, value, outcome, evidence}')"
assert_eq "$(jget "$d" .target.cgroup)" "/$BE_REL" "the placement is on the BE unit"
assert_eq "$(jget "$d" '.evidence.be_cpuset_cpus | floor')" $((NCPU - 1)) "BE gets every CPU but one"
assert_cmp "$(jget "$d" .evidence.ls_used_cpus)" ">=" 0.01 "LS's use is the evidence"
want=$(jget "$d" .after)
for _ in $(seq 1 50); do
	[ "$(cat "$be_set/cpuset.cpus")" = "$want" ] && break
	sleep 0.1
done
assert_eq "$(cat "$be_set/cpuset.cpus")" "$want" "the BE unit's cpuset.cpus shows the placement"
if [ -e "$be_set/cpuset.cpus.effective" ]; then
	assert_eq "$(cat "$be_set/cpuset.cpus.effective")" "$want" "cpuset.cpus.effective follows"
fi
ts=$(jget "$d" .ts_ns)
first=$(jq -s --arg p "$BE_REL" '[.[1:][] | select(any(.units[]; .path == $p)) | .ts_ns] | min' "$TMP/p.rec")
assert_eq "$ts" "$first" "the placement came on the tick that found the BE unit"
agent_stop
assert_cpus_restored "$be_set" "$orig_cpus" "$parent_eff" "the stop gave BE's CPUs back"
assert_replay "$TMP/p.rec"
log "pass"
test_end
