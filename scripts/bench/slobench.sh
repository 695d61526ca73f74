#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/bench/slobench.sh [-r ROUNDS] [-s SECS] [-W SECS] [-S SERVERS] [-L SHAPES] [-b BES] [-q SECS] [-x NAME=JSON]... [-p] [-u SHARE] [-k DIR] [-o FILE]
#
# Issue 14's benchmark: request latency of real servers from Debian next to
# best-effort batch work, without and with `qoslet agent`.
#
# LS pod (one for the whole run), two containers, as the kubelet lays them out:
#   PARENT/kubepods/burstable/pod<LS uid>/<server>  the server
#   PARENT/kubepods/burstable/pod<LS uid>/<client>  tests/helpers/loadgen
# The load generator's CPU time counts as the LS pod's, as if the clients
# were remote: they compete with BE for the same CPUs either way.
# Servers (-S, default web,kv):
#   web  nginx (nginx-light) with worker_processes 1, a 1 KiB static page
#        from a tmpfs directory (/dev/shm), on 127.0.0.1:<free port>
#   kv   redis-server, persistence off (no RDB, no AOF), 127.0.0.1:<free port>
# Load (loadgen, every latency kept, nearest-rank p50/p99/p99.9):
#   closed  CLOSED_CONNS connections, each sending its next request when the
#           last is answered
#   open    a fixed rate of half the server's alone maximum, over OPEN_CONNS
#           connections, latency from each request's intended send time;
#           with -u SHARE instead the rate at which the LS pod alone uses
#           SHARE of the node's CPUs (see -u)
# The alone maximum is measured first, in the same run (loadgen closed loop,
# MAX_SECS), and cross-checked with wrk / redis-benchmark when installed.
# BE (-b, default cpu,cache), in a new Burstable pod per block, classed BE:
#   cpu    stress-ng --cpu NPROC       CPU hogs
#   cache  stress-ng --cache NPROC     cache thrashing
# The figure is stress-ng's bogo ops/s (real time).
#
# Scenarios, for each server, load shape and BE kind (alone only once):
#   alone        the server and its load alone
#   be           with BE, no agent
#   agent        with BE and `qoslet agent` as it is today: its embedded
#                defaults plus the class rules (LS pod by path, every other
#                burstable pod BE) and colobench's fast-path threshold
#   agent-NAME   as agent, with -x NAME=JSON merged over its config: the slot
#                for the SLO controller of issue 14
#   split        (-p) with BE, no agent, the node split by hand: the LS pod's
#                processes bound to the first half of the CPUs (at least one),
#                BE to the rest (taskset), what a cpuset partition between LS
#                and BE would do; the yardstick for such a knob
#   alone-split  (-p) the server and its load alone, bound as in split: what
#                the split costs LS by itself, BE aside
# Each block: the load starts and runs WARMUP seconds, counted nowhere (the
# agent, started before it, sees LS steady, as on a node where BE arrives
# next to a running service); then BE's pod is created and stress-ng started
# in it, and SECS seconds are measured, so the block covers the agent's
# reaction. Without the warm-up the agent's last tick before BE saw the load
# not yet started, and judged LS's need from that (the split did). The
# reaction is the first applied cpu_idle, cpu_quota or cpuset decision on the
# BE pod, its ts_ns minus BE start. One round runs every block once, the
# scenarios rotated one place each round. Medians over rounds. Besides each
# block's p99, the per-round table shows the p99 of its first second (BE
# starts in it, the agent reacts in it) and the median of its other seconds'
# p99s (the steady state).
#
# Noise: the machine may be shared. Every block records the CPU time spent
# outside its cgroups and the agent ("foreign"); the run waits up to -q SECS
# for a quiet machine once at its start, not before each block (the blocks of
# one round run side by side, so their ratios share the noise).
#
# Targets (issue 14): web open loop at half load with CPU hogs: LS p99 at
# most 1.25x alone and BE at least 60% of its no-agent throughput; web closed
# loop with CPU hogs: p99 at most 1.5x alone; kv: at most 1.25x alone in both
# shapes; median reaction at most 100 ms.
#
# Everything it creates lives under its own parent cgroup, pin directory and
# temporary directories, and is removed on exit, also on failure (lib.sh).
# Exit 0 after a measurement, 77 when it cannot run here, 1 on failure,
# 2 on bad usage.
#
#   -r ROUNDS   rounds (default $SLOBENCH_ROUNDS, else 5)
#   -s SECS     seconds per block (default $SLOBENCH_SECS, else 15)
#   -W SECS     the load's warm-up before BE starts, not measured (default
#               $SLOBENCH_WARMUP, else 2: two of the agent's ticks)
#   -S SERVERS  comma-separated, of web and kv (default web,kv)
#   -L SHAPES   comma-separated load shapes, of closed and open (default
#               closed,open)
#   -b BES      comma-separated BE kinds, of cpu and cache (default cpu,cache)
#   -q SECS     wait up to SECS for a quiet machine first (default 0: check
#               once and warn); run.sh passes BENCH_QUIET_WAIT
#   -x NAME=JSON  an extra agent scenario "agent-NAME" (repeatable)
#   -p          add the scenario split (above)
#   -u SHARE    open loop at the rate where the LS pod alone (server and
#               load generator) uses SHARE (0.05-0.95) of the node's CPUs,
#               found by up to CAL_STEPS open-loop runs of CAL_SECS each
#               (see calibrate_rate), capped at the alone maximum. Half the
#               requests can cost LS far more than half the CPUs (two thirds
#               on a 2-CPU EPYC VM), leaving BE no room: the issue's "half
#               load, where BE has room" then needs the rate chosen by CPU
#               share.
#   -k DIR      keep the raw data in DIR (loadgen JSON, stress-ng YAML, the
#               agent's decisions and log, and its recording of every tick's
#               inputs, rec.SERVER.SHAPE.SCENARIO.ROUND, for qoslet replay)
#   -o FILE     also write the markdown report to FILE
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export QOSLET_TEST_TAG=slobench-$$
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh"
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/agent_lib.sh
. "$ROOT/tests/integration/agent_lib.sh"
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/server_lib.sh
. "$ROOT/tests/integration/server_lib.sh"
# shellcheck source-path=SCRIPTDIR source=scripts/bench/colo_lib.sh
. "$ROOT/scripts/bench/colo_lib.sh"
LOADGEN=${LOADGEN:-$ROOT/build/tests/helpers/loadgen}

ROUNDS=${SLOBENCH_ROUNDS:-5}
SECS=${SLOBENCH_SECS:-15}
WARMUP=${SLOBENCH_WARMUP:-2}
SERVERS=web,kv
SHAPE_ARG=closed,open
BES=cpu,cache
QUIET_WAIT=0
OUT=""
KEEP=""
CMDLINE=$(printf '%q ' "$0" "$@")
CMDLINE=${CMDLINE% }
SETTLE=1         # seconds after the agent's start-up, and between blocks
FP_P99_US=1000   # the agent's interference.runq.p99_us, as colobench
CLOSED_CONNS=4   # enough to keep one nginx worker or redis busy
OPEN_CONNS=8     # open loop: a stall delays at most 8 requests' sends
MAX_SECS=4       # the alone maximum's measurement
CAL_SECS=3       # -u: each calibration run
CAL_STEPS=5      # -u: at most this many
CAL_TOL=0.05     # -u: done within 5% of the target share
PLOT_BINS=20     # rows of the BE quota plot
TARGET_REACT=100 # ms, median
declare -A TARGET=([web.open.cpu]=1.25 [web.closed.cpu]=1.5 [kv.open.cpu]=1.25 [kv.closed.cpu]=1.25)
TARGET_BE=0.6 # web open loop with CPU hogs: BE with the agent / without

usage() {
	sed -n '4p' "$0" | sed 's/^# /usage: /' >&2
	exit 2
}

# Splits comma list $1 into words, each one of the rest of the arguments.
words_of() {
	local w list=$1
	shift
	for w in ${list//,/ }; do
		[[ " $* " == *" $w "* ]] || usage
		echo "$w"
	done
}

AGENTS=(agent)
SPLIT=""
SHARE=""
while getopts "r:s:W:S:L:b:q:x:pu:k:o:h" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	s) SECS=$OPTARG ;;
	W) WARMUP=$OPTARG ;;
	S) SERVERS=$OPTARG ;;
	L) SHAPE_ARG=$OPTARG ;;
	b) BES=$OPTARG ;;
	q) QUIET_WAIT=$OPTARG ;;
	x)
		colo_extra "$OPTARG"
		AGENTS+=("$EXTRA_NAME")
		;;
	p) SPLIT="split" ;;
	u) SHARE=$OPTARG ;;
	k) KEEP=$OPTARG COLO_RECORD=1 ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
for n in "$ROUNDS" "$SECS" "$WARMUP" "$QUIET_WAIT"; do
	[[ $n =~ ^[0-9]+$ ]] || usage
done
if [ "$ROUNDS" -lt 1 ] || [ "$SECS" -lt 2 ]; then
	usage
fi
if [ -n "$SHARE" ] && ! awk -v u="$SHARE" 'BEGIN { exit !(u ~ /^0?\.[0-9]+$/ && u >= 0.05 && u <= 0.95) }'; then
	echo "${0##*/}: bad -u '$SHARE': want a share of the node's CPUs from 0.05 to 0.95" >&2
	usage
fi
mapfile -t SRV_LIST < <(words_of "$SERVERS" web kv)
mapfile -t BE_LIST < <(words_of "$BES" cpu cache)
mapfile -t SHAPES < <(words_of "$SHAPE_ARG" closed open)
if [ "${#SRV_LIST[@]}" = 0 ] || [ "${#BE_LIST[@]}" = 0 ] || [ "${#SHAPES[@]}" = 0 ]; then
	usage
fi

# lib.sh's log() prints on stdout, which carries the report here.
log() {
	echo "slobench: $*" >&2
}

require_root
require_cmds jq stress-ng taskset python3
for s in "${SRV_LIST[@]}"; do
	server_require "$s"
done
[ -x "$QOSLET" ] || skip "$QOSLET is missing (run make)"
[ -x "$LOADGEN" ] || skip "$LOADGEN is missing (run make $LOADGEN)"
detect_cgroup_root >/dev/null || skip "no cgroup hierarchy with the cpu controller"

NPROC=$(nproc)
# What ran: the tree at the start (a commit made during the run is not it) and the binary's own.
TREE_VERSION=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
QOSLET_VERSION=$("$QOSLET" --version 2>/dev/null | awk '{ print $NF; exit }')
ALL_CPUS=0-$((NPROC - 1))
# The split scenario's halves; LS gets the first (the smaller one when odd).
LS_CPUS=0-$((NPROC / 2 > 1 ? NPROC / 2 - 1 : 0))
BE_CPUS=$((NPROC / 2 > 1 ? NPROC / 2 : 1))-$((NPROC - 1))
[ -z "$SPLIT" ] || [ "$NPROC" -ge 2 ] || skip "-p needs at least 2 CPUs to split"

test_setup
agent_setup
# The servers' files (the web page) live on tmpfs, outside TMP (which may be
# on disk): removed by this trap, then lib.sh's cleanup runs with the
# script's exit status.
SRV_DIR=$(mktemp -d /dev/shm/qoslet-slobench.XXXXXX)
slo_cleanup() {
	local rc=$?
	set +e # (exit "$rc") below must not end the trap before lib.sh's cleanup
	rm -rf "$SRV_DIR"
	(exit "$rc")
	_test_cleanup
}
trap slo_cleanup EXIT

colo_ls_pod "$FP_P99_US"
SRV_CG=$(agent_cgroup "kubepods/burstable/pod$LS_UID/$(random_hex 32)")
CLI_CG=$(agent_cgroup "kubepods/burstable/pod$LS_UID/$(random_hex 32)")

# ---------------------------------------------------------------- helpers

# Starts server $1 in the LS pod's server container: SRV_PID, PORT, SRV_PROTO.
server_start() {
	PORT=$(free_port)
	server_cmd "$1" "$PORT" "$SRV_DIR/$1"
	agent_run "$SRV_CG" "$ALL_CPUS" "${SRV_CMD[@]}"
	SRV_PID=$CG_PID
	server_wait_listen "$PORT" "$SRV_PID" "$SRV_DIR/$1"
}

# Binds every process of the server's container to CPUs $1.
server_bind() {
	local p
	for p in $(cat "$SRV_CG/cgroup.procs"); do
		taskset -a -p -c "$1" "$p" >/dev/null || fail "taskset $1 on server process $p"
	done
}

server_stop() {
	kill -TERM "$SRV_PID"
	wait_exit "$SRV_PID" 10 "the server" || true
}

# Runs loadgen in the LS pod's client container in the background: LG_PID.
# $1 output file, $2 seconds, $3 rate (0: closed loop), $4 its CPUs (default
# all), $5 seconds of warm-up before those (default 0).
loadgen_start() {
	local args=(-p "$SRV_PROTO" -d "$2" -w "${5:-0}" -j)
	if [ "$3" = 0 ]; then
		args+=(-c "$CLOSED_CONNS")
	else
		args+=(-c "$OPEN_CONNS" -r "$3")
	fi
	# shellcheck disable=SC2016
	agent_run "$CLI_CG" "${4:-$ALL_CPUS}" sh -c 'out=$1; shift; exec "$@" >"$out"' sh "$1" \
		"$LOADGEN" "${args[@]}" 127.0.0.1 "$PORT"
	LG_PID=$CG_PID
}

# The alone maximum of server $1: MAX[$1] (req/s), MAXLINE[$1] (the report's
# row), RATE[$1] (half of it, or with -u the rate of that CPU share).
declare -A MAX=() MAXLINE=() RATE=()
measure_max() {
	local f=$TMP/max.$1.json cross="not installed" c
	loadgen_start "$f" "$MAX_SECS" 0
	reap "$LG_PID" || fail "$1: loadgen exited with status $?: $(cat "$TMP"/bg.*.log 2>/dev/null | tail -n 3)"
	MAX[$1]=$(jq .throughput "$f")
	RATE[$1]=$(awk -v m="${MAX[$1]}" 'BEGIN { printf "%.0f\n", m / 2 }')
	# The Debian tools, same connections and client container: a check on
	# loadgen's own ceiling, not used for the rate.
	c=$TMP/cross.$1
	# shellcheck disable=SC2016 # $1 and $@ are the inner shell's
	if [ "$1" = web ] && command -v wrk >/dev/null; then
		agent_run "$CLI_CG" "$ALL_CPUS" sh -c 'out=$1; shift; exec "$@" >"$out"' sh "$c" \
			wrk -t 1 -c "$CLOSED_CONNS" -d "${MAX_SECS}s" "http://127.0.0.1:$PORT/"
		reap "$CG_PID" || fail "wrk exited with status $?"
		cross="wrk -t 1 -c $CLOSED_CONNS: $(awk '/^Requests\/sec:/ { print $2 }' "$c") req/s"
	elif [ "$1" = kv ] && command -v redis-benchmark >/dev/null; then
		agent_run "$CLI_CG" "$ALL_CPUS" sh -c 'out=$1; shift; exec "$@" >"$out"' sh "$c" \
			redis-benchmark -h 127.0.0.1 -p "$PORT" -c "$CLOSED_CONNS" -n $((20000 * MAX_SECS)) -t get -q
		reap "$CG_PID" || fail "redis-benchmark exited with status $?"
		cross="redis-benchmark -c $CLOSED_CONNS -t get: $(tr '\r' '\n' <"$c" | awk '/^GET:/ { print $2 }' | tail -n 1) req/s"
	fi
	[ -z "$SHARE" ] || calibrate_rate "$1"
	MAXLINE[$1]="| $1 | ${MAX[$1]} | $(jq -r '"\(.latency_us.p50) / \(.latency_us.p99)"' "$f") | $cross | ${RATE[$1]}${CAL[$1]:+ (${CAL[$1]})} |"
	log "$1: alone maximum ${MAX[$1]} req/s ($cross); open loop at ${RATE[$1]} req/s${CAL[$1]:+ (${CAL[$1]})}"
}

# -u: RATE[$1] becomes the open-loop rate at which the LS pod alone uses
# SHARE of the CPUs; CAL[$1] says what the last run measured. CPU per
# request falls as the rate rises (more requests per wake-up: on a 2-CPU
# EPYC VM nginx's use grew as the rate to the power 0.4), so after a first
# proportional step each next rate comes from a straight line through the
# last two runs in log-log.
declare -A CAL=()
calibrate_rate() {
	local f=$TMP/cal.$1.json want used c0 i rate=${RATE[$1]} prev_rate="" prev_used=""
	want=$(awk -v u="$SHARE" -v n="$NPROC" 'BEGIN { printf "%.3f\n", u * n }')
	for ((i = 1; i <= CAL_STEPS; i++)); do
		c0=$(cg_cpu_ns "$LS_POD")
		loadgen_start "$f" "$CAL_SECS" "$rate" "$ALL_CPUS" 1
		reap "$LG_PID" || fail "$1: calibration loadgen exited with status $?"
		# The warm-up second counts in the CPU time: spread over all of it.
		used=$(awk -v a="$c0" -v b="$(cg_cpu_ns "$LS_POD")" -v s=$((CAL_SECS + 1)) \
			'BEGIN { printf "%.3f\n", (b - a) / (s * 1e9) }')
		CAL[$1]="LS alone at it: $used CPUs, for $want wanted, step $i"
		log "$1: calibration: $rate req/s: LS used $used CPUs (want $want)"
		awk -v u="$used" -v w="$want" -v t="$CAL_TOL" 'BEGIN { exit !(u >= w * (1 - t) && u <= w * (1 + t)) }' && break
		[ "$i" -lt "$CAL_STEPS" ] || break
		# The exponent of CPU in rate: from the last two runs when they
		# differ enough, else 1 (proportional); kept within 0.2-1 so that
		# one noisy run cannot throw the rate far.
		local next
		next=$(awk -v r="$rate" -v u="$used" -v pr="$prev_rate" -v pu="$prev_used" -v w="$want" -v m="${MAX[$1]}" '
			BEGIN {
				e = 1
				if (pr != "" && pu > 0 && u > 0 && (r / pr > 1.05 || pr / r > 1.05))
					e = log(u / pu) / log(r / pr)
				if (e < 0.2) e = 0.2
				if (e > 1) e = 1
				n = (u > 0 ? r * exp(log(w / u) / e) : m)
				printf "%.0f\n", (n > m ? m : n)
			}')
		prev_rate=$rate prev_used=$used rate=$next
	done
	RATE[$1]=$rate
}

# The BE pod's quota and cpu.idle over block key $1, round $2, as a text
# plot from the decision records (the actuator is the only writer, so they
# are what the kernel had): PLOT_BINS rows from BE start to the block's end,
# each the state at the row's end.
quota_plot() {
	local f=$TMP/be_decisions.$1.$2
	[ -s "$f" ] || {
		echo "(no decisions on the BE pod)"
		return 0
	}
	awk -v secs="$SECS" -v bins="$PLOT_BINS" -v nproc="$NPROC" -v period="${R[$1,$2,period]:-100000}" '
		{ t[NR] = $1; k[NR] = $2; v[NR] = $4; ok[NR] = ($5 == "applied") }
		END {
			q = -1; idle = 0; j = 1
			for (b = 1; b <= bins; b++) {
				at = secs * 1000 * b / bins
				for (; j <= NR && t[j] <= at; j++) {
					if (!ok[j]) continue
					# v1 -1 or v2 "max/PERIOD": no quota.
					if (k[j] == "cpu_quota") q = (v[j] ~ /^max/ ? -1 : v[j] + 0)
					if (k[j] == "cpu_idle") idle = v[j] + 0
				}
				cpus = (q < 0 ? nproc : q / period)
				w = int(40 * cpus / nproc + 0.5)
				bar = ""
				for (i = 0; i < 40; i++) bar = bar (i < w ? "#" : ".")
				printf "%6.2f s |%s| %s cpu.idle=%d\n", at / 1000, bar,
					(q < 0 ? "no quota" : sprintf("%.2f CPUs", cpus)), idle
			}
		}' "$f"
}

# One block: server $1, shape $2 (closed/open), scenario $3 (alone, be-KIND,
# agent-KIND, agent-NAME-KIND), round $4.
run_block() {
	local srv=$1 shape=$2 scen=$3 r=$4 k=$1.$2.$3 kind="" ag="" rate=0 lg be f ls=$ALL_CPUS bec=$ALL_CPUS
	lg=$TMP/lg.$k.$r.json
	be=$TMP/be.$k.$r.yaml
	[ "$shape" = closed ] || rate=${RATE[$srv]}
	[[ $scen == alone* ]] || kind=${scen##*-}
	[[ $scen != agent* ]] || ag=${scen%-*}
	[[ $scen != split-* && $scen != alone-split ]] || ls=$LS_CPUS
	[[ $scen != split-* ]] || bec=$BE_CPUS
	[ "$ls" = "$ALL_CPUS" ] || server_bind "$ls"
	R[$k,$r,procs]=$(foreign_procs)
	AGENT_PID=""
	[ -z "$ag" ] || colo_agent_start "$k" "$r" "${EXTRA[$ag]:-"{}"}"
	loadgen_start "$lg" "$SECS" "$rate" "$ls" "$WARMUP"
	# loadgen's warm-up counts from its connections, made a few milliseconds
	# after this: 50 ms more, so that BE's start falls in the counted seconds.
	sleep "$WARMUP.05"
	colo_mark_start
	[ -z "$kind" ] || be_start "$kind" "$be" "$bec"
	reap "$LG_PID" || fail "$k round $r: loadgen exited with status $?"
	if [ -n "$kind" ]; then
		reap "$BE_PID" || fail "$k round $r: stress-ng exited with status $?"
	fi
	colo_mark_end "$k" "$r"
	[ -z "$AGENT_PID" ] || colo_agent_stop "$k" "$r"
	[ "$ls" = "$ALL_CPUS" ] || server_bind "$ALL_CPUS"
	for f in throughput requests errors; do
		R[$k,$r,$f]=$(jq ".$f" "$lg")
	done
	for f in p50 p99 p999 max; do
		R[$k,$r,$f]=$(jq ".latency_us.$f" "$lg")
	done
	R[$k,$r,p99_first]=$(jq '.p99_per_s_us[0]' "$lg")
	R[$k,$r,p99_rest]=$(jq '.p99_per_s_us[1:][]' "$lg" | median)
	if [ -n "$kind" ]; then
		R[$k,$r,ops]=$(be_rate "$be") || fail "$k round $r: no bogo ops/s in $be"
		if cg_is_v2; then
			R[$k,$r,period]=$(awk '{ print $2 }' "$BE_POD/cpu.max")
		else
			R[$k,$r,period]=$(cat "$BE_POD/cpu.cfs_period_us")
		fi
		pod_remove "$BE_POD"
	fi
	[ -z "$ag" ] || colo_be_decisions "$k" "$r" "$BE_POD" "$BE_T0"
	local msg="round $r: $k: ${R[$k,$r,throughput]} req/s, p50 ${R[$k,$r,p50]} p99 ${R[$k,$r,p99]} p99.9 ${R[$k,$r,p999]} us"
	[ -z "${R[$k,$r,ops]:-}" ] || msg+=", BE ${R[$k,$r,ops]} ops/s"
	[ -z "${R[$k,$r,react]:-}" ] || msg+=", reaction ${R[$k,$r,react]} ms"
	msg+=", foreign ${R[$k,$r,foreign]} CPUs"
	[ -z "${R[$k,$r,procs]}" ] || msg+=" (running: ${R[$k,$r,procs]% })"
	[ -z "${R[$k,$r,warn]:-}" ] || msg+="; agent: ${R[$k,$r,warn]}"
	log "$msg"
	sleep "$SETTLE"
}

# ---------------------------------------------------------------- measure

SCENARIOS=(alone ${SPLIT:+alone-split})
for kind in "${BE_LIST[@]}"; do
	SCENARIOS+=("be-$kind")
	for a in "${AGENTS[@]}" $SPLIT; do
		SCENARIOS+=("$a-$kind")
	done
done
N=${#SCENARIOS[@]}
colo_run_start "$QUIET_WAIT"
log "servers ${SRV_LIST[*]}; $ROUNDS rounds of ${SHAPES[*]} x ${SCENARIOS[*]}, ${SECS} s each; parent $TEST_PARENT"
declare -A ORDER=()
for srv in "${SRV_LIST[@]}"; do
	server_start "$srv"
	measure_max "$srv"
	for ((r = 1; r <= ROUNDS; r++)); do
		order=()
		for ((i = 0; i < N; i++)); do
			order+=("${SCENARIOS[$(((r - 1 + i) % N))]}")
		done
		ORDER[$srv,$r]="${order[*]}"
		for shape in "${SHAPES[@]}"; do
			for s in "${order[@]}"; do
				run_block "$srv" "$shape" "$s" "$r"
			done
		done
	done
	server_stop
done
LOAD_END=$(cut -d' ' -f1 /proc/loadavg)
if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP"
	cp "$TMP"/lg.* "$TMP"/max.* "$TMP"/be.*.yaml "$KEEP"/
	cp "$TMP"/decisions.* "$TMP"/agent.*.err "$TMP"/rec.* "$KEEP"/ 2>/dev/null || true
	log "raw data kept in $KEEP"
fi

# ---------------------------------------------------------------- report

declare -A MED=()
for srv in "${SRV_LIST[@]}"; do
	for shape in "${SHAPES[@]}"; do
		for s in "${SCENARIOS[@]}"; do
			for f in throughput p50 p99 p999 ops react foreign ls_cpu be_cpu; do
				MED[$srv.$shape.$s,$f]=$(col "$srv.$shape.$s" "$f" | median "$([[ $f == *_cpu ]] && echo 2 || echo 1)")
			done
		done
	done
done
CPU_MODEL=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)

label() {
	case $1 in
	alone) echo "LS alone" ;;
	alone-split) echo "LS alone on its split CPUs ($LS_CPUS)" ;;
	be-*) echo "BE ${1#be-}, no agent" ;;
	agent-*-*) echo "BE ${1##*-}, agent + ${1#agent-}" | sed 's/-[a-z]*$//' ;;
	agent-*) echo "BE ${1#agent-}, agent today" ;;
	split-*) echo "BE ${1#split-}, no agent, split by hand (LS CPUs $LS_CPUS, BE CPUs $BE_CPUS)" ;;
	esac
}

# All foreign CPU values of the run, for the header.
all_foreign() {
	local srv shape s
	for srv in "${SRV_LIST[@]}"; do
		for shape in "${SHAPES[@]}"; do
			for s in "${SCENARIOS[@]}"; do
				col "$srv.$shape.$s" foreign
			done
		done
	done
}

# The target rows of one agent scenario $1 (agent or agent-NAME).
target_rows() {
	local a=$1 key t k be_ratio p react
	for key in web.open.cpu web.closed.cpu kv.open.cpu kv.closed.cpu; do
		k=${key%.cpu}
		t=${TARGET[$key]}
		if [ -z "${MED[$k.alone,p99]:-}" ] || [ -z "${MED[$k.$a-cpu,p99]:-}" ]; then
			echo "| $a | ${k/./ }, CPU hogs: LS p99 / alone at most $t | - | - | not measured (-S or -b left it out) |"
			continue
		fi
		p=$(div "${MED[$k.$a-cpu,p99]}" "${MED[$k.alone,p99]}")
		echo "| $a | ${k/./ }, CPU hogs: LS p99 / alone at most $t | $p | $(paired "$k.$a-cpu" "$k.alone" p99 | median 3) ($(paired "$k.$a-cpu" "$k.alone" p99 | range)) | $(verdict "$p" le "$t") |"
		if [ "$key" = web.open.cpu ]; then
			be_ratio=$(div "${MED[$k.$a-cpu,ops]}" "${MED[$k.be-cpu,ops]}")
			echo "| $a | web open, CPU hogs: BE / BE without agent at least $TARGET_BE | $be_ratio | $(paired "$k.$a-cpu" "$k.be-cpu" ops | median 3) ($(paired "$k.$a-cpu" "$k.be-cpu" ops | range)) | $(verdict "$be_ratio" ge "$TARGET_BE") |"
		fi
	done
	if [ "$a" = split ]; then # no agent, no reaction; LS's own cost of the split
		for k in web.open web.closed kv.open kv.closed; do
			[ -n "${MED[$k.alone-split,p99]:-}" ] && [ -n "${MED[$k.split-cpu,p99]:-}" ] || continue
			echo "| split | ${k/./ }, CPU hogs: LS p99 / LS alone on the same CPUs (no target; BE's own cost) | $(div "${MED[$k.split-cpu,p99]}" "${MED[$k.alone-split,p99]}") | $(paired "$k.split-cpu" "$k.alone-split" p99 | median 3) ($(paired "$k.split-cpu" "$k.alone-split" p99 | range)) | - |"
		done
		return 0
	fi
	react=$(for srv in "${SRV_LIST[@]}"; do for shape in "${SHAPES[@]}"; do for kind in "${BE_LIST[@]}"; do
		col "$srv.$shape.$a-$kind" react
	done; done; done)
	echo "| $a | median reaction at most $TARGET_REACT ms (every block) | $(median <<<"$react") ms | ($(range <<<"$react") ms) | $(verdict "$(median <<<"$react")" le "$TARGET_REACT") |"
}

report() {
	local srv shape s k r marks
	echo "# slobench: real servers next to BE batch, with and without qoslet agent (issue 14)"
	echo
	echo "- Date: $START; kernel $(uname -r); ${CPU_MODEL:-$(uname -m)}; $NPROC CPUs; tree $TREE_VERSION at the start, qoslet ${QOSLET_VERSION:-unknown}"
	echo "- Command: \`${CMDLINE/docs\/bench\/.slobench.md.*/docs/bench/slobench.md}\` (\`make bench\` runs it through \`scripts/bench/run.sh\`)"
	echo "- Rounds: $ROUNDS, each running every block once for $SECS s, the scenarios rotated one place each round"
	echo "- 1-minute load average: $LOAD_START at start, $LOAD_END at end; quiet at start: $QUIET_START"
	echo "- Foreign load seen by the blocks (CPUs busy outside this benchmark and the agent): median $(all_foreign | median), range $(all_foreign | range)"
	if awk -v f="$(all_foreign | median)" 'BEGIN { exit !(f > 0.10) }'; then
		echo
		echo "**A noisy machine:** the median block ran next to more than 0.1 CPUs of foreign load (other jobs on"
		echo "this node), on $NPROC CPUs. The absolute latencies are the machine's as much as the servers'; only the ratios"
		echo "of blocks run side by side in this run (the per-round columns) say something, and the baseline must be"
		echo "measured again on a quiet machine."
	fi
	echo
	echo "## What and how"
	echo
	echo "Issue 14's benchmark: what BE batch does to the request latency of real servers from Debian (nginx, redis)"
	echo "on this node, and what \`qoslet agent\` gets back, under two load shapes: closed loop (the clients send as fast"
	if [ -z "$SHARE" ]; then
		echo "as answered) and open loop at half the server's alone maximum (a fixed rate, where BE has room to run)."
	else
		echo "as answered) and open loop at the rate where the LS pod alone uses $SHARE of the CPUs (\`-u $SHARE\`: a fixed"
		echo "rate, where BE has room to run; half the alone maximum costs LS more than half the node on some machines)."
	fi
	echo "It is the yardstick for the SLO-driven BE controller the issue asks for (docs/slo-control.md, off by"
	echo "default): \`make bench\` adds its scenario \`agent-slo\` (\`{\"slo\": {\"enabled\": true}}\`; \`SLOBENCH_EXTRA\`"
	echo "replaces it, empty for none). The rows \"agent today\" are the baseline it must beat, against the targets"
	echo "below. Its numbers, like the baseline's, need a quiet machine: on a shared node the run-queue waits it"
	echo "steers by carry other people's load, and its default stays off until such a run says otherwise."
	echo
	echo "Run it (root, after \`make\`; \`scripts/deps.sh bench\` installs nginx-light, redis-server, wrk, stress-ng):"
	echo
	echo "    scripts/bench/slobench.sh [-r ROUNDS] [-s SECS] [-W SECS] [-S web,kv] [-b cpu,cache] [-x NAME=JSON]... [-p] [-u SHARE] [-k DIR] [-o FILE]"
	echo "    make bench BENCHES=slobench SLOBENCH_ROUNDS=5 SLOBENCH_EXTRA='slo={...}'"
	echo
	echo "\`-x NAME=JSON\` adds the scenario \`agent-NAME\`: the same agent with JSON merged over its config (below), so"
	echo "a new controller is measured by adding its settings, beside today's agent, in the same run. The ratios"
	echo "that count are those of blocks run side by side in one run; absolute numbers move with the machine."
	echo "\`-p\` adds the scenarios \`split\` (BE, no agent, the LS pod's processes bound to the first half of the CPUs"
	echo "and BE to the rest: what a cpuset partition between LS and BE would do) and \`alone-split\` (LS alone, bound"
	echo "the same way: what the split costs LS by itself)."
	echo
	echo "## Setup"
	echo
	echo "- cgroups ($(cg_is_v2 && echo v2 || echo "v1: the same paths in cpu, cpuacct, cpuset, memory, freezer")): the LS pod"
	echo "  \`$TEST_PARENT_REL/kubepods/burstable/pod<LS uid>\` (\`cpu.shares\` 1024) with two containers, the server and"
	echo "  the load generator (its CPU time is the LS pod's, as if the clients were remote); BE in a new"
	echo "  \`kubepods/burstable/pod<uid>/<container>\` per block (default 1024 shares); 2048 on \`kubepods\` and \`burstable\`."
	echo "- Servers: web = nginx $(/usr/sbin/nginx -v 2>&1 | sed 's/.*nginx\///') (\`worker_processes 1\`, a 1 KiB page from tmpfs);"
	echo "  kv = $(redis-server --version 2>/dev/null | awk '{ print $1, $3 }') (\`--save '' --appendonly no\`); both on 127.0.0.1."
	echo "- Load: \`loadgen\` (tests/helpers/loadgen.c), every latency kept, nearest-rank percentiles in us. closed = $CLOSED_CONNS"
	echo "  connections, one request each in flight; open = $OPEN_CONNS connections at a fixed total rate of $([ -z "$SHARE" ] &&
		echo "half the alone maximum" || echo "LS's CPU share $SHARE alone (calibrated: $CAL_STEPS runs of $CAL_SECS s at most)"),"
	echo "  latency from each request's intended send time (no coordinated omission)."
	echo "- BE: \`stress-ng --KIND $NPROC --metrics-brief --timeout $SECS\`, KIND cpu (hogs) or cache (thrashing), bogo ops/s (real time)."
	echo "  Started after the load's warm-up of $WARMUP s (counted nowhere); BE start = just before its pod's mkdir."
	echo "- Agent: \`qoslet agent\` (dry-run off), started $SETTLE s plus a random part of its tick interval before the load;"
	echo "  its config overrides the embedded defaults with exactly this (plus \`state_dir\`, \`decisions.file\`, HTTP off):"
	echo
	echo '```json'
	jq . <<<"$AGENT_JSON" | sed "s/$LS_UID/<LS uid>/"
	echo '```'
	for a in "${AGENTS[@]}"; do
		[ -z "${EXTRA[$a]:-}" ] || echo "  $a merges \`${EXTRA[$a]}\` over it."
	done
	echo "- Reaction: the first decision on the BE pod of kind cpu_idle, cpu_quota or cpuset with outcome applied, its"
	echo "  \`ts_ns\` minus BE start."
	echo
	echo "## The alone maximum (closed loop, $MAX_SECS s, measured first in this run)"
	echo
	echo "| Server | loadgen req/s | p50 / p99 us | Debian tool, same connections | Open-loop rate req/s |"
	echo "|---|---:|---:|---|---:|"
	for srv in "${SRV_LIST[@]}"; do
		echo "${MAXLINE[$srv]}"
	done
	echo
	echo "## Results (medians over rounds)"
	for srv in "${SRV_LIST[@]}"; do
		for shape in "${SHAPES[@]}"; do
			k=$srv.$shape
			echo
			echo "### $srv, $shape loop$([ "$shape" = closed ] && echo " ($CLOSED_CONNS connections)" || echo " at ${RATE[$srv]} req/s")"
			echo
			echo "| Scenario | LS req/s | p50 us | p99 us | p99.9 us | p99 / alone | BE ops/s | BE / no agent | LS CPUs | BE CPUs | Reaction ms | Foreign CPUs |"
			echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
			for s in "${SCENARIOS[@]}"; do
				local bek="be-${s##*-}" be_ratio=-
				[[ $s == alone* ]] || be_ratio=$(div "${MED[$k.$s,ops]}" "${MED[$k.$bek,ops]}")
				echo "| $(label "$s") | ${MED[$k.$s,throughput]} | ${MED[$k.$s,p50]} | ${MED[$k.$s,p99]} | ${MED[$k.$s,p999]} | $(div "${MED[$k.$s,p99]}" "${MED[$k.alone,p99]}") | ${MED[$k.$s,ops]//NA/-} | $be_ratio | ${MED[$k.$s,ls_cpu]} | ${MED[$k.$s,be_cpu]} | ${MED[$k.$s,react]//NA/-} | ${MED[$k.$s,foreign]} |"
			done
		done
	done
	echo
	echo "## Issue 14's targets"
	echo
	echo "Ratios of medians; the per-round column pairs the blocks of one round (they ran side by side)."
	echo
	echo "| Agent | Target | Value | Per round, median (range) | Verdict |"
	echo "|---|---|---:|---:|---|"
	for a in "${AGENTS[@]}" $SPLIT; do
		target_rows "$a"
	done
	echo
	echo "## The BE quota over time"
	echo
	echo "From the decision records of round $ROUNDS (the actuator is the only writer of these files): the BE pod's"
	echo "CPU quota (# = CPUs, $NPROC CPUs across) and \`cpu.idle\`, from BE start, at the end of each $(awk -v s="$SECS" -v b="$PLOT_BINS" 'BEGIN { print s / b }') s step."
	for srv in "${SRV_LIST[@]}"; do
		for shape in "${SHAPES[@]}"; do
			for s in "${SCENARIOS[@]}"; do
				[[ $s == agent* ]] || continue
				echo
				echo "$srv, $shape loop, $(label "$s"):"
				echo
				echo '```'
				quota_plot "$srv.$shape.$s" "$ROUNDS"
				echo '```'
			done
		done
	done
	echo
	echo "## Per round"
	echo
	echo "LS req/s, p50 / p99 / p99.9 in us; p99 1st s / rest: the p99 of the block's first second (BE starts and the agent"
	echo "reacts in it) and the median of its other seconds' p99s (us); LS CPUs and BE CPUs: the average CPUs the LS pod (server and load"
	echo "generator) and the BE pods used over the block (cpuacct / cpu.stat); BE in bogo ops/s; foreign = average CPUs busy outside this benchmark's cgroups"
	echo "and the agent during the block; \* = more than 0.10 foreign CPUs, or another load generator running at its start."
	echo
	echo "| Server | Shape | Round | Scenario | LS req/s | p50 / p99 / p99.9 | p99 1st s / rest | Errors | LS CPUs | BE CPUs | BE ops/s | Reaction ms (cpu.idle at) | Agent CPU | Foreign CPUs | Steal % |"
	echo "|---|---|---:|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	for srv in "${SRV_LIST[@]}"; do
		for shape in "${SHAPES[@]}"; do
			for ((r = 1; r <= ROUNDS; r++)); do
				for s in ${ORDER[$srv,$r]}; do
					k=$srv.$shape.$s
					marks=""
					if disturbing "${R[$k,$r,procs]}" || awk -v f="${R[$k,$r,foreign]}" 'BEGIN { exit !(f > 0.10) }'; then
						marks="\*"
					fi
					echo "| $srv | $shape | $r | $s$marks | ${R[$k,$r,throughput]} | ${R[$k,$r,p50]} / ${R[$k,$r,p99]} / ${R[$k,$r,p999]} | ${R[$k,$r,p99_first]} / ${R[$k,$r,p99_rest]} | ${R[$k,$r,errors]} | ${R[$k,$r,ls_cpu]} | ${R[$k,$r,be_cpu]} | ${R[$k,$r,ops]:--} | $([[ $s == agent* ]] && echo "${R[$k,$r,react]} (${R[$k,$r,idle]:-never})" || echo -) | ${R[$k,$r,agent_cpu]:--} | ${R[$k,$r,foreign]} | ${R[$k,$r,steal_pct]} |"
				done
			done
		done
	done
	for k in "${!R[@]}"; do
		[[ $k == *,warn ]] || continue
		# shellcheck disable=SC2016 # the backquotes are markdown
		printf '\n**%s: the agent ran without its fast path:** `%s`\n' "${k%,warn}" "${R[$k]}"
	done
	echo
	echo "## The agent's decisions on the BE pod"
	echo
	echo "Per block: rule, kind=value, ms after BE start."
	echo
	for srv in "${SRV_LIST[@]}"; do
		for shape in "${SHAPES[@]}"; do
			for s in "${SCENARIOS[@]}"; do
				[[ $s == agent* ]] || continue
				for ((r = 1; r <= ROUNDS; r++)); do
					echo "- $srv $shape $s, round $r: ${R[$srv.$shape.$s,$r,decisions]:-none}"
				done
			done
		done
	done
}

if [ -n "$OUT" ]; then
	report | tee "$OUT"
else
	report
fi
