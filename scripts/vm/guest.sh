#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# PID 1 of the test VM (scripts/vm/init execs it on the overlay root): mounts
# what a node has, runs tests/run.sh on the host-built binaries of this
# worktree and writes the results to the share the host reads
# (/run/qoslet-vm/out), then powers the VM off. The host's scripts/vm/run.sh
# writes /run/qoslet-vm/out/env: the variables below and the runner's.
#
# This is a throwaway VM: here, and only here, the root cgroup's
# subtree_control is written (cpu, cpuset, memory, io, pids for the test
# parents), as systemd does on a node. No test ever does that on the host.
set -u
OUT=/run/qoslet-vm/out
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

poweroff_now() {
	sync
	echo 1 >/proc/sys/kernel/sysrq
	echo o >/proc/sysrq-trigger
	sleep 30
}
trap poweroff_now EXIT

mount -t proc proc /proc
mount -t sysfs sys /sys
mkdir -p /dev/pts /dev/shm
# devtmpfs lacks what udev and systemd add: bash's <(...) needs /dev/fd.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t tmpfs -o mode=1777 tmp /tmp

# shellcheck source=/dev/null
. "$OUT/env"
# The kernel's text symbols where they are in this boot, for a hang's
# registers (scripts/vm/hang.py, called by run.sh when the console goes silent).
grep -i ' t ' /proc/kallsyms >"$OUT/kallsyms"
echo "qoslet-vm: $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo), accel ${QOSLET_VM:-?}"

# The static keys this script flips (the controllers enabled below the root,
# the first cpuset and memory cgroup, bpffs, the tracepoints kept on below)
# flip with every other vCPU offline: text patching under multi-threaded TCG
# can hang a guest whose other vCPU runs the patched code (see below), and
# this is the one moment they all flip, about a minute after boot under TCG,
# where the 6.1-rt run hung once with a silent console (docs/testing.md).
# CPU hotplug itself runs under stop_machine.
cpus_online() {
	local f
	for f in /sys/devices/system/cpu/cpu[1-9]*/online; do
		[ -e "$f" ] && echo "$1" >"$f"
	done
}
cpus_online 0
echo "qoslet-vm: static keys flip with CPU(s) $(cat /sys/devices/system/cpu/online) online"
if [ "${VM_CGROUP:-v2}" = v2 ]; then
	mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup
	ctrls=""
	for c in cpu cpuset memory io pids; do
		grep -qw "$c" /sys/fs/cgroup/cgroup.controllers && ctrls="$ctrls +$c"
	done
	# shellcheck disable=SC2086
	echo $ctrls >/sys/fs/cgroup/cgroup.subtree_control
	echo "qoslet-vm: cgroup v2, root subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
else
	# Hybrid, as a systemd node with the legacy layout: v1 controllers
	# under a tmpfs, the unified hierarchy beside them.
	mount -t tmpfs -o mode=755 cgroup /sys/fs/cgroup
	for c in cpu,cpuacct cpuset memory pids freezer; do
		mkdir -p "/sys/fs/cgroup/$c"
		mount -t cgroup -o "$c" cgroup "/sys/fs/cgroup/$c"
	done
	mkdir -p /sys/fs/cgroup/unified
	mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified
fi
# The same race with another key: cpusets_enabled_key counts the cpusets
# below the root, and the tests' cgroups took it from 0 to 1 and back, so its
# branch in the page allocator was patched while the other vCPU ran it. On
# 6.12 that vCPU took the patch's int3 after it was gone ("Oops: int3" at
# __alloc_pages_noprof, twice in two runs). A node always has cpusets below
# the root (kubelet's), so one stays for the VM's life and the key stays on.
# The same again with __cfs_bandwidth_used, which the first CFS quota in the
# system turns on and the last one's removal off: the agent's suppression sets
# a quota on a BE pod and restores "max" when it stops, so every agent start
# and stop in colobench flipped it. On 5.10 the 5th such block hung the guest,
# both vCPUs spinning in native_queued_spin_lock_slowpath with interrupts off
# (scripts/bench/colobench.sh -V 5.10). A node's kubelet keeps quotas on its
# pods (CPU limits), so the keep cgroup holds one (10 CPUs: it binds nothing,
# and it has no tasks) and the key stays on.
if [ "${VM_CGROUP:-v2}" = v2 ]; then
	mkdir /sys/fs/cgroup/qoslet-vm.keep
	echo "1000000 100000" >/sys/fs/cgroup/qoslet-vm.keep/cpu.max ||
		echo "qoslet-vm: cannot keep a CFS quota on (cpu.max)"
else
	mkdir /sys/fs/cgroup/cpuset/qoslet-vm.keep /sys/fs/cgroup/cpu,cpuacct/qoslet-vm.keep
	echo 1000000 >/sys/fs/cgroup/cpu,cpuacct/qoslet-vm.keep/cpu.cfs_quota_us ||
		echo "qoslet-vm: cannot keep a CFS quota on (cpu.cfs_quota_us)"
fi
mount -t bpf bpf /sys/fs/bpf
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
# Under TCG, patching kernel text that the other vCPU is running can hang the
# guest: on 6.1 and 6.1-rt a BPF link's release turned the sched_switch
# tracepoint's static key off, and text_poke_bp's IPI never came back from the
# vCPU sitting on that very site in __schedule with interrupts off (both CPUs'
# backtraces: docs/testing.md). Hardware does not do this; the emulator's
# cross-vCPU code patching does. So the tracepoints the probes attach to stay
# on from boot (tracefs events into a stopped ring buffer): attaching and
# detaching BPF programs then adds and removes probes without patching text.
# The list is read off the probes' own section names, so no hook is left out:
# a hand-kept list lacked block_bio_queue, and on 6.1 both vCPUs met that
# key's patching in submit_bio_noacct_nocheck (one in its int3) while
# test_agent_io_suppress's readers ran direct I/O: a soft lockup.
echo 0 >/sys/kernel/tracing/tracing_on
kept=""
while read -r tp; do
	ev=(/sys/kernel/tracing/events/*/"$tp"/enable)
	if [ ! -e "${ev[0]}" ]; then
		echo "qoslet-vm: no tracepoint $tp to keep on"
	elif echo 1 >"${ev[0]}"; then
		kept="$kept $tp"
	else
		echo "qoslet-vm: cannot keep tracepoint $tp on"
	fi
done < <(grep -rhoE 'SEC\("(tp_btf|raw_tp)/[a-z0-9_]+' "$(dirname "$0")/../../bpf" | sed 's,.*/,,' | sort -u)
echo "qoslet-vm: tracepoints kept on:$kept"
cpus_online 1
[ "$(cat /sys/devices/system/cpu/online)" = "$(cat /sys/devices/system/cpu/present)" ] ||
	echo "qoslet-vm: CPUs online: $(cat /sys/devices/system/cpu/online) of $(cat /sys/devices/system/cpu/present)"
# The scratch disk run.sh attaches (ext4 made there) is QOSLET_DISK_DIR,
# where disk_tmp (tests/integration/lib.sh) puts the data of the
# memory-pressure tests: reclaim can drop its pages and read them back from a
# device. A directory of its own in the guest's writable root, not /var/tmp:
# a mount there would hide a checkout the host keeps under /var/tmp.
for s in /sys/block/vd*/serial; do
	[ "$(cat "$s" 2>/dev/null)" = qoslet-scratch ] || continue
	d=${s%/serial}
	d=/dev/${d##*/}
	export QOSLET_DISK_DIR=/qoslet-scratch
	if mkdir -p "$QOSLET_DISK_DIR" && mount -t ext4 -o noatime "$d" "$QOSLET_DISK_DIR" &&
		chmod 1777 "$QOSLET_DISK_DIR"; then
		echo "qoslet-vm: scratch disk $d ($(df -m --output=size "$QOSLET_DISK_DIR" | tail -n 1 | tr -d ' ') MiB, ext4) on $QOSLET_DISK_DIR"
	else
		echo "qoslet-vm: cannot mount the scratch disk $d on $QOSLET_DISK_DIR: the disk tests will skip"
	fi
done
ip link set lo up 2>/dev/null || busybox ip link set lo up
hostname qoslet-vm

cd "$(dirname "$0")/../.." || exit 1
# The runner's own scratch names carry its pid: 1 here, the same in every VM.
unit=()
for b in ${VM_UNIT:-}; do
	unit+=("$b")
done
start=$(date +%s)
# A console line every minute (not in the log): the elapsed time, the load,
# the memory left and what the writes hold (the overlay's upper layer and
# /tmp live in the guest's RAM, QOSLET_DISK_DIR on the scratch disk), and the test
# that runs, so a VM that runs out of time or memory says where it went.
(
	while sleep 60; do
		running=$(pgrep -af '^(bash tests/integration/test_[a-z0-9_]+\.sh|build/tests/test_[a-z0-9_]+)' |
			grep -oE 'test_[a-z0-9_]+' | sort -u | tr '\n' ' ')
		mem=$(awk '/^MemAvailable:/ { printf "%d MiB available", $2 / 1024 }' /proc/meminfo)
		writes=$(df -m / /tmp "${QOSLET_DISK_DIR:-/var/tmp}" | awk 'NR > 1 { printf " %s %s MiB", $6, $3 }')
		echo "qoslet-vm: +$(($(date +%s) - start))s, load $(cut -d' ' -f1-3 /proc/loadavg), $mem, writes:$writes, running: ${running:-nothing}"
	done
) &
if [ -n "${VM_COMMAND:-}" ]; then
	bash -c "$VM_COMMAND" 2>&1 | tee "$OUT/log"
else
	# shellcheck disable=SC2086
	tests/run.sh "${VM_MODE:-all}" "${unit[@]}" 2>&1 | tee "$OUT/log"
fi
echo "${PIPESTATUS[0]}" >"$OUT/rc"
echo $(($(date +%s) - start)) >"$OUT/seconds"
