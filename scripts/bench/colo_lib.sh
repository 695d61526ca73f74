# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash disable=SC2034 # EXTRA and R are for the benchmarks that source this
#
# scripts/bench/colo_lib.sh: what the co-location benchmarks share
# (colobench.sh, slobench.sh): CPU accounting of a block (the benchmark's own
# cgroups, the agent, the foreign rest), waiting for a quiet machine, starting
# the agent for a block, reading its decisions on a BE pod, and the
# median/ratio/verdict arithmetic of the reports.
#
# Sourced after tests/integration/lib.sh and agent_lib.sh, and after
# test_setup and agent_setup. Reads the caller's ROUNDS, SECS, SETTLE, NPROC
# and ALL_CPUS; the blocks' results go to R.

# Processes of other jobs that load the CPUs (the benchmarks' own, run by
# someone else); qoslet is listed but is not counted as a load.
BUSY_PROCS=(stress-ng dutycycle cyclictest memhog qoslet wrk redis-benchmark loadgen fileload)
HZ=$(getconf CLK_TCK)
declare -A R=()     # "scenario,round,field" -> value
declare -A EXTRA=() # agent-NAME -> JSON, from -x

# -x NAME=JSON: EXTRA[agent-NAME]=JSON, and EXTRA_NAME=agent-NAME; a bad one
# is a usage error (the caller's usage) naming it.
colo_extra() {
	if [[ ! $1 =~ ^([a-z0-9_]+)=(.+)$ ]] || ! jq -e 'type == "object"' <<<"${BASH_REMATCH[2]}" >/dev/null 2>&1; then
		echo "${0##*/}: bad -x '$1': want NAME=JSON, NAME of a-z, 0-9 and _, JSON an object" >&2
		usage
	fi
	EXTRA_NAME=agent-${BASH_REMATCH[1]}
	EXTRA[$EXTRA_NAME]=${BASH_REMATCH[2]}
}

# The CPU time of cgroup $1 (its path in the cpu hierarchy) in ns.
cg_cpu_ns() {
	if cg_is_v2; then
		awk '$1 == "usage_usec" { printf "%.0f\n", $2 * 1000 }' "$1/cpu.stat"
	else
		cat "$(agent_cg_in "$1" cpuacct)/cpuacct.usage"
	fi
}

# Node CPU time from /proc/stat, in ns: "busy steal total".
node_cpu_ns() {
	awk -v hz="$HZ" '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i
		printf "%.0f %.0f %.0f\n", ($2 + $3 + $4 + $7 + $8) * 1e9 / hz, $9 * 1e9 / hz, t * 1e9 / hz }' /proc/stat
}

# CPU time of process $1 in ns (0 when there is none).
proc_cpu_ns() {
	if [ -z "$1" ] || [ ! -r "/proc/$1/stat" ]; then
		echo 0
		return 0
	fi
	sed 's/.*) //' "/proc/$1/stat" | awk -v hz="$HZ" '{ printf "%.0f\n", ($12 + $13) * 1e9 / hz }'
}

# Busy processes that are not ours (ours are in our cgroups, or the agent).
foreign_procs() {
	local p pid cg
	for p in "${BUSY_PROCS[@]}"; do
		for pid in $(pgrep -x "$p" 2>/dev/null); do
			[ "$pid" != "${AGENT_PID:-}" ] || continue
			# Its cpu cgroup: the v1 cpu line, else the v2 one.
			cg=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { c = $3 } $1 == "0" { u = $3 }
				END { print (c != "" ? c : u) }' "/proc/$pid/cgroup" 2>/dev/null)
			case $cg in "$TEST_PARENT_REL"/*) continue ;; esac
			printf '%s ' "$p"
			break
		done
	done
}

# Foreign processes that disturb a block: load generators (another qoslet
# is reported, but it is a tracer, not a load, and may idle for long).
disturbing() {
	local p
	for p in $1; do
		[ "$p" = qoslet ] || return 0
	done
	return 1
}

# The LS pod, kubelet-shaped, in the layout of QOSLET_CGROUP_LAYOUT
# (kube_pod_rel in lib.sh: kubepods/burstable/pod<uid> by default, the
# systemd driver's kubepods.slice/kubepods-burstable.slice/... in the VMs):
# LS_UID, LS_POD (its pod cgroup, cpu.shares 1024: a CPU request of 1 CPU),
# and the tiers' weights as the kubelet sets them, the sum of their pods'
# requests (1 CPU each, at most two pods at a time). AGENT_JSON: the agent's
# overrides of its embedded defaults, every one of them (the reports print
# it; agent_config adds cgroup_root, state_dir and decisions.file): the LS
# pod classed LS by its path, every other burstable pod BE, and the fast path
# woken by LS run-queue waits over $1 us.
colo_ls_pod() {
	local rel=${TEST_PARENT_REL#/} pod tier
	LS_UID=$(cat /proc/sys/kernel/random/uuid)
	pod=$(kube_pod_rel burstable "$LS_UID")
	tier=${pod%/*}
	LS_POD=$(agent_cgroup "$pod")
	cg_weight "$TEST_PARENT/${tier%/*}" $((2 * 1024))
	cg_weight "$TEST_PARENT/$tier" $((2 * 1024))
	cg_weight "$LS_POD" 1024
	AGENT_JSON=$(jq -cn --arg root "$rel" --arg ls "$rel/$pod" \
		--arg be "$rel/$tier/*" --argjson p99 "$1" \
		'{cgroup_root: $root,
		  classes: [{glob: $ls, class: "LS"}, {glob: $be, class: "BE"}],
		  interference: {runq: {p99_us: $p99}}}')
}

# A new container cgroup in pod UID $2 of QoS class $1 (burstable, ...), in
# every hierarchy the agent reads; prints its path.
colo_container() {
	agent_cgroup "$(kube_container_rel "$1" "$2" "$(random_hex 32)")"
}

# be_start STRESSOR YAML [CPUS]: BE in a new pod (created now, as a pod starts
# with its cgroup): `stress-ng --STRESSOR NPROC` for SECS on CPUS (default
# all), its YAML to YAML; BE_POD, BE_PID, BE_T0 (CLOCK_REALTIME ns of the
# start).
be_start() {
	local uid cg
	uid=$(cat /proc/sys/kernel/random/uuid)
	BE_POD=$TEST_PARENT/$(kube_pod_rel burstable "$uid")
	BE_T0=$(date +%s%N)
	agent_cgroup "${BE_POD#"$TEST_PARENT"/}" >/dev/null
	# Its weight stays the new cgroup's default, 1024 shares (v2: weight 100):
	# a write here would race the agent, and the kernel refuses cpu.shares
	# (EINVAL) once the agent has set cpu.idle=1.
	cg=$(colo_container burstable "$uid")
	agent_run "$cg" "${3:-$ALL_CPUS}" stress-ng "--$1" "$NPROC" --metrics-brief --timeout "$SECS" -Y "$2"
	BE_PID=$CG_PID
}

# The start of a run: waits up to $1 s for a quiet machine, warns when it is
# not; QUIET_START (the report's words), LOAD_START (1-minute load average)
# and START (the date).
colo_run_start() {
	QUIET=""
	if wait_quiet "$1"; then
		QUIET_START="yes ($QUIET)"
	else
		log "warning: machine not quiet ($QUIET); measuring anyway"
		QUIET_START="no ($QUIET)"
	fi
	LOAD_START=$(cut -d' ' -f1 /proc/loadavg)
	START=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
}

# Waits up to $1 s for a quiet machine: no disturbing foreign process and
# CPUs 90% idle over 1 s. Sets QUIET; returns 1 when the wait ran out.
wait_quiet() {
	local deadline=$((SECONDS + $1)) a b idle busy said=""
	while :; do
		a=$(node_cpu_ns)
		sleep 1
		b=$(node_cpu_ns)
		idle=$(echo "$a $b" | awk '{ t = $6 - $3; printf "%.0f\n", (t > 0 ? 100 - 100 * ($4 - $1 + $5 - $2) / t : 0) }')
		busy=$(foreign_procs)
		QUIET="${idle}% idle${busy:+; running: ${busy% }}"
		if ! disturbing "$busy" && [ "$idle" -ge 90 ]; then
			return 0
		fi
		[ "$SECONDS" -lt "$deadline" ] || return 1
		[ -n "$said" ] || log "waiting up to $1 s for a quiet machine ($QUIET)"
		said=1
	done
}

# Block accounting: colo_mark_start, then colo_mark_end SCENARIO ROUND sets
# R[s,r,foreign] (average CPUs busy outside the parent cgroup and the agent),
# R[s,r,ls_cpu] and R[s,r,be_cpu] (average CPUs of the LS pod, and of the
# rest of the parent: the BE pods), R[s,r,steal_pct], and for an agent block
# R[s,r,agent_cpu].
colo_mark_start() {
	read -r C_BUSY0 C_STEAL0 C_TOT0 < <(node_cpu_ns)
	C_SUB0=$(cg_cpu_ns "$TEST_PARENT")
	C_LS0=$(cg_cpu_ns "$LS_POD")
	C_AG0=$(proc_cpu_ns "${AGENT_PID:-}")
	C_T0=$(date +%s%N)
}

colo_mark_end() {
	local s=$1 r=$2 busy1 steal1 tot1 sub1 ls1 ag1 t1 el
	t1=$(date +%s%N)
	sub1=$(cg_cpu_ns "$TEST_PARENT")
	ls1=$(cg_cpu_ns "$LS_POD")
	read -r busy1 steal1 tot1 < <(node_cpu_ns)
	ag1=$(proc_cpu_ns "${AGENT_PID:-}")
	el=$((t1 - C_T0))
	[ -z "${AGENT_PID:-}" ] ||
		R[$s,$r,agent_cpu]=$(awk -v a="$((ag1 - C_AG0))" -v e="$el" 'BEGIN { printf "%.3f\n", a / e }')
	R[$s,$r,foreign]=$(awk -v b="$((busy1 - C_BUSY0))" -v s="$((sub1 - C_SUB0))" -v a="$((ag1 - C_AG0))" -v e="$el" \
		'BEGIN { f = (b - s - a) / e; printf "%.2f\n", (f < 0 ? 0 : f) }')
	R[$s,$r,ls_cpu]=$(awk -v l="$((ls1 - C_LS0))" -v e="$el" 'BEGIN { printf "%.2f\n", l / e }')
	R[$s,$r,be_cpu]=$(awk -v s="$((sub1 - C_SUB0))" -v l="$((ls1 - C_LS0))" -v e="$el" 'BEGIN { printf "%.2f\n", (s - l) / e }')
	R[$s,$r,steal_pct]=$(awk -v s="$((steal1 - C_STEAL0))" -v t="$((tot1 - C_TOT0))" 'BEGIN { printf "%.1f\n", t ? 100 * s / t : 0 }')
}

# Starts the agent for block (scenario $1, round $2) with config override $3
# (JSON merged over AGENT_JSON) and waits until it has settled: AGENT_PID,
# AGENT_OUT, AGENT_ERR; R[s,r,warn] when its fast path is off. With
# COLO_RECORD set, the agent also records what its policies see, to
# $TMP/rec.$s.$r (qoslet replay; the inputs of every tick, for a block
# whose numbers need explaining).
colo_agent_start() {
	local s=$1 r=$2 pin_save=$PIN_DIR rec=()
	AGENT_OUT=$TMP/decisions.$s.$r.jsonl
	AGENT_ERR=$TMP/agent.$s.$r.err
	[ -z "${COLO_RECORD:-}" ] || rec=(--record "$TMP/rec.$s.$r")
	agent_config "$(jq -cn --argjson a "$AGENT_JSON" --argjson b "$3" '$a * $b')"
	# A fresh pin dir per run, removed with PIN_DIR (bpffs refuses '.' in names).
	PIN_DIR=$pin_save/$(tr -c 'a-zA-Z0-9_\n' _ <<<"${s}_$r")
	agent_start "${rec[@]}"
	PIN_DIR=$pin_save
	sleep "$SETTLE" # its start-up (BTF, program loading) is not in the block
	# A pod starts at any point of the agent's tick interval, not right after
	# a tick: a random phase, or the reaction would always be the whole
	# interval when nothing else wakes the agent.
	sleep "$(awk -v r="$RANDOM" -v i="$("$QOSLET" agent --print-config --config "$TMP/agent.json" | jq .interval_s)" 'BEGIN { printf "%.3f\n", i * r / 32768 }')"
	# Without probes the agent runs on cgroup counters only: say so.
	grep -q "agent: managing.*fast path on" "$AGENT_ERR" || R[$s,$r,warn]=$(grep -m1 -E "warning|error" "$AGENT_ERR" || echo "fast path off")
}

# Stops the agent of block (scenario $1, round $2): R[s,r,ticks] "ticks fast".
colo_agent_stop() {
	agent_stop
	R[$1,$2,ticks]=$(sed -n 's/.*stopping after \([0-9]*\) ticks (\([0-9]*\) on the fast path).*/\1 \2/p' "$AGENT_ERR")
	AGENT_PID=""
}

# The agent's decisions on BE pod cgroup $3 (absolute) of block ($1, $2),
# started at $4 (CLOCK_REALTIME ns), into $TMP/be_decisions.$1.$2 as
# "ms-after-start kind rule value outcome" (a v2 value's blanks as '/':
# "max/100000"; an empty value, a cpuset given back, as ""); sets R[s,r,react] (the first
# applied cpu_idle, cpu_quota or cpuset, else NA), R[s,r,idle] (cpu.idle=1
# applied) and R[s,r,decisions] (one line for the report).
colo_be_decisions() {
	local s=$1 r=$2 f=$TMP/be_decisions.$1.$2 first
	jq -r --arg cg "${3#"$CG_ROOT"}" --argjson t0 "$4" \
		'select(.target.cgroup == $cg) | "\((.ts_ns - $t0) / 1e6 | round) \(.kind) \(.rule) \(.value | tostring | gsub(" "; "/") | if . == "" then "\"\"" else . end) \(.outcome)"' \
		"$AGENT_OUT" >"$f" 2>/dev/null || true
	first=$(awk '$2 ~ /^(cpu_idle|cpu_quota|cpuset)$/ && $5 == "applied" { print; exit }' "$f")
	R[$s,$r,react]=${first%% *}
	R[$s,$r,react]=${R[$s,$r,react]:-NA}
	R[$s,$r,idle]=$(awk '$2 == "cpu_idle" && $5 == "applied" { print $1; exit }' "$f")
	R[$s,$r,decisions]=$(awk '{ printf "%s%s %s=%s @%s ms%s", sep, $3, $2, $4, $1, ($5 == "applied" ? "" : " (" $5 ")"); sep = "; " }' "$f")
}

# Removes pod cgroup $1 from every hierarchy (its processes have exited).
pod_remove() {
	local rel=${1#"$CG_ROOT"} mnt
	cgroup_destroy "$1"
	for mnt in "${AGENT_CTRLS[@]}"; do
		cgroup_destroy "$mnt$rel"
	done
}

# Waits for process $1 (ours) and returns its status.
reap() {
	local rc=0
	wait "$1" || rc=$?
	return "$rc"
}

# bogo ops/s (real time) from stress-ng's YAML file $1.
be_rate() {
	awk '$1 == "bogo-ops-per-second-real-time:" { printf "%.1f\n", $2; f = 1 } END { exit !f }' "$1"
}

# Median of the numbers on stdin (NA when none), to $1 decimals (default 1).
# shellcheck disable=SC2120 # $1 is optional
median() {
	awk '$1 != "NA"' | sort -g | awk -v d="${1:-1}" '{ v[++n] = $1 } END {
		if (!n) { print "NA"; exit }
		printf "%.*f\n", d, n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}

# Field $2 of scenario $1 over all rounds, one per line.
col() {
	local r
	for ((r = 1; r <= ROUNDS; r++)); do
		echo "${R[$1,$r,$2]:-NA}"
	done
}

# a / b to 3 decimals, NA when either is NA.
div() {
	if [ "$1" = NA ] || [ "$2" = NA ]; then
		echo NA
		return 0
	fi
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b ? a / b : 0 }'
}

# Per-round ratios of field $3: scenario $1 / scenario $2.
paired() {
	local r
	for ((r = 1; r <= ROUNDS; r++)); do
		div "${R[$1,$r,$3]:-NA}" "${R[$2,$r,$3]:-NA}"
	done
}

range() {
	awk '$1 != "NA"' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print (NR ? lo "-" hi : "NA") }'
}

# PASS/FAIL: value $1 OP ($2: le or ge) target $3. In a VM (QOSLET_VM) the
# targets are the host's: the ratio only compares, it passes nothing.
verdict() {
	local v
	[ "$1" != NA ] || {
		echo "not measured"
		return 0
	}
	if awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN { exit !(op == "le" ? v <= t : v >= t) }'; then
		v=PASS
	else
		v=FAIL
	fi
	if [ -n "${QOSLET_VM:-}" ]; then
		echo "emulated: $v on the host's target, not a verdict"
	else
		echo "**$v**"
	fi
}
