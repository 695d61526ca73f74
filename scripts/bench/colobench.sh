#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/bench/colobench.sh [-V KERNEL] [-r ROUNDS] [-s SECS] [-i INTERVAL_US] [-w WORK_US] [-p P99_US] [-q SECS] [-x NAME=JSON]... [-k DIR] [-o FILE]
#
# Co-location: what best-effort batch work does to a latency-sensitive
# service on the same node, without and with `qoslet agent`.
#
# LS service: tests/helpers/wakelat, one SCHED_OTHER thread waking every
# INTERVAL_US (1 ms; absolute deadlines) for SECS seconds; the figure is each wake-up's
# lateness (timer slack + wake-up + run-queue wait), every sample kept.
# With -w, it also works WORK_US of CPU after each wake-up, as a request
# handler does: a bare wake-up loop needs so little CPU that the scheduler
# (EEVDF) lets it preempt CPU hogs of equal weight at once; a service using
# most of its fair share of a CPU is the one BE hurts.
# (cyclictest cannot run here: it always makes its main thread SCHED_FIFO,
# which a kubepods cgroup refuses; see wakelat.c.)
# BE: `stress-ng --cpu NPROC --metrics-brief` for SECS seconds; the figure
# is bogo ops/s (real time).
#
# Placement, under a uniquely named parent (in every v1 hierarchy the agent
# reads, or in v2), shaped as the kubelet lays out pods (cgroupfs driver; the
# systemd driver's kubepods.slice/kubepods-burstable.slice/... where
# QOSLET_CGROUP_LAYOUT=systemd, as in the VMs):
#   PARENT/kubepods/burstable/pod<LS uid>/<container>  LS, cpu.shares 1024
#   PARENT/kubepods/burstable/pod<BE uid>/<container>  BE, cpu.shares 1024 (default)
# i.e. both with a CPU request of 1 CPU at normal weight (kubepods' own
# besteffort tier would already give BE a tiny weight). The agent's config
# classes the LS pod LS by its exact path and every other burstable pod BE.
#
# Scenarios, each a block of SECS seconds with a fresh LS process:
#   alone   LS alone
#   be      LS + BE, no agent
#   agent   LS + BE, `qoslet agent` started (and settled) before; BE's pod
#           cgroup is created and stress-ng started in it at once, and the
#           reaction is the first protective decision on the BE pod
#           (cpu_idle, cpu_quota or cpuset, applied): its ts_ns - BE start.
#   agent-NAME  as agent, with -x NAME=JSON merged over the agent's config
# The LS process starts first, then BE: the LS window covers BE's start and
# the agent's reaction. One round runs every scenario once; each round starts
# one scenario later. Medians over rounds, per-round numbers in the report.
#
# Noise: every block records the CPU time spent outside its cgroups and the
# agent ("foreign"). Before each block it waits up to BLOCK_QUIET s for a
# quiet machine, and repeats a block disturbed by foreign load once, during
# the first BUDGET s of measuring (so a full run stays near 10 minutes).
#
# Targets (issue 4): LS p99 with the agent at most 1.25x alone; BE keeps at
# least half its no-agent throughput; median reaction at most 250 ms.
#
# With -V KERNEL it boots the VM of scripts/vm/matrix's entry KERNEL
# (scripts/vm/run.sh: cgroup v2, the systemd layout, TCG) and runs itself
# there with a workload scaled for emulation (see VM_* below), then writes
# its report as the section "KERNEL (emulated)" of FILE, keeping the rest of
# FILE; a host run keeps FILE's emulated sections in turn. Under TCG the
# guest runs 10-30x slower: only the ratios of its figures mean anything, not
# their values beside the host's. `make bench-colo-vm KERNEL=5.10` runs it.
#
# Everything it creates lives under its own parent cgroup, pin directory and
# temporary directory, and is removed on exit, also on failure (lib.sh).
# Exit 0 after a measurement, 77 when it cannot run here, 1 on failure,
# 2 on bad usage.
#
#   -V KERNEL  run in the VM of matrix entry KERNEL (e.g. 5.10); the other
#              options default to the VM's (VM_ROUNDS etc. below)
#   -r ROUNDS  rounds (default $COLOBENCH_ROUNDS, else 5)
#   -s SECS    seconds of LS measurement per block (default 20)
#   -i INTERVAL_US  the LS service's wake-up period (default 1000)
#   -w WORK_US CPU work of the LS service per wake-up (default
#              $COLOBENCH_WORK_US, else 800: a service that is busy 80% of
#              the time. A bare wake-up loop (0) barely runs, and EEVDF lets
#              it preempt BE hogs at normal weight at once: nothing to protect)
#   -p P99_US  the agent's interference.runq.p99_us, the LS run-queue wait
#              that wakes its fast path (default 1000: one period)
#   -q SECS    first wait up to SECS for a quiet machine (default 0: check
#              once and warn); run.sh passes BENCH_QUIET_WAIT
#   -x NAME=JSON  an extra agent scenario "agent-NAME" (repeatable)
#   -k DIR     keep the raw data in DIR: LS samples (ls.SCENARIO.ROUND, as
#              wakelat prints them), stress-ng's YAML, the agent's decisions
#              and log
#   -o FILE    also write the markdown report to FILE
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# lib.sh names the parent cgroup qoslet-test-<tag>-<random>.
export QOSLET_TEST_TAG=colobench-$$
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh"
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/agent_lib.sh
. "$ROOT/tests/integration/agent_lib.sh"
# shellcheck source-path=SCRIPTDIR source=scripts/bench/colo_lib.sh
. "$ROOT/scripts/bench/colo_lib.sh"
WAKELAT=${WAKELAT:-$ROOT/build/tests/helpers/wakelat}

ROUNDS=${COLOBENCH_ROUNDS:-5}
SECS=20
QUIET_WAIT=0
OUT=""
KEEP=""
CMDLINE=$(printf '%q ' "$0" "$@")
CMDLINE=${CMDLINE% }
INTERVAL_US=1000
WORK_US=${COLOBENCH_WORK_US:-800}
SETTLE=1         # seconds between blocks, and after the agent's start-up
FP_P99_US=1000   # the agent's interference.runq.p99_us: fast-path alerts over 1 ms
KERNEL=""
# The VM's workload (-V). Under TCG every wake-up, timer interrupt and
# context switch costs 10-30x its host time, while wakelat's work is wall
# time: 800 us of work every 1 ms would leave the emulated kernel no time to
# wake the service, and LS alone would already be late. A 10 ms period with
# 6 ms of work keeps a service that needs most of a CPU (60%) with room for
# the slower wake-up path; the fast-path threshold scales with the period.
# Fewer, longer blocks: 3000 samples a block, and a boot plus 9 blocks in
# about 15 minutes.
VM_ROUNDS=3 VM_SECS=30 VM_INTERVAL_US=10000 VM_WORK_US=6000 VM_P99_US=10000
TARGET_P99=1.25  # LS p99 with the agent / alone, at most
TARGET_BE=0.5    # BE throughput with the agent / without, at least
TARGET_REACT=250 # ms from BE start to the first protective decision, median
NOISE_CPUS=0.10  # a block with more foreign CPU use than this is marked, and repeated
BLOCK_QUIET=30   # seconds each block waits at most for a quiet machine
BUDGET=480       # seconds after the start of measuring: no more waits or repeats

usage() {
	sed -n '4p' "$0" | sed 's/^# /usage: /' >&2
	exit 2
}

SCENARIOS=(alone be agent)
# Options given, for -V: only those not given take the VM's defaults.
declare -A GIVEN=()
while getopts "V:r:s:i:w:p:q:x:k:o:h" opt; do
	GIVEN[$opt]=1
	case $opt in
	V) KERNEL=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	s) SECS=$OPTARG ;;
	i) INTERVAL_US=$OPTARG ;;
	w) WORK_US=$OPTARG ;;
	p) FP_P99_US=$OPTARG ;;
	q) QUIET_WAIT=$OPTARG ;;
	x)
		colo_extra "$OPTARG"
		SCENARIOS+=("$EXTRA_NAME")
		;;
	k) KEEP=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
if [ -n "$KERNEL" ]; then
	[ -n "${GIVEN[r]:-}" ] || ROUNDS=$VM_ROUNDS
	[ -n "${GIVEN[s]:-}" ] || SECS=$VM_SECS
	[ -n "${GIVEN[i]:-}" ] || INTERVAL_US=$VM_INTERVAL_US
	[ -n "${GIVEN[w]:-}" ] || WORK_US=$VM_WORK_US
	[ -n "${GIVEN[p]:-}" ] || FP_P99_US=$VM_P99_US
fi
for n in "$ROUNDS" "$SECS" "$QUIET_WAIT" "$WORK_US" "$INTERVAL_US" "$FP_P99_US"; do
	[[ $n =~ ^[0-9]+$ ]] || usage
done
if [ "$ROUNDS" -lt 1 ] || [ "$SECS" -lt 2 ] || [ "$WORK_US" -ge "$INTERVAL_US" ] || [ "$FP_P99_US" -lt 1 ]; then
	usage
fi

# lib.sh's log() prints on stdout, which carries the report here.
log() {
	echo "colobench: $*" >&2
}

# The report file: run.sh writes to a temporary file beside it first.
REPORT_FILE=${OUT/docs\/bench\/.colobench.md.*/docs/bench/colobench.md}

# The report file is the host's report, then one section "## NAME
# (emulated)" per VM run (-V), each at the end of the file, replaced only by
# a run of its own kernel. Blank lines are kept only between text.
# emulated_sections FILE NAME: FILE's sections, but NAME's, each after a
# blank line; host_part FILE: what comes before them.
emulated_sections() {
	[ -r "$1" ] || return 0
	awk -v skip="## $2 (emulated)" '
		/^## .* \(emulated\)$/ { keep = ($0 != skip); b = 0; if (keep) print "\n" $0; next }
		!keep { next }
		/^$/ { b++; next }
		{ while (b) { print ""; b-- } print }' "$1"
}
host_part() {
	[ -r "$1" ] || return 0
	awk '/^## .* \(emulated\)$/ { exit } /^$/ { b++; next } { while (b) { print ""; b-- } print }' "$1"
}

[ -x "$QOSLET" ] || skip "$QOSLET is missing (run make)"
[ -x "$WAKELAT" ] || skip "$WAKELAT is missing (run make $WAKELAT)"

# -V: the whole run in the VM of matrix entry KERNEL, on the binaries built
# here (scripts/vm/run.sh mounts this machine's root read-only); the guest's
# report becomes the section "KERNEL (emulated)" of -o's file.
if [ -n "$KERNEL" ]; then
	[ -z "${QOSLET_VM:-}" ] || { echo "colobench: -V inside a VM" >&2; exit 2; }
	read -r _ pkg vm_cg vm_layout vm_extra < <(awk -v k="$KERNEL" '$1 == k' "$ROOT/scripts/vm/matrix") || true
	[ -n "${pkg:-}" ] || { echo "colobench: -V: no entry '$KERNEL' in scripts/vm/matrix" >&2; exit 2; }
	[ "$(id -u)" = 0 ] || skip "needs root (boots the VM, loads BPF programs)"
	command -v qemu-system-x86_64 >/dev/null || skip "needs qemu-system-x86_64 for the VM (scripts/deps.sh vm)"
	vmout=$(mktemp -d /tmp/qoslet-colobench-vm.XXXXXX)
	trap 'rm -rf "$vmout"' EXIT
	args=(-r "$ROUNDS" -s "$SECS" -i "$INTERVAL_US" -w "$WORK_US" -p "$FP_P99_US" -q "$QUIET_WAIT"
		-o /run/qoslet-vm/out/colobench.md)
	for x in "${!EXTRA[@]}"; do
		args+=(-x "${x#agent-}=${EXTRA[$x]}")
	done
	[ -z "$KEEP" ] || args+=(-k /run/qoslet-vm/out/raw)
	# The guest's report names the host's command and machine.
	host="$(uname -r), $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(nproc) CPUs"
	log "running in the $KERNEL VM ($pkg, cgroup $vm_cg, $vm_layout layout; under TCG, about 15 minutes)"
	# The host's load slows the emulation (the guest cannot see it): its
	# 1-minute load average every 10 s goes into the report.
	while sleep 10; do cut -d' ' -f1 /proc/loadavg; done >"$vmout/hostload" &
	sampler=$!
	# shellcheck disable=SC2086 # the matrix's extra kernel arguments are words
	VM_MODE=integration VM_TIMEOUT=${VM_TIMEOUT:-2400} \
		VM_COMMAND="COLO_CMDLINE=$(printf %q "${CMDLINE/docs\/bench\/.colobench.md.*/docs/bench/colobench.md}") COLO_HOST=$(printf %q "$host") scripts/bench/colobench.sh $(printf '%q ' "${args[@]}")" \
		"$ROOT/scripts/vm/run.sh" -c "$vm_cg" -l "$vm_layout" -o "$vmout" "$pkg" -- $vm_extra >&2 ||
		{ kill "$sampler"; fail "the $KERNEL VM run failed: $(tail -n 5 "$vmout/log" 2>/dev/null)"; }
	kill "$sampler"
	hostload=$(sort -g "$vmout/hostload" | awk '{ v[++n] = $1 } END {
		if (n) printf "min %s, median %s, max %s (%d samples, every 10 s)", v[1], v[int((n + 1) / 2)], v[n], n }')
	[ -s "$vmout/colobench.md" ] || fail "the $KERNEL VM left no report"
	[ -z "$KEEP" ] || { mkdir -p "$KEEP" && cp -r "$vmout/raw/." "$KEEP/"; }
	section() {
		echo "## $KERNEL (emulated)"
		tail -n +2 "$vmout/colobench.md" | sed 's/^## /### /' |
			awk -v h="${hostload:-not sampled}" '{ print } /^- 1-minute load average/ {
				print "- The host'"'"'s 1-minute load average during the VM run: " h "; every process there slows the emulation" }'
	}
	if [ -n "$OUT" ]; then
		{
			host_part "$REPORT_FILE"
			emulated_sections "$REPORT_FILE" "$KERNEL"
			echo
			section
		} >"$vmout/report.md"
		cp "$vmout/report.md" "$OUT"
		section
	else
		section
	fi
	exit 0
fi

require_root
require_cmds jq stress-ng taskset
detect_cgroup_root >/dev/null || skip "no cgroup hierarchy with the cpu controller"

NPROC=$(nproc)
ALL_CPUS=0-$((NPROC - 1))
# In a VM nothing foreign runs: the guest's CPU time outside this run is its
# own kernel under emulation (a TCG guest at rest is only 85% idle), and the
# host's load shows as slower emulation, not there. So no quiet waits,
# repeats or marks in a VM.
if [ -n "${QOSLET_VM:-}" ]; then
	BUDGET=0
	NOISE_CPUS=$NPROC
fi

test_setup
agent_setup
colo_ls_pod "$FP_P99_US"
LS_CG=$(colo_container burstable "$LS_UID")

# ---------------------------------------------------------------- helpers

# Starts the LS service for SECS in its container; LS_PID.
ls_start() {
	# shellcheck disable=SC2016
	agent_run "$LS_CG" "$ALL_CPUS" sh -c 'out=$1; shift; exec "$@" >"$out"' sh "$1" \
		"$WAKELAT" "$INTERVAL_US" "$SECS" "$WORK_US"
	LS_PID=$CG_PID
}

# Samples file $1 (wakelat's output): "n p50 p99 max" in us; with $2, only
# the samples whose deadline is $2 us or later after the first.
ls_stats() {
	tail -n +2 "$1" | awk -v from="${2:-0}" '$1 >= from { print $2 / 1000 }' | sort -g |
		awk '{ v[++n] = $1 }
		END {
			if (!n) { print "0 NA NA NA"; exit }
			# Nearest rank: the smallest value with at least q of the samples at or below it.
			i50 = int(n * 0.50); if (i50 < n * 0.50) i50++
			i99 = int(n * 0.99); if (i99 < n * 0.99) i99++
			printf "%d %.1f %.1f %.1f\n", n, v[i50 ? i50 : 1], v[i99 ? i99 : 1], v[n]
		}'
}

# Scenario $1, round $2: one block.
run_block() {
	local s=$1 r=$2 ls=$TMP/ls.$1.$2 be=$TMP/be.$1.$2.yaml cut n p50 p99 max
	R[$s,$r,procs]=$(foreign_procs)
	AGENT_PID=""
	[[ $s != agent* ]] || colo_agent_start "$s" "$r" "${EXTRA[$s]:-"{}"}"
	colo_mark_start
	ls_start "$ls"
	[ "$s" = alone ] || be_start cpu "$be"
	reap "$LS_PID" || fail "$s round $r: wakelat exited with status $?"
	if [ "$s" != alone ]; then
		reap "$BE_PID" || fail "$s round $r: stress-ng exited with status $?"
	fi
	colo_mark_end "$s" "$r"
	[ -z "$AGENT_PID" ] || colo_agent_stop "$s" "$r"
	read -r n p50 p99 max < <(ls_stats "$ls")
	R[$s,$r,n]=$n R[$s,$r,p50]=$p50 R[$s,$r,p99]=$p99 R[$s,$r,max]=$max
	if [ "$s" != alone ]; then
		R[$s,$r,ops]=$(be_rate "$be") || fail "$s round $r: no bogo ops/s in $be"
		pod_remove "$BE_POD"
	fi
	if [[ $s == agent* ]]; then
		colo_be_decisions "$s" "$r" "$BE_POD" "$BE_T0"
		# LS after the first protective action: the steady state under the agent.
		if [ "${R[$s,$r,react]}" != NA ]; then
			cut=$(awk -v s="$(sed -n '1s/^start_realtime_ns //p' "$ls")" -v t="$BE_T0" -v m="${R[$s,$r,react]}" \
				'BEGIN { printf "%.0f\n", (t - s) / 1000 + m * 1000 }')
			read -r _ _ p99 _ < <(ls_stats "$ls" "$cut")
			R[$s,$r,p99_after]=$p99
		fi
	fi
	local msg="round $r: $s: LS p50 ${R[$s,$r,p50]} p99 ${R[$s,$r,p99]} max ${R[$s,$r,max]} us (${R[$s,$r,n]} samples)"
	[ -z "${R[$s,$r,ops]:-}" ] || msg+=", BE ${R[$s,$r,ops]} ops/s"
	[ -z "${R[$s,$r,react]:-}" ] || msg+=", reaction ${R[$s,$r,react]} ms"
	msg+=", foreign ${R[$s,$r,foreign]} CPUs"
	[ -z "${R[$s,$r,procs]}" ] || msg+=" (running: ${R[$s,$r,procs]% })"
	[ -z "${R[$s,$r,warn]:-}" ] || msg+="; agent: ${R[$s,$r,warn]}"
	log "$msg"
}

# A block disturbed by foreign load is repeated once, while the time budget
# lasts; the disturbed one is listed in the report.
DISCARDED=()
gated_block() {
	local s=$1 r=$2 attempt
	for attempt in 1 2; do
		if [ "$SECONDS" -ge "$BUDGET_END" ]; then
			sleep "$SETTLE"
		elif ! wait_quiet "$BLOCK_QUIET"; then
			log "round $r: $s: not quiet after ${BLOCK_QUIET} s ($QUIET); measuring anyway"
		fi
		run_block "$s" "$r"
		noisy "$s" "$r" || return 0
		[ "$attempt" = 1 ] && [ "$SECONDS" -lt "$BUDGET_END" ] || return 0
		DISCARDED+=("round $r, $s: LS p50 / p99 / max ${R[$s,$r,p50]} / ${R[$s,$r,p99]} / ${R[$s,$r,max]} us${R[$s,$r,ops]:+, BE ${R[$s,$r,ops]} ops/s}, foreign ${R[$s,$r,foreign]} CPUs${R[$s,$r,procs]:+ (running: ${R[$s,$r,procs]% })}")
		log "round $r: $s: disturbed by foreign load, repeating it"
		unset "R[$s,$r,ops]" "R[$s,$r,react]" "R[$s,$r,warn]" "R[$s,$r,p99_after]"
	done
}

# True when block $1 of round $2 ran next to foreign load.
noisy() {
	disturbing "${R[$1,$2,procs]}" || awk -v f="${R[$1,$2,foreign]}" -v m="$NOISE_CPUS" 'BEGIN { exit !(f > m) }'
}

# ---------------------------------------------------------------- measure

N=${#SCENARIOS[@]}
colo_run_start "$QUIET_WAIT"
BUDGET_END=$((SECONDS + BUDGET))
log "$ROUNDS rounds of ${SCENARIOS[*]}, ${SECS} s each; parent $TEST_PARENT"
declare -A ORDER=()
for ((r = 1; r <= ROUNDS; r++)); do
	order=()
	for ((i = 0; i < N; i++)); do
		order+=("${SCENARIOS[$(((r - 1 + i) % N))]}")
	done
	ORDER[$r]="${order[*]}"
	for s in "${order[@]}"; do
		gated_block "$s" "$r"
	done
done
LOAD_END=$(cut -d' ' -f1 /proc/loadavg)
if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP"
	cp "$TMP"/ls.* "$TMP"/be.*.yaml "$KEEP"/
	cp "$TMP"/decisions.* "$TMP"/agent.*.err "$KEEP"/ 2>/dev/null || true
	log "raw data kept in $KEEP"
fi

# ---------------------------------------------------------------- report

declare -A MED=()
for s in "${SCENARIOS[@]}"; do
	for f in p50 p99 max ops react p99_after foreign; do
		MED[$s,$f]=$(col "$s" "$f" | median)
	done
done
P99_RATIO=$(div "${MED[agent,p99]}" "${MED[alone,p99]}")
BE_RATIO=$(div "${MED[agent,ops]}" "${MED[be,ops]}")
CPU_MODEL=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
TREE_VERSION=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
SLACK=$(awk '/^timerslack_ns/ { print $2 }' /proc/self/status 2>/dev/null || true)
[ -n "$SLACK" ] || SLACK=$(cat /proc/self/timerslack_ns 2>/dev/null || echo unknown)

declare -A LABEL=([alone]="(1) LS alone" [be]="(2) LS + BE, no agent" [agent]="(3) LS + BE + agent")
label() {
	echo "${LABEL[$1]:-(3x) LS + BE + agent, ${EXTRA[$1]}}"
}

report() {
	local s r marks nnoisy=0 t f ticks react acpu seen hurt
	echo "# colobench: an LS service next to BE batch, with and without qoslet agent"
	echo
	if [ -n "${QOSLET_VM:-}" ]; then
		echo "- **Emulated (${QOSLET_VM^^}): ratios only, not comparable with the host's figures.** The guest runs 10-30x"
		echo "  slower than hardware; its wake-ups, timer interrupts and context switches cost what the emulator makes of them."
		echo "- Date: $START; kernel $(uname -r) in a qemu VM (${QOSLET_VM}, cgroup v2, ${QOSLET_CGROUP_LAYOUT:-cgroupfs} layout), $NPROC vCPUs;"
		echo "  host ${COLO_HOST:-unknown}; tree $TREE_VERSION"
		echo "- Command: \`${COLO_CMDLINE:-$CMDLINE}\` (\`make bench-colo-vm KERNEL=...\` runs it; not in \`make bench\`)"
	else
		echo "- Date: $START; kernel $(uname -r); ${CPU_MODEL:-$(uname -m)}; $NPROC CPUs; tree $TREE_VERSION"
		# run.sh writes to a temporary file first: show the file the report lands in.
		echo "- Command: \`${CMDLINE/docs\/bench\/.colobench.md.*/docs/bench/colobench.md}\` (\`make bench\` runs it through \`scripts/bench/run.sh\`; \`COLOBENCH_ROUNDS\` sets the rounds)"
	fi
	echo "- Rounds: $ROUNDS, each running every scenario once for $SECS s, starting one scenario later each round"
	echo "- 1-minute load average: $LOAD_START at start, $LOAD_END at end; quiet at start: $QUIET_START"
	echo
	echo "## Setup"
	echo
	echo "- cgroups ($(cg_is_v2 && echo "v2, \`cpu.weight\` $(cat "$LS_POD/cpu.weight") for 1024 shares" || echo "v1: the same paths in cpu, cpuacct, cpuset, memory, freezer")): \`$TEST_PARENT_REL/$(kube_container_rel burstable "<uid>" "<container>")\`"
	echo "  for LS (one pod for the whole run) and for BE (a new pod per block), \`cpu.shares\` 1024 on each pod"
	echo "  (a CPU request of 1 CPU), 2048 on the \`kubepods\` and \`burstable\` tiers (the sum of the requests), as the kubelet sets them."
	echo "- LS: \`wakelat $INTERVAL_US $SECS $WORK_US\` (tests/helpers/wakelat.c): one SCHED_OTHER thread sleeping to absolute"
	echo "  deadlines $INTERVAL_US us apart$( [ "$WORK_US" = 0 ] && echo ", doing nothing else (a bare wake-up loop)" || echo " and working $WORK_US us of CPU after each wake-up (a service using $((WORK_US * 100 / INTERVAL_US))% of a CPU)");"
	echo "  each sample is its wake-up's lateness (timer slack ${SLACK} ns + wake-up + run-queue wait)."
	echo "  Every sample is kept; p50/p99 are nearest-rank over the block. cyclictest cannot run in a kubepods cgroup:"
	echo "  it always makes its main thread SCHED_FIFO, which a v1 cpu cgroup without an RT budget refuses."
	echo "- BE: \`stress-ng --cpu $NPROC --metrics-brief --timeout $SECS\` (unpinned, like LS), bogo ops/s (real time)."
	echo "  Its pod cgroup is created and stress-ng started in it right after LS starts; BE start = just before the pod's mkdir."
	echo "- Agent: \`qoslet agent --config CFG --pin-dir DIR\`, started ${SETTLE} s plus a random part of its tick interval before"
	echo "  the block (so BE starts at a random phase of its ticks, as a pod would). CFG overrides the"
	echo "  embedded defaults with exactly this (plus \`state_dir\` and \`decisions.file\` in the run's temporary directory):"
	echo
	echo '```json'
	jq . <<<"$AGENT_JSON" | sed "s/$LS_UID/<LS uid>/"
	echo '```'
	echo
	echo "  \`classes\`: the LS pod by its path, every other burstable pod BE. \`interference.runq.p99_us\` $FP_P99_US"
	echo "  (default 10000): the fast path wakes the agent when an LS run-queue wait exceeds $FP_P99_US us."
	echo "- Reaction: the first decision on the BE pod of kind cpu_idle, cpu_quota or cpuset with outcome applied;"
	echo "  its \`ts_ns\` (the tick's time) minus BE start. The per-round table also gives when \`cpu.idle\` was set: where"
	echo "  \`suppress.min_cpus\` (default 2) is at least the node's CPUs, the suppress quota is the whole node and limits"
	echo "  nothing, so \`cpu.idle\` is the action that protects."
	echo
	echo "## Results (medians over rounds)"
	echo
	echo "| Configuration | LS p50 us | LS p99 us | LS max us | LS p99 after the first action us | BE bogo ops/s | Reaction ms | Foreign CPUs |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for s in "${SCENARIOS[@]}"; do
		if [[ $s == agent* ]]; then
			echo "| $(label "$s") | ${MED[$s,p50]} | ${MED[$s,p99]} | ${MED[$s,max]} | ${MED[$s,p99_after]} | ${MED[$s,ops]} | ${MED[$s,react]} | ${MED[$s,foreign]} |"
		else
			echo "| $(label "$s") | ${MED[$s,p50]} | ${MED[$s,p99]} | ${MED[$s,max]} | - | ${MED[$s,ops]//NA/-} | - | ${MED[$s,foreign]} |"
		fi
	done
	echo
	echo "| Target | Value (ratio of medians) | Per-round ratio, median (range) | Verdict |"
	echo "|---|---:|---:|---|"
	echo "| LS p99 (3) / (1) at most $TARGET_P99 | $P99_RATIO | $(paired agent alone p99 | median) ($(paired agent alone p99 | range)) | $(verdict "$P99_RATIO" le "$TARGET_P99") |"
	echo "| BE throughput (3) / (2) at least $TARGET_BE | $BE_RATIO | $(paired agent be ops | median) ($(paired agent be ops | range)) | $(verdict "$BE_RATIO" ge "$TARGET_BE") |"
	echo "| Median reaction at most $TARGET_REACT ms | ${MED[agent,react]} ms | ($(col agent react | range) ms) | $(verdict "${MED[agent,react]}" le "$TARGET_REACT") |"
	for s in "${SCENARIOS[@]}"; do
		[ -n "${EXTRA[$s]:-}" ] || continue
		echo "| extra: $s, p99 / (1); BE / (2); reaction | $(div "${MED[$s,p99]}" "${MED[alone,p99]}"); $(div "${MED[$s,ops]}" "${MED[be,ops]}"); ${MED[$s,react]} ms | | (not a target) |"
	done
	echo
	hurt=$(div "${MED[be,p99]}" "${MED[alone,p99]}")
	echo "Also for reference: LS p99 (2) / (1) = $hurt, what BE at normal weight does without the agent."
	if [ "$hurt" != NA ] && awk -v h="$hurt" -v t="$TARGET_P99" 'BEGIN { exit !(h <= t) }'; then
		echo
		echo "**BE did not delay this LS service beyond the target even without the agent**, so the LS verdict above"
		echo "does not test the agent's protection. Run with \`-w\` (CPU work per wake-up; \`-w 800\` uses 80% of a CPU)"
		echo "for a service that BE does delay."
	fi
	echo
	echo "Reading it: on a VM, a wake-up on an idle CPU costs more than on a busy one (the vCPU halts and must be woken),"
	echo "so LS alone can have a higher p50 than LS next to BE; a ratio below 1 is not a gain from the agent. A p99"
	echo "from one $SECS s block rests on its ~$((SECS * 10000 / INTERVAL_US)) worst samples: a few ms of foreign load moves it, hence the per-round"
	echo "table and the foreign-CPU column."
	echo
	echo "## Per round"
	echo
	echo "LS p50 / p99 / max in us; BE in bogo ops/s; foreign = average CPUs busy outside this benchmark's cgroups and the"
	if [ -n "${QOSLET_VM:-}" ]; then
		echo "agent during the block: in the VM, where nothing else runs, the guest kernel's own time under emulation. No"
		echo "block is marked, waited for or repeated in a VM: the host's load slows the emulation instead."
	else
		echo "agent during the block (other jobs, interrupts); blocks with more than $NOISE_CPUS foreign CPUs, or with another load"
		echo "generator running at their start, are marked \*. Before each block the script waits up to $BLOCK_QUIET s for a quiet"
		echo "machine (CPUs 90% idle over 1 s, no foreign load generator), and repeats a disturbed block once, for the first"
		echo "$BUDGET s of the run."
	fi
	echo
	echo "| Round | Scenario | LS p50 / p99 / max | Samples | BE ops/s | Reaction ms (cpu.idle at) | Agent ticks (fast path) | Agent CPU | Foreign CPUs | Steal % |"
	echo "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"
	for ((r = 1; r <= ROUNDS; r++)); do
		for s in ${ORDER[$r]}; do
			marks=""
			if noisy "$s" "$r"; then
				marks="\*"
				nnoisy=$((nnoisy + 1))
			fi
			ticks="-" react="-" acpu="-"
			if [[ $s == agent* ]]; then
				read -r t f <<<"${R[$s,$r,ticks]:-? ?}"
				ticks="$t ($f)"
				react="${R[$s,$r,react]} (${R[$s,$r,idle]:-never})"
				acpu="${R[$s,$r,agent_cpu]}"
			fi
			echo "| $r | $s$marks | ${R[$s,$r,p50]} / ${R[$s,$r,p99]} / ${R[$s,$r,max]} | ${R[$s,$r,n]} | ${R[$s,$r,ops]:--} | $react | $ticks | $acpu | ${R[$s,$r,foreign]} | ${R[$s,$r,steal_pct]} |"
		done
	done
	echo
	seen=$(for ((r = 1; r <= ROUNDS; r++)); do
		for s in "${SCENARIOS[@]}"; do
			[ -z "${R[$s,$r,procs]}" ] || echo "- round $r, $s: ${R[$s,$r,procs]% }"
		done
	done)
	echo "$nnoisy of $((ROUNDS * N)) blocks marked \*.${seen:+ Other processes seen at the start of a block:}"
	[ -z "$seen" ] || printf '\n%s\n' "$seen"
	if [ "${#DISCARDED[@]}" -gt 0 ]; then
		echo
		echo "Blocks disturbed by foreign load and repeated (not in any table above):"
		echo
		printf -- '- %s\n' "${DISCARDED[@]}"
	fi
	echo
	echo "Agent CPU is the agent's own CPU time over the block, in CPUs. Ticks count its whole run, including its start-up"
	echo "wait before the block."
	for ((r = 1; r <= ROUNDS; r++)); do
		for s in "${SCENARIOS[@]}"; do
			# shellcheck disable=SC2016 # the backquotes are markdown
			[ -z "${R[$s,$r,warn]:-}" ] || printf '\n**Round %s, %s: the agent ran without its fast path:** `%s`\n' "$r" "$s" "${R[$s,$r,warn]}"
		done
	done
	echo
	echo "## The agent's decisions on the BE pod"
	echo
	echo "Per round, in order: rule, kind=value, ms after BE start (decisions on the LS pod, if any, are not listed)."
	echo
	for s in "${SCENARIOS[@]}"; do
		[[ $s == agent* ]] || continue
		for ((r = 1; r <= ROUNDS; r++)); do
			echo "- $s, round $r: ${R[$s,$r,decisions]:-none}"
		done
	done
}

if [ -n "$OUT" ]; then
	{
		report
		emulated_sections "$REPORT_FILE" ""
	} | tee "$OUT"
else
	report
fi
