#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/bench/agent_footprint.sh [-n "PODS..."] [-s SECS] [-w SECS] [-r ROUNDS] [-t PODS] [-u WORK_US] [-b BASELINE_QOSLET] [-q SECS] [-k DIR] [-m NOTE] [-o FILE]
#
# What `qoslet agent` costs on a node full of pods (issue 11: "One collector:
# the node read once per tick, at 1% of a core for 500 pods"), and what
# `qoslet top -j 1` costs on the same node.
#
# The node: under a uniquely named parent in the hierarchy holding the cpu
# controller (v2 if cgroup2 has cpu; else v1, where the same directories are
# made in the cpu, cpuacct, cpuset and memory hierarchies, as the kubelet
# does, with each new cpuset taking its parent's cpus and mems), a
# kubelet-shaped tree with the cgroupfs driver's layout:
#   PARENT/kubepods/besteffort/pod<uid>/<64-hex container id>
# one container per pod, each running one process (tests/helpers/dutycycle)
# that wakes 10 times a second and works WORK_US each time. Weights are the
# kubelet's: cpu.shares 2 (v2: cpu.weight 1) for the besteffort tier, its
# pods and containers. The tree grows from the smallest pod count to the
# largest and is reused across rounds and binaries: 1000 pods are 1000
# processes and 2000 cgroups per hierarchy, too many to rebuild each run.
#
# The agent runs with its embedded defaults plus only what the bench needs
# (the report prints the file): cgroup_root PARENT/kubepods, dry_run (so it
# writes no cgroup file), its own state_dir and --pin-dir, and http.port a
# free port (the endpoint stays on, as shipped; another agent on this machine
# may hold 9464). Like a Prometheus server, the bench scrapes /metrics every
# 10 s; the ticks come from there (qoslet_agent_ticks_total). Decisions go to
# stdout, into a file, as in a DaemonSet.
#
# Per run: the process gets WARM seconds from its start (start-up: kernel
# BTF, program loading, the first ticks), then SECS measured seconds:
#   CPU          (utime + stime of /proc/PID/stat) / wall time over SECS
#   peak RSS     VmHWM at the end (start-up included)
#   steady RSS   VmRSS at the end; also at the start of the window, and
#                the min, median and max of the per-second samples in it
#                (the agent's RSS swings by megabytes from one tick to the
#                next: the target is judged on the max)
#   cost         CPU seconds / ticks / pods, in us per pod per tick (agent)
# `qoslet top -j 1` is run the same way on the tree of TOP_PODS pods.
# ROUNDS rounds; with -b both binaries run in every round, interleaved and
# in alternating order (noise-fair). Medians over rounds; every run listed.
#
# Targets (issue 11), judged on the binary under test ($QOSLET): at 500 pods
# the agent uses at most 1% of one core and 12 MiB steady RSS (the largest
# per-second sample of the window); top -j at
# most 12 MiB peak RSS; the cost per pod per tick does not grow with the
# pods (at the largest count at most 1.2x the smallest).
#
#   -n PODS     pod counts (default "100 500 1000"), run in ascending order
#   -s SECS     measured seconds per run (default 30)
#   -w SECS     warm-up seconds from the start of a run (default 15)
#   -r ROUNDS   rounds (default 2)
#   -t PODS     the pod count at which top -j is measured (default 500;
#               0 or a count not in -n: not measured)
#   -u WORK_US  work per wake-up (default 50: 1000 pods use half a CPU)
#   -b QOSLET   a second binary, the baseline: measured beside $QOSLET
#   -q SECS     before each run, wait up to SECS for a quiet machine: less
#               than 0.25 CPUs busy outside the pods over 2 s, and fewer than
#               100 other cgroups in the cpu hierarchy (default 0: no wait;
#               every run reports foreign CPU use and cgroups anyway)
#   -k DIR      keep the raw data in DIR (logs, per-second samples, the last
#               /metrics of each agent run)
#   -m NOTE     a paragraph for the top of the report
#   -o FILE     also write the markdown report to FILE
#
# With the defaults a run takes about 7 minutes (8 runs of ~50 s and the
# tree); with -b twice the runs, about 14 minutes; plus the quiet waits.
#
# Environment: QOSLET (default build/qoslet), DUTYCYCLE (default
# build/tests/helpers/dutycycle). QOSLET_BTF_DIR is set to a directory of
# the bench's own, one per binary.
#
# Cleans up on exit, also on failure or signal: kills the processes it
# started (by pid), removes its cgroups depth-first in every hierarchy, its
# pin directory and its temporary directory. Never writes a file of a cgroup
# it did not create. Exit 0 after a measurement, 77 when it cannot run here
# (SKIP: reason), 1 on failure, 2 on bad usage.
set -euo pipefail

cd "$(dirname "$0")/../.."
QOSLET=${QOSLET:-build/qoslet}
DUTYCYCLE=${DUTYCYCLE:-build/tests/helpers/dutycycle}
PODS="100 500 1000"
SECS=30
WARM=15
ROUNDS=2
TOP_PODS=500
WORK_US=50
PERIOD_US=100000 # 10 wake-ups a second
BASE=""
KEEP=""
OUT=""
SCRAPE_EVERY=10
TARGET_CPU=1.0        # % of one core, agent at 500 pods
TARGET_RSS=$((12 * 1024)) # KiB: agent steady RSS at 500 pods, top -j peak RSS
TARGET_GROWTH=1.2     # cost per pod per tick, largest count / smallest

usage() {
	sed -n '4p' "$0" | sed 's/^# /usage: /' >&2
	exit 2
}

NOTE=""
QUIET_WAIT=0
QUIET_CPUS=0.25   # foreign CPU use under which the machine counts as quiet
QUIET_CGROUPS=100 # ... and fewer other cgroups than this in the cpu hierarchy
# The command for the report: what changes the measurement (not -k, -m, -o).
CMDLINE=scripts/bench/agent_footprint.sh
[ "$QOSLET" = build/qoslet ] || CMDLINE="QOSLET=$(printf '%q' "$QOSLET") $CMDLINE"
while getopts "n:s:w:r:t:u:b:q:k:m:o:h" opt; do
	case $opt in
	[kmo]) ;;
	*) if [[ ${OPTARG:-} =~ ^[A-Za-z0-9_./-]+$ ]]; then CMDLINE+=" -$opt $OPTARG"; else CMDLINE+=" -$opt '${OPTARG:-}'"; fi ;;
	esac
	case $opt in
	n) PODS=$OPTARG ;;
	s) SECS=$OPTARG ;;
	w) WARM=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	t) TOP_PODS=$OPTARG ;;
	u) WORK_US=$OPTARG ;;
	b) BASE=$OPTARG ;;
	q) QUIET_WAIT=$OPTARG ;;
	k) KEEP=$OPTARG ;;
	m) NOTE=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
for v in $PODS "$SECS" "$WARM" "$ROUNDS" "$TOP_PODS" "$WORK_US" "$QUIET_WAIT"; do
	[[ $v =~ ^[0-9]+$ ]] || usage
done
# Ascending, without repeats: the tree only grows.
# shellcheck disable=SC2086 # a list of numbers
read -r -a PODS <<<"$(printf '%s\n' $PODS | sort -nu | tr '\n' ' ')"
if [ "${#PODS[@]}" = 0 ] || [ "${PODS[0]}" = 0 ] || [ "$SECS" -lt 2 ] || [ "$WARM" -lt 1 ] ||
	[ "$ROUNDS" -lt 1 ]; then
	usage
fi
[ "$WORK_US" -lt "$PERIOD_US" ] || usage

log() {
	echo "agent_footprint: $*" >&2
}

[ "$(id -u)" = 0 ] || {
	echo "SKIP: needs root (loads BPF programs, creates cgroups)"
	exit 77
}
for b in "$QOSLET" ${BASE:+"$BASE"} "$DUTYCYCLE"; do
	[ -x "$b" ] || {
		echo "SKIP: $b is missing (make build/qoslet $DUTYCYCLE)"
		exit 77
	}
done
for c in curl jq; do
	command -v "$c" >/dev/null || {
		echo "SKIP: needs $c"
		exit 77
	}
done

# ------------------------------------------------------------- hierarchies

# HIER: the mount points the tree is made in; the first one is the hierarchy
# qoslet names cgroups by (v2 if it has cpu, else v1 cpu).
V2=0
HIER=()
v1_mount() {
	awk -v c="$1" '$3 == "cgroup" { n = split($4, o, ",")
		for (i = 1; i <= n; i++) if (o[i] == c) { print $2; exit } }' /proc/mounts
}
v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$v2" ] && grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null; then
	V2=1
	HIER=("$v2")
else
	m=$(v1_mount cpu)
	[ -n "$m" ] || {
		echo "SKIP: no cgroup hierarchy with the cpu controller"
		exit 77
	}
	HIER=("$m")
	for c in cpuacct cpuset memory; do
		m=$(v1_mount "$c")
		[ -n "$m" ] || continue
		for h in "${HIER[@]}"; do
			[ "$h" != "$m" ] || continue 2
		done
		HIER+=("$m")
	done
fi
ROOT=${HIER[0]}
NAME=qoslet-bench-agent-$$
REL=$NAME/kubepods

# v2: enables for the children of $1 what the agent reads (cpu, cpuset,
# memory), each one its parent gave it.
v2_enable() {
	local have c
	read -r have <"$1/cgroup.controllers" || true
	for c in cpu cpuset memory; do
		[[ " $have " != *" $c "* ]] || echo "+$c" >"$1/cgroup.subtree_control"
	done
}

# A new v1 cpuset has no CPUs and no memory nodes: it takes its parent's.
cpuset_inherit() {
	local v
	if [ "$V2" = 1 ] || [ ! -e "$1/cpuset.cpus" ]; then
		return 0
	fi
	read -r v <"$1/../cpuset.cpus"
	echo "$v" >"$1/cpuset.cpus"
	read -r v <"$1/../cpuset.mems"
	echo "$v" >"$1/cpuset.mems"
}

# ------------------------------------------------------------- cleanup

MADE=()      # parents created, one per hierarchy
PIDS=()      # the pods' processes
RUN_PID=""   # the agent or top -j being measured
PIN=/sys/fs/bpf/$NAME
TMP=""
cleanup() {
	local rc=$? p m i
	set +e
	trap - EXIT INT TERM HUP
	if [ -n "$RUN_PID" ]; then
		kill -TERM "$RUN_PID" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			kill -0 "$RUN_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$RUN_PID" 2>/dev/null
		wait "$RUN_PID" 2>/dev/null
	fi
	[ "${#PIDS[@]}" -eq 0 ] || kill -KILL "${PIDS[@]}" 2>/dev/null
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	for m in "${MADE[@]}"; do
		find "$m" -depth -type d -exec rmdir {} + 2>/dev/null
		[ ! -d "$m" ] || log "WARNING: could not remove $m"
	done
	rm -rf "$PIN"
	[ -z "$TMP" ] || rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

TMP=$(mktemp -d /tmp/qoslet-bench-agent.XXXXXX)
# The cut-down kernel BTF (qoslet(8), KERNEL BTF): the agent runs first and
# writes it, as on a node, and `top -j` loads through it; the bench's, not /run's,
# and one directory per binary: each removes the copies another version wrote,
# so with a shared one every top -j would cut its own and peak doing so.
BTF_DIR=$TMP/btf
[ ! -e "$PIN" ] || {
	echo "agent_footprint: $PIN already exists" >&2
	exit 1
}
for h in "${HIER[@]}"; do
	mkdir "$h/$NAME"
	MADE+=("$h/$NAME")
	cpuset_inherit "$h/$NAME"
done
if [ "$V2" = 1 ]; then
	grep -qw cpu "$ROOT/$NAME/cgroup.controllers" || {
		echo "SKIP: the cpu controller is not enabled below $ROOT"
		exit 77
	}
	v2_enable "$ROOT/$NAME"
fi

# ------------------------------------------------------------- the tree

CPU_KNOB=cpu.shares BE_WEIGHT=2
[ "$V2" = 0 ] || CPU_KNOB=cpu.weight BE_WEIGHT=1
# mkcg REL [WEIGHT]: REL below the parent, in every hierarchy; its cpu weight.
mkcg() {
	local h d
	for h in "${HIER[@]}"; do
		d=$h/$NAME/$1
		mkdir "$d"
		if [ "$V2" = 1 ]; then
			# Controllers are enabled level by level; containers are leaves.
			[[ $1 == */pod*/* ]] || v2_enable "$d"
		else
			cpuset_inherit "$d"
		fi
	done
	[ -z "${2:-}" ] || echo "$2" >"$ROOT/$NAME/$1/$CPU_KNOB"
}

# The pods' processes live through every run; they are killed at the end.
HAVE=0
pods_secs() {
	local runs
	runs=$((${#PODS[@]} * ROUNDS + ROUNDS))
	[ -z "$BASE" ] || runs=$((runs * 2))
	echo $((runs * (WARM + SECS + QUIET_WAIT + 30) + 120))
}
LIFE=$(pods_secs)
[ "$LIFE" -le 3600 ] || {
	echo "agent_footprint: a run this long (~$LIFE s) outlives dutycycle's 1 h limit: fewer rounds or counts" >&2
	exit 2
}
grow_tree() {
	local n=$1 i uid cid rel h dirs
	local t0=$EPOCHREALTIME
	if [ "$HAVE" = 0 ]; then
		mkcg kubepods
		[ "$V2" = 1 ] || echo $(($(nproc) * 1024)) >"$ROOT/$NAME/kubepods/cpu.shares"
		mkcg kubepods/besteffort "$BE_WEIGHT"
	fi
	for ((i = HAVE; i < n; i++)); do
		printf -v uid '%08x-%04x-4%03x-8%03x-%012x' "$$" $((i >> 16)) $((i >> 4 & 0xfff)) $((i & 0xfff)) "$i"
		printf -v cid '%08x%056x' "$i" "$$"
		rel=kubepods/besteffort/pod$uid
		mkcg "$rel" "$BE_WEIGHT"
		mkcg "$rel/$cid" "$BE_WEIGHT"
		dirs=()
		for h in "${HIER[@]}"; do dirs+=("$h/$NAME/$rel/$cid"); done
		(
			for d in "${dirs[@]}"; do echo "$BASHPID" >"$d/cgroup.procs"; done
			exec "$DUTYCYCLE" "$WORK_US" "$PERIOD_US" "$LIFE"
		) &
		PIDS+=($!)
	done
	HAVE=$n
	sleep 1
	# Every pod's container holds its process, in every hierarchy.
	local bad=0 p
	for ((i = 0; i < n; i++)); do
		kill -0 "${PIDS[i]}" 2>/dev/null || bad=$((bad + 1))
	done
	for h in "${HIER[@]}"; do
		for d in "$h/$NAME"/kubepods/besteffort/pod*/*/; do
			read -r p <"$d/cgroup.procs" || bad=$((bad + 1))
		done
	done
	[ "$bad" = 0 ] || {
		echo "agent_footprint: $bad pods without their process" >&2
		exit 1
	}
	log "$n pods ready ($(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s to grow the tree)"
}

# ------------------------------------------------------------- measuring

HZ=$(getconf CLK_TCK)
now_us() { echo "${EPOCHREALTIME/./}"; }
# cpu_ticks PID: utime + stime, in clock ticks.
cpu_ticks() {
	local s f
	read -r s <"/proc/$1/stat" || return 1
	read -r -a f <<<"${s##*) }"
	echo $((f[11] + f[12]))
}
# status_kib PID FIELD: VmRSS or VmHWM in KiB.
status_kib() {
	local k v _
	while read -r k v _; do
		[ "$k" = "$2:" ] && { echo "$v"; return 0; }
	done <"/proc/$1/status"
	return 1
}
# sleep_until US: sleeps until that EPOCHREALTIME (in us).
sleep_until() {
	local d=$(($1 - $(now_us)))
	[ "$d" -gt 0 ] || return 0
	printf -v d '%d.%06d' $((d / 1000000)) $((d % 1000000))
	sleep "$d"
}
# A TCP port nothing listens on (checked in /proc/net/tcp and tcp6).
free_port() {
	local p hex
	for ((p = 20000 + RANDOM % 20000; ; p++)); do
		printf -v hex ':%04X' "$p"
		awk -v h="$hex" '$4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
			/proc/net/tcp /proc/net/tcp6 2>/dev/null || { echo "$p"; return 0; }
	done
}
# CPU time of the pods (the tree's parent), in ns.
TREE_USAGE=""
if [ "$V2" = 1 ]; then
	TREE_USAGE=$ROOT/$NAME/cpu.stat
else
	for h in "${HIER[@]}"; do
		[ ! -e "$h/$NAME/cpuacct.usage" ] || TREE_USAGE=$h/$NAME/cpuacct.usage
	done
fi
tree_ns() {
	local k v
	if [ -z "$TREE_USAGE" ]; then
		echo 0
	elif [ "$V2" = 1 ]; then
		while read -r k v; do
			[ "$k" != usage_usec ] || { echo $((v * 1000)); return 0; }
		done <"$TREE_USAGE"
	else
		read -r v <"$TREE_USAGE"
		echo "$v"
	fi
}
# Busy CPU time of the node (user, nice, system, irq, softirq), in ns.
node_ns() {
	local user nice system irq softirq
	read -r _ user nice system _ _ irq softirq _ </proc/stat
	echo $(((user + nice + system + irq + softirq) * (1000000000 / HZ)))
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
# Waits up to QUIET_WAIT s until the CPUs outside the pods are quiet and the
# cpu hierarchy holds few other cgroups (others' tests: the probes see their
# tasks too, and the agent and top report them); sets QUIET to what it saw.
QUIET=""
wait_quiet() {
	local end=$((SECONDS + QUIET_WAIT)) n0 t0 w0 n1 t1 w1 f others
	while :; do
		n0=$(node_ns) t0=$(tree_ns) w0=$(now_us)
		sleep 2
		n1=$(node_ns) t1=$(tree_ns) w1=$(now_us)
		f=$(awk -v b="$((n1 - n0 - t1 + t0))" -v us="$((w1 - w0))" 'BEGIN { f = b / 1e3 / us; printf "%.2f", f < 0 ? 0 : f }')
		others=$(find "$ROOT" -mindepth 1 -path "$ROOT/$NAME" -prune -o -type d -print 2>/dev/null | wc -l)
		QUIET="$f CPUs busy outside the pods, $others other cgroups"
		if awk -v f="$f" -v m="$QUIET_CPUS" 'BEGIN { exit !(f < m) }' && [ "$others" -lt "$QUIET_CGROUPS" ]; then
			return 0
		fi
		[ "$SECONDS" -lt "$end" ] || return 1
	done
}
qemu_running() {
	if pgrep '^qemu' >/dev/null; then echo qemu; fi
}

# The agent's config: the embedded defaults plus these (printed in the report).
agent_config() { # STATE_DIR PORT
	jq -cn --arg root "$REL" --arg state "$1" --argjson port "$2" \
		'{cgroup_root: $root, dry_run: true, state_dir: $state, http: {port: $port}}'
}

declare -A R=() # "kind,label,pods,round,field" -> value

# scrape PORT FILE: the agent's /metrics into FILE; prints ticks (or nothing).
scrape() {
	curl -s -m 5 -o "$2" "http://127.0.0.1:$1/metrics" 2>/dev/null || return 0
	awk '$1 == "qoslet_agent_ticks_total" { print $2; exit }' "$2"
}

# run_one KIND LABEL BIN PODS ROUND: KIND is agent or top.
run_one() {
	local kind=$1 label=$2 bin=$3 n=$4 r=$5
	local dir=$TMP/$kind.$label.$n.$r port="" pin=$PIN/${kind}_${label}_${n}_$r
	local t0 k ready="" rss cpu0 cpu1 tk0="" tk1="" tk w0 w1 hwm rss0 rssend
	local loopd=() ms win=() node0 node1 tree0 tree1
	mkdir -p "$dir"
	if [ "$QUIET_WAIT" -gt 0 ] && ! wait_quiet; then
		log "pods $n, round $r, $label: $kind: not quiet after $QUIET_WAIT s ($QUIET); measuring anyway"
	fi
	if [ "$kind" = agent ]; then
		port=$(free_port)
		agent_config "$dir/state" "$port" >"$dir/config.json"
		chmod 600 "$dir/config.json"
		t0=$(now_us)
		QOSLET_BTF_DIR=$BTF_DIR.$label "$bin" agent --config "$dir/config.json" --pin-dir "$pin" \
			>"$dir/decisions" 2>"$dir/log" &
	else
		t0=$(now_us)
		QOSLET_BTF_DIR=$BTF_DIR.$label "$bin" top -j --pin-dir "$pin" 1 >"$dir/out" 2>"$dir/log" &
	fi
	RUN_PID=$!
	# Ready: the agent answers /readyz (its first tick ran); top printed a line.
	for ((k = 0; k < 600; k++)); do
		kill -0 "$RUN_PID" 2>/dev/null || {
			echo "agent_footprint: $kind ($bin) exited at start: $(tail -n 3 "$dir/log")" >&2
			exit 1
		}
		if [ "$kind" = agent ]; then
			[ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" 2>/dev/null)" != 200 ] || break
		else
			[ ! -s "$dir/out" ] || break
		fi
		sleep 0.1
	done
	[ "$k" -lt 600 ] || {
		echo "agent_footprint: $kind ($bin) not ready after 60 s: $(tail -n 3 "$dir/log")" >&2
		exit 1
	}
	ready=$(($(now_us) - t0))
	R[$kind,$label,$n,$r,ready_s]=$(awk -v u="$ready" 'BEGIN { printf "%.1f", u / 1e6 }')
	R[$kind,$label,$n,$r,ready_cpu]=$(awk -v t="$(cpu_ticks "$RUN_PID")" -v hz="$HZ" 'BEGIN { printf "%.2f", t / hz }')
	# The window: from WARM s after the start (later if start-up took longer).
	local kw=$WARM
	[ $((kw * 1000000)) -gt "$ready" ] || kw=$((ready / 1000000 + 1))
	: >"$dir/samples"
	for ((k = ready / 1000000 + 1; k <= kw + SECS; k++)); do
		sleep_until $((t0 + k * 1000000))
		kill -0 "$RUN_PID" 2>/dev/null || {
			echo "agent_footprint: $kind ($bin) died: $(tail -n 3 "$dir/log")" >&2
			exit 1
		}
		rss=$(status_kib "$RUN_PID" VmRSS)
		tk=""
		if [ -n "$port" ] && { [ $(((k - kw) % SCRAPE_EVERY)) = 0 ] || [ "$k" = $((kw + SECS)) ]; }; then
			tk=$(scrape "$port" "$dir/metrics")
			ms=$(awk '$1 == "qoslet_agent_loop_duration_seconds" { printf "%.1f", $2 * 1000; exit }' "$dir/metrics")
			[ -z "$ms" ] || [ "$k" -lt "$kw" ] || loopd+=("$ms")
		fi
		echo "$k $rss ${tk:--}" >>"$dir/samples"
		if [ "$k" = "$kw" ]; then
			cpu0=$(cpu_ticks "$RUN_PID") w0=$(now_us) rss0=$rss tk0=$tk
			node0=$(node_ns) tree0=$(tree_ns)
		fi
		[ "$k" -lt "$kw" ] || win+=("$rss")
	done
	cpu1=$(cpu_ticks "$RUN_PID") w1=$(now_us) rssend=$rss tk1=$tk
	node1=$(node_ns) tree1=$(tree_ns)
	hwm=$(status_kib "$RUN_PID" VmHWM)
	if [ "$kind" = agent ]; then
		R[$kind,$label,$n,$r,metrics_kib]=$(($(stat -c %s "$dir/metrics") / 1024))
		grep -o 'cgroup="[^"]*"' "$dir/metrics" | sed 's/^cgroup="//; s/"$//' | sort -u >"$dir/seen" || true
		R[$kind,$label,$n,$r,loop_ms]=$(printf '%s\n' "${loopd[@]}" | median)
		R[$kind,$label,$n,$r,ticks]=NA
		[ -z "$tk0" ] || [ -z "$tk1" ] || R[$kind,$label,$n,$r,ticks]=$((tk1 - tk0))
	else
		tail -n 2 "$dir/out" | sed -n 1p | jq -r '.cgroups[].path' | sort -u >"$dir/seen"
	fi
	# The cgroups it reported, and how many of them are not the tree's: other
	# cgroups active on the machine add to the cost of both.
	read -r "R[$kind,$label,$n,$r,cgroups]" "R[$kind,$label,$n,$r,outside]" < <(
		awk -v t="/$NAME/" '{ n++ } $0 != "/" && index($0 "/", t) != 1 { o++ } END { print n + 0, o + 0 }' "$dir/seen")
	kill -TERM "$RUN_PID"
	local rc=0
	wait "$RUN_PID" || rc=$?
	RUN_PID=""
	[ "$rc" = 0 ] || [ "$kind" = top ] || {
		echo "agent_footprint: the agent ($bin) exited with status $rc: $(tail -n 3 "$dir/log")" >&2
		exit 1
	}
	rm -rf "$pin"
	R[$kind,$label,$n,$r,hwm]=$hwm
	R[$kind,$label,$n,$r,rss0]=$rss0
	R[$kind,$label,$n,$r,rss]=$rssend
	local k3="$kind,$label,$n,$r"
	read -r "R[$k3,rssmin]" "R[$k3,rssmed]" "R[$k3,rssmax]" < <(
		printf '%s\n' "${win[@]}" | sort -n | awk '{ v[++n] = $1 } END { print v[1], v[int((n + 1) / 2)], v[n] }')
	# CPUs used by the pods, and by anything else (the measured process apart).
	R[$kind,$label,$n,$r,pods_cpus]=$(awk -v t="$((tree1 - tree0))" -v us="$((w1 - w0))" 'BEGIN { printf "%.2f", t / 1e3 / us }')
	R[$kind,$label,$n,$r,foreign]=$(awk -v b="$((node1 - node0))" -v t="$((tree1 - tree0))" -v c="$((cpu1 - cpu0))" \
		-v hz="$HZ" -v us="$((w1 - w0))" 'BEGIN { f = (b - t - c * 1e9 / hz) / 1e3 / us; printf "%.2f", f < 0 ? 0 : f }')
	R[$kind,$label,$n,$r,cpu]=$(awk -v t="$((cpu1 - cpu0))" -v hz="$HZ" -v us="$((w1 - w0))" \
		'BEGIN { printf "%.3f", 100 * t / hz / (us / 1e6) }')
	R[$kind,$label,$n,$r,noise]=$(qemu_running)
	if [ "$kind" = agent ]; then
		R[$kind,$label,$n,$r,cost]=$(awk -v t="$((cpu1 - cpu0))" -v hz="$HZ" -v k="${R[$kind,$label,$n,$r,ticks]}" -v n="$n" \
			'BEGIN { if (k ~ /^[0-9]+$/ && k > 0) printf "%.2f", 1e6 * t / hz / k / n; else print "NA" }')
		R[$kind,$label,$n,$r,all_ticks]=$(sed -n 's/.*stopping after \([0-9]*\) ticks.*/\1/p' "$dir/log")
		R[$kind,$label,$n,$r,decisions]=$(wc -l <"$dir/decisions")
		R[$kind,$label,$n,$r,units]=$(sed -n 's/.*agent: \([0-9]*\) units (.*/\1/p' "$dir/log" | head -n 1)
	fi
	if [ -n "$KEEP" ]; then
		mkdir -p "$KEEP"
		rm -rf "$dir/state"
		cp -r "$dir" "$KEEP/"
	fi
	rm -rf "$dir"
	log "pods $n, round $r, $label: $kind: CPU ${R[$kind,$label,$n,$r,cpu]}%, peak $(mib "$hwm") MiB, RSS $(mib "$rssend") MiB (window $(mib "${R[$kind,$label,$n,$r,rssmin]}")-$(mib "${R[$kind,$label,$n,$r,rssmax]}"))${R[$kind,$label,$n,$r,cost]:+, ${R[$kind,$label,$n,$r,cost]} us/pod/tick over ${R[$kind,$label,$n,$r,ticks]} ticks}, pods ${R[$kind,$label,$n,$r,pods_cpus]} CPUs, foreign ${R[$kind,$label,$n,$r,foreign]} CPUs${R[$kind,$label,$n,$r,noise]:+ (qemu running)}"
}

# Median of the numbers on stdin (NA when none).
median() {
	awk '$1 != "NA" && $1 != ""' | sort -g | awk '{ v[++n] = $1 } END {
		if (!n) { print "NA"; exit }
		printf "%.6g\n", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
# med KIND LABEL PODS FIELD: the median over rounds.
med() {
	local r
	for ((r = 1; r <= ROUNDS; r++)); do echo "${R[$1,$2,$3,$r,$4]:-NA}"; done | median
}

# ------------------------------------------------------------- the runs

LABELS=(new)
declare -A BIN=([new]=$QOSLET)
declare -A REV=([new]=$("$QOSLET" --version | awk '{ print $NF }'))
if [ -n "$BASE" ]; then
	LABELS=(base new)
	BIN[base]=$BASE
	REV[base]=$("$BASE" --version | awk '{ print $NF }')
fi
NAMEOF() { # LABEL: how the report names a binary
	if [ "$1" = base ]; then echo "before (${REV[base]})"; else echo "${REV[new]}"; fi
}

LOAD_START=$(uptime | sed 's/^ *//')
DATE=$(date -u +%Y-%m-%dT%H:%MZ)
T_START=$SECONDS
log "pods ${PODS[*]}, $ROUNDS rounds of ${WARM} s + ${SECS} s, binaries: ${LABELS[*]}; load: $LOAD_START"
for n in "${PODS[@]}"; do
	grow_tree "$n"
	for ((r = 1; r <= ROUNDS; r++)); do
		order=("${LABELS[@]}")
		# Alternate which binary goes first.
		[ $((r % 2)) = 1 ] || [ "${#LABELS[@]}" = 1 ] || order=("${LABELS[1]}" "${LABELS[0]}")
		for l in "${order[@]}"; do
			run_one agent "$l" "${BIN[$l]}" "$n" "$r"
		done
		[ "$n" = "$TOP_PODS" ] || continue
		for l in "${order[@]}"; do
			run_one top "$l" "${BIN[$l]}" "$n" "$r"
		done
	done
done
LOAD_END=$(uptime | sed 's/^ *//')
ELAPSED=$((SECONDS - T_START))

# ------------------------------------------------------------- the report

fmt_mib() { if [ "$1" = NA ]; then echo NA; else echo "$(mib "$1") MiB"; fi; }
# pass A B: "pass" when A <= B, "n/a" when either is not a number.
pass() {
	awk -v a="$1" -v b="$2" 'BEGIN { n = "^[0-9]+([.][0-9]+)?$"
		if (a !~ n || b !~ n) print "n/a"; else print (a + 0 <= b + 0) ? "pass" : "FAIL" }'
}
# fix PRECISION VALUE: a number with that many decimals, or as it is.
fix() {
	awk -v p="$1" -v v="$2" 'BEGIN { if (v ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) printf "%.*f", p, v; else printf "%s", v }'
}
# rss3 KIND LABEL PODS: "min / median / max MiB" of the window, medians over rounds.
rss3() {
	echo "$(mib "$(med "$1" "$2" "$3" rssmin)") / $(mib "$(med "$1" "$2" "$3" rssmed)") / $(mib "$(med "$1" "$2" "$3" rssmax)") MiB"
}

agent_rows() {
	local n l
	for n in "${PODS[@]}"; do
		for l in "${LABELS[@]}"; do
			printf '| %s | %s | %s%% | %s us | %s | %s | %s | %s | %s | %s ms | %s s | %s KiB |\n' "$n" "$(NAMEOF "$l")" \
				"$(fix 3 "$(med agent "$l" "$n" cpu)")" "$(fix 2 "$(med agent "$l" "$n" cost)")" \
				"$(fmt_mib "$(med agent "$l" "$n" hwm)")" "$(fmt_mib "$(med agent "$l" "$n" rss)")" \
				"$(rss3 agent "$l" "$n")" "$(fix 0 "$(med agent "$l" "$n" ticks)")" \
				"$(fix 2 "$(med agent "$l" "$n" pods_cpus)")" "$(fix 1 "$(med agent "$l" "$n" loop_ms)")" \
				"$(fix 2 "$(med agent "$l" "$n" ready_cpu)")" "$(fix 0 "$(med agent "$l" "$n" metrics_kib)")"
		done
	done
}
top_rows() {
	local l
	for l in "${LABELS[@]}"; do
		printf '| %s | %s | %s | %s | %s%% | %s s | %s |\n' "$(NAMEOF "$l")" \
			"$(fmt_mib "$(med top "$l" "$TOP_PODS" hwm)")" "$(fmt_mib "$(med top "$l" "$TOP_PODS" rss)")" \
			"$(rss3 top "$l" "$TOP_PODS")" "$(fix 3 "$(med top "$l" "$TOP_PODS" cpu)")" \
			"$(fix 2 "$(med top "$l" "$TOP_PODS" ready_cpu)")" "$(fix 0 "$(med top "$l" "$TOP_PODS" cgroups)") ($(fix 0 "$(med top "$l" "$TOP_PODS" outside)"))"
	done
}
run_rows() {
	local kind n l r k
	for n in "${PODS[@]}"; do
		for ((r = 1; r <= ROUNDS; r++)); do
			for kind in agent top; do
				for l in "${LABELS[@]}"; do
					k=$kind,$l,$n,$r
					[ -n "${R[$k,cpu]:-}" ] || continue
					printf '| %s | %s | %s | %s | %s%% | %s | %s | %s | %s | %s | %s - %s | %s s / %s s | %s | %s (%s) | %s | %s | %s%s |\n' \
						"$n" "$r" "$kind" "$(NAMEOF "$l")" "${R[$k,cpu]}" "${R[$k,cost]:--}" "${R[$k,ticks]:--}" \
						"$(mib "${R[$k,hwm]}")" "$(mib "${R[$k,rss0]}")" "$(mib "${R[$k,rss]}")" \
						"$(mib "${R[$k,rssmin]}")" "$(mib "${R[$k,rssmax]}")" "${R[$k,ready_s]}" "${R[$k,ready_cpu]}" \
						"${R[$k,units]:--}" "${R[$k,cgroups]}" "${R[$k,outside]}" "${R[$k,decisions]:--}" "${R[$k,pods_cpus]}" \
						"${R[$k,foreign]}" "${R[$k,noise]:+ (qemu)}"
				done
			done
		done
	done
}
# verdict_row WHAT KIND PODS FIELD TARGET UNIT: one row of the targets table;
# UNIT is MiB (the values are KiB, TARGET too) or %.
verdict_row() {
	local what=$1 kind=$2 n=$3 field=$4 target=$5 unit=$6 v b=""
	v=$(med "$kind" new "$n" "$field")
	[ -z "$BASE" ] || b=$(med "$kind" base "$n" "$field")
	if [ "$unit" = MiB ]; then
		echo "| $what | ${b:+$(fmt_mib "$b") | }$(fmt_mib "$v") | at most $((target / 1024)) MiB | $(pass "$v" "$target") |"
	else
		v=$(fix 3 "$v")
		echo "| $what | ${b:+$(fix 3 "$b")% | }$v% | at most $target% | $(pass "$v" "$target") |"
	fi
}
# growth_of LABEL LO HI: "ratio cost_hi cost_lo" of the cost per pod per tick.
growth_of() {
	awk -v a="$(med agent "$1" "$3" cost)" -v b="$(med agent "$1" "$2" cost)" 'BEGIN { n = "^[0-9]+([.][0-9]+)?$"
		if (a !~ n || b !~ n || b == 0) print "NA NA NA"; else printf "%.2f %.2f %.2f\n", a / b, a, b }'
}
verdict_rows() {
	local lo hi g chi clo b="" bb="" bg
	lo=${PODS[0]} hi=${PODS[${#PODS[@]} - 1]}
	[ -z "$BASE" ] || bb=" |"
	if [ -n "${R[agent,new,500,1,cpu]:-}" ]; then
		verdict_row "agent CPU at 500 pods (of one core)" agent 500 cpu "$TARGET_CPU" %
		verdict_row "agent steady RSS at 500 pods (largest sample in the window)" agent 500 rssmax "$TARGET_RSS" MiB
	else
		echo "| agent at 500 pods |$bb not measured (-n) | | n/a |"
	fi
	if [ "$TOP_PODS" = 500 ] && [ -n "${R[top,new,500,1,hwm]:-}" ]; then
		verdict_row "top -j peak RSS at 500 pods" top 500 hwm "$TARGET_RSS" MiB
	else
		echo "| top -j peak RSS at 500 pods |$bb not measured (-t) | | n/a |"
	fi
	[ "$lo" != "$hi" ] || return 0
	read -r g chi clo <<<"$(growth_of new "$lo" "$hi")"
	if [ -n "$BASE" ]; then
		read -r bg _ <<<"$(growth_of base "$lo" "$hi")"
		b="${bg}x | "
	fi
	echo "| cost per pod per tick, $hi / $lo pods | $b${g}x ($chi / $clo us) | at most ${TARGET_GROWTH}x | $(pass "$g" "$TARGET_GROWTH") |"
}

# The binaries measured: "name: `path` (qoslet --version: rev); ...".
binaries() {
	local l q='`' sep=""
	for l in "${LABELS[@]}"; do
		printf '%s%s: %s%s%s (qoslet --version: %s)' "$sep" "$(NAMEOF "$l")" "$q" "${BIN[$l]}" "$q" "${REV[$l]}"
		sep="; "
	done
}

report() {
	local vh="| Target | median | target | verdict |" vs="| --- | --- | --- | --- |"
	if [ -n "$BASE" ]; then
		vh="| Target | $(NAMEOF base) | ${REV[new]} | target | verdict |" vs="| --- | --- | --- | --- | --- |"
	fi
	cat <<EOF
# qoslet agent footprint
${NOTE:+
$NOTE
}
Command: \`$CMDLINE\` (part of \`make bench\`)

- Binaries: $(binaries)$([ -n "$BASE" ] || echo " (one binary: no -b baseline)")
- Date: $DATE; kernel $(uname -r); $(nproc) CPUs; $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo); $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
- Load before the pods started: \`$LOAD_START\`; at the end: \`$LOAD_END\` (the pods'
  wake-ups raise it); $((ELAPSED / 60)) min $((ELAPSED % 60)) s in all.
- Node: a kubelet-shaped tree under $ROOT/$NAME (cgroup $([ "$V2" = 1 ] && echo "v2" || echo "v1, made in ${HIER[*]}")):
  \`kubepods/besteffort/pod<uid>/<64-hex id>\`, cpu.shares 2 on the BestEffort tier, pods and
  containers as the kubelet sets them, one container per pod running \`dutycycle $WORK_US $PERIOD_US\`
  (wakes 10 times a second, works $WORK_US us each time). The tree grows from ${PODS[0]} to
  ${PODS[${#PODS[@]} - 1]} pods and every run reuses it.
- Agent: \`qoslet agent --config FILE --pin-dir DIR\` with the embedded defaults plus FILE =
  \`$(agent_config /tmp/qoslet-bench-agent.XXXXXX/state 0 | sed 's/"port":0/"port":PORT/')\`
  (a free port: the endpoint stays on as shipped), decisions to a file; the bench scrapes
  /metrics every $SCRAPE_EVERY s as Prometheus would. top: \`qoslet top -j --pin-dir DIR 1\` on the $TOP_PODS-pod tree.
- Each run: $WARM s from its start (start-up, first ticks), then $SECS s measured. CPU = (utime +
  stime) / wall time over the window; peak RSS = VmHWM at the end, start-up included;
  steady RSS = VmRSS at the end of the window; RSS in window = min / median / max of VmRSS
  sampled every second in it (the agent's RSS swings by megabytes from tick to tick, so
  the target is judged on the max); cost = CPU seconds / ticks / pods in the window, ticks
  from \`qoslet_agent_ticks_total\`; loop = the agent's \`qoslet_agent_loop_duration_seconds\`
  at the scrapes; start-up = CPU until /readyz answered 200 (top: until its first line);
  pods = CPUs the pods used. Medians over $ROUNDS round(s)$([ -z "$BASE" ] || echo ", both binaries in every round, alternating which goes first").
- For reference, the issue's observation before the change (500 BestEffort pods, another
  machine): peak RSS 32-35 MiB, 26-30 MiB after a minute, 9.3-10.2% of one core; \`top -j 1 3\`
  20 MiB peak.

## The agent

| pods | binary | CPU (% of one core) | cost per pod per tick | peak RSS | steady RSS | RSS in window (min / median / max) | ticks | pods (CPUs) | loop | start-up CPU | /metrics |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
$(agent_rows)

## \`qoslet top -j 1\` at $TOP_PODS pods

| binary | peak RSS | RSS at the end | RSS in window (min / median / max) | CPU (% of one core) | start-up CPU | cgroups in the last report (outside the tree) |
| --- | --- | --- | --- | --- | --- | --- |
$(top_rows)

## Targets (issue 11), for ${REV[new]}

$vh
$vs
$(verdict_rows)

## Every run

RSS in MiB. Start-up: time and CPU until the agent answered /readyz (top: printed its first
line). Units: as the agent's first status line counts them. Cgroups: those in the agent's
last /metrics (top: its last report), and in brackets how many of them are neither the
tree's nor the root: cgroups active elsewhere on the machine (other tests) show there too
and add to the cost. Foreign: CPUs used in the window by anything but the pods and the
measured process ("(qemu)": a VM was running).

| pods | round | what | binary | CPU | us/pod/tick | ticks | peak RSS | RSS after warm-up | RSS at end | RSS in window | start-up | units | cgroups (outside) | decisions | pods (CPUs) | foreign (CPUs) |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
$(run_rows)
EOF
}
report
[ -z "$OUT" ] || report >"$OUT"
