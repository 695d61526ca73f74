#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/bench/memqos.sh [-r ROUNDS] [-s SECS] [-k DIR] [-o FILE]
#
# Memory QoS (docs/memory-qos.md): what a BE memory hog does to an LS pod's
# working set, with `qoslet agent` running with memory_qos off, then on.
#
# Placement, under a uniquely named parent, the kubelet's layout, the agent
# managing PARENT/kubepods (memory.max 256 MiB: the "node"), the API
# stand-in listing the pods with their requests:
#   kubepods/pod<G>             LS: Guaranteed (LSR), request = limit = 128 MiB;
#                               reads a 64 MiB file in a loop (its working set
#                               is page cache: without swap, page cache is the
#                               memory reclaim can take from it)
#   kubepods/besteffort/pod<E>  BE: `stress-ng --vm 1 --vm-bytes 224M --vm-keep`
#                               (anonymous memory), no limit
# 64 + 224 MiB do not fit in 256 MiB: something has to give.
#
# Scenarios, each with fresh cgroups (the LS pod's page cache reclaimed
# before they go) and the agent started first:
#   off  memory_qos.enabled false: the kernel reclaims what it finds, the LS
#        pod's page cache included
#   on   memory_qos.enabled true (defaults): the LS pod gets memory.min (90 %
#        of its limit, over its 64 MiB) and kubepods the sum; the BE pod gets
#        memory.high from the node's free memory
# Per scenario: the LS pod warms up (its file in page cache), then BE runs
# for SECS seconds. Figures of the LS pod over those SECS:
#   - reclaim stalls, from the memstall probe (`qoslet memstall -j`): count
#     and total time, direct + memcg reclaim;
#   - memory PSI: memory.pressure "some" total, in ms;
#   - refaults: memory.stat workingset_refault_file (pages it had to read
#     again after reclaim took them);
#   - working set kept: memory.stat "file", its minimum over the window and
#     at the end, in MiB;
#   - read passes of the 64 MiB file done in the window;
# and of the BE pod: OOM kills (memory.events oom_kill) and its peak.
# Medians over ROUNDS; per-round numbers in the report.
#
# It needs cgroup v2 with the memory controller. On a host without (the
# project's hybrid machine), it boots the v2 test VM (scripts/vm/run.sh,
# Debian's linux-image-amd64, about 10 minutes under TCG) and runs itself
# there; the data file it reads is made on the host first (build/bench/,
# the VM sees the host's root read-only; its 9p mount caches pages, so the
# file's pages are the reader's page cache). `make bench-memqos` runs it and
# writes docs/bench/memqos.md.
#
# Exit 0 after a measurement, 77 when it cannot run here, 1 on failure,
# 2 on bad usage.
#
#   -r ROUNDS  rounds (default $MEMQOS_ROUNDS, else 3)
#   -s SECS    seconds of BE per scenario (default 20)
#   -k DIR     keep the raw data (decisions, logs, samples) in DIR
#   -o FILE    write the markdown report to FILE (default: stdout)
# shellcheck disable=SC2016,SC2119
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${MEMQOS_ROUNDS:-3}
SECS=20
KEEP=""
OUT=""
usage() {
	sed -n '4p' "$0" | sed 's/^# //' >&2
	exit 2
}
while getopts r:s:k:o:h o; do
	case $o in
	r) ROUNDS=$OPTARG ;;
	s) SECS=$OPTARG ;;
	k) KEEP=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 0 ] || usage
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "memqos: -r takes a positive integer, not '$ROUNDS'" >&2; exit 2; }
[[ $SECS =~ ^[1-9][0-9]*$ ]] || { echo "memqos: -s takes a positive integer, not '$SECS'" >&2; exit 2; }

WS_MIB=64
WS_FILE=$ROOT/build/bench/memqos-ws.dat

# ---- on a host without cgroup v2 memory: the VM ----
if ! grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	[ -z "${QOSLET_VM:-}" ] || { echo "memqos: no v2 memory controller even in the VM" >&2; exit 1; }
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (boots the VM, loads BPF programs)"; exit 77; }
	command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: needs qemu-system-x86_64 for the v2 VM (scripts/deps.sh vm)"; exit 77; }
	mkdir -p "$ROOT/build/bench"
	[ "$(stat -c %s "$WS_FILE" 2>/dev/null || echo 0)" = $((WS_MIB << 20)) ] ||
		head -c $((WS_MIB << 20)) /dev/urandom >"$WS_FILE"
	vmout=$(mktemp -d /tmp/qoslet-memqos-vm.XXXXXX)
	trap 'rm -rf "$vmout"' EXIT
	echo "memqos: this host's memory controller is not on cgroup v2: running in the VM" >&2
	args="-r $ROUNDS -s $SECS -o /run/qoslet-vm/out/memqos.md"
	[ -z "$KEEP" ] || args="$args -k /run/qoslet-vm/out/raw"
	VM_MODE=integration VM_COMMAND="scripts/bench/memqos.sh $args" \
		VM_TIMEOUT=${VM_TIMEOUT:-2400} "$ROOT/scripts/vm/run.sh" -o "$vmout" linux-image-amd64 >&2 ||
		{ echo "memqos: the VM run failed: $(tail -n 5 "$vmout/log" 2>/dev/null)" >&2; exit 1; }
	[ -s "$vmout/memqos.md" ] || { echo "memqos: the VM left no report" >&2; exit 1; }
	[ -z "$KEEP" ] || { mkdir -p "$KEEP" && cp -r "$vmout/raw/." "$KEEP/"; }
	if [ -n "$OUT" ]; then cp "$vmout/memqos.md" "$OUT"; else cat "$vmout/memqos.md"; fi
	exit 0
fi

# ---- on cgroup v2 ----
# lib.sh names the parent cgroup qoslet-test-<tag>-<random>.
export QOSLET_TEST_TAG=memqos-$$
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/lib.sh
. "$ROOT/tests/integration/lib.sh"
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/agent_lib.sh
. "$ROOT/tests/integration/agent_lib.sh"
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/kube_lib.sh
. "$ROOT/tests/integration/kube_lib.sh"

require_root
require_cmds jq python3 stress-ng
require_binaries
[ -r "$WS_FILE" ] || skip "no $WS_FILE: the host side makes it before booting the VM"
test_setup
agent_setup
KUBE_TMP=$TMP/kube
mkdir "$KUBE_TMP"
kube_require
[ -z "$KEEP" ] || mkdir -p "$KEEP"

NODE=qoslet-bench-node
P=${TEST_PARENT_REL#/}
MIB=$((1 << 20))

# mkpods: fresh pod cgroups and the pod list naming them; sets G, E, g, e.
mkpods() {
	G=$(cat /proc/sys/kernel/random/uuid)
	E=$(cat /proc/sys/kernel/random/uuid)
	g=$(agent_cgroup "kubepods/pod$G")
	e=$(agent_cgroup "kubepods/besteffort/pod$E")
	echo $((128 * MIB)) >"$g/memory.max"
	jq -n --arg node "$NODE" --arg g "$G" --arg e "$E" '
		def pod($uid; $name; $qos; $res): {metadata: {uid: $uid, namespace: "bench", name: $name, labels: {}},
			spec: {nodeName: $node, priority: 0, containers: [{name: "c", resources: $res}]},
			status: {qosClass: $qos}};
		{kind: "PodList", apiVersion: "v1", metadata: {resourceVersion: "1"}, items: [
			pod($g; "ls-0"; "Guaranteed"; {requests: {memory: "128Mi", cpu: "1"}, limits: {memory: "128Mi", cpu: "1"}}),
			pod($e; "hog-0"; "BestEffort"; {})]}' >"$KUBE_TMP/pods.json.tmp"
	mv "$KUBE_TMP/pods.json.tmp" "$KUBE_TMP/pods.json"
}
mkpods
kp=$TEST_PARENT/kubepods # made by mkpods, with the controllers on for its children
echo $((256 * MIB)) >"$kp/memory.max"
[ -e "$g/memory.reclaim" ] || skip "kernel without memory.reclaim (5.19+): cannot empty the LS pod between scenarios"
cgroup_destroy "$g" # each scenario makes its own pods
cgroup_destroy "$e"
KUBE_PODS=$KUBE_TMP/pods.json
kube_start "$NODE"

# stat_of CG KEY: a memory.stat value.
stat_of() { awk -v k="$2" '$1 == k { print $2 }' "$1/memory.stat"; }
psi_some_us() { awk '$1 == "some" { sub("total=", "", $5); print $5 }' "$1/memory.pressure"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# One scenario of round ROUND: appends one JSON line of figures to $results
# (not through $(...): a subshell's processes would escape the cleanup).
scenario() {
	local name=$1 enabled=$2 t0 ls_pid be_pid ms_pid file min_file peak refault0 psi0 passes0
	mkpods
	# With -k the agent's log and decisions go there as they come (from the VM: the share).
	if [ -n "$KEEP" ]; then
		AGENT_OUT=$KEEP/decisions.$name.$ROUND.jsonl
		AGENT_ERR=$KEEP/agent.$name.$ROUND.log
	fi
	: >"$AGENT_OUT"
	: >"$AGENT_ERR"
	agent_config '{"cgroup_root": "'"$P/kubepods"'", "interval_s": 1, "fast_path": false,
		"kubernetes": '"$(kube_link_config "$NODE")"', '"$AGENT_POLICIES_OFF"',
		"memory_qos": {"enabled": '"$enabled"'}}'
	echo "memqos: [$name] round $ROUND: starting the agent" >&2
	agent_start
	if [ "$enabled" = true ]; then
		wait_decision '.rule == "memory_qos.min" and .outcome == "applied"' 60 >/dev/null ||
			fail "[$name] no memory.min on the LS pod: $(tail -n 5 "$AGENT_ERR")"
	else
		sleep 3 # the pods listed, as with memory QoS
	fi
	# LS: read the working set in a loop; each pass appends a line.
	agent_run "$g" 0 sh -c 'while :; do cat "$1" >/dev/null; echo >>"$2"; done' sh "$WS_FILE" "$TMP/passes"
	ls_pid=$CG_PID
	t0=$(date +%s)
	while [ $(($(date +%s) - t0)) -lt 120 ]; do
		[ "$(stat_of "$g" file)" -ge $(((WS_MIB - 2) * MIB)) ] && break
		sleep 0.2
	done
	[ "$(stat_of "$g" file)" -ge $(((WS_MIB - 2) * MIB)) ] ||
		fail "[$name] the LS pod's file pages never reached $WS_MIB MiB ($(stat_of "$g" file) bytes): no page cache for $WS_FILE?"
	echo "memqos: [$name] round $ROUND: LS warm, BE for $SECS s" >&2
	refault0=$(stat_of "$g" workingset_refault_file)
	psi0=$(psi_some_us "$g")
	passes0=$(wc -l <"$TMP/passes")
	qoslet_bg "$TMP/memstall.$name.json" "$TMP/memstall.$name.err" memstall -j --pin-dir "$PIN_DIR" \
		-c "${g#"$CG_ROOT"}" "$SECS" 1
	ms_pid=$QOSLET_PID
	agent_run "$e" 1 stress-ng --vm 1 --vm-bytes 224M --vm-keep --timeout "${SECS}s" --quiet
	be_pid=$CG_PID
	t0=$(date +%s)
	min_file=$(stat_of "$g" file)
	peak=0
	while [ $(($(date +%s) - t0)) -lt "$SECS" ]; do
		file=$(stat_of "$g" file)
		[ "$file" -lt "$min_file" ] && min_file=$file
		local cur
		cur=$(cat "$e/memory.current")
		[ "$cur" -gt "$peak" ] && peak=$cur
		sleep 0.5
	done
	file=$(stat_of "$g" file)
	wait_exit "$ms_pid" $((SECS + 30)) "qoslet memstall" || fail "[$name] qoslet memstall: $(cat "$TMP/memstall.$name.err")"
	jq -c --arg name "$name" --argjson min "$min_file" --argjson last "$file" \
		--argjson refaults $(($(stat_of "$g" workingset_refault_file) - refault0)) \
		--argjson psi_us $(($(psi_some_us "$g") - psi0)) \
		--argjson passes $(($(wc -l <"$TMP/passes") - passes0)) \
		--argjson oom "$(awk '$1 == "oom_kill" { print $2 }' "$e/memory.events")" \
		--argjson peak "$peak" --argjson high "$(sed 's/max/-1/' "$e/memory.high")" \
		--argjson lsmin "$(cat "$g/memory.min")" --argjson kpmin "$(cat "$kp/memory.min")" '
		(map(.cgroups[]) | {n: (map(.direct.count + .memcg.count) | add // 0),
			ns: (map(.direct.sum_ns + .memcg.sum_ns) | add // 0)}) as $s |
		{scenario: $name, stalls: $s.n, stall_ms: ($s.ns / 1e6), psi_ms: ($psi_us / 1000),
		 refaults: $refaults, ws_min_mib: ($min / 1048576), ws_end_mib: ($last / 1048576),
		 passes: $passes, be_oom_kills: $oom, be_peak_mib: ($peak / 1048576),
		 be_high: $high, ls_min: $lsmin, kubepods_min: $kpmin, round: '"$ROUND"'}' \
		-s "$TMP/memstall.$name.json" >>"$results"
	echo "memqos: round $ROUND: $(tail -n 1 "$results")" >&2
	# SIGKILL to every task of both pods: a BE task held at memory.high (no swap: its
	# memory cannot go) may take long to act on a gentler signal.
	echo "memqos: [$name] round $ROUND measured; cleaning up" >&2
	cgroup_destroy "$e"
	kill -KILL "$ls_pid" 2>/dev/null || true
	wait "$be_pid" "$ls_pid" 2>/dev/null || true
	agent_stop
	# The page cache the LS pod charged goes with it: the next scenario's LS pod must
	# read (and be charged for) its file again. memory.reclaim did not always take it
	# all; in the throwaway VM, dropping the node's clean page cache does.
	timeout 30 sh -c 'echo $1 >"$2"' sh $((1024 * MIB)) "$g/memory.reclaim" 2>/dev/null || true
	[ -z "${QOSLET_VM:-}" ] || echo 1 >/proc/sys/vm/drop_caches
	cgroup_destroy "$g"
	rm -f "$TMP/passes"
}

results=$TMP/results.jsonl
for ROUND in $(seq 1 "$ROUNDS"); do
	scenario off false
	scenario on true
done
[ -z "$KEEP" ] || cp "$results" "$KEEP/"

med() { jq -r --arg s "$1" "select(.scenario == \$s) | $2" "$results" | median; }
report() {
	echo "# Memory QoS: an LS pod's working set under a BE memory hog"
	echo
	echo "Generated by \`scripts/bench/memqos.sh -r $ROUNDS -s $SECS\` (\`make bench-memqos\`) on"
	echo "$(uname -r), $(nproc) CPUs, cgroup v2${QOSLET_VM:+ (the test VM, ${QOSLET_VM})}, $(date -u +%Y-%m-%d),"
	echo "agent $("$QOSLET" --version | awk '{ print $NF }')."
	echo "The setup and every figure are described at the top of the script and in"
	echo "[docs/memory-qos.md](../memory-qos.md). kubepods has memory.max 256 MiB; the LS pod"
	echo "(Guaranteed, 128 MiB) reads a $WS_MIB MiB file in a loop; the BE pod runs"
	echo "\`stress-ng --vm 1 --vm-bytes 224M --vm-keep\` for $SECS s. Medians of $ROUNDS rounds."
	echo
	echo "| memory QoS | LS reclaim stalls | LS stall time (ms) | LS memory PSI some (ms) | LS refaults (pages) | LS working set kept, min / end (MiB) | LS read passes | BE OOM kills | BE peak (MiB) |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for s in off on; do
		printf '| %s | %s | %s | %s | %s | %s / %s | %s | %s | %s |\n' "$s" \
			"$(med "$s" .stalls)" "$(med "$s" '.stall_ms * 10 | round / 10')" \
			"$(med "$s" '.psi_ms * 10 | round / 10')" "$(med "$s" .refaults)" \
			"$(med "$s" '.ws_min_mib | floor')" "$(med "$s" '.ws_end_mib | floor')" \
			"$(med "$s" .passes)" "$(med "$s" .be_oom_kills)" "$(med "$s" '.be_peak_mib | floor')"
	done
	echo
	echo "Per round (JSON lines):"
	echo
	echo '```'
	cat "$results"
	echo '```'
}
if [ -n "$OUT" ]; then report >"$OUT"; else report; fi
