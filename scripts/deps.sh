#!/bin/sh
# scripts/deps.sh [PROFILE]...
# Installs the Debian 12 packages one purpose needs, and nothing else; the
# Makefile's goals name theirs, so each installs what it uses:
#   build    `make`: the toolchain and the libraries build/qoslet links or
#            opens (the default)
#   install  `make install`, `make man`: build, and go-md2man for the man pages
#   image    `make image`: build, and buildah
#   test     `make test` and the other test goals: build, install and image
#            (test_install, test_image), cmocka, clang's sanitizer and
#            libFuzzer runtimes, and the tools the integration tests drive
#            (load generators, perf, Prometheus, valgrind, python3, the
#            servers test_loadgen drives: nginx-light, redis-server; kubectl,
#            node and npm, and `npm ci` of tests/js/*/ for test_kube_real_clients)
#   bench    `make bench`, `make soak`: build, and the benchmarks' tools
#            (the tracers compared, rt-tests, gnuplot for the plots; for
#            slobench the servers nginx-light and redis-server, and wrk and
#            redis-benchmark (redis-server's redis-tools) as cross-checks)
#   vm       `make test-kernels`: test, and what boots the kernel matrix in
#            VMs (scripts/vm/): qemu, a static busybox for the initramfs, kmod.
#            The kernels are fetched by scripts/vm/kernel.sh with apt-get
#            download, into a cache, never installed.
#   all      every profile
# Safe to re-run: only missing packages are installed, and with nothing
# missing it needs no root. Installing needs root (apt-get).
set -eu

BUILD="
clang llvm make pkg-config git
libbpf-dev libelf-dev zlib1g-dev libjansson-dev libncurses-dev bpftool libpfm4-dev
libcurl4-openssl-dev libmicrohttpd-dev libcap-ng-dev
"
INSTALL="go-md2man man-db"
IMAGE="buildah"
# libclang-rt-14-dev: clang's sanitizer and libFuzzer runtimes (make asan, make
# fuzz, both part of make test), which clang only recommends.
TEST="
libcmocka-dev libclang-rt-14-dev
jq python3 python3-yaml openssl curl
stress-ng util-linux procps linux-perf
prometheus valgrind nginx-light redis-server
"
BENCH="
jq python3 stress-ng rt-tests util-linux procps linux-perf bpftrace libbpf-tools
gnuplot-nox nginx-light redis-server wrk
"
VM="qemu-system-x86 busybox-static kmod"

PKGS=""
[ $# -gt 0 ] || set -- build
for profile in "$@"; do
	case $profile in
	build) PKGS="$PKGS $BUILD" ;;
	install) PKGS="$PKGS $BUILD $INSTALL" ;;
	image) PKGS="$PKGS $BUILD $IMAGE" ;;
	test) PKGS="$PKGS $BUILD $INSTALL $IMAGE $TEST" ;;
	bench) PKGS="$PKGS $BUILD $BENCH" ;;
	vm) PKGS="$PKGS $BUILD $INSTALL $IMAGE $TEST $VM" ;;
	all) PKGS="$PKGS $BUILD $INSTALL $IMAGE $TEST $BENCH $VM" ;;
	*)
		echo "usage: scripts/deps.sh [build|install|image|test|bench|vm|all]..." >&2
		exit 2
		;;
	esac
done

# The real Kubernetes clients test_kube_real_clients drives (kubectl; node and
# npm for @kubernetes/client-node): Debian's packages, unless the command is
# already there from another package (a kubectl or a Node.js from upstream's
# repositories holds the same files, and apt would refuse to replace them).
case " $* " in
*" test "* | *" vm "* | *" all "*)
	command -v kubectl >/dev/null || PKGS="$PKGS kubernetes-client"
	command -v node >/dev/null || PKGS="$PKGS nodejs"
	command -v npm >/dev/null || PKGS="$PKGS npm"
	NPM_CI=1
	;;
esac

# Each npm package of the tests (tests/js/*/package-lock.json, versions pinned)
# installed with `npm ci` where its node_modules is missing or older than its
# lock; no root needed.
npm_ci() {
	[ -n "${NPM_CI:-}" ] || return 0
	for lock in "$(dirname "$0")"/../tests/js/*/package-lock.json; do
		[ -e "$lock" ] || continue
		dir=$(dirname "$lock")
		if [ -d "$dir/node_modules" ] && [ -z "$(find "$lock" -newer "$dir/node_modules")" ]; then
			continue
		fi
		echo "scripts/deps.sh: npm ci in $dir"
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || return 1
	done
}

missing=""
# shellcheck disable=SC2086 # one package a word
for p in $(printf '%s\n' $PKGS | sort -u); do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	npm_ci
	exit
fi

if [ "$(id -u)" != 0 ]; then
	echo "scripts/deps.sh: needs root to run apt-get; missing packages:$missing" >&2
	exit 1
fi
# `make -j` may run two profiles at once: one apt-get at a time (the second
# then finds its packages installed, or installs the rest).
exec 9>/run/lock/qoslet-deps.lock
flock 9
echo "scripts/deps.sh: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
npm_ci
