#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/bench/psicompare.sh [-r ROUNDS] [-s SECS] [-o FILE]
#
# How close the memstall probe's PSI inputs (the cgroup v1 stand-in for
# memory.pressure and io.pressure: docs/agent-policies.md) come to the
# kernel's own pressure accounting. One reader (tests/helpers/fileload
# random) thrashes its own memory limit over a hot file twice its size's
# worth of headroom short (LIMIT_MIB, HOT_MIB; data under /var/tmp, on
# disk, removed on exit), alone in its cgroup, for SECS seconds, while
# `qoslet memstall -j -c CGROUP SECS+2 1` reads the probe. Per round:
#   probe    memory: stall + direct + memcg sum_ns; io: iowait sum_ns
#   kernel   on cgroup v2, the cgroup's own memory.pressure and io.pressure
#            "some" total deltas: the exact comparison (one task: "some"
#            wall time equals its task time);
#            on v1 (no per-cgroup PSI), /proc/pressure/{memory,io} deltas
#            over the same window, with the same deltas over an idle
#            window of the same length before it (the rest of the
#            machine): the node's PSI is the non-idle-weighted average of
#            every CPU's stall time and counts every job on the machine,
#            so it bounds nothing about one cgroup; listed to show why.
# The file's cache is dropped before each round (written anew with
# O_DIRECT). Exit 0 after a measurement, 77 when it cannot run here.
#
#   -r ROUNDS  rounds (default 3)
#   -s SECS    seconds per round (default 8)
#   -o FILE    also write the markdown report to FILE
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export QOSLET_TEST_TAG=psicompare-$$
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh"

ROUNDS=3
SECS=8
OUT=""
LIMIT_MIB=${LIMIT_MIB:-128}
HOT_MIB=${HOT_MIB:-160}
CMDLINE=$(printf '%q ' "$0" "$@")
CMDLINE=${CMDLINE% }
usage() {
	sed -n '4p' "$0" | sed 's/^# /usage: /' >&2
	exit 2
}
while getopts "r:s:o:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	s) SECS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ && $SECS =~ ^[0-9]+$ ]] && [ "$SECS" -ge 4 ] || usage
log() { echo "psicompare: $*" >&2; }

FILELOAD=$QOSLET_ROOT/build/tests/helpers/fileload
require_root
require_cmds jq dd
[ -x "$QOSLET" ] || skip "$QOSLET is missing (run make)"
[ -x "$FILELOAD" ] || skip "$FILELOAD is missing (run make $FILELOAD)"
[ -r /proc/pressure/memory ] || skip "no PSI on this kernel (psi=0 or CONFIG_PSI off)"
test_setup
DATA=$(mktemp -d /var/tmp/qoslet-psicompare.XXXXXX)
MEM_DIR=""
trap 'rc=$?; rm -rf "$DATA"; [ -z "$MEM_DIR" ] || cgroup_destroy "$MEM_DIR"; (exit $rc); _test_cleanup' EXIT
[ "$(stat -f -c %T "$DATA")" != tmpfs ] || skip "/var/tmp is tmpfs"

# The reader's cgroup: v2 has it all in one; v1 needs the memory hierarchy's twin.
cg=$TEST_PARENT/reader
mkdir "$cg"
if [ -e "$CG_ROOT/cgroup.controllers" ]; then
	V2=1
	echo "+memory +io" >"$TEST_PARENT/cgroup.subtree_control" 2>/dev/null ||
		echo "+memory" >"$TEST_PARENT/cgroup.subtree_control" || skip "cannot enable memory below $TEST_PARENT"
	mcg=$cg
	echo $((LIMIT_MIB * 1048576)) >"$mcg/memory.max"
else
	V2=0
	mroot=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
	[ -n "$mroot" ] || skip "no memory controller"
	MEM_DIR=$mroot$TEST_PARENT_REL
	mkdir -p "$MEM_DIR/reader"
	mcg=$MEM_DIR/reader
	echo $((LIMIT_MIB * 1048576)) >"$mcg/memory.limit_in_bytes"
fi
rel=$(cg_rel "$cg")

psi_total() { # FILE: the "some" total, us
	awk '$1 == "some" { sub("total=", "", $5); print $5 }' "$1"
}

declare -a ROWS=()
for ((r = 1; r <= ROUNDS; r++)); do
	rm -f "$DATA/hot"
	dd if=/dev/urandom of="$DATA/hot" bs=1M count="$HOT_MIB" oflag=direct status=none
	m0=$(psi_total /proc/pressure/memory) i0=$(psi_total /proc/pressure/io)
	sleep "$SECS"
	bm=$(($(psi_total /proc/pressure/memory) - m0)) bi=$(($(psi_total /proc/pressure/io) - i0))
	out=$TMP/memstall.$r
	qoslet_bg "$out" "$TMP/err.$r" memstall -j --pin-dir "$PIN_DIR" -c "$rel" $((SECS + 2)) 1
	qpid=$QOSLET_PID
	sleep 1
	if [ "$V2" = 1 ]; then
		m0=$(psi_total "$cg/memory.pressure") i0=$(psi_total "$cg/io.pressure")
	else
		m0=$(psi_total /proc/pressure/memory) i0=$(psi_total /proc/pressure/io)
	fi
	sh -c 'for d in "$@"; do echo $$ >"$d/cgroup.procs" || exit 126; done; exec '"$FILELOAD"' rand -w -j '"$DATA/hot $SECS" sh \
		$( [ "$V2" = 1 ] && echo "$cg" || echo "$mcg $cg") >"$TMP/reader.$r" 2>&1
	if [ "$V2" = 1 ]; then
		km=$(($(psi_total "$cg/memory.pressure") - m0)) ki=$(($(psi_total "$cg/io.pressure") - i0))
	else
		km=$(($(psi_total /proc/pressure/memory) - m0)) ki=$(($(psi_total /proc/pressure/io) - i0))
	fi
	wait_exit "$qpid" $((SECS + 10)) "qoslet memstall" || fail "qoslet memstall failed: $(cat "$TMP/err.$r")"
	probe=$(jq -c --arg p "$rel" '[.cgroups[] | select(.path == $p)] | {
		mem_ms: (map(.stall.sum_ns + .direct.sum_ns + .memcg.sum_ns) | add // 0 | . / 1e6),
		sleep_ms: (map(.stall.sum_ns) | add // 0 | . / 1e6),
		io_ms: (map(.iowait.sum_ns) | add // 0 | . / 1e6)}' "$out")
	ROWS+=("$r $km $ki $bm $bi $probe $(jq -c '{p99_us: .latency_us.p99, ops: .reads}' "$TMP/reader.$r")")
	log "round $r: kernel memory ${km} us io ${ki} us (idle window: memory ${bm} io ${bi}); probe $probe"
done

report() {
	echo "# psicompare: the memstall probe's PSI inputs against the kernel's PSI"
	echo
	echo "- Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); kernel $(uname -r); $(nproc) CPUs; cgroup $([ "$V2" = 1 ] && echo v2 || echo "v1 memory (hybrid)"); tree $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "- Command: \`${CMDLINE}\`"
	echo "- One \`fileload rand -w\` reader over a $HOT_MIB MiB file (cache dropped each round) in a cgroup limited to $LIMIT_MIB MiB, $SECS s a round"
	echo
	if [ "$V2" = 1 ]; then
		echo "Kernel: the reader's cgroup's own \`memory.pressure\` and \`io.pressure\` \"some\" total deltas (one task: wall time = task time)."
	else
		echo "Kernel: \`/proc/pressure/memory\` and \`io\` \"some\" deltas over the reader's run, and over an idle window of the same"
		echo "length just before (the rest of the machine). No cgroup has a pressure file on v1: the node's figure is the"
		echo "non-idle-weighted average of every CPU's stall time and counts every job on the machine, so it bounds nothing"
		echo "about one cgroup. The exact comparison needs cgroup v2 (the test VM)."
	fi
	echo
	echo "| Round | kernel memory ms | probe memory ms (in_memstall sleeps) | kernel io ms | probe io ms | idle window memory / io ms | reader |"
	echo "|---:|---:|---:|---:|---:|---:|---|"
	for row in "${ROWS[@]}"; do
		read -r rr km ki bm bi probe reader <<<"$row"
		echo "| $rr | $(awk -v v="$km" 'BEGIN { printf "%.1f", v / 1000 }') | $(jq -r '"\(.mem_ms | . * 10 | round / 10) (\(.sleep_ms | . * 10 | round / 10))"' <<<"$probe") | $(awk -v v="$ki" 'BEGIN { printf "%.1f", v / 1000 }') | $(jq -r '.io_ms | . * 10 | round / 10' <<<"$probe") | $(awk -v a="$bm" -v b="$bi" 'BEGIN { printf "%.1f / %.1f", a / 1000, b / 1000 }') | \`$reader\` |"
	done
}
if [ -n "$OUT" ]; then report | tee "$OUT"; else report; fi
