#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A local client can starve the TCP health port, and cannot starve the
# health socket that the DaemonSet's exec probes use (docs/security.md,
# ABUSES row 4). The kubelet probes a pod from the node's own address, which
# every process of the node and every hostNetwork pod share; the health
# port's per-address limit (4) is theirs too. A running agent serves
# http.health_port and http.health_socket while tests/helpers/slow_clients.py,
# from 127.0.0.1 (the address the checker below uses, as the kubelet's
# probe and a local attacker share one), keeps 8 idle connections to the
# health port and reopens each the moment it is closed, for 10 s. Meanwhile,
# every 0.2 s:
#  - GET /healthz on the health port from 127.0.0.1 (a kubelet httpGet
#    probe): most fail (the starvation, reproduced: why the DaemonSet no
#    longer probes over TCP);
#  - `qoslet health` and `qoslet health --ready` on the socket (the
#    DaemonSet's exec probes): every one answers 0 within 1 s.
# Also: the socket is mode 0600, and a user other than root cannot connect
# (and the server threads are confined by Landlock where the kernel has it);
# a stale socket (nothing serves it) is replaced, a regular file is refused;
# (exit 1, permission denied); `qoslet health` on a socket nobody serves
# exits 1 naming it; an agent whose socket directory others may write, or
# whose socket path another agent serves, refuses to start and changes
# nothing; the socket is gone after a clean stop. About 20 s.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq curl python3 setpriv
require_binaries
test_setup
agent_setup

PORT=$(free_port)
HPORT=$(free_port)
[ "$PORT" != "$HPORT" ] || HPORT=$(free_port)
SOCK_DIR=$TMP/run
mkdir -m 0700 "$SOCK_DIR"
SOCK=$SOCK_DIR/health.sock
http_config() {
	agent_config '{'"$AGENT_POLICIES_OFF"', "http": {"enabled": true, "address": "127.0.0.1",
		"port": '"$PORT"', "health_port": '"$HPORT"', "health_socket": "'"$1"'"}}'
}

# refused SOCKET WHY REASON: the agent with this health socket exits 1 at
# start, its log naming REASON, and changes nothing.
refused() {
	local rc=0
	http_config "$1"
	"$QOSLET" agent --config "$TMP/agent.json" --pin-dir "$PIN_DIR" 2>"$TMP/refused.err" || rc=$?
	assert_eq "$rc" 1 "exit status with $2"
	grep -qF "$3" "$TMP/refused.err" || fail "$2: no reason given: $(cat "$TMP/refused.err")"
	grep -q "nothing was changed" "$TMP/refused.err" || fail "$2: $(cat "$TMP/refused.err")"
}
mkdir -m 0777 "$TMP/open"
refused "$TMP/open/health.sock" "a health socket in a directory others may write" \
	"health socket $TMP/open/health.sock: $TMP/open belongs to uid 0 with mode 0777: refused"
[ ! -e "$TMP/open/health.sock" ] || fail "a socket was made in the refused directory"
# Anything but a socket at the path is not the agent's to remove.
: >"$SOCK"
refused "$SOCK" "a regular file at the socket's path" "health socket $SOCK: the path exists and is not a socket"
rm "$SOCK"
# A socket nothing serves (a killed agent's) is replaced.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SOCK"
[ -S "$SOCK" ] || fail "no stale socket made"
http_config "$SOCK"
agent_start
grep -q "health checks on UNIX socket $SOCK too" "$AGENT_ERR" || fail "no socket log line: $(cat "$AGENT_ERR")"
# The server threads open no file (user/confine.h; test_confine checks what that denies).
if grep -q "http: the server threads are confined (Landlock ABI" "$AGENT_ERR"; then
	log "ok: $(grep -o 'the server threads are confined.*' "$AGENT_ERR" | head -n 1)"
else
	grep -q "http: the server threads are not confined: Landlock: " "$AGENT_ERR" ||
		fail "the log says nothing of the server threads' confinement: $(cat "$AGENT_ERR")"
	log "the kernel has no Landlock: $(grep -o 'the server threads are not.*' "$AGENT_ERR")"
fi
assert_eq "$(stat -c '%a %U' "$SOCK")" "600 root" "the socket's mode and owner"
for _ in $(seq 1 50); do
	"$QOSLET" health --ready --socket "$SOCK" >/dev/null 2>&1 && break
	sleep 0.1
done
assert_eq "$("$QOSLET" health --socket "$SOCK")" ok "qoslet health"
assert_eq "$("$QOSLET" health --ready --socket "$SOCK")" ok "qoslet health --ready"

# Root only: nobody cannot connect.
set +e
setpriv --reuid=65534 --regid=65534 --clear-groups "$QOSLET" health --socket "$SOCK" 2>"$TMP/nobody.err"
rc=$?
set -e
assert_eq "$rc" 1 "qoslet health as uid 65534"
grep -qi "permission denied\|couldn't connect" "$TMP/nobody.err" || fail "uid 65534: $(cat "$TMP/nobody.err")"

# A second agent on the same socket path (its own ports) is refused: the first serves it.
jq --argjson p "$(free_port)" '.http.port = $p | .http.health_port = 0' "$TMP/agent.json" >"$TMP/second.json"
set +e
"$QOSLET" agent --config "$TMP/second.json" --pin-dir "$PIN_DIR" --dry-run 2>"$TMP/second.err"
rc=$?
set -e
assert_eq "$rc" 1 "a second agent on the served socket"
grep -q "health socket $SOCK: another process serves it" "$TMP/second.err" ||
	fail "second agent: $(tail -n 3 "$TMP/second.err")"
[ -S "$SOCK" ] || fail "the second agent removed the first one's socket"

# The attack: 8 idle connections from the prober's own address, each reopened at once.
# Under TCG one round of probes (curl and two qoslet runs) took 12 s beside
# the attacker (5.10: 8 rounds in 100 s), too few for the counts to say anything.
if [ "${QOSLET_VM:-}" = tcg ]; then
	skip_part "the starvation under attack, under TCG emulation: a round of probes takes seconds there; the host run judges it"
else
	ATTACK_S=10
	python3 "$QOSLET_ROOT/tests/helpers/slow_clients.py" --seconds "$ATTACK_S" --at-once \
		--group "$HPORT,127.0.0.1,1,8,idle" >"$TMP/attack.jsonl" &
	ATTACK=$!
	BG_PIDS+=("$ATTACK")
	sleep 1
	tcp_ok=0 tcp_n=0 sock_n=0 worst=0
	while kill -0 "$ATTACK" 2>/dev/null; do
		code=$(curl -s -o /dev/null -m 1 -w '%{http_code}' "http://127.0.0.1:$HPORT/healthz" || true)
		tcp_n=$((tcp_n + 1))
		[ "$code" != 200 ] || tcp_ok=$((tcp_ok + 1))
		for ready in "" --ready; do
			t0=$(date +%s%N)
			# shellcheck disable=SC2086 # $ready is one flag or none
			out=$("$QOSLET" health $ready --socket "$SOCK" --timeout 1 2>&1) ||
				fail "qoslet health $ready during the attack: $out"
			t=$((($(date +%s%N) - t0) / 1000000))
			[ "$t" -le "$worst" ] || worst=$t
			sock_n=$((sock_n + 1))
		done
		sleep 0.2
	done
	wait "$ATTACK" || fail "slow_clients.py failed"
	log "attacker: $(jq -c '{opened, closed: (.closed | length)}' "$TMP/attack.jsonl")"
	log "TCP /healthz from the prober's address during the attack: $tcp_ok of $tcp_n answered 200"
	assert_cmp "$tcp_n" ">=" 10 "TCP probes tried"
	# The starvation reproduced: a kubelet failing 3 in a row restarts the agent.
	assert_cmp "$((tcp_ok * 2))" "<" "$tcp_n" "TCP probes that got through (fewer than half)"
	assert_cmp "$sock_n" ">=" 20 "socket probes answered 0 during the attack"
	assert_cmp "$worst" "<" 1000 "the slowest socket probe (ms)"
fi

kill -0 "$AGENT_PID" || fail "the agent died under the attack: $(tail -n 5 "$AGENT_ERR")"
agent_stop
[ ! -e "$SOCK" ] || fail "the socket is left after a clean stop"
set +e
out=$("$QOSLET" health --socket "$SOCK" 2>&1)
rc=$?
set -e
assert_eq "$rc" 1 "qoslet health with no agent"
[[ $out == *"no answer on $SOCK"* ]] || fail "no agent: $out"
test_end
