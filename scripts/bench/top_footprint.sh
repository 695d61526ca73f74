#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/bench/top_footprint.sh [-n CGROUPS] [-s SECS] [-r ROUNDS] [-o FILE]
#
# What `qoslet top -j` costs on a node with many live cgroups: N cgroups
# (kubepods-shaped, under a uniquely named parent in the hierarchy holding
# the cpu controller), each running one task that works ~0.2 ms every
# ~20 ms, so every cgroup is active in every interval and shows in every
# report. qoslet top -j 1 starts, gets WARM seconds to load and settle,
# then runs SECS more; CPU is its utime + stime (/proc/PID/stat) over those
# SECS seconds (steady state; start-up CPU is reported apart), peak RSS its
# VmHWM at the end (start-up included). ROUNDS runs; the report gives
# medians and every run.
#
# Targets (issue: per-cgroup CPI, throttling, memory stalls, top): peak RSS
# at most 16 MiB and CPU at most 1% of one core at a 1 s interval.
#
# Cleans up its cgroups and processes (by pid) on exit, also on failure.
# Exit 0 after a measurement, 77 when it cannot run here, 1 on failure.
set -euo pipefail

cd "$(dirname "$0")/../.."
QOSLET=${QOSLET:-build/qoslet}
DUTYCYCLE=${DUTYCYCLE:-build/tests/helpers/dutycycle}
N=500
SECS=30
WARM=5
ROUNDS=3
OUT=""

while getopts "n:s:r:o:" opt; do
	case $opt in
	n) N=$OPTARG ;;
	s) SECS=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*)
		echo "usage: $0 [-n CGROUPS] [-s SECS] [-r ROUNDS] [-o FILE]" >&2
		exit 2
		;;
	esac
done

[ "$(id -u)" = 0 ] || {
	echo "SKIP: needs root"
	exit 77
}
[ -x "$QOSLET" ] && [ -x "$DUTYCYCLE" ] || {
	echo "SKIP: build first (make $QOSLET $DUTYCYCLE)"
	exit 77
}

# The hierarchy qoslet names cgroups by: v2 if it has cpu, else v1 cpu.
if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	ROOT=/sys/fs/cgroup
else
	ROOT=/sys/fs/cgroup/cpu
fi
[ -d "$ROOT" ] || {
	echo "SKIP: no cgroup hierarchy with the cpu controller"
	exit 77
}

PARENT=""
PIN=/sys/fs/bpf/qoslet-bench-top-$$
PIDS=()
QPID=""
cleanup() {
	set +e
	[ -n "$QPID" ] && kill "$QPID" 2>/dev/null && wait "$QPID" 2>/dev/null
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "$PARENT" ] && find "$PARENT" -depth -type d -exec rmdir {} \; 2>/dev/null
	rm -rf "$PIN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir "$ROOT/qoslet-bench-top-$$"
PARENT=$ROOT/qoslet-bench-top-$$
total_secs=$(((SECS + WARM) * ROUNDS + 30))
for ((i = 0; i < N; i++)); do
	cg=$PARENT/kubepods/burstable/pod$(printf '%08x' "$i")-bench/c$i
	mkdir -p "$cg"
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" 200 20000 "$3"' sh "$cg" "$DUTYCYCLE" \
		"$total_secs" &
	PIDS+=($!)
done
sleep 2

ticks=$(getconf CLK_TCK)
rss=()
cpu=()
rows=()
for ((r = 1; r <= ROUNDS; r++)); do
	"$QOSLET" top -j --pin-dir "$PIN" 1 >"/tmp/qoslet-bench-top.$$" 2>/dev/null &
	QPID=$!
	sleep "$WARM"
	read -r -a stat <"/proc/$QPID/stat"
	warm=$((stat[13] + stat[14]))
	sleep "$SECS"
	read -r -a stat <"/proc/$QPID/stat"
	hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$QPID/status")
	used=$((stat[13] + stat[14] - warm))
	pct=$(awk -v t="$used" -v hz="$ticks" -v s="$SECS" 'BEGIN { printf "%.3f", 100 * t / hz / s }')
	startup=$(awk -v t="$warm" -v hz="$ticks" 'BEGIN { printf "%.2f", t / hz }')
	seen=$(tail -n 2 "/tmp/qoslet-bench-top.$$" | sed -n 1p | jq '.cgroups | length')
	kill "$QPID"
	wait "$QPID" || true
	QPID=""
	rss+=("$hwm")
	cpu+=("$pct")
	rows+=("| $r | $((hwm / 1024)).$(((hwm % 1024) * 10 / 1024)) MiB | $pct% | $startup s | $seen |")
done
rm -f "/tmp/qoslet-bench-top.$$"

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m_rss=$(median "${rss[@]}")
m_cpu=$(median "${cpu[@]}")
rss_ok=$([ "$m_rss" -le $((16 * 1024)) ] && echo pass || echo FAIL)
cpu_ok=$(awk -v c="$m_cpu" 'BEGIN { print (c <= 1.0) ? "pass" : "FAIL" }')

report() {
	cat <<EOF
# qoslet top footprint

Command: \`scripts/bench/top_footprint.sh -n $N -s $SECS -r $ROUNDS\` (part of \`make bench\`)

- Date: $(date -u +%Y-%m-%dT%H:%MZ); kernel $(uname -r); $(nproc) CPUs; $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
- Load: $N cgroups under $ROOT (kubepods-shaped), one task each working 0.2 ms every
  20 ms, so every cgroup is active in every 1 s report.
- Measured: \`qoslet top -j 1\`, every probe attached: after $WARM s of start-up, CPU is
  (utime + stime) / wall time over the next $SECS s; peak RSS is VmHWM at the end,
  start-up (kernel BTF parsing, program loading) included.

| | median | target | verdict |
| --- | --- | --- | --- |
| peak RSS | $((m_rss / 1024)).$(((m_rss % 1024) * 10 / 1024)) MiB | at most 16 MiB | $rss_ok |
| CPU | $m_cpu% of one core | at most 1% | $cpu_ok |

For reference, koordlet uses about 350 MiB and half a core on a large node (its own
issue tracker); it is not run here.

| run | peak RSS | CPU | start-up CPU | cgroups in the last report |
| --- | --- | --- | --- | --- |
$(printf '%s\n' "${rows[@]}")
EOF
}
report
[ -z "$OUT" ] || report >"$OUT"
