#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/deploy/image-rootfs.sh BINARY DIR
#
# Stages the root filesystem of the qoslet container image in DIR (the
# Containerfile copies it into an image FROM scratch; `make image` runs both):
#
#   /usr/bin/qoslet      BINARY without its DWARF (symbols kept for backtraces)
#   <lib paths>          every shared library ldd(1) resolves for BINARY, at the
#                        path ldd names, and the dynamic loader (the ELF's
#                        interpreter, e.g. /lib64/ld-linux-x86-64.so.2); and
#                        the libraries BINARY opens with dlopen() (libcurl,
#                        libmicrohttpd: the sonames it names, found beside
#                        the linked ones) with everything ldd resolves for them
#   /etc/nsswitch.conf   "hosts: files dns", so that a kubeconfig server name
#                        resolves through the container's /etc/hosts first
#   /lib/terminfo/...    a few terminal descriptions, for `qoslet top` run
#                        interactively with `kubectl exec -it`
#
# Nothing else: no shell, no CA store (the API server's CA is the service
# account's ca.crt), no passwd (nothing looks users up). libpfm is left out:
# only `qoslet cpi --cpi-events` opens it, never the agent (DLOPEN_SKIP).
#
# DIR is replaced whole; the script refuses a DIR that is neither empty nor an
# earlier staging. Environment: STRIP (default llvm-strip), LDD (default ldd).
set -eu

usage() {
	echo "usage: $0 BINARY DIR" >&2
	exit 2
}

die() {
	echo "image-rootfs: $*" >&2
	exit 1
}

[ $# -eq 2 ] || usage
bin=$1
dir=$2
STRIP=${STRIP:-llvm-strip}
LDD=${LDD:-ldd}
[ -x "$bin" ] || die "$bin is not an executable: run make first"

# An earlier staging has qoslet alone in usr/bin, which no real root has.
if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
	[ "$(ls -A "$dir/usr/bin" 2>/dev/null)" = qoslet ] ||
		die "refusing to replace $dir: not empty and not an earlier staging"
	rm -rf "$dir"
fi
mkdir -p "$dir/usr/bin" "$dir/etc"

"$STRIP" --strip-debug -o "$dir/usr/bin/qoslet" "$bin"

# ldd lines: "libx.so.1 => /path (0x..)", "/lib64/ld-linux... (0x..)" (the
# loader), "linux-vdso.so.1 (0x..)" (in the kernel, nothing to copy), or
# "libx.so.1 => not found". Prints the paths to copy.
resolved() {
	local out
	out=$("$LDD" "$1") || die "ldd $1 failed"
	if echo "$out" | grep -q "not found"; then
		die "ldd cannot resolve every library of $1: $(echo "$out" | grep "not found")"
	fi
	echo "$out" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
}
libs=$(resolved "$bin")

# The libraries the binary opens with dlopen() are the sonames among its
# strings that ldd does not list (user/dl.h); the dynamic loader would look
# for them where it found the linked ones.
DLOPEN_SKIP="libpfm.so.4"
dirs=$(for lib in $libs; do dirname "$lib"; done | sort -u)
for name in $(grep -aoE 'lib[a-z0-9_+-]+\.so\.[0-9]+' "$bin" | sort -u); do
	case " $DLOPEN_SKIP " in *" $name "*) continue ;; esac
	echo "$libs" | grep -q "/$name\$" && continue
	found=""
	for d in $dirs; do
		[ -e "$d/$name" ] && found=$d/$name && break
	done
	[ -n "$found" ] || die "$bin opens $name, which is not beside its other libraries ($dirs)"
	libs="$libs
$found
$(resolved "$found")"
done

for lib in $(echo "$libs" | sort -u); do
	mkdir -p "$dir$(dirname "$lib")"
	# The host's path may be a symlink (soname -> versioned file, /lib ->
	# usr/lib); the image gets a plain file at the path the loader asks for.
	cp -L "$lib" "$dir$lib"
done
[ -n "$(find "$dir" -name 'ld-linux*' -o -name 'ld-musl*' | head -n 1)" ] ||
	die "ldd named no dynamic loader for $bin (a static binary needs no staging script)"

echo "hosts: files dns" >"$dir/etc/nsswitch.conf"

# ncurses looks in /lib/terminfo among its default places. Debian ships these
# in ncurses-base, which every Debian system has; missing ones are skipped.
for t in d/dumb l/linux v/vt100 v/vt220 x/xterm x/xterm-256color s/screen \
	s/screen-256color t/tmux t/tmux-256color; do
	for src in /lib/terminfo /usr/share/terminfo; do
		[ -f "$src/$t" ] || continue
		mkdir -p "$dir/lib/terminfo/${t%/*}"
		cp -L "$src/$t" "$dir/lib/terminfo/$t"
		break
	done
done

echo "image-rootfs: staged $dir ($(du -sk "$dir" | cut -f1) KiB)"
