#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The agent against a real container runtime: Debian's containerd and runc,
# started by the test with a config file it writes (its own root, state
# directory, socket, containerd namespace and runc root; no CRI plugin, no
# systemd), running real containers from a tiny read-only rootfs (a static
# busybox) with `ctr run --rootfs --cgroup`. runc's cgroupfs driver puts
# them in the kubelet's layout below the test's parent, in every hierarchy
# (QOSLET_CGROUP_LAYOUT: the cgroupfs names, or in the VMs the systemd
# driver's names, kubepods.slice/.../cri-containerd-<id>.scope, made the
# same way), two pods of each QoS tier, each with a sandbox ("pause")
# container and an app container, as containerd's CRI plugin lays them out.
# The API stand-in lists the pods with the containers' real ids; one BE
# pod's app container asks for kubernetes.io/batch-cpu. The agent runs on
# the default config with the API link on. Checks:
#   - the units are exactly the six pods (no container, sandbox or tier
#     cgroup), classed by tier: Guaranteed LSR, Burstable LS, BestEffort BE;
#   - the containers' ids match the pod list: every app container's metrics
#     carry its pod and container name, the sandboxes' no container name;
#     the BE container with a batch-cpu request is in the tick record with
#     its runtime id's cgroup and gets its weight (batch.container_cpu_weight);
#   - suppression (default: cfsQuota, cpu.idle) is written on both BE pods,
#     on nothing else;
#   - after the agent stops, every file of every pod and container cgroup is
#     what it was before the agent; the containers still run;
#   - then the test tears the runtime down and checks nothing is left:
#     no task, no shim, no mount, no shim socket.
# A missing runtime is a skip with its reason. About 25 s here.
# jq filters are single-quoted.
# shellcheck disable=SC2016,SC2119
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

require_root
require_cmds jq python3 curl
require_binaries
for c in containerd ctr runc containerd-shim-runc-v2; do
	command -v "$c" >/dev/null 2>&1 ||
		skip "no container runtime: needs '$c' (scripts/deps.sh test installs containerd and runc)"
done
BUSYBOX=$(command -v busybox || true)
if [ -z "$BUSYBOX" ] || ldd "$BUSYBOX" >/dev/null 2>&1; then
	skip "needs a static busybox for the containers' rootfs (scripts/deps.sh test installs busybox-static)"
fi
test_setup
agent_setup
kube_require

NODE=qoslet-test-node
RT=$TMP/containerd # everything containerd and runc keep, the socket, the rootfs
SOCK=$RT/containerd.sock
NS=qoslet-test
CTRD_PID=""
IDS=() # the containers started, sandboxes included
# containerd 1.6 puts each shim's socket in /run/containerd/s (not under its
# state dir): made there if missing, and removed with the test's sockets.
RUN_CTRD_MADE=""
[ -d /run/containerd ] || RUN_CTRD_MADE=1

ctr_() { ctr -a "$SOCK" -n "$NS" "$@"; }

# The shims of this containerd: their command line names its socket, unique to the test.
our_shims() {
	pgrep -f -- "containerd-shim.* -address $SOCK( |\$)" || true
}

# Tasks killed and deleted, containers deleted, containerd stopped (by pid),
# a shim left over killed by pid, the shims' sockets and the cgroups runc
# made in the hierarchies lib.sh does not clean removed. Run at the end and
# from the exit trap (then also after a failure): each step is idempotent.
runtime_down() {
	local id mnt pid
	if [ -n "$CTRD_PID" ] && kill -0 "$CTRD_PID" 2>/dev/null; then
		for id in "${IDS[@]}"; do
			ctr_ task kill -s KILL "$id" >/dev/null 2>&1 || true
		done
		for id in "${IDS[@]}"; do
			for _ in $(seq 1 40); do
				ctr_ task rm "$id" >/dev/null 2>&1 && break
				ctr_ task ls -q 2>/dev/null | grep -qx "$id" || break
				sleep 0.05
			done
			ctr_ container rm "$id" >/dev/null 2>&1 || true
		done
		kill -TERM "$CTRD_PID" 2>/dev/null || true
		wait "$CTRD_PID" 2>/dev/null || true
	fi
	for pid in $(our_shims); do
		kill -KILL "$pid" 2>/dev/null || true
	done
	for id in "${IDS[@]}"; do
		rm -f "/run/containerd/s/$(printf '%s' "$SOCK/$NS/$id" | sha256sum | cut -d' ' -f1)"
	done
	[ -z "$RUN_CTRD_MADE" ] || rmdir /run/containerd/s /run/containerd 2>/dev/null || true
	# runc made the test's tree in every hierarchy; lib.sh removes the ones agent_setup made.
	while read -r mnt; do
		if [ "$mnt" != "$CG_ROOT" ] && [ -d "$mnt$TEST_PARENT_REL" ] &&
			! printf '%s\n' "${EXTRA_PARENTS[@]}" | grep -qx "$mnt$TEST_PARENT_REL"; then
			cgroup_destroy "$mnt$TEST_PARENT_REL"
		fi
	done < <(awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/mounts)
	while read -r _ mnt _; do
		case $mnt in "$RT"/*) umount -l "$mnt" 2>/dev/null || true ;; esac
	done </proc/mounts
}
# set +e: a step that fails must not keep lib.sh's cleanup from running.
trap 'rc=$?; set +e; runtime_down; (exit $rc); _test_cleanup' EXIT

# The rootfs: busybox and the mount points runc needs (read-only: nothing is made in it).
mkdir -p "$RT"/rootfs/{bin,proc,dev,sys,tmp,etc}
cp "$BUSYBOX" "$RT/rootfs/bin/busybox"
ln -s busybox "$RT/rootfs/bin/sh"
cat >"$RT/config.toml" <<EOF
version = 2
root = "$RT/root"
state = "$RT/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.opt",
	"io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
	"io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
	"io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
EOF
containerd --config "$RT/config.toml" >"$RT/containerd.log" 2>&1 &
CTRD_PID=$!
for _ in $(seq 1 100); do
	ctr_ version >/dev/null 2>&1 && break
	kill -0 "$CTRD_PID" 2>/dev/null || fail "containerd exited: $(tail -n 5 "$RT/containerd.log")"
	sleep 0.1
done
ctr_ version >/dev/null 2>&1 || fail "containerd did not answer within 10 s: $(tail -n 5 "$RT/containerd.log")"
log "containerd $(ctr_ version | awk '/Server:/ { s = 1 } s && /Version:/ { print $2; exit }'), runc $(runc --version | awk 'NR == 1 { print $3 }')"

# run_ctr QOS UID ID CMD...: a detached container in the pod's cgroup, absolute below the
# test's parent (a relative path would be taken from the shim's own cgroup).
run_ctr() {
	local qos=$1 uid=$2 id=$3 rel
	shift 3
	rel=$(kube_container_rel "$qos" "$uid" "$id")
	IDS+=("$id")
	ctr_ run -d --null-io --read-only --rootfs --runc-root "$RT/runc" \
		--cgroup "$TEST_PARENT_REL/$rel" "$RT/rootfs" "$id" "$@" >/dev/null 2>"$RT/ctr.err" ||
		fail "ctr run $id in $rel: $(cat "$RT/ctr.err")"
}

# waker SECONDS: a container's shell loop that wakes every SECONDS (its /dev is a tmpfs).
waker() {
	echo "/bin/busybox mkfifo /dev/w && exec 3<>/dev/w && while :; do read -t $1 x <&3; done"
}

declare -A UID_OF TIER_OF APP_OF SANDBOX_OF
PODS=(g1 g2 bu1 bu2 be1 be2)
for p in "${PODS[@]}"; do
	case $p in
	g*) TIER_OF[$p]=guaranteed ;;
	bu*) TIER_OF[$p]=burstable ;;
	be*) TIER_OF[$p]=besteffort ;;
	esac
	UID_OF[$p]=$(cat /proc/sys/kernel/random/uuid)
	APP_OF[$p]=$(random_hex 32)
	SANDBOX_OF[$p]=$(random_hex 32)
	# Both wake (the probes count their run-queue waits): the sandbox every second, the
	# app 5 times a second, in the shell's own read -t on a FIFO nobody writes: no fork
	# per wake-up (busybox's sleep forks), which under TCG loaded the VM past its timeout.
	run_ctr "${TIER_OF[$p]}" "${UID_OF[$p]}" "${SANDBOX_OF[$p]}" /bin/sh -c "$(waker 1)"
	run_ctr "${TIER_OF[$p]}" "${UID_OF[$p]}" "${APP_OF[$p]}" /bin/sh -c "$(waker 0.2)"
done
assert_eq "$(ctr_ task ls | awk 'NR > 1 && $3 == "RUNNING"' | wc -l)" "${#IDS[@]}" "every container runs"
pod_cg() { echo "$TEST_PARENT/$(kube_pod_rel "${TIER_OF[$1]}" "${UID_OF[$1]}")"; }
ctr_cg() { echo "$TEST_PARENT/$(kube_container_rel "${TIER_OF[$1]}" "${UID_OF[$1]}" "$2")"; }
for p in "${PODS[@]}"; do
	pid=$(ctr_ task ls | awk -v id="${APP_OF[$p]}" '$1 == id { print $2 }')
	grep -qx "$pid" "$(ctr_cg "$p" "${APP_OF[$p]}")/cgroup.procs" ||
		fail "the app of $p (pid $pid) is not in $(ctr_cg "$p" "${APP_OF[$p]}")"
	for c in cpuset memory; do
		d=$(agent_cg_in "$(ctr_cg "$p" "${APP_OF[$p]}")" "$c")
		grep -qx "$pid" "$d/cgroup.procs" || fail "the app of $p is not in $d"
	done
done
log "ok: ${#IDS[@]} containers in the kubelet's ${QOSLET_CGROUP_LAYOUT:-cgroupfs} layout, every hierarchy"

# The pod list, with the runtime's ids; be1's app asks for batch CPU.
{
	for p in "${PODS[@]}"; do
		jq -nc --arg node "$NODE" --arg uid "${UID_OF[$p]}" --arg name "$p" \
			--arg qos "$(jq -rn --arg t "${TIER_OF[$p]}" '{guaranteed: "Guaranteed",
				burstable: "Burstable", besteffort: "BestEffort"}[$t]')" \
			--arg cid "${APP_OF[$p]}" --argjson batch "$([ "$p" = be1 ] && echo true || echo false)" '
			{metadata: {uid: $uid, namespace: "rt", name: $name},
			 spec: {nodeName: $node, priority: 0, containers: [{name: "app", resources:
				(if $batch then {requests: {"kubernetes.io/batch-cpu": "500"}} else {} end)}]},
			 status: {qosClass: $qos, containerStatuses: [{name: "app",
				containerID: ("containerd://" + $cid)}]}}'
	done
} | jq -s '{kind: "PodList", apiVersion: "v1", metadata: {resourceVersion: "1"}, items: .}' \
	>"$KUBE_TMP/pods.json"
KUBE_PODS=$KUBE_TMP/pods.json
kube_start "$NODE"

# Every setting the agent may write, in every pod and container cgroup: "path file value"
# lines. Builtins only in the loop: under TCG every fork is slow.
SETTING_FILES="cpu.shares cpu.weight cpu.cfs_quota_us cpu.max cpu.cfs_burst_us cpu.max.burst
	cpu.idle cpuset.cpus memory.limit_in_bytes memory.max memory.high memory.low memory.min"
CGS=()
for p in "${PODS[@]}"; do
	for d in "$(pod_cg "$p")" "$(ctr_cg "$p" "${SANDBOX_OF[$p]}")" "$(ctr_cg "$p" "${APP_OF[$p]}")"; do
		CGS+=("${d#"$CG_ROOT"}")
	done
done
HIERS=("$CG_ROOT")
cg_is_v2 || HIERS+=("$(v1_mount cpuset)" "$(v1_mount memory)")
settings() {
	local h d f v
	for h in "${HIERS[@]}"; do
		for d in "${CGS[@]}"; do
			for f in $SETTING_FILES; do
				[ -e "$h$d/$f" ] || continue
				read -r v <"$h$d/$f" || v=""
				echo "$d $f $v"
			done
		done
	done | sort -u
}
settings >"$TMP/before"

PORT=$(free_port)
agent_config "$(jq -nc --argjson kube "$(kube_link_config "$NODE")" --argjson port "$PORT" \
	'{kubernetes: $kube, http: {enabled: true, address: "127.0.0.1", port: $port, cgroups: "all"}}')"
agent_start --record "$TMP/run.rec"
log "the agent runs (at ${SECONDS}s)"

rel() { echo "${1#"$CG_ROOT"/}"; }
be1_app=$(rel "$(ctr_cg be1 "${APP_OF[be1]}")")
# Ready: suppression on both BE pods and the batch container's weight (the BE pods are
# unmanaged until the pod list names them).
sel='.outcome == "applied" and (.rule == "suppress.cfs_quota" or .rule == "batch.container_cpu_weight")'
deadline=$((SECONDS + $(time_bound_ms 15000) / 1000))
until [ "$(decisions "$sel" | jq 'map(.target.cgroup) | unique | length')" -ge 3 ]; do
	kill -0 "$AGENT_PID" 2>/dev/null || fail "agent exited: $(tail -n 5 "$AGENT_ERR")"
	[ "$SECONDS" -lt "$deadline" ] || fail "no suppression on both BE pods and no batch weight \
within $(time_bound_ms 15000) ms: $(decisions 'true' | jq -c 'map([.rule, .outcome, .target.cgroup])' |
		head -c 3000); agent: $(tail -n 5 "$AGENT_ERR")"
	sleep 0.2
done
sleep 2 # two more ticks: the record and the metrics catch up, nothing else is written
metrics=$(curl -sf "http://127.0.0.1:$PORT/metrics") || fail "no metrics on port $PORT"
be1_app_cg=$CG_ROOT/$be1_app
if cg_is_v2; then w=$(cat "$be1_app_cg/cpu.weight") want_w=20; else
	w=$(cat "$be1_app_cg/cpu.shares") want_w=512; fi
agent_stop
tick=$(tail -n 1 "$TMP/run.rec") # read once the agent stopped: a whole line

log "units and classes (the last recorded tick)"
want=$(for p in "${PODS[@]}"; do
	case ${TIER_OF[$p]} in guaranteed) c=LSR ;; burstable) c=LS ;; besteffort) c=BE ;; esac
	echo "$(rel "$(pod_cg "$p")") ${UID_OF[$p]} $c"
done | sort)
assert_eq "$(jq -r '.units[] | "\(.path) \(.pod_uid) \(.class)"' <<<"$tick" | sort)" "$want" \
	"the six pods are the units, by tier: Guaranteed LSR, Burstable LS, BestEffort BE"

log "container ids matched to the pod list"
# series_labels CGROUP: the labels of its run-queue series, one line.
series_labels() {
	grep "^qoslet_runqueue_wait_seconds_count{cgroup=\"/$1\"" <<<"$metrics" | head -n 1
}
for p in "${PODS[@]}"; do
	l=$(series_labels "$(rel "$(ctr_cg "$p" "${APP_OF[$p]}")")")
	[ -n "$l" ] || fail "no run-queue series for the app container of $p: $(grep -c '^qoslet_runqueue_wait_seconds_count' <<<"$metrics") series"
	grep -q "namespace=\"rt\",pod=\"$p\",container=\"app\"" <<<"$l" ||
		fail "the app container of $p is not named from the pod list: $l"
	l=$(series_labels "$(rel "$(ctr_cg "$p" "${SANDBOX_OF[$p]}")")")
	[ -n "$l" ] || fail "no run-queue series for the sandbox of $p"
	if ! grep -q "pod=\"$p\"" <<<"$l" || grep -q 'container=' <<<"$l"; then
		fail "the sandbox of $p: its pod's, but no container of the list: $l"
	fi
done
log "ok: every app container carries its pod and name, every sandbox only its pod"
assert_eq "$(jq -r '[.containers[]? | .path] | join(" ")' <<<"$tick")" "$be1_app" \
	"the tick record's containers: be1's app, by its runtime id"
assert_eq "$w" "$want_w" "its weight from its batch-cpu request while the agent ran"
d=$(decisions '.rule == "batch.container_cpu_weight" and .outcome == "applied"')
assert_eq "$(jq -r 'map(.target.cgroup) | unique | join(" ")' <<<"$d")" "/$be1_app" \
	"its weight was written, on no other container"

log "suppression on the BE pods"
sup=$(decisions '(.rule | startswith("suppress.")) and .outcome == "applied"')
assert_eq "$(jq -r 'map(select(.rule == "suppress.cfs_quota") | .target.cgroup) | unique | join(" ")' <<<"$sup")" \
	"$(for p in be1 be2; do echo "/$(rel "$(pod_cg "$p")")"; done | sort | tr '\n' ' ' | sed 's/ $//')" \
	"suppress.cfs_quota on both BE pods"
assert_eq "$(jq -r 'map(select(.class != "BE")) | length' <<<"$sup")" 0 "no suppression on a pod that is not BE"
if [ -e "$(pod_cg be1)/cpu.idle" ]; then
	assert_eq "$(jq -r 'map(select(.rule == "suppress.cpu_idle") | .target.cgroup) | unique | length' <<<"$sup")" 2 \
		"suppress.cpu_idle on both BE pods"
fi

log "restored when the agent stopped"
settings >"$TMP/after"
diff "$TMP/before" "$TMP/after" >"$TMP/settings.diff" ||
	fail "settings not restored: $(head -n 20 "$TMP/settings.diff")"
log "ok: $(wc -l <"$TMP/before") settings of $((${#PODS[@]} * 3)) cgroups as before the agent"
assert_eq "$(ctr_ task ls | awk 'NR > 1 && $3 == "RUNNING"' | wc -l)" "${#IDS[@]}" "the containers still run"

log "the runtime torn down"
runtime_down
CTRD_PID=""
assert_eq "$(our_shims | wc -l)" 0 "no shim left"
assert_eq "$(awk -v rt="$RT/" 'index($2, rt) == 1' /proc/mounts | wc -l)" 0 "no mount left"
for id in "${IDS[@]}"; do
	[ ! -e "/run/containerd/s/$(printf '%s' "$SOCK/$NS/$id" | sha256sum | cut -d' ' -f1)" ] ||
		fail "the shim socket of $id is left"
done
test_end
