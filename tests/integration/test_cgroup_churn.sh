#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# No leaks under cgroup churn: 2000 cgroups, each running a task that sleeps
# and wakes (so it runs, waits on a run queue and gets map entries), are
# created and removed while every probe runs (qoslet top). Afterwards no
# entry of any per-cgroup map, of the pair map or of the CPUs' pair caches
# names any of them: whatever the maps gained since before belongs to other
# cgroups (the machine's own activity). Where the kernel cannot run the sched
# probe's rmdir hook (5.10: no bpf_loop), removals are swept from user space
# once a minute at a reading: there top reads every second, and the maps
# must be clean within three sweeps of the churn's end (the second proves a
# cgroup gone that the walk before the first had not seen yet).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

require_root
require_cmds jq bpftool
require_binaries
test_setup

# Under TCG (the kernel matrix's VMs) 200: the same paths, a tenth of the time.
N=${CHURN_CGROUPS:-2000}
[ -n "${CHURN_CGROUPS:-}" ] || [ "${QOSLET_VM:-}" != tcg ] || N=200
BATCH=100

# top: every probe, so every per-cgroup map is exercised.
qoslet_bg "$TMP/out" "$TMP/err" top -j -v --pin-dir "$PIN_DIR" 3600
wait_pinned 10 "$QOSLET_PID"
sleep 1
SWEPT="removed cgroups are swept from user space"
if grep -q "$SWEPT" "$TMP/err"; then
	log "no rmdir hook here: $(grep -m1 "$SWEPT" "$TMP/err")"
	kill -TERM "$QOSLET_PID"
	wait_exit "$QOSLET_PID" 10 "qoslet top" || true
	qoslet_bg "$TMP/out" "$TMP/err" top -j --pin-dir "$PIN_DIR" 1
	wait_lines "$TMP/out" 1 "$QOSLET_PID" 30
	hook=no
else
	hook=yes
fi

# Per-cgroup maps of every probe, as pinned (a probe that is off has none).
CG_MAPS="rq_hist cpi_usage memstall_cg throttle_tg"
# The pair maps: the totals, and the changes the agent drains (top does not).
PAIR_MAPS="rq_blame rq_blame_fresh"

# Every map below, dumped into $TMP/MAP.json (in this shell: map_dump fails the test).
dump_maps() {
	local m
	for m in $CG_MAPS $PAIR_MAPS rq_blame_cache; do
		[ ! -e "$PIN_DIR/$m" ] || map_dump "$PIN_DIR/$m" "$TMP/$m.json"
	done
}

# The pairs every CPU's blame cache holds (slots that counted something), as JSON keys.
cached_pairs() {
	jq -c '.[].formatted.values[].value.slot[] | select(.val.count > 0) | .key' "$TMP/rq_blame_cache.json"
}

# Keys of every per-cgroup map and of the pairs in the last dump, as "id" lines.
map_ids() {
	local m
	for m in $CG_MAPS; do
		[ -e "$TMP/$m.json" ] || continue
		jq -r '.[].formatted.key' "$TMP/$m.json"
	done
	for m in $PAIR_MAPS; do
		jq -r '.[].formatted.key | .victim, .culprit' "$TMP/$m.json"
	done
	cached_pairs | jq -r '.victim, .culprit'
}
# One line per entry of the last dump: "MAP ID" or "PAIR_MAP VICTIM CULPRIT".
map_keys() {
	local m
	for m in $CG_MAPS; do
		[ -e "$TMP/$m.json" ] || continue
		jq -r --arg m "$m" '.[].formatted.key | "\($m) \(.)"' "$TMP/$m.json"
	done
	for m in $PAIR_MAPS; do
		jq -r --arg m "$m" '.[].formatted.key | "\($m) \(.victim) \(.culprit)"' "$TMP/$m.json"
	done
	cached_pairs | jq -r '"rq_blame_cache \(.victim) \(.culprit)"'
}

dump_maps
map_keys | sort -u >"$TMP/keys.before"
before=$(wc -l <"$TMP/keys.before")
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
		dump_maps
		map_ids >"$TMP/ids.now"
		grep -qxFf "$TMP/test-ids" "$TMP/ids.now" && seen=1
	fi
	for ((i = start; i < start + BATCH && i < N; i++)); do
		rmdir "$TEST_PARENT/c$i"
	done
done
[ "$seen" = 1 ] || fail "no test cgroup ever appeared in the maps: the churn exercised nothing"

# count_leaked: n = how many entries name removed test cgroups, from a
# fresh dump (in this shell, as dump_maps must be).
# Without the hook the CPUs' pair caches are left out: the sweep cannot
# empty a slot (docs/sched-probe.md), whose pair goes back into rq_blame,
# and so to the next sweep, when a newer pair evicts it.
count_leaked() {
	dump_maps
	map_keys | sort -u >"$TMP/keys.after"
	n=$(awk -v skip="$([ "$hook" = yes ] || echo rq_blame_cache)" '
		NR == FNR { t[$1]; next }
		$1 == skip { next }
		{ for (i = 2; i <= NF; i++) if ($i in t) ids[$i] }
		END { n = 0; for (i in ids) n++; print n }' "$TMP/test-ids" "$TMP/keys.after")
}
sleep 0.5
count_leaked
if [ "$hook" = no ]; then
	log "at the churn's end: $n entries naming removed test cgroups; waiting for the sweeps"
	t0=$SECONDS
	while [ "$n" != 0 ] && [ $((SECONDS - t0)) -lt 190 ]; do
		sleep 5
		count_leaked
	done
	log "after $((SECONDS - t0)) s: $n"
fi
kill -0 "$QOSLET_PID" || fail "qoslet died during the churn: $(cat "$TMP/err")"
log "after: $(wc -l <"$TMP/keys.after") entries; entries naming removed test cgroups: $n"
[ "$n" = 0 ] || log "by map: $(awk 'NR == FNR { t[$1]; next } ($2 in t) || ($3 in t) { c[$1]++ }
	END { for (m in c) printf "%s %d; ", m, c[m] }' "$TMP/test-ids" "$TMP/keys.after")"
assert_eq "$n" 0 "map entries left naming removed test cgroups"

# What remains new names no test cgroup (checked above): it is the
# machine's own activity (e.g. a new pair of two system cgroups).
log "entries new since before, all of other cgroups: $(comm -13 "$TMP/keys.before" "$TMP/keys.after" | wc -l)"
