#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# SIGHUP reloads the config atomically, and SIGTERM restores within 1 s.
# A BE unit runs stress-ng under an agent whose config has BE suppression
# off, so no suppression decision comes. Then, each followed by SIGHUP:
#   - a config that is not JSON: refused with the parser's message; the
#     agent runs on with the old config (still no suppression);
#   - a valid config, but writable by others, or owned by another user:
#     refused, named as such;
#   - a config that changes http.port: refused, naming the setting that
#     takes a restart (the rest of that file, which enables suppression,
#     is not applied either: no half reload);
#   - the same config with suppression on and the old port: "reloaded", and
#     within 3 s a suppression decision lowers the BE quota (the kernel's
#     cpu.cfs_quota_us shows it).
# Then SIGTERM: the agent exits 0 within 1 s of the signal, and the BE
# quota is back to unlimited. An agent started with a config others may
# write exits 2 with the reason.
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
be=$(agent_cgroup be)
ls=$(agent_cgroup ls)
[ -e "$be/cpu.cfs_quota_us" ] || [ -e "$be/cpu.max" ] || skip "no CFS bandwidth control"
CPUS=$(seq -s, 0 $((NCPU - 1)))
agent_run "$be" "$CPUS" stress-ng --cpu "$NCPU" --timeout 120s
assert_eq "$(cfs_quota "$be")" -1 "the BE unit starts unlimited"
base='{"classes": [{"glob": "'"${ls#"$CG_ROOT"/}"'", "class": "LS"},
		{"glob": "'"${be#"$CG_ROOT"/}"'", "class": "BE"}],
	"burst": {"policy": "none"}, "interference": {"enabled": false},
	"evict": {"memory": {"enabled": false}, "cpu": {"enabled": false}}}'
agent_config "$(jq -c '. * {suppress: {enabled: false, min_cpus: 0.2, cpu_idle: false}}' <<<"$base")"
cp "$TMP/agent.json" "$TMP/off.json"
agent_start
suppress='.rule | startswith("suppress.")'

# reload_with FILE [MODE [OWNER]]: the file becomes the agent's config (in
# place: the path the agent was started with), then SIGHUP; waits for the
# agent's answer.
reload_with() {
	local before
	before=$(grep -c "reload" "$AGENT_ERR" || true)
	cp "$1" "$TMP/agent.json.new"
	chmod "${2:-600}" "$TMP/agent.json.new"
	chown "${3:-0}" "$TMP/agent.json.new"
	mv "$TMP/agent.json.new" "$TMP/agent.json"
	kill -HUP "$AGENT_PID"
	for _ in $(seq 1 50); do
		[ "$(grep -c "reload" "$AGENT_ERR" || true)" -gt "$before" ] && break
		sleep 0.1
	done
	kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent died on SIGHUP: $(tail -n 3 "$AGENT_ERR")"
	grep "reload" "$AGENT_ERR" | tail -n 1
}

sleep 2
assert_eq "$(decisions "$suppress" | jq length)" 0 "no suppression while the config has it off"

echo '{"suppress": {"enabled": tru}}' >"$TMP/broken.json"
line=$(reload_with "$TMP/broken.json")
echo "$line" | grep -q "reload refused, the running config stays: .*invalid JSON at line 1" ||
	fail "a broken config: $line"
log "ok: a broken config is refused: ${line#* qoslet: }"

jq -c '. * {suppress: {enabled: true}}' "$TMP/off.json" >"$TMP/on.json"
line=$(reload_with "$TMP/on.json" 666)
echo "$line" | grep -q "writable by others (mode 0666): refused" || fail "a writable config: $line"
log "ok: a config others may write is refused"

line=$(reload_with "$TMP/on.json" 600 65534)
echo "$line" | grep -q "owned by uid 65534: refused" || fail "a config another user owns: $line"
log "ok: a config another user owns is refused"

jq -c '. * {http: {port: 9999}}' "$TMP/on.json" >"$TMP/port.json"
line=$(reload_with "$TMP/port.json")
echo "$line" | grep -q "refused, the running config stays: http changed, and that takes a restart" ||
	fail "a restart-only change: $line"
log "ok: a restart-only change is refused whole"
sleep 2
assert_eq "$(decisions "$suppress" | jq length)" 0 "still no suppression: nothing of the refused files applies"

line=$(reload_with "$TMP/on.json")
echo "$line" | grep -q "agent: reloaded $TMP/agent.json" || fail "a good config: $line"
d=$(wait_decision '.rule == "suppress.cfs_quota" and .outcome == "applied"' 4) ||
	fail "no suppression within 4 s of the reload: $(tail -n 3 "$AGENT_ERR")"
# The agent keeps deciding, and logs a decision once its write is done: a
# quota read between two reads of the last decision that agree can still be
# a write whose decision is not logged yet. So look for a moment between two
# ticks when the kernel's quota is the last decision's, for a few seconds.
for _ in $(seq 1 25); do
	last=$(decisions '.rule == "suppress.cfs_quota"' | jq '.[-1].value')
	q=$(cfs_quota "$be")
	[ "$last" = "$(decisions '.rule == "suppress.cfs_quota"' | jq '.[-1].value')" ] &&
		[ "$q" = "$last" ] && break
	sleep 0.2
done
assert_cmp "$q" ">" 0 "the kernel shows a BE quota after the reload"
assert_eq "$q" "$last" "the quota of the last decision"

t0=$(date +%s%N)
kill -TERM "$AGENT_PID"
wait_exit "$AGENT_PID" 5 "qoslet agent" || fail "agent exited with $? on SIGTERM"
ms=$((($(date +%s%N) - t0) / 1000000))
assert_cmp "$ms" "<=" "$(time_bound_ms 1000)" "SIGTERM to exit, restores included (ms)"
assert_eq "$(cfs_quota "$be")" -1 "the BE quota is restored"

chmod 666 "$TMP/agent.json"
rc=0
out=$("$QOSLET" agent --config "$TMP/agent.json" --pin-dir "$PIN_DIR" --dry-run --duration 1 2>&1) || rc=$?
assert_eq "$rc" 2 "an agent started with a config others may write exits 2"
echo "$out" | grep -q "writable by others" || fail "the start-up refusal: $out"
log "pass"
