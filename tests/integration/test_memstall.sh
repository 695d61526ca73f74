#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The acceptance test of the memstall probe, once per hook (tp_btf, raw_tp):
# one kubepods-shaped container path, created both in the hierarchy qoslet
# identifies cgroups by (v1 cpu here) and in the v1 memory hierarchy with a
# 64 MiB limit (on pure cgroup v2: one cgroup, memory.max). A process moved into both cgroups before it allocates maps
# and touches 256 MiB (no swap): the memory cgroup reclaims, then its OOM
# killer kills it. While `qoslet memstall -j` runs:
#   - the cgroup shows memcg reclaim stalls (count > 0, and no more than the
#     limit failures the kernel counted in memory.failcnt, v2's "max" in
#     memory.events: every reclaim
#     follows a failed charge, some failures retry without reclaim);
#   - its oom_kills equal the kernel's own oom_kill counter
#     (memory.oom_control), which is 1;
#   - exactly one OOM event names the cgroup's id and path, the process's
#     pid and its comm "memhog", at a time inside the run;
#   - nothing was dropped, and the report names the hook asked for;
# then the pinned per-cgroup map carries BTF.
# The limit is on the test's own memory cgroup, so the OOM killer can only
# choose inside it, and the only process there is the one the test started.
# shellcheck disable=SC2016 # jq filters and sh -c scripts are single-quoted
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

MEMHOG=${MEMHOG:-$QOSLET_ROOT/build/tests/helpers/memhog}
LIMIT_MIB=64
HOG_MIB=256

require_root
require_cmds jq bpftool python3
[ -x "$QOSLET" ] || fail "$QOSLET is missing: run make first"
[ -x "$MEMHOG" ] || fail "$MEMHOG is missing: run make $MEMHOG"
test_setup

# The memory controller: on a hybrid node (the host) its own v1 hierarchy,
# where the test makes a twin of the cgroup; on a pure v2 node (the kernel
# matrix's VMs) the same tree, the cgroup itself, with memory enabled down to
# it (kube_cgroup), memory.max for the limit and memory.events for the
# kernel's counters (oom_kill; max: charges that hit the limit).
MEM_PARENT=""
if [ -e "$CG_ROOT/cgroup.controllers" ] && grep -qw memory "$CG_ROOT/cgroup.controllers"; then
	MEM_ROOT=$CG_ROOT
else
	MEM_ROOT=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
	[ -n "$MEM_ROOT" ] || skip "no memory controller: neither in $CG_ROOT nor in a v1 hierarchy"
	[ "$MEM_ROOT" != "$CG_ROOT" ] || skip "memory and cpu share one v1 hierarchy; not exercised here"
	# Cleanup of the memory side first (its processes are the test's), then lib.sh's.
	trap 'rc=$?; [ -z "$MEM_PARENT" ] || cgroup_destroy "$MEM_PARENT"; (exit $rc); _test_cleanup' EXIT
	mkdir "$MEM_ROOT$TEST_PARENT_REL" || fail "cannot create $MEM_ROOT$TEST_PARENT_REL"
	MEM_PARENT=$MEM_ROOT$TEST_PARENT_REL
fi

# mem_oom_kills CG, mem_failcnt CG: the kernel's counters, v1 or v2.
mem_oom_kills() {
	if [ -e "$1/memory.oom_control" ]; then
		kernel_counter "$1/memory.oom_control" oom_kill
	else
		kernel_counter "$1/memory.events" oom_kill
	fi
}
mem_failcnt() {
	if [ -e "$1/memory.failcnt" ]; then
		cat "$1/memory.failcnt"
	else
		kernel_counter "$1/memory.events" max
	fi
}

# kernel_counter FILE KEY: the value of "KEY N" in a cgroup's stat-style file.
kernel_counter() {
	awk -v k="$2" '$1 == k { print $2; found = 1 } END { exit !found }' "$1" ||
		fail "no '$2' in $1"
}

run_hook() {
	local hook=$1 cg rel id mcg out err t0 t1 pid rc oom0 oom1 fail0 fail1
	cg=$(kube_cgroup burstable)
	rel=$(cg_rel "$cg")
	id=$(cg_id "$cg")
	mcg=$MEM_ROOT$rel
	mkdir -p "$mcg" || fail "cannot create $mcg"
	local limit=memory.limit_in_bytes
	[ -e "$mcg/$limit" ] || limit=memory.max
	echo $((LIMIT_MIB * 1024 * 1024)) >"$mcg/$limit" || fail "cannot limit $mcg ($limit)"
	[ ! -e "$mcg/memory.swap.max" ] || echo 0 >"$mcg/memory.swap.max"
	log "[$hook] cgroup $rel (id $id), memory limit $LIMIT_MIB MiB at $mcg"

	out=$TMP/memstall.$hook.out err=$TMP/memstall.$hook.err
	qoslet_bg "$out" "$err" memstall -j --hook "$hook" --pin-dir "$PIN_DIR" -c "$rel" 1
	local qpid=$QOSLET_PID
	# One report printed: the probe is attached and its first reading taken.
	wait_lines "$out" 1 "$qpid" 20

	oom0=$(mem_oom_kills "$mcg")
	fail0=$(mem_failcnt "$mcg")
	t0=$EPOCHREALTIME
	# Into both cgroups before anything is allocated, then exec: the pid is memhog's.
	sh -c 'echo $$ >"$1/cgroup.procs" && echo $$ >"$2/cgroup.procs" || exit 126
		exec "$3" "$4"' sh "$mcg" "$cg" "$MEMHOG" "$HOG_MIB" >"$TMP/memhog.$hook.log" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	rc=0
	wait_exit "$pid" 30 memhog || rc=$?
	t1=$EPOCHREALTIME
	[ "$rc" = 137 ] || fail "[$hook] memhog should die of SIGKILL (137) from the OOM killer, exited $rc: $(tail -n 3 "$TMP/memhog.$hook.log")"
	log "[$hook] memhog (pid $pid) was OOM-killed after: $(tail -n 1 "$TMP/memhog.$hook.log")"
	oom1=$(mem_oom_kills "$mcg")
	fail1=$(mem_failcnt "$mcg")

	# Two more reports, so the interval holding the kill has been printed.
	local have
	have=$(wc -l <"$out")
	wait_lines "$out" $((have + 2)) "$qpid" 20
	kill -INT "$qpid"
	rc=0
	wait_exit "$qpid" 10 "qoslet memstall" || rc=$?
	[ "$rc" = 0 ] || fail "[$hook] qoslet memstall exited $rc: $(cat "$err")"
	assert_json_lines "$out"
	assert_json_vocab memstall "$out"

	local sum
	sum=$(jq -s -c --arg p "$rel" '{
		hooks: [.[].probes.memstall.detail | split(", ")[0]] | unique,
		ids: [.[].cgroups[] | select(.path == $p) | .id] | unique,
		memcg: ([.[].cgroups[] | select(.path == $p) | .memcg.count] | add // 0),
		memcg_ns: ([.[].cgroups[] | select(.path == $p) | .memcg.sum_ns] | add // 0),
		direct: ([.[].cgroups[] | select(.path == $p) | .direct.count] | add // 0),
		ooms: ([.[].cgroups[] | select(.path == $p) | .oom_kills] | add // 0),
		events: [.[].oom_events[]],
		drops: ([.[].drops[]] | add)
	}' "$out")
	log "[$hook] qoslet: $sum"
	log "[$hook] kernel: oom_kill $oom0 -> $oom1, failcnt $fail0 -> $fail1"

	assert_eq "$(jget "$sum" '.hooks | join(",")')" "$hook" "[$hook] the report names the hook in use"
	assert_eq "$(jget "$sum" '.ids | map(tostring) | join(",")')" "$id" \
		"[$hook] the cgroup's id is its cpu-hierarchy directory's inode"
	assert_cmp "$(jget "$sum" .memcg)" ">" 0 "[$hook] memcg reclaim stalls charged to the cgroup"
	assert_cmp "$(jget "$sum" .memcg_ns)" ">" 0 "[$hook] memcg reclaim took time"
	assert_cmp "$(jget "$sum" .memcg)" "<=" $((fail1 - fail0)) \
		"[$hook] no more reclaims than the kernel's failed charges (memory.failcnt)"
	assert_cmp $((oom1 - oom0)) "==" 1 "[$hook] the kernel counted one OOM kill"
	assert_cmp "$(jget "$sum" .ooms)" "==" $((oom1 - oom0)) \
		"[$hook] oom_kills equals the kernel's oom_kill counter"
	assert_json "$sum" '.events | length == 1' "[$hook] exactly one OOM event"
	local ev
	ev=$(jget "$sum" '.events[0] | tojson')
	assert_eq "$(jget "$ev" .id)" "$id" "[$hook] the event's cgroup id"
	assert_eq "$(jget "$ev" .path)" "$rel" "[$hook] the event's cgroup path"
	assert_eq "$(jget "$ev" .pid)" "$pid" "[$hook] the event's pid is memhog's"
	assert_eq "$(jget "$ev" .comm)" memhog "[$hook] the event's comm"
	assert_cmp "$(jget "$ev" .ts)" ">=" "$(awk -v t="$t0" 'BEGIN { printf "%.3f", t - 0.01 }')" \
		"[$hook] the event is not before memhog started"
	assert_cmp "$(jget "$ev" .ts)" "<=" "$(awk -v t="$t1" 'BEGIN { printf "%.3f", t + 0.01 }')" \
		"[$hook] the event is not after memhog died"
	assert_cmp "$(jget "$sum" .drops)" "==" 0 "[$hook] nothing dropped"
	log "[$hook] direct reclaim stalls: $(jget "$sum" .direct) (needs node-wide pressure; not asserted)"
}

if bpf_map_type_available task_storage; then
	run_hook tp_btf
else
	skip_part "tp_btf: its programs keep their stamps in task storage (kernel 5.11); auto takes raw_tp here"
fi
run_hook raw_tp

# Pinned with BTF, so bpftool (and other tools) can print the records.
btf_id=$(bpftool -j map show pinned "$PIN_DIR/memstall_cg" | jq '.btf_id // 0')
assert_cmp "$btf_id" ">" 0 "the pinned memstall_cg map carries BTF"
log "all memstall checks passed"
test_end
