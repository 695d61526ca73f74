#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/bench/reassert.sh [-r ROUNDS] [-p PODS] [-g SECS] [-o FILE]
#
# How fast `qoslet agent` puts a setting back after another writer changed
# it (issue 27, "settings that stay applied": within 100 ms, benchmark
# target; docs/agent-actuator.md). The node: under a uniquely named parent
# in the hierarchy holding the cpu controller (v2 if cgroup2 has cpu; else
# v1, with the same directories in the cpuacct, cpuset and memory
# hierarchies), PODS BestEffort pods in the cgroupfs driver's layout,
# PARENT/kubepods/besteffort/pod<n>, each with one sleeping process. The
# agent runs with its embedded defaults plus cgroup_root, its own state_dir,
# --pin-dir, decisions to a file and the HTTP endpoint off: suppression sets
# cpu.idle=1 on each pod.
#
# A round writes 0 to one pod's cpu.idle, as systemd re-applying a unit
# would, and times from that write to the agent's write of 1: a watch on the
# file (inotify IN_MODIFY, raised by both writes) wakes the bench, which
# reads the file. Rounds go round-robin over the pods GAP seconds apart, so
# each pod is rewritten at most every PODS x GAP seconds: more than the 5 s
# within which the agent counts a rewrite as a fight (actuate/contest.h),
# which would then back off. A round with no write-back within 5 s counts as
# missed. Reported: every round, the median and the max, against the target.
#
#   -r ROUNDS  rounds (default 30)
#   -p PODS    pods (default 6)
#   -g SECS    seconds between rounds (default 1)
#   -o FILE    the report (markdown); default stdout
set -euo pipefail

ROUNDS=30
PODS=6
GAP=1
OUT=""
TARGET_MS=100
while getopts "r:p:g:o:" opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	p) PODS=$OPTARG ;;
	g) GAP=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) exit 2 ;;
	esac
done
cd "$(dirname "$0")/../.."
QOSLET=${QOSLET:-$PWD/build/qoslet}
log() { echo "reassert: $*" >&2; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (cgroups, BPF)"; exit 77; }
[ -x "$QOSLET" ] || { echo "SKIP: $QOSLET missing: run make"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: needs python3 (scripts/deps.sh bench)"; exit 77; }
[ "$(awk -v p="$PODS" -v g="$GAP" 'BEGIN { print (p * g > 5) }')" = 1 ] ||
	{ echo "reassert: -p x -g must exceed 5 s (the agent's fight window)" >&2; exit 2; }

v1_mount() {
	awk -v c="$1" '$3 == "cgroup" { n = split($4, o, ",")
		for (i = 1; i <= n; i++) if (o[i] == c) { print $2; exit } }' /proc/mounts
}
V2=0
HIER=()
v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$v2" ] && grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null; then
	V2=1
	HIER=("$v2")
else
	m=$(v1_mount cpu)
	[ -n "$m" ] || { echo "SKIP: no cgroup hierarchy with the cpu controller"; exit 77; }
	HIER=("$m")
	for c in cpuacct cpuset memory; do
		m=$(v1_mount "$c")
		[ -n "$m" ] || continue
		for h in "${HIER[@]}"; do [ "$h" != "$m" ] || continue 2; done
		HIER+=("$m")
	done
fi
ROOT=${HIER[0]}
NAME=qoslet-bench-reassert-$$

MADE=()
PIDS=()
AGENT=""
PIN=/sys/fs/bpf/$NAME
TMP=$(mktemp -d /tmp/qoslet-bench-reassert.XXXXXX)
cleanup() {
	local rc=$? m
	set +e
	trap - EXIT INT TERM HUP
	if [ -n "$AGENT" ]; then
		kill -TERM "$AGENT" 2>/dev/null
		wait "$AGENT" 2>/dev/null
	fi
	[ "${#PIDS[@]}" -eq 0 ] || kill -KILL "${PIDS[@]}" 2>/dev/null
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	for m in "${MADE[@]}"; do
		find "$m" -depth -type d -exec rmdir {} + 2>/dev/null
		[ ! -d "$m" ] || log "WARNING: could not remove $m"
	done
	rm -rf "$PIN" "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# mkcg REL: the directory in every hierarchy (v1 cpusets take their parent's CPUs and nodes).
mkcg() {
	local h d c
	for h in "${HIER[@]}"; do
		d=$h/$1
		mkdir "$d"
		[ "$1" != "$NAME" ] || MADE+=("$d")
		if [ "$V2" = 1 ]; then
			read -r have <"$d/../cgroup.controllers" || true
			for c in cpu cpuset memory; do
				[[ " $have " != *" $c "* ]] || echo "+$c" >"$d/../cgroup.subtree_control"
			done
		elif [ -e "$d/cpuset.cpus" ]; then
			cat "$d/../cpuset.cpus" >"$d/cpuset.cpus"
			cat "$d/../cpuset.mems" >"$d/cpuset.mems"
		fi
	done
}
mkcg "$NAME"
mkcg "$NAME/kubepods"
mkcg "$NAME/kubepods/besteffort"
[ -e "$ROOT/$NAME/kubepods/besteffort/cpu.idle" ] ||
	{ echo "SKIP: no cpu.idle in this kernel's cpu controller (5.15+)"; exit 77; }
FILES=()
for i in $(seq 1 "$PODS"); do
	pod=$NAME/kubepods/besteffort/pod$i
	mkcg "$pod"
	dirs=()
	for h in "${HIER[@]}"; do dirs+=("$h/$pod"); done
	# shellcheck disable=SC2016
	sh -c 'for h; do echo $$ >"$h/cgroup.procs"; done; exec sleep 3600' sh "${dirs[@]}" &
	PIDS+=("$!")
	FILES+=("$ROOT/$pod/cpu.idle")
done

jq -n --arg root "$NAME/kubepods" --arg state "$TMP/state" --arg out "$TMP/decisions.jsonl" \
	'{cgroup_root: $root, state_dir: $state, decisions: {file: $out}, http: {enabled: false}}' \
	>"$TMP/agent.json"
chmod 600 "$TMP/agent.json"
"$QOSLET" agent --config "$TMP/agent.json" --pin-dir "$PIN" 2>"$TMP/agent.err" &
AGENT=$!
for f in "${FILES[@]}"; do
	for _ in $(seq 1 300); do
		[ "$(cat "$f")" = 1 ] && continue 2
		kill -0 "$AGENT" 2>/dev/null || { log "the agent exited: $(tail -n 3 "$TMP/agent.err")"; exit 1; }
		sleep 0.1
	done
	log "cpu.idle of $f never became 1: $(tail -n 3 "$TMP/agent.err")"
	exit 1
done
log "$PODS pods at cpu.idle=1; $ROUNDS rounds, $GAP s apart"

# One line per round: the round's pod and ms from the write to the agent's write-back ("missed": none in 5 s).
python3 - "$ROUNDS" "$GAP" "${FILES[@]}" >"$TMP/rounds" <<'PY'
import ctypes, os, select, sys, time
rounds, gap, files = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
libc = ctypes.CDLL(None, use_errno=True)
IN_MODIFY, IN_NONBLOCK = 0x2, 0o4000
fd = libc.inotify_init1(IN_NONBLOCK)
if fd < 0:
    sys.exit("inotify_init1: " + os.strerror(ctypes.get_errno()))
def read_file(p):
    with open(p) as f:
        return f.read().strip()
for r in range(rounds):
    path = files[r % len(files)]
    wd = libc.inotify_add_watch(fd, path.encode(), IN_MODIFY)
    with open(path, "w") as f:
        t0 = time.monotonic_ns()
        f.write("0")
    ms = "missed"
    while time.monotonic_ns() - t0 < 5e9:
        select.select([fd], [], [], 0.5)
        try:
            os.read(fd, 4096)
        except BlockingIOError:
            pass
        if read_file(path) == "1":
            ms = "%.2f" % ((time.monotonic_ns() - t0) / 1e6)
            break
    libc.inotify_rm_watch(fd, wd)
    print(os.path.basename(os.path.dirname(path)), ms, flush=True)
    time.sleep(gap)
PY
kill -TERM "$AGENT"
wait "$AGENT" || true
AGENT=""
n_re=$(jq -s 'map(select(.outcome == "reasserted")) | length' "$TMP/decisions.jsonl")
n_con=$(jq -s 'map(select(.outcome == "contested")) | length' "$TMP/decisions.jsonl")
missed=$(grep -c missed "$TMP/rounds" || true)
stats=$(grep -v missed "$TMP/rounds" | awk '{print $2}' | sort -n |
	awk '{v[NR] = $1} END { if (!NR) { print "- -"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f %.2f\n", m, v[NR] }')
read -r median max <<<"$stats"
met=no
[ "$missed" = 0 ] && [ "$median" != - ] &&
	[ "$(awk -v m="$median" -v t="$TARGET_MS" 'BEGIN { print (m <= t) }')" = 1 ] && met=yes
{
	echo "# reassert: a setting put back after another writer changed it"
	echo
	echo "- Command: \`scripts/bench/reassert.sh -r $ROUNDS -p $PODS -g $GAP\` (\`make bench\`: \`BENCHES=reassert\`)"
	echo "- Commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
	echo "- Machine: kernel $(uname -r); $(nproc) CPUs; $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo); $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); cgroup $([ "$V2" = 1 ] && echo v2 || echo v1); load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	echo "- Date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo
	echo "From another writer's \`echo 0 > cpu.idle\` on a BE pod to the agent's write of \`1\`,"
	echo "$ROUNDS rounds round-robin over $PODS pods, $GAP s apart (method: the top of the script)."
	echo
	echo "| Target | median | max | missed | met |"
	echo "| --- | --- | --- | --- | --- |"
	echo "| write-back within $TARGET_MS ms (median) | $median ms | $max ms | $missed of $ROUNDS | $met |"
	echo
	echo "The agent's decisions: $n_re \`reasserted\`, $n_con \`contested\` (a contest here would mean the rounds came too close)."
	echo
	echo "| round | pod | ms |"
	echo "| --- | --- | --- |"
	awk '{ printf "| %d | %s | %s |\n", NR, $1, $2 }' "$TMP/rounds"
} >"${OUT:-/dev/stdout}"
log "median $median ms, max $max ms, missed $missed of $ROUNDS"
