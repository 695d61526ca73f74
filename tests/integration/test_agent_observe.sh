#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Off Kubernetes (no kubepods cgroup) and without cgroup_root, the agent
# observes the whole hierarchy in dry-run, with the top-level cgroups (and
# the children of top-level systemd slices) as SYSTEM units, and logs one
# run-queue line per interval (docs/qoslet-agent.md, Dry-run). The test's own
# parent is a top-level cgroup: three busy loops pinned to one CPU in it wait
# behind each other. Asserted:
#   - the start says it observes only, and why;
#   - a "run queue:" line every interval (at least 4 in 5 s);
#   - within 15 s a line names the test's parent as the worst p99 with a
#     culprit ("N% of it behind ..."): on this shared machine another
#     top-level cgroup may be worse for a while, so any one such line counts;
#   - nothing was written: no decision record other than dry_run ones.
# shellcheck disable=SC2016,SC2119
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq taskset
require_binaries
test_setup
agent_setup
for root in kubepods kubepods.slice; do
	[ ! -e "$CG_ROOT/$root" ] || skip "this node has $CG_ROOT/$root: the agent would manage it"
done

hog=$(agent_cgroup hog)
for _ in 1 2 3; do
	agent_run "$hog" 0 sh -c 'while :; do :; done'
done
# No cgroup_root: agent_config's base names one, so the config is written here.
jq -n --arg state "$STATE_DIR" --arg out "$AGENT_OUT" \
	'{state_dir: $state, decisions: {file: $out}, http: {enabled: false}}' >"$TMP/agent.json"
chmod 600 "$TMP/agent.json"
agent_start
grep -q "observing only (dry-run), with the whole hierarchy as scope: top-level cgroups" "$AGENT_ERR" ||
	fail "the start does not say it observes only: $(head -n 5 "$AGENT_ERR")"
mark=$(grep -c "agent: run queue:" "$AGENT_ERR" || true)
sleep 5
n=$(($(grep -c "agent: run queue:" "$AGENT_ERR" || true) - mark))
assert_cmp "$n" ">=" 4 "run-queue lines in 5 s"
P=${TEST_PARENT_REL#/}
line=""
for _ in $(seq 1 150); do
	line=$(grep -E "agent: run queue: worst p99 [0-9.]+ ms in /$P \([0-9]+ waits\), [0-9]+% of it behind " "$AGENT_ERR" | tail -n 1 || true)
	[ -n "$line" ] && break
	kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent exited: $(tail -n 3 "$AGENT_ERR")"
	sleep 0.1
done
[ -n "$line" ] || fail "no line names /$P, whose three loops share CPU 0: $(grep "run queue" "$AGENT_ERR" | tail -n 3)"
log "ok: ${line#*qoslet: }"
agent_stop
# Reports (batch capacity's records among them) write nothing either.
assert_eq "$(decisions '.outcome != "dry_run" and .outcome != "reported"' | jq length)" 0 \
	"nothing but dry-run decisions and reports"
log "pass"
