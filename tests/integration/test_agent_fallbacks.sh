#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The agent's CPU tools on whatever the kernel has: what an older kernel
# (Debian 11's 5.10) lacks, the agent goes without, and the rest still works.
#  1. Burst: an LS unit under its own limit (0.5 CPU), busy and so throttled,
#     alone on the node, policy auto. With CFS burst (5.14: cpu.cfs_burst_us,
#     cpu.max.burst) the agent asks for a burst; without it, it scales the
#     quota above the owner's limit (quota scaling only) and writes no burst.
#  2. Suppression: a BE unit under load gets a CPU quota; with cpu.idle (5.15)
#     also cpu.idle=1, without it no cpu.idle decision at all (none tried,
#     none failed).
#  3. No write failed, and a clean stop restores every value.
# Each path this kernel takes is logged; the other one of each pair runs on
# a kernel that has (or lacks) the feature. Timing only bounds the waits.
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
LS_REL=${ls#"$CG_ROOT"/}
BE_REL=${be#"$CG_ROOT"/}
if [ -e "$ls/cpu.cfs_quota_us" ]; then
	echo 50000 >"$ls/cpu.cfs_quota_us"
	BURST=$ls/cpu.cfs_burst_us
else
	echo "50000 100000" >"$ls/cpu.max"
	BURST=$ls/cpu.max.burst
fi
HAVE_BURST=0 HAVE_IDLE=0
[ ! -e "$BURST" ] || HAVE_BURST=1
[ ! -e "$be/cpu.idle" ] || HAVE_IDLE=1
log "kernel $(uname -r): CFS burst $([ "$HAVE_BURST" = 1 ] && echo yes || echo "no (before 5.14)"), cpu.idle $([ "$HAVE_IDLE" = 1 ] && echo yes || echo "no (before 5.15)")"

# The files the agent may change, as "name=value" words.
snapshot() {
	echo "be.quota=$(cfs_quota "$be") be.idle=$(cat "$be/cpu.idle" 2>/dev/null || echo none)" \
		"ls.quota=$(cfs_quota "$ls") ls.burst=$(cat "$BURST" 2>/dev/null || echo none)"
}
ORIG=$(snapshot)
log "originals: $ORIG"

# The pool's busy gate wide open: under TCG the agent and this script take
# most of a CPU, which at the default (50%) holds the quota where it is,
# and the gate is not what this test is about (tests/unit/test_burst.c).
agent_config '{"classes": [{"glob": "'"$LS_REL"'", "class": "LS"}, {"glob": "'"$BE_REL"'", "class": "BE"}],
	"suppress": {"min_cpus": 0.2, "cpu_idle": true},
	"burst": {"policy": "auto", "shared_pool_busy_percent": 100},
	"interference": {"enabled": false}, "evict": {"memory": {"enabled": false}, "cpu": {"enabled": false}},
	"capacity": {"enabled": false}}'

# wait_for TEST WHAT: waits (bounded, scaled under TCG) until the shell
# condition TEST holds on a fresh snapshot in $now. The bound is wall time,
# and the pause between snapshots scales too: under TCG one snapshot's
# forks take longer than 0.1 s, and polling that often kept a CPU busy.
wait_for() {
	local secs=$(($(time_bound_ms 15000) / 1000)) pause_ms
	local end=$((SECONDS + secs))
	pause_ms=$(time_bound_ms 100)
	while [ "$SECONDS" -lt "$end" ]; do
		now=$(snapshot)
		eval "$1" && return 0
		kill -0 "$AGENT_PID" 2>/dev/null || fail "agent exited: $(tail -n 5 "$AGENT_ERR")"
		sleep "$((pause_ms / 1000)).$(printf %03d $((pause_ms % 1000)))"
	done
	fail "$2 within $secs s: $now; the last decisions: $(decisions '.kind != "report"' |
		jq -c '.[-4:] | map({rule, target: .target.cgroup, evidence})'); $(tail -n 3 "$AGENT_ERR")"
}

# ---- 1: burst, LS alone and throttled ----
agent_run "$ls" 0 "$DUTYCYCLE" 1000 0 "$(load_lifetime_s)"
agent_start
if [ "$HAVE_BURST" = 1 ]; then
	wait_for '[[ $now != *"ls.burst=0"* ]]' "no CPU burst for the throttled LS unit"
	log "ok: kernel burst asked for: $now"
else
	wait_for 'q=${now#*ls.quota=}; [ "${q%% *}" -gt 50000 ]' \
		"no quota above the limit (0.05 s of 0.1 s) for the throttled LS unit"
	log "ok: quota scaled above the owner's limit: $now"
	assert_eq "$(decisions '.kind == "cpu_burst"' | jq length)" 0 "burst decisions without CFS burst"
fi

# ---- 2: suppression of a busy BE unit ----
agent_run "$be" 1 "$DUTYCYCLE" 1000 0 "$(load_lifetime_s)"
if [ "$HAVE_IDLE" = 1 ]; then
	wait_for '[[ $now != *"be.quota=-1 "* ]] && [[ $now == *"be.idle=1 "* ]]' "no quota and cpu.idle on the BE unit"
	log "ok: BE suppressed by quota and cpu.idle: $now"
else
	wait_for '[[ $now != *"be.quota=-1 "* ]]' "no quota on the BE unit"
	log "ok: BE suppressed by quota (no cpu.idle here): $now"
	assert_eq "$(decisions '.kind == "cpu_idle"' | jq length)" 0 "cpu.idle decisions without cpu.idle"
fi

# ---- 3: nothing failed; a clean stop restores ----
agent_stop
assert_eq "$(decisions '.outcome == "failed"' | jq -c 'map({kind, rule, errno})')" "[]" "failed writes"
assert_eq "$(snapshot)" "$ORIG" "clean stop restored every value"
log "pass"
