#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Record and replay. A dry-run agent records what its policies see while a
# BE unit runs and an LS unit's load comes and goes; it changes nothing (the
# files are as before, no journal). Replaying the recording with the recorded
# config gives exactly the live run's decisions (time, kind, rule, target,
# value, related unit). Replaying it with suppression off gives no quota,
# with a lower threshold no more quota, and `qoslet record` writes a recording replay reads. A file
# that is not a recording, or a damaged line, is refused with its reason.
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

NCPU=$(nproc)
CPUS=$(seq -s, 0 $((NCPU - 1)))
ls=$(agent_cgroup ls)
be=$(agent_cgroup be)
LS_REL=${ls#"$CG_ROOT"/}
BE_REL=${be#"$CG_ROOT"/}
for _ in $(seq 1 "$NCPU"); do
	agent_run "$be" "$CPUS" "$DUTYCYCLE" 1000 0 "$(load_lifetime_s)"
done
before="$(cfs_quota "$be") $(cat "$be/cpu.idle" 2>/dev/null || echo -)"

agent_config '{"classes": [{"glob": "'"$LS_REL"'", "class": "LS"}, {"glob": "'"$BE_REL"'", "class": "BE"}],
	"suppress": {"min_cpus": 0.2, "min_change_percent": 0}}'
agent_start --dry-run --record "$TMP/run.rec"
sleep 2
agent_run "$ls" "$CPUS" "$DUTYCYCLE" 3000 1000 3
sleep 5
agent_stop

assert_eq "$(cfs_quota "$be") $(cat "$be/cpu.idle" 2>/dev/null || echo -)" "$before" "dry-run changed nothing"
[ ! -e "$STATE_DIR/actuator.json" ] || fail "dry-run wrote a journal"
n_live=$(decisions 'true' | jq length)
assert_cmp "$n_live" ">=" 2 "live decisions"
# A finding (kind "report", e.g. an LS unit's run-queue SLO broken by outside
# load) and a batch capacity change (kind "capacity") write nothing, so they
# are "reported" even in dry-run.
assert_json "$(decisions 'true')" 'all(.outcome == "dry_run" or ((.kind == "report" or .kind == "capacity") and .outcome == "reported"))' \
	"every live decision is a dry run, a finding or a capacity change"
assert_cmp "$(($(wc -l <"$TMP/run.rec") - 1))" ">=" 6 "ticks recorded"

assert_replay "$TMP/run.rec"
assert_json "$(jq -s . "$TMP/replay.jsonl")" 'all(.outcome == "replay")' "replayed decisions say so"
# Into a file, not piped into grep -q: under pipefail a replay killed by
# SIGPIPE once grep has its match fails the check when the table is long.
"$QOSLET" replay "$TMP/run.rec" >"$TMP/replay.txt" || fail "qoslet replay exited $?"
grep -q "suppress.cfs_quota" "$TMP/replay.txt" || fail "replay's table lacks the decisions"

# Another config, other decisions: without suppression, no quota at all.
# (A lower threshold need not differ: with the node busy, as a shared
# machine can be, every tick's allowance sits at min_cpus at both.)
jq '.suppress.enabled = false' "$TMP/agent.json" >"$TMP/nosup.json"
"$QOSLET" replay "$TMP/run.rec" -j --config "$TMP/nosup.json" >"$TMP/nosup.jsonl" || fail "replay --config failed"
assert_eq "$(jq -s '[.[] | select(.rule == "suppress.cfs_quota")] | length' "$TMP/nosup.jsonl")" 0 \
	"replayed without suppression: no suppression decisions"
# A lower threshold never gives BE more.
jq '.suppress.threshold_percent = 30' "$TMP/agent.json" >"$TMP/strict.json"
"$QOSLET" replay "$TMP/run.rec" -j --config "$TMP/strict.json" >"$TMP/strict.jsonl" || fail "replay --config failed"
s=$(jq -s '[.[] | select(.rule == "suppress.cfs_quota") | .value] | max' "$TMP/strict.jsonl")
l=$(jq -s '[.[] | select(.rule == "suppress.cfs_quota") | .value] | max' "$TMP/replay.jsonl")
assert_cmp "$s" "<=" "$l" "a lower threshold gives BE no more quota"

# qoslet record.
timeout 30 "$QOSLET" record -o "$TMP/rec2" --config "$TMP/agent.json" --pin-dir "$PIN_DIR" --duration 3 2>"$TMP/record.err" ||
	fail "qoslet record failed: $(tail -n 3 "$TMP/record.err")"
head -n 1 "$TMP/rec2" | jq -e '.qoslet_record == 4 and (.config | type == "object")' >/dev/null || fail "record: bad header"
assert_cmp "$(($(wc -l <"$TMP/rec2") - 1))" ">=" 1 "ticks recorded by qoslet record"
tail -n 1 "$TMP/rec2" | jq -e --arg be "$BE_REL" '.units | map(select(.path == $be and .class == "BE")) | length == 1' >/dev/null ||
	fail "record: the BE unit is not in the last tick"
"$QOSLET" replay "$TMP/rec2" >/dev/null || fail "replay of qoslet record's file failed"

# Bad recordings.
rc=0
"$QOSLET" replay "$TMP/agent.json" 2>"$TMP/bad1.err" || rc=$?
assert_eq "$rc" 2 "replay of a non-recording: exit status"
grep -q "not a qoslet recording" "$TMP/bad1.err" || fail "non-recording: $(cat "$TMP/bad1.err")"
{ head -n 2 "$TMP/run.rec"; echo '{"ts_ns": 1}'; } >"$TMP/damaged.rec"
rc=0
"$QOSLET" replay "$TMP/damaged.rec" >/dev/null 2>"$TMP/bad2.err" || rc=$?
assert_eq "$rc" 1 "replay of a damaged line: exit status"
grep -q "line 3" "$TMP/bad2.err" || fail "damaged line not named: $(cat "$TMP/bad2.err")"
log "pass"
