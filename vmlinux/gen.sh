#!/bin/sh
# Regenerates vmlinux/<arch>/vmlinux.h from the running kernel's BTF.
# CO-RE relocates every field access at load time, so one header per
# architecture serves all kernels; regenerate only to use newer types.
# Usage: vmlinux/gen.sh [BTF_FILE]   (default /sys/kernel/btf/vmlinux)
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
arch=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
out=$(dirname "$0")/$arch/vmlinux.h
mkdir -p "$(dirname "$out")"
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out from $btf ($(uname -r))"
