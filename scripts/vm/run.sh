#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/vm/run.sh [-c v2|hybrid] [-l systemd|cgroupfs] [-o OUTDIR] PACKAGE [-- CMDLINE...]
#
# Boots the kernel of Debian package PACKAGE (scripts/vm/kernel.sh fetches
# it) under qemu with this machine's root over virtio-9p, read-only with a
# tmpfs overlay for writes, and runs the test suite inside (scripts/vm/guest.sh)
# on the binaries built here. The guest's tests/run.sh output is printed as it
# comes (serial console) and kept in OUTDIR/log; the exit status is the
# runner's inside the guest, or 1 when the guest did not finish.
#
# Environment: VM_ACCEL (tcg; kvm to try KVM, see docs/testing.md),
# VM_TCG_THREAD (multi: a host thread per vCPU; single: one for all, in
# turn), VM_HANG_S (seconds of console silence that count as a hang: 300),
# VM_CPU (max under TCG), VM_SMP (2), VM_MEM (MiB, 3072), VM_TIMEOUT (wall s
# for the whole VM: 5400 for all the integration tests, else 1500), VM_TESTS
# (integration tests; default: all but tests/vm.skip), VM_MODE (all, unit or
# integration), VM_UNIT_TIMEOUT (s per unit binary, 300),
# VM_INTEGRATION_TIMEOUT (s per script, 600), VM_COMMAND
# (a command line the guest runs instead of the tests, from the worktree's
# root; its output is the log: scripts/bench/memqos.sh uses it), VM_TEST_ENV
# (NAME=VALUE words exported to the tests), VM_DISK_MIB (the scratch disk's
# size, 6144; 0: none), VM_DISK_DIR (where its image goes: /var/tmp).
#
# The scratch disk: the guest's other writable paths are tmpfs and 9p, whose
# pages no reclaim can drop and read back, so the memory-pressure tests
# (disk_tmp in tests/integration/lib.sh) need a block device. A sparse raw
# image with ext4 on it, made here, attached as a virtio-blk drive (serial
# qoslet-scratch), mounted on /var/tmp by guest.sh, removed when this script
# exits, whatever the guest did. Sparse: it takes on this machine's disk only
# what the tests wrote.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
# The guest mounts tmpfs of its own on /tmp and /dev/shm (scripts/vm/guest.sh):
# a tree below them is not there for it, and the guest would stop at once.
case $root/ in
/tmp/* | /dev/shm/*)
	echo "scripts/vm/run.sh: the tree $root is below /tmp or /dev/shm, which the guest mounts anew as tmpfs: clone it elsewhere" >&2
	exit 1
	;;
esac

cgroup=v2
layout=systemd
out=""
while getopts c:l:o: o; do
	case $o in
	c) cgroup=$OPTARG ;;
	l) layout=$OPTARG ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
pkg=${1:?usage: scripts/vm/run.sh [-c v2|hybrid] [-l systemd|cgroupfs] [-o OUTDIR] PACKAGE [-- CMDLINE...]}
shift
[ "${1:-}" != -- ] || shift
extra=("$@")

accel=${VM_ACCEL:-tcg}
[ -n "$out" ] || out=$(mktemp -d /tmp/qoslet-vm.XXXXXX)
mkdir -p "$out"
out=$(realpath "$out")
rm -f "$out/log" "$out/rc" "$out/seconds" "$out/console.log"

disk_mib=${VM_DISK_MIB:-6144}
[[ $disk_mib =~ ^[0-9]+$ ]] || { echo "scripts/vm/run.sh: VM_DISK_MIB is a size in MiB (0: no disk), not '$disk_mib'" >&2; exit 2; }
disk=""
disk_args=()
if [ "$disk_mib" != 0 ]; then
	disk_dir=${VM_DISK_DIR:-/var/tmp}
	command -v mkfs.ext4 >/dev/null || { echo "scripts/vm/run.sh: needs mkfs.ext4 (e2fsprogs) for the scratch disk; VM_DISK_MIB=0 runs without one" >&2; exit 1; }
	# On tmpfs the image's pages would be this machine's RAM.
	[ "$(stat -f -c %T "$disk_dir" 2>/dev/null)" != tmpfs ] ||
		{ echo "scripts/vm/run.sh: VM_DISK_DIR $disk_dir is tmpfs: give a directory on a disk" >&2; exit 1; }
	disk=$(mktemp "$disk_dir/qoslet-vm-disk.XXXXXX") ||
		{ echo "scripts/vm/run.sh: cannot create the scratch disk's image in $disk_dir (VM_DISK_DIR)" >&2; exit 1; }
	trap 'rm -f "$disk"' EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
	truncate -s "${disk_mib}M" "$disk"
	# One inode a MiB (the tests write a few large files); no blocks kept for
	# root; the journal left unzeroed, as the image reads as zeros already.
	mkfs.ext4 -q -F -T largefile -m 0 -E lazy_itable_init=0,lazy_journal_init=1 -L qoslet-scratch "$disk" ||
		{ echo "scripts/vm/run.sh: mkfs.ext4 on $disk failed" >&2; exit 1; }
	# cache=unsafe: a throwaway disk needs no flush to reach this machine's.
	disk_args=(-drive "file=$disk,format=raw,if=none,id=scratch,cache=unsafe"
		-device "virtio-blk-pci,drive=scratch,serial=qoslet-scratch")
fi

kdir=$(scripts/vm/kernel.sh "$pkg")
release=$(cat "$kdir/release")

unit=""
mode=${VM_MODE:-all}
# The whole suite takes 32 to 52 minutes a kernel under TCG on a 2-CPU host
# (docs/testing.md), all its integration tests most of that: their bound is
# 90; a hang ends the VM sooner either way (VM_HANG_S, softlockup_panic).
# The unit tests alone, chosen tests or a command: 25 minutes.
if [ "$mode" != unit ] && [ -z "${VM_TESTS:-}${VM_COMMAND:-}" ]; then
	vm_timeout=${VM_TIMEOUT:-5400}
else
	vm_timeout=${VM_TIMEOUT:-1500}
fi
if [ "$mode" != integration ]; then
	unit=$(ls build/tests/test_* 2>/dev/null | tr '\n' ' ')
	[ -n "$unit" ] || { echo "scripts/vm/run.sh: no unit binaries: make test-kernels builds them" >&2; exit 1; }
fi
[ -x build/qoslet ] || { echo "scripts/vm/run.sh: build/qoslet missing: run make" >&2; exit 1; }

# What the guest's tests/run.sh gets (scripts/vm/guest.sh sources it).
# QOSLET_VM tells the tests they run in a VM, and under which accelerator:
# timing and load tests skip under tcg (tests/integration/lib.sh, skip_in_tcg).
{
	printf 'export QOSLET_VM=%q\n' "$accel"
	printf 'export QOSLET_CGROUP_LAYOUT=%q\n' "$layout"
	printf 'VM_CGROUP=%q\n' "$cgroup"
	printf 'VM_MODE=%q\n' "$mode"
	printf 'VM_UNIT=%q\n' "$unit"
	printf 'export UNIT_TIMEOUT=%q\n' "${VM_UNIT_TIMEOUT:-300}"
	printf 'export INTEGRATION_TIMEOUT=%q\n' "${VM_INTEGRATION_TIMEOUT:-600}"
	printf 'export SKIP_FILES=%q\n' "${VM_SKIP_FILES-tests/vm.skip}"
	[ -z "${VM_TESTS:-}" ] || printf 'export TESTS=%q\n' "$VM_TESTS"
	[ -z "${VM_COMMAND:-}" ] || printf 'VM_COMMAND=%q\n' "$VM_COMMAND"
	[ -z "${VERBOSE:-}" ] || printf 'export VERBOSE=%q\n' "$VERBOSE"
	# VM_TEST_ENV: NAME=VALUE words the tests see (CI: CHURN_CGROUPS=100).
	for kv in ${VM_TEST_ENV:-}; do
		[[ ${kv%%=*} =~ ^[A-Z_][A-Z0-9_]*$ ]] || { echo "scripts/vm/run.sh: VM_TEST_ENV: '$kv' is not NAME=VALUE" >&2; exit 2; }
		printf 'export %s=%q\n' "${kv%%=*}" "${kv#*=}"
	done
} >"$out/env"

# A soft lockup panics (and -no-reboot ends qemu) instead of holding the VM
# until VM_TIMEOUT, after every CPU's backtrace (NMIs reach a CPU stuck with
# interrupts off); loglevel 5 lets those traces reach the console log.
cmdline="console=ttyS0 rdinit=/init panic=-1 quiet loglevel=5 softlockup_panic=1"
cmdline="$cmdline softlockup_all_cpu_backtrace=1 qoslet_dir=$root"
[ "$cgroup" = v2 ] && cmdline="$cmdline cgroup_no_v1=all systemd.unified_cgroup_hierarchy=1"
cmdline="$cmdline ${extra[*]:-}"

case $accel in
tcg) accel_args=(-accel "tcg,thread=${VM_TCG_THREAD:-multi}" -cpu "${VM_CPU:-max}") ;;
kvm) accel_args=(-accel kvm -cpu "${VM_CPU:-host}") ;;
*) echo "scripts/vm/run.sh: VM_ACCEL is tcg or kvm" >&2; exit 2 ;;
esac

# A hung guest: both vCPUs spinning with interrupts off reach no soft-lockup
# watchdog, and TCG has no NMI one. The guest prints a heartbeat every
# minute; a console silent for VM_HANG_S (300) s gets its vCPUs' registers
# and symbols dumped to OUTDIR/hang.txt through the QEMU monitor, and QEMU
# is told to quit then, not at VM_TIMEOUT.
mon=$out/monitor.sock
rm -f "$mon" "$out/hang.txt" "$out/kallsyms"
(
	while sleep 15; do
		[ -e "$out/console.log" ] || continue
		[ $(($(date +%s) - $(stat -c %Y "$out/console.log"))) -ge "${VM_HANG_S:-300}" ] || continue
		echo "vm: the console was silent for ${VM_HANG_S:-300}s: the vCPUs' registers and symbols go to $out/hang.txt" >&2
		scripts/vm/hang.py "$mon" "$out/kallsyms" >"$out/hang.txt" 2>&1
		head -n 4 "$out/hang.txt" >&2
		break
	done
) &
watch=$!
echo "vm: $pkg ($release), $accel, cgroup $cgroup, $layout layout; results in $out" >&2
rc=0
timeout -k 10 "$vm_timeout" qemu-system-x86_64 \
	-monitor "unix:$mon,server=on,wait=off" \
	-nodefaults -no-reboot -display none -serial stdio \
	-machine "${VM_MACHINE:-q35}" "${accel_args[@]}" \
	-smp "${VM_SMP:-2}" -m "${VM_MEM:-3072}" \
	-kernel "$kdir/vmlinuz" -initrd "$kdir/initramfs.cpio.gz" -append "$cmdline" \
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev local,id=vmout,path="$out",security_model=none,multidevs=remap \
	-device virtio-9p-pci,fsdev=vmout,mount_tag=vmout \
	"${disk_args[@]}" \
	</dev/null 2>&1 | tee "$out/console.log" | tr -d '\r' || rc=$?
kill "$watch" 2>/dev/null || true
wait "$watch" 2>/dev/null || true
rm -f "$mon"
if [ ! -s "$out/rc" ]; then
	# pipefail: the pipeline's status is timeout's, 124 when it had to stop qemu.
	[ "$rc" != 124 ] || echo "vm: timed out after ${vm_timeout}s" >&2
	echo "vm: the guest did not finish (no $out/rc); console in $out/console.log" >&2
	exit 1
fi
exit "$(cat "$out/rc")"
