#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Memory suppression with real reclaim (docs/agent-policies.md, "Memory
# suppression"). The test's parent gets a memory limit of 256 MiB, as the
# kubelet gives kubepods one. An LS pod (CPU 0) keeps a 160 MiB file hot in
# its page cache and reads it at random, 4 KiB at a time, as fast as it
# can; a BE pod (CPU 1) streams a 2 GiB file (768 MiB under TCG:
# stream_file_mib in lib.sh), so its page cache pushes the
# parent to its limit and reclaim takes the LS pod's pages, which it
# refaults (their refaults are thrashing, a memory stall: readahead's large
# folios are active). Data under /var/tmp (disk-backed), removed at exit.
# With the agent on:
#   - the agent says once what memory suppression does on this kernel: on
#     cgroup v1 "memory.reclaim absent (cgroup v1): stepping
#     memory.limit_in_bytes only" (no memory.reclaim there);
#   - the memory interference policy names the BE pod, and memory
#     suppression lowers its limit (v1 memory.limit_in_bytes, v2
#     memory.high: rule mem_suppress.limit, applied), which the kernel meets
#     by reclaiming the BE pod's page cache (its cache ends below the limit);
#   - the LS pod's file comes back into its cache, and then its refault
#     rate is below the one before the first suppression;
#   - nothing on the LS pod is capped: no write on it, its limit untouched;
#   - on stop the BE pod's limit is the owner's again;
#   - a replay of the recording gives the live decisions.
# It runs under TCG too (the VMs' scratch disk, scripts/vm/run.sh): its
# waits count polls, which the emulator slows alike, and the refault rates
# it compares stay apart there (6.1 VM: 56.5/s before, 0/s after; 145.5/s
# and 75.1/s in another run).
# The middle part needs the memory interference policy (issue 35's
# detection half); a build without it runs the rest and skips that part.
# jq filters are single-quoted; agent_start takes its own options.
# shellcheck disable=SC2016,SC2119
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

FILELOAD=${FILELOAD:-$QOSLET_ROOT/build/tests/helpers/fileload}
MIB=$((1024 * 1024))
LIMIT_MIB=256
HOT_MIB=160
STREAM_MIB=$(stream_file_mib)
# The loads end by themselves even if cleanup never runs; they outlive the
# test, also under TCG (10 times longer there: time_bound_ms).
LOAD_S=$(($(time_bound_ms 120000) / 1000))

require_root
require_cmds jq taskset
require_binaries
[ -x "$FILELOAD" ] || fail "$FILELOAD is missing: run make $FILELOAD"
test_setup
agent_setup
disk_tmp
agent_memory_limit "$LIMIT_MIB"
P=${TEST_PARENT_REL#/}
cg_weight "$TEST_PARENT" 10240

mem_of() { agent_cg_in "$1" memory; }
if cg_is_v2; then
	KNOB=memory.high KIND=memory_high REFAULT=workingset_refault_file CACHE=file
else
	KNOB=memory.limit_in_bytes KIND=mem_limit REFAULT=total_workingset_refault_file CACHE=total_cache
fi
memstat() {
	awk -v k="$2" '$1 == k { print $2 }' "$(mem_of "$1")/memory.stat"
}

"$FILELOAD" make "$DISK_TMP/hot" "$HOT_MIB" || fail "cannot write $DISK_TMP/hot"
"$FILELOAD" make "$DISK_TMP/stream" "$STREAM_MIB" || fail "cannot write $DISK_TMP/stream"

ls_cg=$(agent_cgroup ls)
be_cg=$(agent_cgroup be)
be_orig=$(cat "$(mem_of "$be_cg")/$KNOB")
ls_orig=$(cat "$(mem_of "$ls_cg")/$KNOB")

# The LS pod: its file read once (its cache), then random reads.
agent_run "$ls_cg" 0 "$FILELOAD" rand -w -j "$DISK_TMP/hot" "$LOAD_S"
LS_PID=$CG_PID
for _ in $(seq 1 300); do
	[ "$(memstat "$ls_cg" "$CACHE")" -ge $(((HOT_MIB - 8) * MIB)) ] && break
	kill -0 "$LS_PID" 2>/dev/null || fail "the LS reader exited"
	sleep 0.1
done
log "LS cache: $(($(memstat "$ls_cg" "$CACHE") / MIB)) MiB"

if "$QOSLET" agent --print-config | jq -e '.interference.memory.enabled != null' >/dev/null; then
	HAVE_DETECTION=1
else
	HAVE_DETECTION=0
fi
agent_config '{'"$AGENT_POLICIES_OFF"', "classes": [{"glob": "'"$P"'/ls", "class": "LS"}, {"glob": "'"$P"'/be", "class": "BE"}],
	"memory_suppress": {"enabled": true, "well_s": 60, "evict": {"enabled": false}}}'
agent_start --record "$TMP/rec.jsonl"

# Said once: what memory suppression does on this kernel.
if cg_is_v2; then
	if [ -e "$(mem_of "$be_cg")/memory.reclaim" ]; then
		said="memory suppression: memory.reclaim, then memory.high"
	else
		said="memory.reclaim absent (kernel < 5.19): stepping memory.high only"
	fi
else
	said="memory.reclaim absent (cgroup v1): stepping memory.limit_in_bytes only"
fi
assert_eq "$(grep -c -F "$said" "$AGENT_ERR")" 1 "the agent says once: $said"

refaults() { memstat "$ls_cg" "$REFAULT"; }
now_s() { date +%s.%N; }

# The BE pod streams: the parent reaches its limit, reclaim takes LS pages.
r0=$(refaults) t0=$(now_s)
agent_run "$be_cg" "$(($(nproc) > 1))" "$FILELOAD" stream -j "$DISK_TMP/stream" "$LOAD_S"
BE_PID=$CG_PID

if [ "$HAVE_DETECTION" = 1 ]; then
	sup='.kind == "'"$KIND"'" and .rule == "mem_suppress.limit" and .target.cgroup == "/'"$P"'/be"'
	d=$(wait_decision "$sup" 60) || fail "no memory suppression of the BE pod within 60 s: $(tail -n 3 "$AGENT_ERR")"
	r1=$(refaults) t1=$(now_s)
	assert_eq "$(jget "$d" .outcome)" applied "the first suppression is applied"
	log "first suppression: $(jget "$d" .before) -> $(jget "$d" .after), $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s after the BE start"
	assert_cmp "$(jget "$d" .evidence.victim_stall_share)" ">" 0 "its evidence names the victim's stall share"
	assert_eq "$(jget "$d" .related.cgroup)" "/$P/ls" "the victim is the LS pod"
	# The LS pod reads its evicted pages back (refaults, fast now) until its
	# file is cached again: then the steady state under suppression.
	for _ in $(seq 1 300); do
		[ "$(memstat "$ls_cg" "$CACHE")" -ge $((HOT_MIB * MIB * 9 / 10)) ] && break
		sleep 0.1
	done
	assert_cmp "$(memstat "$ls_cg" "$CACHE")" ">=" $((HOT_MIB * MIB * 9 / 10)) \
		"the LS pod's file is back in its cache within 30 s"
	r2=$(refaults) t2=$(now_s)
	sleep 5
	r3=$(refaults) t3=$(now_s)
	before=$(awk -v a="$r0" -v b="$r1" -v x="$t0" -v y="$t1" 'BEGIN { printf "%.1f", (b - a) / (y - x) }')
	after=$(awk -v a="$r2" -v b="$r3" -v x="$t2" -v y="$t3" 'BEGIN { printf "%.1f", (b - a) / (y - x) }')
	log "LS refaults: $before/s before the first suppression, $after/s once its file is cached again"
	assert_cmp "$after" "<" "$before" "the LS pod refaults less once the BE pod is suppressed"
	lim=$(cat "$(mem_of "$be_cg")/$KNOB")
	assert_cmp "$lim" "<" $((LIMIT_MIB * MIB)) "the BE pod's $KNOB is below the parent's limit"
	assert_cmp "$(memstat "$be_cg" "$CACHE")" "<=" "$lim" "the BE pod's page cache is within it"
	kill -0 "$BE_PID" 2>/dev/null || fail "the BE streamer died (an OOM kill?)"
else
	skip_part "no memory interference policy in this build: nothing names a culprit to suppress"
	sleep 5
fi

# Nothing on the LS pod: no write, its limit as it was.
w=$(decisions '.target.cgroup == "/'"$P"'/ls" and .kind != "report"')
assert_eq "$(echo "$w" | jq length)" 0 "no write on the LS pod: $w"
assert_eq "$(cat "$(mem_of "$ls_cg")/$KNOB")" "$ls_orig" "the LS pod's $KNOB is untouched"
kill -0 "$LS_PID" 2>/dev/null || fail "the LS reader died"

agent_stop
assert_eq "$(cat "$(mem_of "$be_cg")/$KNOB")" "$be_orig" "on stop the BE pod's $KNOB is the owner's again"
# (without detection there is no decision to replay)
[ "$HAVE_DETECTION" = 0 ] || assert_replay "$TMP/rec.jsonl"
agent_loads_stop
test_end
