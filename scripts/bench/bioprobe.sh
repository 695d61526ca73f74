#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/bench/bioprobe.sh [-r ROUNDS] [-m MIB] [-o FILE]
#
# What the memstall probe adds to a streaming read from disk (issue 35: "a
# probe on a hot memory path gets its own side-by-side benchmark, a
# streaming read traced and untraced: at most 1.05x"). The probe's hottest
# hook there is block_bio_queue (`psi_bio`: once per bio, in the reader's
# context, adding the bio's bytes to its cgroup's record); a read that
# waits on the disk also goes through its step in the shared sched_switch
# program (in_iowait sleeps, stamped and charged).
#
# The read: `dd if=FILE of=/dev/null bs=1M` on CPU 0, buffered (readahead
# makes the bios: the page-cache path a pod's reads take), over a file of
# MIB (default 4096) under /var/tmp (disk-backed; written once by
# `fileload make`), with the file's pages dropped before each read
# (POSIX_FADV_DONTNEED through GNU dd's iflag=nocache), so every byte comes
# from the device. Each block checks that it did: the device's sectors read
# over the block must cover the file.
#
# Configurations, interleaved (one round runs both, the first alternating):
#   untraced  nothing of qoslet attached
#   traced    `qoslet memstall -j 3600` with a pin directory of its own
#             (every program of the probe attached, psi_bio among them;
#             one report an hour, so the reader process sleeps throughout)
# Figures: the read's wall time (the throughput) and its CPU time (utime +
# stime, from the shell that waited for it: 1 tick resolution), medians
# over rounds, their ratios traced / untraced, and the median of the
# per-round paired ratios. Target: wall time at most 1.05x.
#
# Another qoslet on the machine with psi_bio attached (an agent, top) traces
# the untraced blocks too: the report lists the programs named psi_bio
# attached during each block, and how busy the CPUs were over the run.
#
# Exit 0 after a measurement, 77 when it cannot run here, 1 on failure,
# 2 on bad usage.
#
#   -r ROUNDS  rounds (default $BIOPROBE_ROUNDS, else 21)
#   -m MIB     the file's size (default 4096)
#   -o FILE    also write the markdown report to FILE
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh"
FILELOAD=${FILELOAD:-$ROOT/build/tests/helpers/fileload}
ROUNDS=${BIOPROBE_ROUNDS:-21}
MIB=4096
OUT=""
TARGET=1.05
CMDLINE=$(printf '%q ' "$0" "$@")
CMDLINE=${CMDLINE% }

usage() {
	sed -n '4p' "$0" | sed 's/^# /usage: /' >&2
	exit 2
}
while getopts "r:m:o:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	m) MIB=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
for n in "$ROUNDS" "$MIB"; do
	[[ $n =~ ^[0-9]+$ ]] || usage
done
if [ "$ROUNDS" -lt 1 ] || [ "$MIB" -lt 64 ]; then usage; fi

log() { echo "bioprobe: $*" >&2; }
require_root
require_cmds dd taskset bpftool findmnt
[ -x "$QOSLET" ] || skip "$QOSLET is missing (run make)"
[ -x "$FILELOAD" ] || skip "$FILELOAD is missing (run make $FILELOAD)"

PIN=/sys/fs/bpf/qoslet-bench-bioprobe-$$
TRACER_PID=""
cleanup() {
	local rc=$?
	if [ -n "$TRACER_PID" ]; then
		kill -TERM "$TRACER_PID" 2>/dev/null || true
		wait "$TRACER_PID" 2>/dev/null || true
	fi
	rm -rf "$PIN"
	case $DISK_TMP in
	/var/tmp/qoslet-*) rm -rf "$DISK_TMP" ;;
	esac
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
disk_tmp
DATA=$DISK_TMP

DEV=$(basename "$(readlink -f "$(findmnt -n -o SOURCE --target "$DATA")")")
# A partition's counters are under its disk; either has a stat file.
STAT=/sys/class/block/$DEV/stat
[ -r "$STAT" ] || skip "no $STAT"

log "writing $MIB MiB under $DATA"
"$FILELOAD" make "$DATA/file" "$MIB" >/dev/null || { log "cannot write $DATA/file"; exit 1; }

sectors_read() { awk '{ print $3 }' "$STAT"; }
# psi_bio programs attached anywhere on the machine (ours included while traced).
psi_bio_progs() { bpftool prog show 2>/dev/null | grep -c ' name psi_bio ' || true; }

# Whether process $1 holds a program named psi_bio.
holds_psi_bio() {
	local id seen=""
	while read -r id; do
		seen+="$(bpftool prog show id "$id" 2>/dev/null | head -n 1) "
	done < <(awk '/^prog_id:/ { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null | sort -un)
	[[ $seen == *" name psi_bio "* ]]
}

tracer_start() {
	local deadline=$((SECONDS + 60)) # loading and verifying: slow on a loaded machine
	"$QOSLET" memstall -v -j --pin-dir "$PIN" 3600 >/dev/null 2>"$DATA/tracer.log" &
	TRACER_PID=$!
	# attached with the bio hook: it says so, and holds the program
	while [ "$SECONDS" -lt "$deadline" ]; do
		if grep -qs 'memstall probe: attached.*PSI inputs' "$DATA/tracer.log" &&
			holds_psi_bio "$TRACER_PID"; then
			return 0
		fi
		kill -0 "$TRACER_PID" 2>/dev/null || { log "qoslet memstall exited: $(tail -n 3 "$DATA/tracer.log")"; exit 1; }
		sleep 0.1
	done
	log "qoslet memstall did not attach psi_bio within 60 s: $(tail -n 3 "$DATA/tracer.log")"
	exit 1
}

tracer_stop() {
	kill -TERM "$TRACER_PID" 2>/dev/null || true
	wait "$TRACER_PID" 2>/dev/null || true
	TRACER_PID=""
	rm -rf "$PIN"
}

HZ=$(getconf CLK_TCK)
declare -A R=() # "config,round,field"

# One block: config $1, round $2.
run_block() {
	local c=$1 r=$2 s0 s1 t0 t1 cpu
	[ "$c" = untraced ] || tracer_start
	R[$c,$r,others]=$(psi_bio_progs)
	[ "$c" = untraced ] || R[$c,$r,others]=$((R[$c,$r,others] - 1))
	dd if="$DATA/file" iflag=nocache count=0 status=none
	sync
	s0=$(sectors_read)
	t0=$(date +%s%N)
	# the reader's own CPU time: the children's of the shell that waited for it
	cpu=$(bash -c 'taskset -c 0 dd if="$1" of=/dev/null bs=1M status=none
		awk "{ print \$16 + \$17 }" /proc/$$/stat' sh "$DATA/file")
	t1=$(date +%s%N)
	s1=$(sectors_read)
	[ "$c" = untraced ] || tracer_stop
	R[$c,$r,wall]=$(((t1 - t0) / 1000)) # us
	R[$c,$r,cpu]=$((cpu * 1000000 / HZ)) # us
	# the device's reads are everyone's: at least the file's, more on a busy machine
	R[$c,$r,mib_read]=$(((s1 - s0) * 512 / 1048576))
	if [ "${R[$c,$r,mib_read]}" -lt $((MIB * 95 / 100)) ]; then
		log "round $r: $c: only ${R[$c,$r,mib_read]} MiB came from $DEV (the pages were not dropped)"
		exit 1
	fi
	log "round $r: $c: $((R[$c,$r,wall] / 1000)) ms, CPU $((R[$c,$r,cpu] / 1000)) ms, ${R[$c,$r,mib_read]} MiB from $DEV"
}

LOAD_START=$(cut -d' ' -f1 /proc/loadavg)
JIFFIES_START=$(cpu_jiffies "")
START=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then order=(untraced traced); else order=(traced untraced); fi
	for c in "${order[@]}"; do
		run_block "$c" "$r"
	done
done
LOAD_END=$(cut -d' ' -f1 /proc/loadavg)
# the reads' own CPU is at most one CPU of the run: the rest is everyone else's
BUSY=$(cpu_busy_fraction "$JIFFIES_START" "$(cpu_jiffies "")")

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
values() { # CONFIG FIELD
	for ((r = 1; r <= ROUNDS; r++)); do echo "${R[$1,$r,$2]}"; done
}
paired() { # FIELD: traced / untraced per round
	for ((r = 1; r <= ROUNDS; r++)); do
		awk -v a="${R[traced,$r,$1]}" -v b="${R[untraced,$r,$1]}" 'BEGIN { printf "%.4f\n", (b > 0 ? a / b : 0) }'
	done
}

report() {
	local f wu wt cu ct rw rc pw pc verdict
	wu=$(values untraced wall | median)
	wt=$(values traced wall | median)
	cu=$(values untraced cpu | median)
	ct=$(values traced cpu | median)
	rw=$(awk -v a="$wt" -v b="$wu" 'BEGIN { printf "%.3f", a / b }')
	rc=$(awk -v a="$ct" -v b="$cu" 'BEGIN { if (b > 0) printf "%.3f", a / b; else printf "-" }')
	pw=$(paired wall | median)
	pc=$(paired cpu | median)
	verdict=$(awk -v r="$rw" -v t="$TARGET" 'BEGIN { print r <= t ? "**PASS**" : "**FAIL**" }')
	echo "# bioprobe: a streaming read from disk, traced by the memstall probe and untraced"
	echo
	echo "- Date: $START; kernel $(uname -r); $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); $(nproc) CPUs; tree $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "- Command: \`$CMDLINE\` (\`make bench\` runs it through \`scripts/bench/run.sh\`; \`BIOPROBE_ROUNDS\` sets the rounds)"
	echo "- Read: \`dd bs=1M\` of a $MIB MiB file on /dev/$DEV ($(findmnt -n -o FSTYPE --target "$DATA")), buffered, its pages dropped before each read; on CPU 0"
	echo "- Rounds: $ROUNDS, each running both configurations, the first alternating"
	echo "- 1-minute load average: $LOAD_START at start, $LOAD_END at end; the CPUs $(awk -v b="$BUSY" 'BEGIN { printf "%.0f", 100 * b }')% busy over the run (the reads included)"
	echo
	echo "| Configuration | read wall ms (median) | MB/s | reader CPU ms (median) | min-max wall ms |"
	echo "| --- | ---: | ---: | ---: | --- |"
	for f in untraced traced; do
		local w c lo hi
		w=$(values "$f" wall | median)
		c=$(values "$f" cpu | median)
		lo=$(values "$f" wall | sort -g | head -n 1)
		hi=$(values "$f" wall | sort -g | tail -n 1)
		awk -v f="$f" -v w="$w" -v c="$c" -v lo="$lo" -v hi="$hi" -v m="$MIB" 'BEGIN {
			printf "| %s | %.1f | %.0f | %.1f | %.1f-%.1f |\n", f, w / 1000, m * 1048576 / (w / 1e6) / 1e6, c / 1000, lo / 1000, hi / 1000 }'
	done
	echo
	echo "| Target: traced / untraced | ratio of medians | median of paired rounds | at most | verdict |"
	echo "| --- | ---: | ---: | ---: | --- |"
	echo "| read wall time | $rw | $pw | $TARGET | $verdict |"
	echo "| reader CPU time | $rc | $pc | - | - |"
	echo
	echo "Per round (wall ms / CPU ms / MiB read from the device; other psi_bio programs attached on the machine):"
	echo
	echo "| round | untraced | traced | others |"
	echo "| ---: | --- | --- | ---: |"
	for ((r = 1; r <= ROUNDS; r++)); do
		echo "| $r | $((R[untraced,$r,wall] / 1000)) / $((R[untraced,$r,cpu] / 1000)) / ${R[untraced,$r,mib_read]} | $((R[traced,$r,wall] / 1000)) / $((R[traced,$r,cpu] / 1000)) / ${R[traced,$r,mib_read]} | ${R[untraced,$r,others]} |"
	done
}

if [ -n "$OUT" ]; then
	report | tee "$OUT"
else
	report
fi
