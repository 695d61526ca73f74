#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The agent's log: one record a line on stderr. By default text with an
# RFC 3339 UTC time and a level; with --log-format json one object a line
# with exactly time, level and msg (what log collectors parse). -v adds
# debug records. A one-shot --check-config answers without a time. Runs a
# short dry-run over the test's own parent, so it changes nothing.
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
agent_cgroup be/pod1 >/dev/null
agent_config '{}'
TIME_RE='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z'

run() { # OUT ARGS...: a 1.5 s dry-run with ARGS, its stderr in OUT
	local out=$1
	shift
	"$QOSLET" agent --config "$TMP/agent.json" --pin-dir "$PIN_DIR" --dry-run --duration 1.5 \
		"$@" 2>"$out" >/dev/null || fail "agent $* exited with $?: $(tail -n 3 "$out")"
}

run "$TMP/text.log"
[ -s "$TMP/text.log" ] || fail "no log at all"
bad=$(grep -Evc "^$TIME_RE (error|warning|info|debug) qoslet: " "$TMP/text.log" || true)
assert_eq "$bad" 0 "every text record starts with an RFC 3339 time and a level"
grep -q ' info qoslet: agent: managing ' "$TMP/text.log" || fail "no start record: $(head -n 3 "$TMP/text.log")"
assert_eq "$(grep -c ' debug ' "$TMP/text.log" || true)" 0 "no debug records without -v"

run "$TMP/json.log" --log-format json -v
n=$(wc -l <"$TMP/json.log")
assert_cmp "$n" ">" 1 "JSON records written"
jq -e --arg re "^$TIME_RE\$" -s 'all(.[]; (keys == ["level", "msg", "time"]) and
	(.time | test($re)) and (.level | IN("error", "warning", "info", "debug")) and
	(.msg | type == "string"))' "$TMP/json.log" >/dev/null ||
	fail "a JSON record is malformed: $(head -n 3 "$TMP/json.log")"
log "ok: $n JSON records, each exactly {time, level, msg}"
jq -e -s 'any(.[]; .level == "debug")' "$TMP/json.log" >/dev/null || fail "-v gave no debug record"
jq -e -s 'any(.[]; .msg | startswith("agent: managing "))' "$TMP/json.log" >/dev/null ||
	fail "no start record in JSON"

out=$("$QOSLET" agent --check-config --config /nonexistent 2>&1) && fail "a missing config was valid"
echo "$out" | grep -Eq "^qoslet: error: agent: /nonexistent" || fail "check-config message: $out"
out=$("$QOSLET" agent --log-format yaml 2>&1) && fail "--log-format yaml was accepted"
echo "$out" | grep -q -- "--log-format: expected text or json" || fail "bad --log-format: $out"
log "pass"
