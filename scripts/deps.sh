#!/bin/sh
# scripts/deps.sh [vm]
# Installs every Debian 12 package that building, testing and benchmarking
# qoslet needs. With "vm", also what `make test-kernels` needs to boot the
# kernel matrix in VMs (scripts/vm/): qemu, a static busybox for the
# initramfs, kmod (depmod/modprobe on the unpacked kernels). The kernels
# themselves are fetched by scripts/vm/kernel.sh with apt-get download, into
# a cache, never installed. Safe to re-run. Needs root (apt-get).
set -eu

# libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes (make asan, make
# fuzz), which clang only recommends.
PKGS="
clang llvm make pkg-config git
libclang-rt-14-dev
libbpf-dev libelf-dev zlib1g-dev libjansson-dev libncurses-dev bpftool libpfm4-dev
libcurl4-openssl-dev python3 openssl
libmicrohttpd-dev prometheus libcap-ng-dev
libcmocka-dev jq
stress-ng rt-tests util-linux procps
linux-perf bpftrace libbpf-tools
go-md2man man-db
buildah python3-yaml curl
gnuplot-nox
valgrind
"
VM_PKGS="
qemu-system-x86 busybox-static kmod
"
case ${1:-} in
"") ;;
vm) PKGS="$PKGS $VM_PKGS" ;;
*)
	echo "usage: scripts/deps.sh [vm]" >&2
	exit 2
	;;
esac

if [ "$(id -u)" != 0 ]; then
	echo "scripts/deps.sh: needs root to run apt-get; missing packages:" >&2
	echo $PKGS >&2
	exit 1
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "scripts/deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
