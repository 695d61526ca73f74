#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A probe the kernel will not load or attach goes off alone, with a warning
# that names it and says why, and the rest keep running (docs/faults.md).
# Each fault is real, made without touching the binary:
#  1. Load refused: without CAP_PERFMON and CAP_SYS_ADMIN (setpriv) the
#     kernel refuses every tracing program with EPERM. `qoslet top` keeps the
#     probes that need none (throttle from cpu.stat, PSI files) and names
#     the capabilities the others need; the agent (dry-run) has no probe it
#     can use, says so, and keeps ticking on the cgroup counters.
#  2. Load failed for one probe: a non-empty directory stands where the
#     memstall probe pins a map. The agent runs with the sched probe (and
#     its fast path); memstall is off with the reason.
#  3. Attach failed for one probe: in a private mount namespace the list of
#     online CPUs is unreadable, so the cpi probe cannot open its events.
#     `qoslet top` runs on with every other probe.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq setpriv unshare
require_binaries
test_setup
agent_setup

be=$(agent_cgroup be)
# A quota: the throttle probe has a row for it even when reading cpu.stat alone.
if [ -e "$be/cpu.cfs_quota_us" ]; then
	echo 50000 >"$be/cpu.cfs_quota_us"
else
	echo "50000 100000" >"$be/cpu.max"
fi
agent_run "$be" 0 "$DUTYCYCLE" 2000 2000 "$(load_lifetime_s)"
BE_REL=$(cg_rel "$be")
agent_config '{"classes": [{"glob": "'"${be#"$CG_ROOT"/}"'", "class": "BE"}]}'

# probe_json FILE NAME: the probe's status in the last JSON line of `top -j`.
probe_json() {
	tail -n 1 "$1" | jq -c --arg p "$2" '.probes[$p]'
}

# top_run NAME [WRAPPER...]: `qoslet top -j 0.5 2` into $TMP/NAME.{out,err}, run by
# the wrapper command (setpriv, unshare) when given; fails unless it prints its
# two intervals.
top_run() {
	local name=$1 rc=0
	shift
	timeout -k 5 60 "$@" "$QOSLET" top -j --pin-dir "$PIN_DIR" 0.5 2 \
		>"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	[ "$rc" = 0 ] || fail "qoslet top ($name) exited $rc: $(cat "$TMP/$name.err")"
	assert_eq "$(wc -l <"$TMP/$name.out")" 2 "qoslet top ($name) printed its intervals"
	assert_json_lines "$TMP/$name.out"
}

# ---- 1: tracing programs refused (no CAP_PERFMON, no CAP_SYS_ADMIN) ----
# shellcheck disable=SC2054 # the commas are setpriv's list syntax
NOCAPS=(setpriv --bounding-set -perfmon,-sys_admin --inh-caps -perfmon,-sys_admin)
top_run nocaps "${NOCAPS[@]}"
for p in sched cpi memstall; do
	assert_json "$(probe_json "$TMP/nocaps.out" "$p")" \
		'.on == false and (.detail | test("^loading failed: Operation not permitted \\(needs CAP_BPF and CAP_PERFMON"))' \
		"top without the capabilities: $p probe off, saying why"
	grep -q "$p probe is off: loading failed: Operation not permitted" "$TMP/nocaps.err" ||
		fail "no warning for the $p probe: $(cat "$TMP/nocaps.err")"
done
assert_json "$(probe_json "$TMP/nocaps.out" throttle)" '.on and .detail == "cpustat"' \
	"top without the capabilities: throttle runs on cpu.stat"
assert_json "$(tail -n 1 "$TMP/nocaps.out" | jq -c --arg p "$BE_REL" '.cgroups[] | select(.path == $p)')" \
	'.throttled_pct != null and .rq_p99_ns == null' \
	"top without the capabilities: the quota'd cgroup's row has throttling, no run-queue latency"

# agent_start_with WRAPPER...: the agent (dry-run) started by the wrapper.
agent_start_with() {
	"$@" "$QOSLET" agent --config "$TMP/agent.json" --pin-dir "$PIN_DIR" --dry-run 2>>"$AGENT_ERR" &
	AGENT_PID=$!
	BG_PIDS+=("$AGENT_PID")
}

# agent_alive_for S: S seconds after its first tick (its first status line:
# under TCG and load start-up alone can take seconds), the agent still runs.
agent_alive_for() {
	local i
	for ((i = 0; i < $(time_bound_ms 10000) / 100; i++)); do
		grep -q "agent: [0-9]* units" "$AGENT_ERR" && break
		kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent died: $(tail -n 5 "$AGENT_ERR")"
		sleep 0.1
	done
	sleep "$1"
	kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent died: $(tail -n 5 "$AGENT_ERR")"
	log "ok: the agent runs $1 s after its first tick"
}
agent_start_with "${NOCAPS[@]}"
agent_alive_for 3
agent_stop
grep -q "sched probe is off: loading failed: Operation not permitted" "$AGENT_ERR" ||
	fail "the agent did not say why the sched probe is off: $(cat "$AGENT_ERR")"
grep -q "agent: no probe could run" "$AGENT_ERR" ||
	fail "the agent did not say it runs without probes: $(cat "$AGENT_ERR")"
n=$(sed -n 's/.*stopping after \([0-9]*\) ticks.*/\1/p' "$AGENT_ERR")
assert_cmp "${n:-0}" ">=" 2 "agent ticks without probes"

# ---- 2: one probe's pin path taken by a directory with entries ----
: >"$AGENT_ERR"
mkdir -p "$PIN_DIR/memstall_cg/not-a-map" || fail "cannot create a directory in $PIN_DIR"
agent_start --dry-run
agent_alive_for 3
grep -q "memstall probe is off: loading failed" "$AGENT_ERR" ||
	fail "no warning naming the memstall probe: $(cat "$AGENT_ERR")"
grep -q "sched probe: attached" "$AGENT_ERR" || fail "the sched probe did not attach: $(cat "$AGENT_ERR")"
grep -q "fast path on" "$AGENT_ERR" || fail "the fast path (sched probe) is off: $(cat "$AGENT_ERR")"
log "memstall: $(grep -m1 "memstall probe is off" "$AGENT_ERR" | sed 's/.*qoslet: //')"
agent_stop
rm -r "$PIN_DIR/memstall_cg"

# ---- 3: the cpi probe cannot attach (online CPUs unreadable) ----
echo "not a CPU list" >"$TMP/online"
# shellcheck disable=SC2317 # run by unshare
top_run cpi unshare -m --propagation private sh -c \
	'mount --bind "$1" /sys/devices/system/cpu/online && shift && exec "$@"' sh "$TMP/online"
# Where not even software events open, the probe attaches none and reads
# CPU time only: there is nothing to fail then.
if probe_json "$TMP/cpi.out" cpi | jq -e '.on and (.detail | test("CPU time only"))' >/dev/null; then
	log "part 3 not applicable: the cpi probe opens no perf events here"
	log "pass"
	exit 0
fi
assert_json "$(probe_json "$TMP/cpi.out" cpi)" '.on == false and (.detail | test("^attaching failed: "))' \
	"cpi probe off after a failed attach"
grep -q "cpi probe is off: attaching failed" "$TMP/cpi.err" || fail "no warning for cpi: $(cat "$TMP/cpi.err")"
for p in sched throttle memstall; do
	assert_json "$(probe_json "$TMP/cpi.out" "$p")" '.on' "$p probe on beside the failed cpi probe"
done
assert_json "$(tail -n 1 "$TMP/cpi.out")" '.cgroups | map(select(.rq_p99_ns != null)) | length > 0' \
	"top rows carry run-queue latency"
log "pass"
