#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/bench/memcolo.sh [-r ROUNDS] [-s SECS] [-q SECS] [-k DIR] [-o FILE]
#
# Memory co-location (issue 35): what a BE pod churning the page cache does
# to an LS pod whose working set is page cache, when both share a memory
# limit (kubepods with the kubelet's limit), without and with `qoslet agent`.
#
# Placement, under a uniquely named parent with a memory limit of 256 MiB
# (the "kubepods"), in every v1 hierarchy the agent reads (or in v2):
#   PARENT/ls  LS, on CPU 0: `fileload rand -w`: reads its 160 MiB file once
#              (its page cache), then 4 KiB preads at random offsets, one
#              after another, for SECS seconds; the figure is each pread's
#              own time (a page-cache hit, or a refault's wait for the disk)
#   PARENT/be  BE, on CPU 1: `fileload stream`: 1 MiB reads through a 2 GiB
#              file, over and over; the figure is MB/s
# The BE pod's page cache pushes the parent to its limit, and the parent's
# reclaim takes the LS pod's pages, which it refaults. Data under /var/tmp
# (disk-backed; tmpfs pages are not reclaimable without swap), dropped from
# the page cache before each block, removed at exit. The LS pod refilling
# its cache charges the parent at its limit and stalls in reclaim that the
# BE stream's cache drives: the memory stall the detection pins on the BE
# pod. (A paced LS, 2000 reads a second over 1 GiB under a limit of 1152
# MiB, loses as much, p99 4.7 us -> 46 ms, waiting in refault I/O: not
# measured here. The detection counts those waits as its memory stall and
# names the BE pod: docs/agent-policies.md, "The stall".)
#
# Scenarios, each a block with fresh cgroups:
#   alone  LS alone
#   be     LS + BE, no agent
#   agent  LS + BE, `qoslet agent` (memory interference detection and memory
#          suppression at their defaults, the CPU policies off: this measures
#          the memory loop) started before BE. The reaction is the time from
#          the BE start, and from the first memory breach report on the LS
#          pod, to the first memory suppression write on the BE pod. The LS
#          p99 is given over the whole block (the seconds before the agent
#          acts included) and in the steady state under suppression: the
#          median of the per-second p99s from RECOVER_S after the first write
#          on (the LS pod first reads back what it lost)
# One round runs every scenario once, each round starting one scenario
# later. Medians over rounds, per-round numbers in the report.
#
# Targets (issue 35): LS p99 with the agent, in the steady state, at most
# 1.5x alone; BE keeps at least half its no-agent throughput.
#
# Exit 0 after a measurement, 77 when it cannot run here, 1 on failure,
# 2 on bad usage.
#
#   -r ROUNDS  rounds (default $MEMCOLO_ROUNDS, else 3)
#   -s SECS    seconds of LS measurement per block (default 60)
#   -q SECS    first wait up to SECS for a quiet machine (default 0)
#   -k DIR     keep the raw data in DIR (the loads' JSON, decisions, logs)
#   -o FILE    also write the markdown report to FILE
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export QOSLET_TEST_TAG=memcolo-$$
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh"
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/agent_lib.sh
. "$ROOT/tests/integration/agent_lib.sh"
# shellcheck source-path=SCRIPTDIR source=scripts/bench/colo_lib.sh
. "$ROOT/scripts/bench/colo_lib.sh"
FILELOAD=${FILELOAD:-$ROOT/build/tests/helpers/fileload}

ROUNDS=${MEMCOLO_ROUNDS:-3}
SECS=60
QUIET_WAIT=0
OUT=""
KEEP=""
CMDLINE=$(printf '%q ' "$0" "$@")
CMDLINE=${CMDLINE% }
LIMIT_MIB=256
HOT_MIB=160
STREAM_MIB=2048
RECOVER_S=10
SETTLE=1
TARGET_P99=1.5 # LS p99 with the agent / alone, at most
TARGET_BE=0.5  # BE throughput with the agent / without, at least
MIB=$((1024 * 1024))

usage() {
	sed -n '4p' "$0" | sed 's/^# /usage: /' >&2
	exit 2
}

SCENARIOS=(alone be agent)
while getopts "r:s:q:k:o:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	s) SECS=$OPTARG ;;
	q) QUIET_WAIT=$OPTARG ;;
	k) KEEP=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
for n in "$ROUNDS" "$SECS" "$QUIET_WAIT"; do
	[[ $n =~ ^[0-9]+$ ]] || usage
done
if [ "$ROUNDS" -lt 1 ] || [ "$SECS" -lt 5 ]; then
	usage
fi

log() {
	echo "memcolo: $*" >&2
}

require_root
require_cmds jq taskset
[ -x "$QOSLET" ] || skip "$QOSLET is missing (run make)"
[ -x "$FILELOAD" ] || skip "$FILELOAD is missing (run make $FILELOAD)"
detect_cgroup_root >/dev/null || skip "no cgroup hierarchy with the cpu controller"
NPROC=$(nproc)
ALL_CPUS=0-$((NPROC - 1))

test_setup
agent_setup
disk_tmp
agent_memory_limit "$LIMIT_MIB"
P=${TEST_PARENT_REL#/}
if cg_is_v2; then
	REFAULT=workingset_refault_file
else
	REFAULT=total_workingset_refault_file
fi
AGENT_JSON='{'"$AGENT_POLICIES_OFF"', "classes": [{"glob": "'"$P"'/ls", "class": "LS"}, {"glob": "'"$P"'/be", "class": "BE"}],
	"memory_suppress": {"evict": {"enabled": false}}}'
AGENT_JSON=$(jq -cn "$AGENT_JSON")

log "writing $HOT_MIB + $STREAM_MIB MiB under $DISK_TMP"
"$FILELOAD" make "$DISK_TMP/hot" "$HOT_MIB" || fail "cannot write $DISK_TMP/hot"
"$FILELOAD" make "$DISK_TMP/stream" "$STREAM_MIB" || fail "cannot write $DISK_TMP/stream"

# Drops file $1's pages from the page cache (GNU dd's nocache: fadvise DONTNEED).
uncache() {
	dd if="$1" iflag=nocache count=0 status=none
}

refaults() {
	awk -v k="$REFAULT" '$1 == k { print $2 }' "$(agent_cg_in "$LS_POD" memory)/memory.stat"
}

# Scenario $1, round $2: one block.
run_block() {
	local s=$1 r=$2 ls=$TMP/ls.$1.$2.json be=$TMP/be.$1.$2.json rf0 be_t0 first breach
	AGENT_PID=""
	uncache "$DISK_TMP/hot"
	uncache "$DISK_TMP/stream"
	LS_POD=$(agent_cgroup ls)
	BE_POD=$(agent_cgroup be)
	[ "$s" != agent ] || colo_agent_start "$s" "$r" '{}'
	# shellcheck disable=SC2016
	agent_run "$LS_POD" 0 sh -c 'out=$1; shift; exec "$@" >"$out"' sh "$ls" \
		"$FILELOAD" rand -w -j "$DISK_TMP/hot" "$SECS"
	LS_PID=$CG_PID
	# The warm-up read is done when the LS pod holds its file.
	for _ in $(seq 1 600); do
		[ "$(awk '$1 == "total_cache" || $1 == "file" { print $2 }' "$(agent_cg_in "$LS_POD" memory)/memory.stat")" -ge $(((HOT_MIB - 8) * MIB)) ] && break
		sleep 0.1
	done
	colo_mark_start
	rf0=$(refaults)
	be_t0=$(date +%s%N)
	if [ "$s" != alone ]; then
		# shellcheck disable=SC2016
		agent_run "$BE_POD" "$((NPROC > 1))" sh -c 'out=$1; shift; exec "$@" >"$out"' sh "$be" \
			"$FILELOAD" stream -j "$DISK_TMP/stream" "$((SECS - 1))"
		BE_PID=$CG_PID
		reap "$BE_PID" || fail "$s round $r: the BE stream exited with status $?"
		R[$s,$r,be_mbs]=$(jq .mb_per_s "$be")
	fi
	reap "$LS_PID" || fail "$s round $r: the LS reader exited with status $?"
	colo_mark_end "$s" "$r"
	R[$s,$r,refaults_s]=$(awk -v a="$rf0" -v b="$(refaults)" -v s="$SECS" 'BEGIN { printf "%.0f", (b - a) / s }')
	R[$s,$r,p50]=$(jq .latency_us.p50 "$ls")
	R[$s,$r,p99]=$(jq .latency_us.p99 "$ls")
	R[$s,$r,p999]=$(jq .latency_us.p999 "$ls")
	if [ "$s" = agent ]; then
		colo_agent_stop "$s" "$r"
		# the first memory suppression write on the BE pod, and the first breach on the LS pod
		first=$(jq -s --arg cg "/$P/be" 'map(select(.target.cgroup == $cg and (.rule | startswith("mem_suppress.")) and .outcome == "applied")) | .[0].ts_ns // empty' "$AGENT_OUT")
		breach=$(jq -s --arg cg "/$P/ls" 'map(select(.target.cgroup == $cg and .kind == "report" and (.rule | test("mem")))) | .[0].ts_ns // empty' "$AGENT_OUT")
		R[$s,$r,react_be]=NA R[$s,$r,react_breach]=NA R[$s,$r,p99_steady]=NA
		[ -z "$first" ] || R[$s,$r,react_be]=$(((first - be_t0) / 1000000))
		# the steady state: each second's p99 from RECOVER_S after the first write on
		[ -z "$first" ] || R[$s,$r,p99_steady]=$(jq --argjson f "$first" --argjson rs "$RECOVER_S" \
			'(($f - .start_ns) / 1e9 + $rs | ceil) as $from | .p99_per_s_us[$from:] | sort
			| if length == 0 then "NA" else .[(length - 1) / 2 | floor] end' "$ls")
		[ -z "$first" ] || [ -z "$breach" ] || R[$s,$r,react_breach]=$(((first - breach) / 1000000))
		R[$s,$r,writes]=$(jq -s --arg cg "/$P/be" '[.[] | select(.target.cgroup == $cg and .outcome == "applied")] | length' "$AGENT_OUT")
		[ -z "$KEEP" ] || cp "$AGENT_OUT" "$AGENT_ERR" "$KEEP/"
	fi
	[ -z "$KEEP" ] || cp "$ls" "$KEEP/" 2>/dev/null || true
	[ -z "$KEEP" ] || [ "$s" = alone ] || cp "$be" "$KEEP/"
	pod_remove "$BE_POD"
	pod_remove "$LS_POD"
	log "$s round $r: LS p99 ${R[$s,$r,p99]} us, refaults ${R[$s,$r,refaults_s]}/s, BE ${R[$s,$r,be_mbs]:-} MB/s${R[$s,$r,react_be]:+, reaction ${R[$s,$r,react_be]} ms}"
	sleep "$SETTLE"
}

[ -z "$KEEP" ] || mkdir -p "$KEEP"
colo_run_start "$QUIET_WAIT"
for ((r = 1; r <= ROUNDS; r++)); do
	for ((i = 0; i < ${#SCENARIOS[@]}; i++)); do
		run_block "${SCENARIOS[$(((i + r - 1) % ${#SCENARIOS[@]}))]}" "$r"
	done
done

# ---------------------------------------------------------------- report
p99_alone=$(col alone p99 | median)
p99_be=$(col be p99 | median)
p99_agent=$(col agent p99 | median)
p99_steady=$(col agent p99_steady | median)
ratio_agent=$(div "$p99_steady" "$p99_alone")
be_keep=$(paired agent be be_mbs | median 2)
report() {
	cat <<EOF
# memcolo: an LS pod's page cache next to a BE stream, without and with qoslet agent

Command: \`$CMDLINE\`
Machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r), cgroup $(cg_is_v2 && echo v2 || echo "v1 (hybrid)")
Commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
Started: $START; quiet at start: $QUIET_START; load average $LOAD_START

Parent memory limit $LIMIT_MIB MiB; LS (CPU 0): $HOT_MIB MiB file, random 4 KiB preads one after
another for $SECS s (latency: the pread's own time); BE (CPU 1): 1 MiB reads streaming a
$STREAM_MIB MiB file. Method at the top of \`scripts/bench/memcolo.sh\`. Medians of $ROUNDS rounds.
The agent's steady state: the median of the per-second p99s from $RECOVER_S s after its first write on.
A closed-loop reader's p99 hides misses once hits are over 99% of its reads: p99.9 and the
refaults show them.

| scenario | LS p50 us | LS p99 us | LS p99.9 us | LS refaults/s | BE MB/s |
| --- | --- | --- | --- | --- | --- |
| alone | $(col alone p50 | median) | $p99_alone | $(col alone p999 | median) | $(col alone refaults_s | median 0) | - |
| be, no agent | $(col be p50 | median) | $p99_be | $(col be p999 | median) | $(col be refaults_s | median 0) | $(col be be_mbs | median) |
| agent, whole block | $(col agent p50 | median) | $p99_agent | $(col agent p999 | median) | $(col agent refaults_s | median 0) | $(col agent be_mbs | median) |
| agent, steady state | - | $p99_steady | - | - | - |

| target | value | verdict |
| --- | --- | --- |
| LS p99 with the agent (steady state) / alone <= $TARGET_P99 | $ratio_agent | $(verdict "$ratio_agent" le "$TARGET_P99") |
| LS p99 with the agent (whole block) / alone | $(div "$p99_agent" "$p99_alone") | - |
| LS p99 with BE, no agent / alone | $(div "$p99_be" "$p99_alone") | - |
| BE throughput with the agent / without >= $TARGET_BE | $be_keep | $(verdict "$be_keep" ge "$TARGET_BE") |
| reaction: BE start -> first suppression write (ms, median) | $(col agent react_be | median 0) | - |
| reaction: first memory breach report -> first suppression write (ms, median) | $(col agent react_breach | median 0) | - |

Per round:

| round | scenario | LS p99 us (steady) | LS p99.9 us | refaults/s | BE MB/s | reaction ms (BE start, breach) | BE writes | foreign CPUs |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
EOF
	for ((r = 1; r <= ROUNDS; r++)); do
		for s in "${SCENARIOS[@]}"; do
			echo "| $r | $s | ${R[$s,$r,p99]}${R[$s,$r,p99_steady]:+ (${R[$s,$r,p99_steady]})} | ${R[$s,$r,p999]} | ${R[$s,$r,refaults_s]} | ${R[$s,$r,be_mbs]:--} | ${R[$s,$r,react_be]:--}, ${R[$s,$r,react_breach]:--} | ${R[$s,$r,writes]:--} | ${R[$s,$r,foreign]} |"
		done
	done
}
report | tee "${OUT:-/dev/null}"
