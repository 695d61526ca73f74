#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# BE suppression with the cpuset policy and cpu.idle, on real cgroup files:
# what the kernel accepts and what a clean stop gives back, not how fast.
# A BE unit runs one CPU hog per CPU and an LS unit keeps one CPU busy, so
# that what BE may use (65% of the capacity minus the LS use) rounds up to
# fewer CPUs than the machine has; the agent (cpuset policy) must
#  - write the BE unit's cpuset.cpus to a non-empty list of fewer CPUs than
#    the machine has, within its parent's CPUs, and the kernel must show it
#    (on cgroup v2 in cpuset.cpus.effective too; the unit's original
#    cpuset.cpus there is "", inherit, the normal state of a pod cgroup);
#  - set cpu.idle=1 on the BE unit where the kernel has it (v2, 5.15+);
#  - on SIGTERM, restore both files to their originals (v2: "" and 0) and
#    remove its journal. A kernel that refuses to empty a cpuset with tasks
#    (6.1, also on v2 where "" means inherit) gets the parent's effective
#    CPUs instead, which the agent must say.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq stress-ng
require_binaries
test_setup
agent_setup

NCPU=$(nproc)
[ "$NCPU" -ge 2 ] || skip "needs 2 CPUs to narrow a cpuset"
ls=$(agent_cgroup ls)
be=$(agent_cgroup be)
be_set=$(agent_cg_in "$be" cpuset)
[ -e "$be_set/cpuset.cpus" ] || skip "no cpuset controller for $be"
LS_REL=${ls#"$CG_ROOT"/}
BE_REL=${be#"$CG_ROOT"/}
CPUS=$(seq -s, 0 $((NCPU - 1)))
orig_cpus=$(cat "$be_set/cpuset.cpus")
orig_idle=""
[ ! -e "$be/cpu.idle" ] || orig_idle=$(cat "$be/cpu.idle")
log "BE unit before: cpuset.cpus \"$orig_cpus\", cpu.idle \"${orig_idle:-absent}\""
agent_run "$be" "$CPUS" stress-ng --cpu "$NCPU" --timeout 120s
agent_run "$ls" 0 "$DUTYCYCLE" 1000 0 120

agent_config '{"classes": [{"glob": "'"$LS_REL"'", "class": "LS"}, {"glob": "'"$BE_REL"'", "class": "BE"}],
	"suppress": {"policy": "cpuset", "min_cpus": 0.2}, "interference": {"enabled": false}}'
agent_start
NARROW='.rule == "suppress.cpuset" and .target.cgroup == "/'"$BE_REL"'" and .outcome == "applied" and .evidence.be_cpuset_cpus < '"$NCPU"
d=$(wait_decision "$NARROW" 30) ||
	fail "no applied cpuset decision narrower than $NCPU CPUs for the BE unit in 30 s: $(decisions '.rule == "suppress.cpuset"' | jq -c 'map({outcome, before, after, why, evidence})' | tail -c 1500)"
log "decision: $(jget "$d" '{outcome, value, before, after, evidence} | tostring')"
# The file follows the decision once it is applied.
want=""
for _ in $(seq 1 100); do
	want=$(decisions "$NARROW" | jq -r '.[-1].after // empty')
	[ -n "$want" ] && [ "$(cat "$be_set/cpuset.cpus")" = "$want" ] && break
	kill -0 "$AGENT_PID" 2>/dev/null || fail "agent exited: $(tail -n 5 "$AGENT_ERR")"
	sleep 0.1
done
[ -n "$want" ] || fail "no applied cpuset decision: $(decisions '.rule == "suppress.cpuset"' | jq -c 'map({outcome, before, after, why})' | head -c 1500)"
now=$(cat "$be_set/cpuset.cpus")
assert_eq "$now" "$want" "the BE unit's cpuset.cpus shows the applied decision"
n=$(echo "$now" | awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } print n }')
assert_cmp "$n" ">=" 1 "the BE cpuset is not empty"
assert_cmp "$n" "<" "$NCPU" "the BE cpuset is narrower than the machine"
if [ -e "$be_set/cpuset.cpus.effective" ]; then
	assert_eq "$(cat "$be_set/cpuset.cpus.effective")" "$now" "cpuset.cpus.effective follows"
fi
if [ -n "$orig_idle" ]; then
	for _ in $(seq 1 100); do
		[ "$(cat "$be/cpu.idle")" = 1 ] && break
		sleep 0.1
	done
	assert_eq "$(cat "$be/cpu.idle")" 1 "cpu.idle set on the BE unit"
fi

parent_eff=$(cat "$(dirname "$be_set")/cpuset.cpus.effective" 2>/dev/null || true)
agent_stop
assert_cpus_restored "$be_set" "$orig_cpus" "$parent_eff" "clean stop restored the BE cpuset.cpus"
[ -z "$orig_idle" ] || assert_eq "$(cat "$be/cpu.idle")" "$orig_idle" "clean stop restored cpu.idle"
[ ! -e "$STATE_DIR/actuator.json" ] || fail "the journal outlived a clean stop: $(cat "$STATE_DIR/actuator.json")"
