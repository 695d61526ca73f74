#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Bad input to `qoslet agent` changes nothing. For each bad config (unknown
# key, wrong type, out of range, cross-field, a cgroup_root that does not
# exist) and each bad command line, the agent exits 2 before doing anything,
# with a message naming the field; the test's BE cgroup keeps its quota and
# cpu.idle, no journal appears and no map is pinned. --check-config accepts
# the embedded defaults and a good file, and --print-config prints a config
# that --check-config accepts back.
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

be=$(agent_cgroup be)
agent_run "$be" 0 "$DUTYCYCLE" 1000 0 30
BE_REL=${be#"$CG_ROOT"/}
before_quota=$(cfs_quota "$be")
before_idle=$(cat "$be/cpu.idle" 2>/dev/null || echo none)

# bad_config NAME JSON EXPECTED: the agent refuses JSON and names EXPECTED.
bad_config() {
	local name=$1 json=$2 want=$3 rc=0
	agent_config "$json"
	timeout 20 "$QOSLET" agent --config "$TMP/agent.json" --pin-dir "$PIN_DIR" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	assert_eq "$rc" 2 "$name: exit status"
	grep -qF -- "$want" "$TMP/$name.err" || fail "$name: stderr does not name '$want': $(cat "$TMP/$name.err")"
	log "ok: $name: $(head -n1 "$TMP/$name.err")"
}

CLASSES='"classes": [{"glob": "'"$BE_REL"'", "class": "BE"}]'
bad_config unknown_key "{$CLASSES, \"suppress\": {\"treshold_percent\": 50}}" "suppress.treshold_percent: unknown key"
bad_config wrong_type "{$CLASSES, \"interval_s\": \"fast\"}" "interval_s: expected a number"
bad_config out_of_range "{$CLASSES, \"suppress\": {\"threshold_percent\": 150}}" "suppress.threshold_percent: 150 is out of range"
bad_config cross_field "{$CLASSES, \"evict\": {\"memory\": {\"threshold_percent\": 60, \"release_percent\": 65}}}" "release_percent"
bad_config bad_class "{\"classes\": [{\"glob\": \"$BE_REL\", \"class\": \"GOLD\"}]}" "classes[0].class"
bad_config no_such_root "{$CLASSES, \"cgroup_root\": \"${TEST_PARENT_REL#/}/nope\"}" "no such cgroup"
echo '{"interval_s": 1,' >"$TMP/broken.json"
rc=0
"$QOSLET" agent --config "$TMP/broken.json" 2>"$TMP/broken.err" || rc=$?
assert_eq "$rc" 2 "invalid JSON: exit status"
grep -q "line" "$TMP/broken.err" || fail "invalid JSON: no line number: $(cat "$TMP/broken.err")"
rc=0
"$QOSLET" agent --config "$TMP/missing.json" 2>"$TMP/missing.err" || rc=$?
assert_eq "$rc" 2 "missing config file: exit status"
grep -q "missing.json" "$TMP/missing.err" || fail "missing config: path not named"
rc=0
"$QOSLET" agent --bogus 2>"$TMP/opt.err" || rc=$?
assert_eq "$rc" 2 "unknown option: exit status"
rc=0
"$QOSLET" agent --duration -1 2>"$TMP/dur.err" || rc=$?
assert_eq "$rc" 2 "bad --duration: exit status"

# Nothing was written: the BE cgroup as it was, no journal, no pins.
assert_eq "$(cfs_quota "$be")" "$before_quota" "BE quota untouched"
assert_eq "$(cat "$be/cpu.idle" 2>/dev/null || echo none)" "$before_idle" "BE cpu.idle untouched"
[ ! -e "$STATE_DIR/actuator.json" ] || fail "a journal was written"
[ ! -e "$PIN_DIR" ] || fail "maps were pinned under $PIN_DIR"
[ ! -s "$AGENT_OUT" ] || fail "decisions were written: $(head -n 3 "$AGENT_OUT")"

# The good paths.
"$QOSLET" agent --check-config >"$TMP/check.out" || fail "the embedded defaults do not validate"
grep -q "valid" "$TMP/check.out" || fail "--check-config printed: $(cat "$TMP/check.out")"
agent_config "{$CLASSES, \"suppress\": {\"policy\": \"cpuset\"}}"
"$QOSLET" agent --check-config --config "$TMP/agent.json" >/dev/null || fail "a good config does not validate"
"$QOSLET" agent --print-config --config "$TMP/agent.json" >"$TMP/printed.json" || fail "--print-config failed"
assert_eq "$(jq -r .suppress.policy "$TMP/printed.json")" cpuset "--print-config shows the file's value"
assert_eq "$(jq -r .suppress.threshold_percent "$TMP/printed.json")" 65 "--print-config shows the defaults"
"$QOSLET" agent --check-config --config "$TMP/printed.json" >/dev/null || fail "--print-config's output does not validate"
"$QOSLET" agent --help | grep -q -- "--check-config" || fail "agent --help lacks --check-config"
log "pass"
