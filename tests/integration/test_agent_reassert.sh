#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Settings that stay applied (docs/agent-actuator.md): the agent watches
# every cgroup file it wrote, and answers another writer's change at once.
#   1. An outside write to a BE unit's cpu.idle (the test writes it, as
#      systemd re-applying a unit would) is written back within 1 s, with a
#      decision of outcome "reasserted", cause "outside_write".
#   2. A writer that rewrites it in a loop for 3 s: the agent says
#      "contested" and backs off; it writes back far fewer times than the
#      loop writes (no tight loop), and writes its value back once the loop
#      stopped and the hold ended.
#   3. A kubelet-style in-place resize of an LS unit's CPU limit (the quota
#      burst scales up from) is taken as the new original ("adopted"), not
#      undone, and a clean stop restores the new limit, not the old one.
# About 20 s.
# shellcheck disable=SC2016 # jq filters
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

be=$(agent_cgroup be1)
BE_REL=${be#"$CG_ROOT"}
[ -e "$be/cpu.idle" ] || skip "no cpu.idle in this kernel's cpu controller (5.15+)"
ls=$(agent_cgroup ls1)
LS_REL=${ls#"$CG_ROOT"}
LIMIT_US=50000
NEW_LIMIT_US=100000
if [ -e "$ls/cpu.cfs_quota_us" ]; then
	echo 100000 >"$ls/cpu.cfs_period_us"
	echo "$LIMIT_US" >"$ls/cpu.cfs_quota_us"
	resize() { echo "$1" >"$ls/cpu.cfs_quota_us"; }
elif [ -e "$ls/cpu.max" ]; then
	echo "$LIMIT_US 100000" >"$ls/cpu.max"
	resize() { echo "$1 100000" >"$ls/cpu.max"; }
else
	skip "kernel without CONFIG_CFS_BANDWIDTH (no cpu.cfs_quota_us nor cpu.max)"
fi
# The LS unit's load wants 0.8 CPU under a 0.5 CPU limit: burst scales its quota up.
agent_run "$ls" 0 "$DUTYCYCLE" 8000 2000 "$(load_lifetime_s)"

# Only the watch answers another writer: a regular tick (every 2 s) does not
# even notice it (settings are re-read every 30 s), so every write-back is the
# watch's. Suppression's quota for BE stays out of the way at 100%.
agent_config '{'"$AGENT_POLICIES_OFF"', "interval_s": 2,
	"suppress": {"enabled": true, "cpu_idle": true, "threshold_percent": 100},
	"burst": {"policy": "cfsQuotaBurstOnly", "shared_pool_busy_percent": 100},
	"classes": [{"glob": "'"${BE_REL#/}"'", "class": "BE"}, {"glob": "'"${LS_REL#/}"'", "class": "LS"}]}'
agent_start -v
wait_decision '.kind == "cpu_idle" and .target.cgroup == "'"$BE_REL"'" and .outcome == "applied"' \
	"$(($(time_bound_ms 15000) / 1000))" >/dev/null ||
	fail "cpu.idle was never applied to $BE_REL: $(tail -n 5 "$AGENT_ERR")"
assert_eq "$(cat "$be/cpu.idle")" 1 "cpu.idle of the BE unit"

# now_us: the clock without a fork (a fork costs a good part of a second under TCG).
now_us() {
	local t=${EPOCHREALTIME/./}
	echo "$t"
}

# wait_value FILE VALUE MS: polls FILE until it reads VALUE, for at most MS;
# WAITED is how long it took (ms), empty when it never did.
wait_value() {
	local t0 end v
	t0=$(now_us)
	end=$((t0 + $3 * 1000))
	WAITED=""
	while [ "$(now_us)" -lt "$end" ]; do
		read -r v <"$1"
		[ "$v" = "$2" ] && { WAITED=$((($(now_us) - t0) / 1000)); return 0; }
		sleep 0.01
	done
	return 1
}

# What the agent is doing, for a failure's diagnosis: its state, and its inotify watches.
agent_state() {
	local fd
	echo "state $(awk '/^State/ {print $2}' "/proc/$AGENT_PID/status") wchan $(cat "/proc/$AGENT_PID/wchan") syscall $(cut -d' ' -f1 "/proc/$AGENT_PID/syscall" 2>/dev/null)"
	for fd in /proc/"$AGENT_PID"/fdinfo/*; do
		grep -h "^inotify" "$fd" 2>/dev/null | awk -v f="${fd##*/}" '{print "fd " f ": " $0}'
	done | head -n 12
	echo "ino of cpu.idle $(stat -c %i "$be/cpu.idle") cpu.max $(stat -c %i "$be/cpu.max" 2>/dev/null)"
	grep "collect: .*watch\|collect: .* is gone" "$AGENT_ERR" | tail -n 8
}

# 1. One outside write, undone.
sleep 0.5
echo 0 >"$be/cpu.idle"
wait_value "$be/cpu.idle" 1 "$(time_bound_ms 1000)" ||
	fail "the outside write of cpu.idle=0 was not undone within $(time_bound_ms 1000) ms: $(agent_state); $(decisions '.target.cgroup == "'"$BE_REL"'"' | jq -c 'map([.seq, .ts, .rule, .outcome, .before, .after])'); log: $(grep -v "info qoslet: .* probe" "$AGENT_ERR" | tail -n 8)"
undone=$WAITED
d=$(wait_decision '.outcome == "reasserted" and .target.cgroup == "'"$BE_REL"'"' "$(($(time_bound_ms 2000) / 1000))") ||
	fail "no reasserted decision (cpu.idle back to 1 after $undone ms): $(decisions '.target.cgroup == "'"$BE_REL"'"' | jq -c 'map([.seq, .ts, .rule, .outcome, .before, .after])'); log: $(grep -v "info qoslet: .* probe" "$AGENT_ERR" | tail -n 8)"
assert_json "$d" '.kind == "cpu_idle" and .cause == "outside_write" and .before == "0" and .after == "1" and .rule == "suppress.cpu_idle"' \
	"the reasserted decision"
log "ok: cpu.idle=0 written by another writer undone in $undone ms"

# 2. A fight: 3 s of rewrites every 10 ms.
n0=$(decisions '.outcome == "reasserted"' | jq length)
end=$(($(now_us) + 3000000))
writes=0
while [ "$(now_us)" -lt "$end" ]; do
	echo 0 >"$be/cpu.idle"
	writes=$((writes + 1))
	sleep 0.01
done
n1=$(decisions '.outcome == "reasserted"' | jq length)
c=$(wait_decision '.outcome == "contested" and .target.cgroup == "'"$BE_REL"'"' "$(($(time_bound_ms 2000) / 1000))") ||
	fail "no contested decision after $writes outside writes in 3 s: $((n1 - n0)) write-backs"
assert_json "$c" '.cause == "outside_write" and (.why | test("written back in [0-9]+ s"))' "the contested decision"
# Without the back-off the agent would answer every tick the writes wake, 10 a second.
assert_cmp "$((n1 - n0))" "<=" 10 "write-backs during 3 s of $writes outside writes"
log "ok: $writes outside writes in 3 s, $((n1 - n0)) write-backs, then: $(jq -r .why <<<"$c")"
# The loop stopped: the hold ends (at most 2 s here, then a tick) and the value comes back.
wait_value "$be/cpu.idle" 1 "$(time_bound_ms 8000)" || fail "cpu.idle did not come back after the fight: $(decisions '.target.cgroup == "'"$BE_REL"'"' | jq -c '.[-3:]')"
log "ok: cpu.idle written back when the hold ended"

# 3. A resize of the LS unit's limit, after burst raised its quota.
end=$(($(now_us) + $(time_bound_ms 15000) * 1000))
while q=$(cfs_quota "$ls") && [ "$q" -le "$LIMIT_US" ] && [ "$(now_us)" -lt "$end" ]; do
	sleep 0.2
done
if [ "$q" -le "$LIMIT_US" ]; then
	# Burst grows no quota while the node is 90% busy or more (docs/agent-policies.md):
	# on a shared machine that is not ours to change. tests/unit/test_actuator_reassert.c
	# covers the answer itself.
	skip_part "the resize: burst never raised the LS quota above $LIMIT_US in 15 s (node busy: $(grep -o 'CPUs [0-9.]* of [0-9.]* busy' "$AGENT_ERR" | tail -n 1))"
	agent_stop
	test_end
fi
resize "$NEW_LIMIT_US"
a=$(wait_decision '.outcome == "adopted" and .target.cgroup == "'"$LS_REL"'"' "$(($(time_bound_ms 2000) / 1000))") ||
	fail "the resize was not adopted: $(decisions '.target.cgroup == "'"$LS_REL"'"' | jq -c '.[-3:]')"
assert_json "$a" '.kind == "cpu_quota" and .cause == "outside_write" and .value == '"$NEW_LIMIT_US" "the adopted decision"
for _ in $(seq 1 10); do
	assert_cmp "$(cfs_quota "$ls")" ">=" "$NEW_LIMIT_US" "the LS quota after the resize"
	sleep 0.1
done
agent_stop
assert_eq "$(cfs_quota "$ls")" "$NEW_LIMIT_US" "the LS quota restored at stop: the new limit"
assert_eq "$(cat "$be/cpu.idle")" 0 "cpu.idle restored at stop: the other writer's last value"
bad=$(decisions '.target.cgroup == "'"$LS_REL"'" and .kind == "cpu_quota" and .outcome == "refused"' | jq -c 'map(.why)')
log "LS quota decisions refused after the resize: $bad"
log "ok: resize adopted; restored to $NEW_LIMIT_US at stop"
test_end
