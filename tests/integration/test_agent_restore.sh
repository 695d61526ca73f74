#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The agent leaves no trace it did not mean to. A BE unit under load gets a
# CPU quota and cpu.idle from the agent (which hides its CPU weight); an LS
# unit with a limit gets a CPU burst.
#  1. Clean stop (SIGTERM): every file is back to its original value within
#     1 s, and the journal is gone.
#  2. kill -9: the values stay as the agent left them and the journal lists
#     their originals; a second agent on the same state directory is refused
#     while the first runs, and so is one on another state directory (the
#     lock on the managed cgroup tree), both changing nothing. A restart
#     reconciles: the originals are back before its first tick (the log says
#     how many), and a clean stop of the restarted agent leaves the originals.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq
require_binaries
test_setup
agent_setup

ls=$(agent_cgroup ls)
be=$(agent_cgroup be)
[ -e "$be/cpu.idle" ] || skip "kernel without cpu.idle (5.15+)"
[ -e "$ls/cpu.cfs_burst_us" ] || [ -e "$ls/cpu.max.burst" ] || skip "kernel without CFS burst (5.14+)"
LS_REL=${ls#"$CG_ROOT"/}
BE_REL=${be#"$CG_ROOT"/}
if [ -e "$ls/cpu.cfs_quota_us" ]; then
	echo 50000 >"$ls/cpu.cfs_quota_us"
	BURST=cpu.cfs_burst_us
else
	echo "50000 100000" >"$ls/cpu.max"
	BURST=cpu.max.burst
fi
agent_run "$be" 0 "$DUTYCYCLE" 1000 0 "$(load_lifetime_s)"
# A request of 2 CPUs: cpu.idle=1 hides it and clearing idle resets it to the
# default, so the agent must bring it back itself.
cg_weight "$be" 2048
WEIGHT=$(if [ -e "$be/cpu.shares" ]; then echo cpu.shares; else echo cpu.weight; fi)

# The files the agent changes, as "name=value" lines.
snapshot() {
	echo "be.quota=$(cfs_quota "$be") be.idle=$(cat "$be/cpu.idle") be.weight=$(cat "$be/$WEIGHT") ls.quota=$(cfs_quota "$ls") ls.burst=$(cat "$ls/$BURST")"
}
ORIG=$(snapshot)
log "originals: $ORIG"

agent_config '{"classes": [{"glob": "'"$LS_REL"'", "class": "LS"}, {"glob": "'"$BE_REL"'", "class": "BE"}],
	"suppress": {"min_cpus": 0.2}, "burst": {"policy": "cpuBurstOnly"}}'

# changed: waits until the agent changed all three kinds of files.
changed() {
	for _ in $(seq 1 $(($(time_bound_ms 10000) / 100))); do
		local now
		now=$(snapshot)
		if [[ $now != *"be.quota=-1 "* ]] && [[ $now == *"be.idle=1 "* ]] &&
			[[ $now != *"ls.burst=0"* ]]; then
			echo "$now"
			return 0
		fi
		sleep 0.1
	done
	fail "the agent did not set quota, idle and burst within $(($(time_bound_ms 10000) / 1000)) s: $(snapshot); $(tail -n 3 "$AGENT_ERR")"
}

# ---- 1: clean stop ----
agent_start
log "changed: $(changed)"
t0=$(date +%s%N)
agent_stop
ms=$((($(date +%s%N) - t0) / 1000000))
assert_cmp "$ms" "<=" "$(time_bound_ms 1000)" "clean stop took (ms)"
assert_eq "$(snapshot)" "$ORIG" "clean stop restored every value"
[ ! -e "$STATE_DIR/actuator.json" ] || fail "journal left after a clean stop: $(cat "$STATE_DIR/actuator.json")"

# ---- 2: kill -9, then restart ----
agent_start
left=$(changed)
log "changed: $left"
rc=0
"$QOSLET" agent --config "$TMP/agent.json" --pin-dir "$PIN_DIR" --duration 5 2>"$TMP/second.err" || rc=$?
assert_eq "$rc" 1 "a second agent on the same state_dir: exit status"
grep -q "held by another qoslet agent" "$TMP/second.err" || fail "second agent: $(cat "$TMP/second.err")"
# Another state directory (a systemd unit beside the DaemonSet): the cgroup
# tree's lock refuses it all the same, before it reads or writes a cgroup.
jq --arg state "$TMP/state-other" '.state_dir = $state' "$TMP/agent.json" >"$TMP/other.json"
rc=0
"$QOSLET" agent --config "$TMP/other.json" --pin-dir "$PIN_DIR" --duration 5 2>"$TMP/other.err" || rc=$?
assert_eq "$rc" 1 "a second agent on another state_dir: exit status"
# The holder's pid comes from /proc/locks by the lock file's device and inode;
# where /run is an overlay (the test VMs) /proc/locks names the upper
# filesystem's and no pid is found, so the message may lack it; when it names
# one, it is the first agent's (test_actuator_journal checks that it is found).
grep -q "locked by another acting qoslet agent" "$TMP/other.err" ||
	fail "second agent on another state_dir: $(cat "$TMP/other.err")"
holder=$(grep -o 'locked by another acting qoslet agent (pid [0-9]*)' "$TMP/other.err" | grep -o '[0-9]*' || true)
[ -z "$holder" ] || assert_eq "$holder" "$AGENT_PID" "the lock's holder named"
log "ok: $(grep -o 'cgroup .* is locked by another acting qoslet agent[^:]*' "$TMP/other.err")"
[ ! -e "$TMP/state-other/actuator.json" ] || fail "the refused agent wrote a journal"
# The first agent still runs and may move be.quota from tick to tick (it
# did under TCG): what the refused one must not have done is restore or
# write anything, so every file but that moving quota is as left, and the
# quota is still a limit.
now=$(snapshot)
assert_eq "${now#be.quota=* }" "${left#be.quota=* }" "the refused agent changed nothing (but the running agent's BE quota)"
[[ $now != "be.quota=-1 "* ]] || fail "the BE quota went back to unlimited while the refused agent ran: $now"
kill -KILL "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
# The BE quota may have moved once more before the kill landed: judge that
# it is still a limit, that the rest is as left, and that nothing moves now.
dead=$(snapshot)
assert_eq "${dead#be.quota=* }" "${left#be.quota=* }" "kill -9 leaves the values (but the BE quota)"
[[ $dead != "be.quota=-1 "* ]] || fail "kill -9 restored the BE quota: $dead"
sleep 1
assert_eq "$(snapshot)" "$dead" "nothing changes once the agent is dead"
[ -s "$STATE_DIR/actuator.json" ] || fail "no journal after kill -9"
jq -e '.' "$STATE_DIR/actuator.json" >/dev/null || fail "the journal is not JSON"
log "journal: $(jq -c . "$STATE_DIR/actuator.json" | head -c 600)"

# Restart with the policies off: whatever the files show then is the reconcile's work.
: >"$AGENT_ERR"
agent_config '{"classes": [{"glob": "'"$LS_REL"'", "class": "LS"}, {"glob": "'"$BE_REL"'", "class": "BE"}],
	"suppress": {"enabled": false}, "burst": {"policy": "none"},
	"interference": {"enabled": false}, "evict": {"memory": {"enabled": false}, "cpu": {"enabled": false}}}'
agent_start
grep -q "restored [1-9][0-9]* cgroup settings a previous run left changed" "$AGENT_ERR" ||
	fail "restart did not say it reconciled: $(cat "$AGENT_ERR")"
assert_eq "$(snapshot)" "$ORIG" "restart reconciled every value"
sleep 2
agent_stop
assert_eq "$(snapshot)" "$ORIG" "values after the restarted agent's clean stop"
[ ! -e "$STATE_DIR/actuator.json" ] || fail "journal left after the restarted agent's clean stop"
log "pass"
