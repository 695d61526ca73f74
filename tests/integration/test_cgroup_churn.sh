#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# No leaks under cgroup churn: 2000 cgroups, each running a task that sleeps
# and wakes (so it waits on a run queue and gets map entries), are created
# and removed while the probes run. Afterwards no entry of rq_hist or
# rq_blame names any of them, and the maps are no larger than before apart
# from cgroups that are not the test's (other activity on the machine).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

require_root
require_cmds jq bpftool
require_binaries
test_setup

N=${CHURN_CGROUPS:-2000}
BATCH=100

qoslet_bg "$TMP/out" "$TMP/err" runqlat -j --pin-dir "$PIN_DIR" 3600
wait_pinned 10 "$QOSLET_PID"
sleep 1

# Keys of both maps as "id" lines (blame: both ends of each pair).
map_ids() {
	bpftool -j map dump pinned "$PIN_DIR/rq_hist" | jq -r '.[].formatted.key'
	bpftool -j map dump pinned "$PIN_DIR/rq_blame" |
		jq -r '.[].formatted.key | .victim, .culprit'
}
map_entries() {
	local h b
	h=$(bpftool -j map dump pinned "$PIN_DIR/rq_hist" | jq length)
	b=$(bpftool -j map dump pinned "$PIN_DIR/rq_blame" | jq length)
	echo $((h + b))
}

before=$(map_entries)
map_ids | sort -u >"$TMP/ids.before"
log "before: $before entries"

: >"$TMP/test-ids"
seen=0
for ((start = 0; start < N; start += BATCH)); do
	pids=()
	for ((i = start; i < start + BATCH && i < N; i++)); do
		cg=$TEST_PARENT/c$i
		mkdir "$cg"
		stat -c %i "$cg" >>"$TMP/test-ids"
		# The task joins its cgroup, then sleeps: the wake-up makes it wait.
		sh -c 'echo $$ > "$1/cgroup.procs" && exec sleep 0.02' sh "$cg" &
		pids+=($!)
	done
	wait "${pids[@]}"
	# Each batch must actually reach the maps, or the test proves nothing.
	if [ "$seen" = 0 ]; then
		map_ids >"$TMP/ids.now"
		grep -qxFf "$TMP/test-ids" "$TMP/ids.now" && seen=1
	fi
	for ((i = start; i < start + BATCH && i < N; i++)); do
		rmdir "$TEST_PARENT/c$i"
	done
done
[ "$seen" = 1 ] || fail "no test cgroup ever appeared in the maps: the churn exercised nothing"

sleep 0.5
after=$(map_entries)
map_ids | sort -u >"$TMP/ids.after"
leaked=$(grep -cxFf "$TMP/test-ids" "$TMP/ids.after" || true)
log "after: $after entries; entries naming removed test cgroups: $leaked"
assert_eq "$leaked" 0 "map entries left naming removed test cgroups"

# Entries of cgroups that appeared meanwhile and are not the test's are
# other activity (cleaned when those go); discount them.
others=$(comm -13 "$TMP/ids.before" "$TMP/ids.after" | grep -cvxFf "$TMP/test-ids" || true)
assert_cmp "$after" "<=" $((before + others * 2)) "map entries after churn (before $before, new non-test ids $others)"
kill -0 "$QOSLET_PID" || fail "qoslet died during the churn: $(cat "$TMP/err")"
