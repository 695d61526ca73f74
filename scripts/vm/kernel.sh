#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/vm/kernel.sh PACKAGE: prepares one kernel of the matrix for
# scripts/vm/run.sh and prints the directory that holds it:
#   DIR/vmlinuz, DIR/initramfs.cpio.gz, DIR/release (uname -r of the guest)
#
# PACKAGE is a Debian package: a meta package (linux-image-amd64,
# linux-image-rt-amd64, linux-image-6.12-amd64) resolves to the image it
# depends on now; PACKAGE/SUITE (linux-image-amd64/bullseye) takes it from
# that Debian suite instead of the host's apt sources. Its -unsigned twin is taken when the sources have it (the
# same kernel without the Secure Boot signature), else the signed one. The .deb
# is fetched with `apt-get download` into $VM_CACHE/debs and unpacked with
# dpkg-deb -x: nothing is installed on the host, nothing lands in the tree.
#
# The initramfs holds busybox (busybox-static) and the modules the generic
# kernels build as modules but the guest needs: virtio PCI, 9p over virtio,
# overlayfs for its root, virtio-blk and ext4 for its scratch disk (run.sh)
# (and what they depend on, soft dependencies such as ext4's crc32c included,
# from modprobe --show-depends), uncompressed so that busybox's insmod loads
# them. Nothing can load a module later: the guest's root is this machine's,
# whose /lib/modules has none for the guest's kernel.
set -euo pipefail

VM_CACHE=${VM_CACHE:-/var/cache/qoslet-vm}
here=$(cd "$(dirname "$0")" && pwd)
pkg=${1:?usage: scripts/vm/kernel.sh PACKAGE}

die() {
	echo "scripts/vm/kernel.sh: $*" >&2
	exit 1
}

for c in apt-get apt-cache dpkg-deb depmod modprobe busybox gzip; do
	command -v "$c" >/dev/null || die "needs $c: scripts/deps.sh vm installs it"
done
[ "$(busybox 2>&1 | head -n 1)" ] || die "no busybox"
ldd "$(command -v busybox)" >/dev/null 2>&1 && die "busybox is dynamically linked: install busybox-static"

# PACKAGE/SUITE takes the package from another Debian release (bullseye's
# 5.10): apt reads that suite's sources from a configuration of its own in
# VM_CACHE (its lists and keyring check included), never the host's sources.
apt=()
suite=""
case $pkg in
*/*)
	suite=${pkg#*/}
	pkg=${pkg%%/*}
	adir=$VM_CACHE/apt/$suite
	mkdir -p "$adir/lists/partial" "$adir/cache/archives/partial"
	cat >"$adir/sources.list" <<-EOF
		deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main
		deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security $suite-security main
	EOF
	: >"$adir/status"
	apt=(-o "Dir::Etc::SourceList=$adir/sources.list" -o Dir::Etc::SourceParts=/nonexistent
		-o "Dir::State::Lists=$adir/lists" -o "Dir::State::Status=$adir/status"
		-o "Dir::Cache=$adir/cache" -o APT::Architecture=amd64 -o APT::Architectures::=amd64)
	# Once a day is enough: a security update moves the meta package.
	if [ -z "$(find "$adir/lists" -maxdepth 1 -name '*_Packages*' -mtime -1 2>/dev/null)" ]; then
		echo "scripts/vm/kernel.sh: apt-get update for $suite (own lists in $adir)" >&2
		apt-get "${apt[@]}" update -qq >&2 || die "apt-get update for $suite failed"
	fi
	;;
esac

# A meta package depends on exactly one image; an image package is itself.
img=$pkg
dep=$(apt-cache "${apt[@]}" depends --important "$pkg" 2>/dev/null |
	awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }') || true
[ -z "$dep" ] || img=$dep
apt-cache "${apt[@]}" show "$img-unsigned" >/dev/null 2>&1 && img=$img-unsigned
apt-cache "${apt[@]}" show "$img" >/dev/null 2>&1 || die "no package $img in the apt sources${suite:+ of $suite} (apt-get update?)"
ver=$(apt-cache "${apt[@]}" policy "$img" | awk '$1 == "Candidate:" { print $2 }')
[ -n "$ver" ] && [ "$ver" != "(none)" ] || die "no candidate version of $img"

mkdir -p "$VM_CACHE/debs"
deb=$(ls "$VM_CACHE/debs/${img}_${ver//:/%3a}_"*.deb 2>/dev/null | head -n 1) || true
if [ -z "$deb" ]; then
	echo "scripts/vm/kernel.sh: fetching $img $ver" >&2
	(cd "$VM_CACHE/debs" && apt-get "${apt[@]}" download -q "$img=$ver" >&2 2>/dev/null) ||
		(cd "$VM_CACHE/debs" && apt-get "${apt[@]}" download "$img=$ver" >&2) || die "apt-get download $img=$ver failed"
	deb=$(ls "$VM_CACHE/debs/${img}_"*.deb | head -n 1)
fi

out=$VM_CACHE/kernels/${img}_$ver
# Packed anew when init or this script (its module list) changed since.
if [ -s "$out/initramfs.cpio.gz" ] && [ -s "$out/vmlinuz" ] &&
	[ "$out/initramfs.cpio.gz" -nt "$here/init" ] && [ "$out/initramfs.cpio.gz" -nt "$here/kernel.sh" ]; then
	echo "$out"
	exit 0
fi

rm -rf "$out"
mkdir -p "$out"
tmp=$(mktemp -d "$VM_CACHE/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp/pkg"
release=$(ls "$tmp/pkg/lib/modules")
[ "$(echo "$release" | wc -l)" = 1 ] || die "$deb: not one module directory: $release"
depmod -b "$tmp/pkg" "$release"

ird=$tmp/initramfs
mkdir -p "$ird"/{bin,dev,proc,sys,lower,rw,newroot,modules}
cp "$(command -v busybox)" "$ird/bin/busybox"
cp "$here/init" "$ird/init"
chmod 755 "$ird/init"
# The modules in load order, each once; compressed ones (.ko.xz, .ko.zst)
# are unpacked here because busybox's insmod may not read them.
n=0
modprobe -d "$tmp/pkg" -S "$release" -a --show-depends virtio_pci 9pnet_virtio 9p overlay virtio_blk ext4 |
	awk '$1 == "insmod" && !seen[$2]++ { print $2 }' >"$tmp/order"
while read -r ko; do
	n=$((n + 1))
	dst=$(printf '%s/modules/%02d-%s' "$ird" "$n" "$(basename "$ko")")
	case $ko in
	*.ko.xz) xz -dc "$ko" >"${dst%.xz}" ;;
	*.ko.zst) zstd -qdc "$ko" >"${dst%.zst}" ;;
	*.ko.gz) gzip -dc "$ko" >"${dst%.gz}" ;;
	*) cp "$ko" "$dst" ;;
	esac
done <"$tmp/order"
# Built-in instead of modular in some flavours: then nothing to load.
(cd "$ird" && find . | busybox cpio -o -H newc 2>/dev/null) | gzip -1 >"$out/initramfs.cpio.gz"
cp "$tmp/pkg/boot/vmlinuz-$release" "$out/vmlinuz"
cp "$tmp/pkg/boot/config-$release" "$out/config"
echo "$release" >"$out/release"
echo "$img $ver" >"$out/package"
echo "$out"
