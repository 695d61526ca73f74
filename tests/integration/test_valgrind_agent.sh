#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# valgrind memcheck over `qoslet agent --dry-run` (the normal -O2 -g build)
# for VALGRIND_SECONDS (default 20; make test-long: 600, docs/testing.md) on a
# real test subtree: an LS and a BE unit under load, while short-lived pods
# with a task come and go (the inventory and the probes' maps see cgroups
# appear and vanish), and the HTTP endpoint is scraped every few seconds
# (/metrics, /healthz, /readyz, /decisions). The agent's probes load and
# run: sched and memstall, and CPI where the CPU has counters. Then
# SIGTERM: the agent must stop cleanly, and memcheck must report no error
# (invalid read or write, use of uninitialised memory, bad free) and no
# definitely or indirectly lost block. The only suppressions are
# tests/valgrind.supp's, each a proven valgrind limitation.
# Memcheck's own report is kept in $TMP/valgrind.log (QOSLET_TEST_KEEP=1).
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

SECONDS_TOTAL=${VALGRIND_SECONDS:-20}
SUPP=$QOSLET_ROOT/tests/valgrind.supp
# memcheck runs the agent some 20-50 times slower: loading the BPF objects
# and the first tick take tens of seconds, a clean stop a few.
START_S=${VALGRIND_START_S:-120}
STOP_S=30

require_root
require_cmds valgrind jq curl python3
require_binaries
test_setup
agent_setup

PORT=$(free_port)
URL=http://127.0.0.1:$PORT
ls=$(agent_cgroup ls)
be=$(agent_cgroup be)
# Half a CPU each: memcheck runs the agent on one CPU, and must keep up.
agent_run "$ls" 0 "$DUTYCYCLE" 2000 2000 $((SECONDS_TOTAL + START_S + 60))
agent_run "$be" 1 "$DUTYCYCLE" 1000 1000 $((SECONDS_TOTAL + START_S + 60))
agent_config '{"classes": [{"glob": "'"${ls#"$CG_ROOT"/}"'", "class": "LS"},
		{"glob": "'"${be#"$CG_ROOT"/}"'*", "class": "BE"}],
	"suppress": {"min_cpus": 0.2},
	"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"'}}'

# --errors-for-leak-kinds: still-reachable blocks (libbpf's and libc's
# caches live until exit) are not leaks; possibly lost ones are reported
# for the reader but fail nothing. --gen-suppressions=all prints a ready
# entry under every error, for triage.
valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect,possible \
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99 --num-callers=40 \
	--suppressions="$SUPP" --gen-suppressions=all --log-file="$TMP/valgrind.log" \
	"$QOSLET" agent --config "$TMP/agent.json" --pin-dir "$PIN_DIR" --dry-run 2>>"$AGENT_ERR" &
AGENT_PID=$!
BG_PIDS+=("$AGENT_PID")
for _ in $(seq 1 $((START_S * 10))); do
	grep -q "agent: managing" "$AGENT_ERR" 2>/dev/null && break
	kill -0 "$AGENT_PID" 2>/dev/null || fail "agent exited at start: $(tail -n 5 "$AGENT_ERR"; tail -n 20 "$TMP/valgrind.log")"
	sleep 0.1
done
grep -q "agent: managing" "$AGENT_ERR" || fail "agent did not start within ${START_S}s under valgrind"
log "agent (pid $AGENT_PID) started under memcheck: $(grep -c 'probe: attached' "$AGENT_ERR") probes attached"

# One short-lived pod: a cgroup in every hierarchy with a task, removed
# again by the next round. Our own task, killed by pid.
churn_pid=""
churn_cg=""
churn_end() {
	local mnt
	[ -n "$churn_cg" ] || return 0
	kill -KILL "$churn_pid" 2>/dev/null || true
	wait "$churn_pid" 2>/dev/null || true
	for _ in $(seq 1 50); do
		[ -s "$churn_cg/cgroup.procs" ] || break
		sleep 0.02
	done
	rmdir "$churn_cg" || fail "cannot remove $churn_cg"
	for mnt in "${AGENT_CTRLS[@]}"; do
		rmdir "$mnt${churn_cg#"$CG_ROOT"}" || fail "cannot remove $mnt${churn_cg#"$CG_ROOT"}"
	done
	churn_cg=""
}

scrape() {
	local path
	for path in /metrics /healthz /readyz /decisions; do
		curl -sS --max-time 20 -o "$TMP/body" "$URL$path" || fail "GET $path failed"
	done
	n_scrapes=$((n_scrapes + 1))
}

n_scrapes=0
n_pods=0
end=$((SECONDS + SECONDS_TOTAL))
while [ "$SECONDS" -lt "$end" ]; do
	kill -0 "$AGENT_PID" 2>/dev/null || fail "agent died under load: $(tail -n 5 "$AGENT_ERR"; tail -n 30 "$TMP/valgrind.log")"
	churn_end
	churn_cg=$(agent_cgroup "be-pod$n_pods")
	agent_run "$churn_cg" 1 "$DUTYCYCLE" 500 1500 "$(load_lifetime_s)"
	churn_pid=$CG_PID
	n_pods=$((n_pods + 1))
	scrape
	sleep 3
done
churn_end
curl -sS --max-time 20 "$URL/metrics" >"$TMP/metrics" || fail "GET /metrics failed"
grep -q '^qoslet_' "$TMP/metrics" || fail "/metrics serves no qoslet_ series"
log "ran ${SECONDS_TOTAL}s: $n_pods pods came and went, $n_scrapes scrapes of 4 paths"

kill -TERM "$AGENT_PID"
rc=0
wait_exit "$AGENT_PID" "$STOP_S" "qoslet agent under valgrind" || rc=$?
# The summary, then (on failure) the first reports: the runner shows the
# last 60 lines of a failed test.
sed -n 's/^==[0-9]*== //p' "$TMP/valgrind.log" | grep -E 'in use at exit|lost:|reachable:|suppressed:|ERROR SUMMARY' |
	while IFS= read -r line; do log "memcheck: $line"; done
if [ "$rc" = 99 ] || ! grep -q 'ERROR SUMMARY: 0 errors' "$TMP/valgrind.log"; then
	sed -n 's/^==[0-9]*== //p' "$TMP/valgrind.log" | sed -n '/^Invalid\|uninitialised\|lost in loss record\|Mismatched\|Syscall param\|Conditional jump\|Use of/,$p' |
		grep -v '^ *$' | head -n 40 >&2
	fail "memcheck found errors (exit status $rc; first reports above)"
fi
[ "$rc" = 0 ] || fail "agent exited with status $rc on SIGTERM: $(tail -n 5 "$AGENT_ERR")"
log "ok: no memcheck error, no definitely or indirectly lost block"
