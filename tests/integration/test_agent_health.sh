#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# /healthz and /readyz judge the agent loop, not the HTTP thread
# (docs/qoslet-agent.md, HTTP). The loop is stopped for real: the agent's
# main thread (the loop; the HTTP server and the API link have threads of
# their own) alone is moved into a cgroup v1 freezer cgroup of the test's and
# frozen, so the endpoint keeps answering while no tick ends.
#   - running: /healthz 200 "ok"; /readyz 200 "ok" (with the sched probe on;
#     with it off, 503 naming it, since interference detection needs it);
#   - frozen for more than 5 intervals of 1 s: /healthz 503, one line
#     "unhealthy: the agent loop is stale: no tick ended for X s (limit 5.0 s)";
#     /readyz 503 "not ready: the agent loop is stale: ..."; `qoslet health`
#     on the health socket (the DaemonSet's liveness probe) exits 1 with the
#     same reason, and 0 again after the thaw;
#   - while frozen but within the limit, /healthz still 200 (no flapping);
#   - thawed: both 200 again within 2 intervals;
#   - the sched probe kept off (a directory where it pins rq_hist, as
#     test_faults_probes.sh does to memstall): /readyz 503 naming it, since
#     interference detection needs it, while /healthz is 200; with
#     interference.enabled false, /readyz 200.
# shellcheck disable=SC2016,SC2119
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq curl python3
require_binaries
test_setup
agent_setup

FREEZER=$(v1_mount freezer)
if [ -z "$FREEZER" ] || cg_is_v2; then
	skip "needs the cgroup v1 freezer: only its tasks file moves one thread (the loop) alone"
fi
stall=$(agent_cgroup stall)
stall_fz=$(agent_cg_in "$stall" freezer)
[ -e "$stall_fz/freezer.state" ] || skip "no freezer.state in $stall_fz"

PORT=$(free_port)
URL=http://127.0.0.1:$PORT
# get PATH: prints "STATUS BODY" (the body is one line).
get() {
	curl -s -m 3 -o "$TMP/body" -w '%{http_code}' "$URL$1" >"$TMP/code" || echo 000 >"$TMP/code"
	echo "$(cat "$TMP/code") $(cat "$TMP/body" 2>/dev/null)"
}
# wait_status PATH STATUS SECONDS: waits until PATH answers STATUS; prints the answer.
wait_status() {
	local r
	for _ in $(seq 1 $(($3 * 10))); do
		r=$(get "$1")
		[ "${r%% *}" = "$2" ] && { echo "$r"; return 0; }
		sleep 0.1
	done
	echo "$r"
	return 1
}

agent_config '{"interval_s": 1, "interference": {"enabled": true},
	"suppress": {"enabled": false}, "evict": {"memory": {"enabled": false}, "cpu": {"enabled": false}},
	"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"',
	"health_socket": "'"$TMP/health.sock"'"}}'
agent_start
r=$(wait_status /healthz 200 5) || fail "/healthz of a running agent: $r"
assert_eq "$r" "200 ok" "/healthz of a running agent"
if grep -q "sched probe is off" "$AGENT_ERR"; then
	r=$(wait_status /readyz 503 5) || fail "/readyz without the sched probe: $r"
	echo "$r" | grep -q "not ready: the sched probe is off (.*), and interference detection needs it" ||
		fail "/readyz without the sched probe: $r"
	SCHED=off
else
	r=$(wait_status /readyz 200 5) || fail "/readyz of a running agent: $r"
	assert_eq "$r" "200 ok" "/readyz of a running agent"
	SCHED=on
fi

log "freezing the agent's loop (its main thread) alone"
echo "$AGENT_PID" >"$stall_fz/tasks" || fail "cannot move the agent's main thread to $stall_fz"
echo FROZEN >"$stall_fz/freezer.state"
t0=$(date +%s%N)
sleep 2
r=$(get /healthz)
assert_eq "$r" "200 ok" "/healthz 2 s into the stall (within 5 intervals)"
r=$(wait_status /healthz 503 8) || fail "/healthz did not fail within 8 s of the stall: $r"
secs=$(awk -v t="$(($(date +%s%N) - t0))" 'BEGIN { printf "%.1f", t / 1e9 }')
echo "$r" | grep -Eq '^503 unhealthy: the agent loop is stale: no tick ended for [0-9.]+ s \(limit 5\.0 s\)$' ||
	fail "/healthz of a stalled loop: $r"
assert_cmp "$secs" ">=" 4.5 "/healthz failed only after about 5 intervals (${secs} s)"
log "ok: $r"
r=$(get /readyz)
echo "$r" | grep -Eq '^503 not ready: the agent loop is stale: no tick ended for' ||
	fail "/readyz of a stalled loop: $r"
[ "$(grep -c . "$TMP/body")" = 1 ] || fail "the reason is not one line: $(cat "$TMP/body")"
# The DaemonSet's liveness probe says the same through the socket.
rc=0
"$QOSLET" health --socket "$TMP/health.sock" --timeout 1 >"$TMP/probe.out" 2>"$TMP/probe.err" || rc=$?
assert_eq "$rc" 1 "qoslet health of a stalled loop"
grep -Eq '^unhealthy: the agent loop is stale: no tick ended for' "$TMP/probe.err" ||
	fail "qoslet health of a stalled loop: $(cat "$TMP/probe.err")"
kill -0 "$AGENT_PID" || fail "the agent died while frozen"

echo THAWED >"$stall_fz/freezer.state"
r=$(wait_status /healthz 200 2) || fail "/healthz did not recover within 2 s of the thaw: $r"
assert_eq "$("$QOSLET" health --socket "$TMP/health.sock")" ok "qoslet health after the thaw"
if [ "$SCHED" = on ]; then
	r=$(wait_status /readyz 200 2) || fail "/readyz did not recover within 2 s of the thaw: $r"
fi
log "ok: both recover after the thaw"
agent_stop

if [ "$SCHED" = on ]; then
	# The sched probe kept off: in a pin directory of its own, one of its pin paths is
	# taken by a directory with an entry (test_faults_probes.sh does the same to memstall).
	mkdir -p "$PIN_DIR/nosched/rq_hist/x"
	: >"$AGENT_ERR"
	agent_start --pin-dir "$PIN_DIR/nosched"
	if grep -q "sched probe is off" "$AGENT_ERR"; then
		r=$(wait_status /readyz 503 5) || fail "/readyz without the sched probe: $r"
		echo "$r" | grep -q "^503 not ready: the sched probe is off (.*), and interference detection needs it$" ||
			fail "/readyz without the sched probe: $r"
		assert_eq "$(get /healthz)" "200 ok" "/healthz without the sched probe: the loop runs"
		log "ok: $r"
		agent_stop
		agent_config '{"interval_s": 1, "interference": {"enabled": false},
			"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"'}}'
		agent_start --pin-dir "$PIN_DIR/nosched"
		r=$(wait_status /readyz 200 5) || fail "/readyz with interference off, sched probe off: $r"
		log "ok: no policy needs the sched probe: ready"
		agent_stop
	else
		skip_part "could not keep the sched probe off with a directory at $PIN_DIR/nosched/rq_hist"
		agent_stop
	fi
fi
test_end
