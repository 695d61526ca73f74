# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash disable=SC2034 # the variables are for the sourcing tests
#
# Shared helpers for the integration tests. A test does:
#
#	#!/bin/bash
#	set -euo pipefail
#	. "$(dirname "$0")/lib.sh"
#	require_root; require_cmds jq taskset
#	test_setup            # unique parent cgroup, pin dir, temp dir, cleanup trap
#	cg=$(kube_cgroup burstable)
#	cg_run "$cg" 1 "$DUTYCYCLE" 500 2000 30; pid=$CG_PID
#	...
#
# Exit 0 = pass, 77 = skip (reason printed by skip()), anything else = fail.
#
# Rules every helper keeps: cgroups are created only below the test's own
# uniquely named parent in the v1 cpu hierarchy (or v2 when that is where the
# cpu controller lives); only processes the test started are moved or killed,
# always by pid; everything is removed on exit, also on failure or signal.

QOSLET_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
QOSLET=${QOSLET:-$QOSLET_ROOT/build/qoslet}
DUTYCYCLE=${DUTYCYCLE:-$QOSLET_ROOT/build/tests/helpers/dutycycle}
TEST_NAME=$(basename "$0" .sh)

# Set by test_setup.
TEST_PARENT=""     # absolute path of the test's parent cgroup
TEST_PARENT_REL="" # the same, relative to the hierarchy root ("/qoslet-test-...")
PIN_DIR=""         # the test's own bpffs pin directory
TMP=""             # scratch directory for logs and outputs
CG_ROOT=""         # mount point of the hierarchy qoslet identifies cgroups by

BG_PIDS=()   # processes the test started (killed by pid at exit)
EXTRA_PARENTS=() # the test's parent in other v1 hierarchies (tests/integration/agent_lib.sh)
DISK_TMP=""  # disk_tmp's directory, removed at exit
CG_PID=""    # pid of the last cg_run / qoslet_bg
QOSLET_PID=""

log() {
	echo "# $*"
}

# Ends the test as skipped; the runner repeats the reason.
skip() {
	echo "SKIP: $*"
	exit 77
}

# The seconds since the test began place the failure among its steps.
fail() {
	echo "FAIL: $* (at ${SECONDS}s)" >&2
	exit 1
}

# Inside the test VM under TCG emulation (scripts/vm/run.sh sets QOSLET_VM=tcg;
# docs/testing.md), the guest runs 10 to 30 times slower than the host and its
# clocks see the emulator's own scheduling: a test that judges time, latency,
# throughput or load skips there with its reason. Functional tests all run.
skip_in_tcg() {
	[ "${QOSLET_VM:-}" != tcg ] || skip "under TCG emulation (QOSLET_VM=tcg): $*"
}

# A bound on wall time, in ms, for a functional test that also checks that
# something is quick (a clean stop within a second): under TCG the guest is
# 10 to 30 times slower, so the bound is scaled by QOSLET_TIME_SCALE (default
# 10 there, 1 elsewhere). Tests that judge timing itself use skip_in_tcg.
time_bound_ms() {
	local scale=${QOSLET_TIME_SCALE:-}
	[ -n "$scale" ] || { [ "${QOSLET_VM:-}" = tcg ] && scale=10 || scale=1; }
	echo $(($1 * scale))
}

# The lifetime in seconds of a test's load processes (they end by themselves
# even if the cleanup never runs): a minute, scaled like time_bound_ms, since
# under TCG a test can outlast a minute and then lose its load halfway.
load_lifetime_s() {
	echo $(($(time_bound_ms 60000) / 1000))
}

# A part of a test that cannot run here (a tool or kernel feature missing)
# makes the whole test a skip, with the reason, once everything else passed:
# skip_part REASON records it; test_end exits 77 if any part was skipped.
SKIPPED_PARTS=()
skip_part() {
	log "part skipped: $*"
	SKIPPED_PARTS+=("$*")
}
test_end() {
	if [ "${#SKIPPED_PARTS[@]}" -gt 0 ]; then
		local IFS=';'
		skip "everything else passed; not run: ${SKIPPED_PARTS[*]}"
	fi
	exit 0
}

# bpf_map_type_available TYPE: the kernel has BPF map type TYPE (bpftool's
# probe; e.g. task_storage, 5.11): for a part that needs it to skip by name.
bpf_map_type_available() {
	bpftool feature probe kernel -j 2>/dev/null |
		jq -e --arg k "have_$1_map_type" '.map_types[$k] == true' >/dev/null
}

# kernel_has_struct NAME: the running kernel's BTF has struct NAME, read
# with bpftool, not qoslet (e.g. bpf_mem_alloc: BPF's own allocator, 6.1,
# which decides the per-cgroup maps' layout: bpf/cg_maps.bpf.h).
kernel_has_struct() {
	[ -s "$TMP/vmlinux.btf.txt" ] ||
		bpftool btf dump file /sys/kernel/btf/vmlinux >"$TMP/vmlinux.btf.txt" # not piped: grep -q would cut it short
	grep -q "STRUCT '$1' " "$TMP/vmlinux.btf.txt"
}

require_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (loads BPF programs, creates cgroups)"
}

require_cmds() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "needs '$c' (scripts/deps.sh installs it)"
	done
}

require_binaries() {
	[ -x "$QOSLET" ] || fail "$QOSLET is missing: run make first"
	[ -x "$DUTYCYCLE" ] || fail "$DUTYCYCLE is missing: run make $DUTYCYCLE"
}

# The hierarchy qoslet identifies cgroups by: the v2 mount when it has the cpu
# controller, else the v1 mount holding cpu (as user/cgroup/path.h decides).
detect_cgroup_root() {
	local mnt type opts rest v1=""
	while read -r _ mnt type opts rest; do
		case $type in
		cgroup2)
			if [ -r "$mnt/cgroup.controllers" ] &&
				grep -qw cpu "$mnt/cgroup.controllers"; then
				echo "$mnt"
				return 0
			fi
			;;
		cgroup)
			case ",$opts," in
			*,cpu,*) [ -n "$v1" ] || v1=$mnt ;;
			esac
			;;
		esac
	done </proc/mounts
	[ -n "$v1" ] || return 1
	echo "$v1"
}

# Creates the unique parent cgroup, pin dir and temp dir, and installs the
# cleanup trap. The runner passes QOSLET_TEST_TAG so it can find leftovers.
test_setup() {
	local tag=${QOSLET_TEST_TAG:-$$}-$RANDOM
	CG_ROOT=$(detect_cgroup_root) || skip "no cgroup hierarchy with the cpu controller"
	TMP=$(mktemp -d "/tmp/qoslet-$TEST_NAME.XXXXXX")
	trap _test_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
	# Set only once created: cleanup must never remove what it did not make.
	mkdir "$CG_ROOT/qoslet-test-$tag" || fail "cannot create $CG_ROOT/qoslet-test-$tag"
	TEST_PARENT=$CG_ROOT/qoslet-test-$tag
	TEST_PARENT_REL=/qoslet-test-$tag
	[ ! -e "/sys/fs/bpf/qoslet-test-$tag" ] || fail "/sys/fs/bpf/qoslet-test-$tag already exists"
	PIN_DIR=/sys/fs/bpf/qoslet-test-$tag
	# The cut-down kernel BTF each qoslet writes (kernel_btf.h): the test's, not /run's.
	export QOSLET_BTF_DIR=$TMP/btf
	log "parent cgroup $TEST_PARENT, pin dir $PIN_DIR"
}

# disk_tmp: DISK_TMP, a scratch directory on a disk-backed filesystem
# (/var/tmp), removed at exit: page-cache tests need files whose pages
# reclaim can drop (tmpfs pages are not reclaimable without swap).
disk_tmp() {
	# QOSLET_DISK_DIR: where the test VMs mount their scratch disk (scripts/vm/guest.sh)
	local dir=${QOSLET_DISK_DIR:-/var/tmp}
	DISK_TMP=$(mktemp -d "$dir/qoslet-$TEST_NAME.XXXXXX") || fail "cannot create a directory under $dir"
	local src
	src=$(findmnt -n -o SOURCE --target "$DISK_TMP" 2>/dev/null) || src=""
	# tmpfs pages are not reclaimable without swap, and an overlay or 9p
	# mount (the test VMs' writable paths) reads nothing back from a disk.
	[ -b "$src" ] || skip "$dir is not on a block device (${src:-unknown}): evicted pages would not come back from a disk"
}

# The size in MiB of the file a memory test's BE load streams through the
# page cache: 2 GiB, or 768 MiB under TCG, where the guest writes the file
# at tens of MB/s. The stream loops over its file, so any file a few times
# the parent's memory limit (256 MiB) churns the cache alike.
stream_file_mib() {
	if [ "${QOSLET_VM:-}" = tcg ]; then echo 768; else echo 2048; fi
}

# The LS reader's pace, in reads a second, where a memory test names the
# stream behind its stall (test_memstall's culprit part, test_agent_memory):
# each page of the 160 MiB hot file read about every 20 s, less often than
# the stream turns the limit's room over. A reader that touches its pages
# faster than that climbs the multi-generational LRU's access tiers, which
# the kernel then protects (Debian's 6.12 turns that LRU on): unpaced and
# alone in the 6.12 VM, the reader refaulted 22 and 32 times behind the
# stream, and never stalled; slowed by other work in the same VM, it lost
# nine tenths of its file and stalled. Paced, the scene no longer depends on
# how fast the machine is.
hot_reader_rate() {
	echo 2000
}

# True when pid is alive and a child of this shell: the only processes we
# signal outside our own cgroups.
_is_our_child() {
	local pid=$1 stat ppid
	[ -r "/proc/$pid/stat" ] || return 1
	stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	ppid=$(echo "$stat" | awk '{ print $2 }')
	[ "$ppid" = "$$" ]
}

# Kills every process in the cgroups below (and including) dir and removes
# them depth-first. Everything in there was started by the test.
cgroup_destroy() {
	local dir=$1 pid cg left
	[ -d "$dir" ] || return 0
	for _ in $(seq 1 50); do
		left=0
		while IFS= read -r cg; do
			[ -r "$cg/cgroup.procs" ] || continue
			while read -r pid; do
				[ -n "$pid" ] || continue
				kill -KILL "$pid" 2>/dev/null || true
				left=1
			done <"$cg/cgroup.procs"
		done < <(find "$dir" -type d 2>/dev/null)
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	find "$dir" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	[ ! -d "$dir" ] || echo "# WARNING: could not remove $dir" >&2
}

_test_cleanup() {
	local rc=$? pid
	set +e
	trap - EXIT INT TERM HUP
	for pid in "${BG_PIDS[@]}"; do
		_is_our_child "$pid" && kill -TERM "$pid" 2>/dev/null
	done
	for _ in $(seq 1 20); do
		local alive=0
		for pid in "${BG_PIDS[@]}"; do
			_is_our_child "$pid" && alive=1
		done
		[ "$alive" = 0 ] && break
		sleep 0.1
	done
	for pid in "${BG_PIDS[@]}"; do
		_is_our_child "$pid" && kill -KILL "$pid" 2>/dev/null
	done
	[ -n "$TEST_PARENT" ] && cgroup_destroy "$TEST_PARENT"
	local dir
	for dir in "${EXTRA_PARENTS[@]}"; do
		cgroup_destroy "$dir"
	done
	for pid in "${BG_PIDS[@]}"; do
		wait "$pid" 2>/dev/null
	done
	case $PIN_DIR in
	/sys/fs/bpf/qoslet-test-*) rm -rf "$PIN_DIR" ;;
	esac
	case $DISK_TMP in
	*/qoslet-test_*) rm -rf "$DISK_TMP" ;;
	esac
	if [ -n "$TMP" ] && [ -d "$TMP" ]; then
		if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -n "${QOSLET_TEST_KEEP:-}" ]; then
			echo "# kept $TMP" >&2
		else
			rm -rf "$TMP"
		fi
	fi
	exit "$rc"
}

# ---- cgroups --------------------------------------------------------------

random_hex() {
	od -An -N"$1" -tx1 /dev/urandom | tr -d ' \n'
}

# The kubelet's two cgroup layouts (QOSLET_CGROUP_LAYOUT, default cgroupfs;
# scripts/vm/run.sh sets systemd in the VMs):
#   cgroupfs: kubepods/burstable/pod<uid>/<64-hex id>        (burstable)
#             kubepods/besteffort/pod<uid>/<id>              (besteffort)
#             kubepods/pod<uid>/<id>                         (guaranteed)
#   systemd:  kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice/cri-containerd-<id>.scope
#             kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod<uid_>.slice/...
#             kubepods.slice/kubepods-pod<uid_>.slice/cri-containerd-<id>.scope
# (<uid_>: the pod UID with '-' replaced by '_', as systemd unit names need.)
# kube_pod_rel QOS UID prints a pod's path relative to the test parent;
# kube_container_rel QOS UID CID its container's.
kube_pod_rel() {
	local qos=$1 uid=$2
	case ${QOSLET_CGROUP_LAYOUT:-cgroupfs}:$qos in
	cgroupfs:guaranteed) echo "kubepods/pod$uid" ;;
	cgroupfs:burstable | cgroupfs:besteffort) echo "kubepods/$qos/pod$uid" ;;
	systemd:guaranteed) echo "kubepods.slice/kubepods-pod${uid//-/_}.slice" ;;
	systemd:burstable | systemd:besteffort)
		echo "kubepods.slice/kubepods-$qos.slice/kubepods-$qos-pod${uid//-/_}.slice"
		;;
	*) fail "kube_pod_rel: unknown layout '${QOSLET_CGROUP_LAYOUT:-}' or QoS class '$qos'" ;;
	esac
}
kube_container_rel() {
	local pod
	pod=$(kube_pod_rel "$1" "$2") || exit 1
	case ${QOSLET_CGROUP_LAYOUT:-cgroupfs} in
	systemd) echo "$pod/cri-containerd-$3.scope" ;;
	*) echo "$pod/$3" ;;
	esac
}

# Prints the absolute path of a new kubepods-shaped container cgroup under
# the test parent, in the layout above. On cgroup v2 the controllers the
# hierarchy has are enabled level by level, as the kubelet and systemd do, so
# that the container has cpu.weight, cpu.max and memory files.
kube_cgroup() {
	local qos=${1:-burstable} uid cid rel part path="" dir
	uid=$(cat /proc/sys/kernel/random/uuid)
	cid=$(random_hex 32)
	case $qos in
	guaranteed | burstable | besteffort) ;;
	*) fail "kube_cgroup: unknown QoS class '$qos'" ;;
	esac
	rel=$(kube_container_rel "$qos" "$uid" "$cid") || exit 1
	IFS=/ read -ra parts <<<"$rel"
	for part in "${parts[@]}"; do
		[ ! -e "$TEST_PARENT$path/cgroup.subtree_control" ] || cg_enable_controllers "$TEST_PARENT$path"
		path=$path/$part
		[ -d "$TEST_PARENT$path" ] || mkdir "$TEST_PARENT$path" || fail "cannot create $TEST_PARENT$path"
	done
	echo "$TEST_PARENT/$rel"
}

# v2 only: enables, for the children of one of the test's cgroups, the
# controllers qoslet uses that it has (cpu, cpuset, memory, io).
cg_enable_controllers() {
	local cg=$1 c want=""
	case $cg/ in
	"$TEST_PARENT"/*) ;;
	*) fail "cg_enable_controllers: $cg is not the test's own cgroup" ;;
	esac
	for c in cpu cpuset memory io; do
		grep -qw "$c" "$cg/cgroup.controllers" && ! grep -qw "$c" "$cg/cgroup.subtree_control" &&
			want="$want +$c"
	done
	[ -z "$want" ] || echo "$want" >"$cg/cgroup.subtree_control" ||
		fail "cannot enable$want below $cg"
}

# cg_weight CG SHARES: the CPU weight of one of the test's own cgroups, in
# v1 cpu.shares units (1024 = default); v2's cpu.weight gets the equivalent.
cg_weight() {
	local cg=$1 shares=$2
	case $cg/ in
	"$TEST_PARENT"/*) ;;
	*) fail "cg_weight: $cg is not the test's own cgroup" ;;
	esac
	if [ -e "$cg/cpu.shares" ]; then
		echo "$shares" >"$cg/cpu.shares" || fail "cannot write $cg/cpu.shares"
	elif [ -e "$cg/cpu.weight" ]; then
		echo $(((shares * 100 + 1023) / 1024)) >"$cg/cpu.weight" || fail "cannot write $cg/cpu.weight"
	else
		fail "cg_weight: $cg has neither cpu.shares nor cpu.weight"
	fi
}

# Path relative to the hierarchy root with a leading '/', as qoslet prints it.
cg_rel() {
	echo "${1#"$CG_ROOT"}"
}

# The cgroup id qoslet reports: the inode of the cgroup's directory.
cg_id() {
	stat -c %i "$1"
}

# Runs CMD... in cgroup CG pinned to CPU, in the background; CG_PID is its
# pid (the shell that moves itself execs taskset, which execs CMD, so the pid
# is CMD's). Output goes to $TMP/bg.<pid>.log.
cg_run() {
	local cg=$1 cpu=$2
	shift 2
	# shellcheck disable=SC2016
	sh -c 'echo $$ > "$1/cgroup.procs" || exit 126; cpu=$2; shift 2; exec taskset -c "$cpu" "$@"' \
		sh "$cg" "$cpu" "$@" >"$TMP/bg.$BASHPID.$RANDOM.log" 2>&1 &
	CG_PID=$!
	BG_PIDS+=("$CG_PID")
	# Wait until the move happened, so a measurement started next sees it.
	for _ in $(seq 1 100); do
		grep -qx "$CG_PID" "$cg/cgroup.procs" 2>/dev/null && return 0
		kill -0 "$CG_PID" 2>/dev/null || fail "cg_run: '$*' exited at once"
		sleep 0.01
	done
	fail "cg_run: pid $CG_PID never appeared in $cg/cgroup.procs"
}

# A TCP port on 127.0.0.1 nobody listens on now (the kernel's choice of an
# ephemeral one), for an agent's HTTP endpoint. Needs python3.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ---- qoslet -----------------------------------------------------------------

# Runs qoslet in the background: qoslet_bg OUT ERR ARGS...; QOSLET_PID is its pid.
qoslet_bg() {
	local out=$1 err=$2
	shift 2
	"$QOSLET" "$@" >"$out" 2>"$err" &
	QOSLET_PID=$!
	BG_PIDS+=("$QOSLET_PID")
}

# map_dump PINNED OUT: bpftool's JSON dump of the pinned map PINNED into the
# file OUT, or fail. Bounded: a hash map's dump walks it key by key, and
# a walk whose current key is deleted starts over, so a dump of a map the
# programs keep changing has no sure end (a CI run's soak timed out in
# one). Stop what writes the map first where the test allows it.
map_dump() {
	local secs=$(($(time_bound_ms 30000) / 1000)) rc=0
	timeout "$secs" bpftool -j map dump pinned "$1" >"$2" || rc=$?
	[ "$rc" -ne 124 ] || fail "bpftool map dump pinned $1 did not finish in $secs s"
	[ "$rc" -eq 0 ] || fail "bpftool map dump pinned $1: exit $rc"
}

# Waits for a background process (by pid) to exit within SECONDS; returns its
# exit status, or fails the test when it does not exit in time.
wait_exit() {
	local pid=$1 secs=$2 what=${3:-process}
	for _ in $(seq 1 $((secs * 20))); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$pid" 2>/dev/null && fail "$what (pid $pid) did not exit within ${secs}s"
	local rc=0
	wait "$pid" || rc=$?
	return "$rc"
}

# Waits until FILE has at least N lines; fails if PID exits first or SECONDS pass.
wait_lines() {
	local file=$1 n=$2 pid=$3 secs=$4
	for _ in $(seq 1 $((secs * 20))); do
		[ "$(wc -l 2>/dev/null <"$file" || echo 0)" -ge "$n" ] && return 0
		if ! kill -0 "$pid" 2>/dev/null; then
			[ "$(wc -l <"$file")" -ge "$n" ] && return 0
			fail "qoslet (pid $pid) exited before printing $n line(s); stderr: $(tail -n 5 "${file%.out}.err" 2>/dev/null)"
		fi
		sleep 0.05
	done
	fail "no $n line(s) in $file after ${secs}s"
}

# Waits until the pin dir holds the maps (the first instance has loaded).
wait_pinned() {
	local secs=$1 pid=$2
	for _ in $(seq 1 $((secs * 20))); do
		[ -e "$PIN_DIR/rq_hist" ] && return 0
		kill -0 "$pid" 2>/dev/null || fail "qoslet (pid $pid) exited before pinning its maps"
		sleep 0.05
	done
	fail "$PIN_DIR/rq_hist not pinned after ${secs}s"
}

# ---- JSON -------------------------------------------------------------------

# Every line of FILE must be one JSON object.
assert_json_lines() {
	local file=$1 n=0 line
	while IFS= read -r line; do
		n=$((n + 1))
		echo "$line" | jq -e 'type == "object"' >/dev/null 2>&1 ||
			fail "$file line $n is not a JSON object: $line"
	done <"$file"
	[ "$n" -gt 0 ] || fail "$file has no JSON lines"
}

# Every line of FILE, VIEW's -j output, uses the vocabulary of
# docs/json-output.md: documented keys with their documented types.
assert_json_vocab() {
	local view=$1 file=$2 problems
	problems=$(python3 "$QOSLET_ROOT/tests/helpers/json_vocab.py" \
		"$QOSLET_ROOT/docs/json-output.md" "$view" "$file" 2>&1) ||
		fail "qoslet $view -j does not match docs/json-output.md: $(head -n 20 <<<"$problems")"
}

# The object of cgroup PATH in JSON line LINE (1-based; -1 = last) of FILE,
# or "null" when that interval does not list it.
json_cgroup() {
	local file=$1 path=$2 line=${3:--1}
	jq -sc --arg p "$path" --argjson l "$line" \
		'(if $l < 0 then .[$l] else .[$l - 1] end) | (.cgroups // [])
		 | map(select(.path == $p)) | .[0] // null' "$file"
}

# The attach hook and wait source each interval of JSON-lines FILE reports,
# one per line. docs/qoslet-runqlat.md: "probes":{"sched":{"detail":
# "<hook>, <wait source>"}}, and "shared":true when another process attached
# (then the hook is "shared"). A top-level "hook"/"wait_source" (the first
# draft of the format) is taken as is.
json_hook() {
	jq -r 'if has("hook") then .hook
		elif .shared then "shared"
		else (.probes.sched.detail // "" | split(", ")[0] // "null") end' "$1"
}
json_wait_source() {
	jq -r 'if has("wait_source") then .wait_source
		else (.probes.sched.detail // "" | split(", ")[1] // "null") end' "$1"
}

# memstall_culprits FILE VICTIM CULPRIT: over `qoslet memstall -j`'s lines in
# FILE, the intervals in which cgroup VICTIM (its path as printed) lost at
# least 5% of the interval to memory (the agent's default threshold): how
# many (stalled), how many named cgroup CULPRIT its culprit (named), and the
# most of CULPRIT's share, of the stall and of its refault waits; then every
# cause and culprit seen, with counts. One JSON object.
memstall_culprits() {
	jq -s -c --arg p "$2" --arg b "$3" '
		[.[].cgroups[] | select(.path == $p and .stall_share >= 0.05)] as $s
		| {stalled: ($s | length),
		   named: ([$s[] | select(.culprit.path == $b)] | length),
		   share: ([$s[] | select(.culprit.path == $b) | .culprit.share] | max // 0),
		   stall: ([$s[] | .stall_share] | max // 0),
		   refault_wait: ([$s[] | .refault_wait_share] | max // 0),
		   causes: ([$s[] | .culprit.cause // "none"] | group_by(.) | map({(.[0]): length}) | add),
		   culprits: ([$s[] | .culprit.path // "none"] | group_by(.) | map({(.[0]): length}) | add)}' "$1"
}

# jq FILTER over object JSON (a string); prints the result raw.
jget() {
	echo "$1" | jq -r "$2"
}

# ---- assertions ---------------------------------------------------------------

# assert_cmp A OP B MESSAGE: numeric comparison (floats allowed); OP is one of
# < <= > >= == !=.
assert_cmp() {
	local a=$1 op=$2 b=$3 msg=$4
	[[ $a =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]] || fail "$msg: '$a' is not a number"
	[[ $b =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]] || fail "$msg: '$b' is not a number"
	if awk -v a="$a" -v b="$b" -v op="$op" 'BEGIN {
		if (op == "<") r = a < b; else if (op == "<=") r = a <= b
		else if (op == ">") r = a > b; else if (op == ">=") r = a >= b
		else if (op == "==") r = a == b; else if (op == "!=") r = a != b
		else exit 2
		exit !r }'; then
		log "ok: $msg ($a $op $b)"
	else
		fail "$msg: expected $a $op $b"
	fi
}

assert_eq() {
	local actual=$1 expected=$2 msg=$3
	[ "$actual" = "$expected" ] || fail "$msg: expected '$expected', got '$actual'"
	log "ok: $msg ($actual)"
}

# assert_json JSON FILTER MESSAGE: jq -e FILTER must be true on JSON.
assert_json() {
	local json=$1 filter=$2 msg=$3
	echo "$json" | jq -e "$filter" >/dev/null 2>&1 ||
		fail "$msg: '$filter' is not true for: $(echo "$json" | head -c 2000)"
	log "ok: $msg"
}

# ---- measurement --------------------------------------------------------------

# a / b as a float.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.4f\n", a / b }'
}

# _place PID CPU [CG]: pins one of our background processes to CPU and, if
# CG is given (one of the test's cgroups), moves it there.
_place() {
	taskset -pc "$2" "$1" >/dev/null
	if [ -n "${3:-}" ]; then
		echo "$1" >"$3/cgroup.procs" || fail "cannot move $1 into $3"
	fi
}

# Samples /proc/PID/schedstat every ~20 ms into FILE, in the background,
# pinned to CPU (and in cgroup CG if given), as lines "<unix seconds> <run_delay ns> <pcount>": run_delay
# is the time the task spent waiting on a run queue, pcount the number of
# times it was switched in (each switch-in ends one wait).
schedstat_sampler() {
	local pid=$1 file=$2 cpu=$3 cg=${4:-}
	(
		exec {fd}<> <(:)
		while [ -r "/proc/$pid/schedstat" ]; do
			read -r _ delay count <"/proc/$pid/schedstat" || break
			echo "$EPOCHREALTIME $delay $count"
			read -r -t 0.02 -u "$fd" _ || true
		done
	) >"$file" 2>/dev/null &
	BG_PIDS+=("$!")
	_place "$!" "$cpu" "$cg"
}

# sampler_past FILE T: waits up to 2 s until sampler FILE (lines "EPOCH ...")
# has a line at or after time T, so that a reading at T has samples on both
# sides.
sampler_past() {
	for _ in $(seq 1 40); do
		awk -v t="$2" '$1 >= t { f = 1 } END { exit !f }' "$1" && return 0
		sleep 0.05
	done
}

# schedstat_at FILE T FIELD: field (run_delay or pcount) at unix time T,
# interpolated linearly between the samples around T.
schedstat_at() {
	local col
	case $3 in
	run_delay) col=2 ;;
	pcount) col=3 ;;
	*) fail "schedstat_at: unknown field $3" ;;
	esac
	awk -v t="$2" -v c="$col" '
		{ if ($1 <= t) { t0 = $1; d0 = $c; have0 = 1 }
		  else if (!have1) { t1 = $1; d1 = $c; have1 = 1 } }
		END {
			if (!have0 || !have1) { print "nan"; exit 1 }
			printf "%.0f\n", d0 + (d1 - d0) * (t - t0) / (t1 - t0)
		}' "$1"
}

# Samples CPU's busy and total time (/proc/stat, in USER_HZ ticks) every
# ~100 ms into FILE as lines "<unix seconds> <busy> <total>", in the
# background, pinned to PIN_CPU (and in cgroup CG if given).
cpu_sampler() {
	local cpu=$1 file=$2 pin_cpu=$3 cg=${4:-}
	(
		exec {fd}<> <(:)
		while :; do
			t=$EPOCHREALTIME
			while read -r name user nice system idle iowait irq softirq steal _; do
				if [ "$name" = "cpu$cpu" ]; then
					busy=$((user + nice + system + irq + softirq + steal))
					echo "$t $busy $((busy + idle + iowait))"
					break
				fi
			done </proc/stat
			read -r -t 0.1 -u "$fd" _ || true
		done
	) >"$file" 2>/dev/null &
	BG_PIDS+=("$!")
	_place "$!" "$pin_cpu" "$cg"
}

# Fraction of time the CPU sampled in FILE (cpu_sampler) was busy between
# unix times T0 and T1, from the samples just outside that window.
cpu_busy_between() {
	awk -v t0="$2" -v t1="$3" '
		$1 <= t0 { b0 = $2; a0 = $3; h0 = 1 }
		$1 >= t1 && !h1 { b1 = $2; a1 = $3; h1 = 1 }
		END {
			if (!h0 || !h1 || a1 == a0) { print "nan"; exit 1 }
			printf "%.3f\n", (b1 - b0) / (a1 - a0)
		}' "$1"
}

# Busy and total jiffies of one CPU from /proc/stat: "busy total".
cpu_jiffies() {
	awk -v c="cpu$1" '$1 == c {
		busy = $2 + $3 + $4 + $7 + $8 + $9; total = 0
		for (i = 2; i <= NF; i++) total += $i
		print busy, total }' /proc/stat
}

# Fraction of time CPU was busy between two cpu_jiffies readings.
cpu_busy_fraction() {
	local b0 t0 b1 t1
	read -r b0 t0 <<<"$1"
	read -r b1 t1 <<<"$2"
	awk -v b="$((b1 - b0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.3f\n", t ? b / t : 0 }'
}
