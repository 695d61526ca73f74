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
#            servers test_loadgen drives: nginx-light, redis-server; the
#            container runtime test_runtime_containerd starts: containerd,
#            runc, and a static busybox for its containers' rootfs; kubectl,
#            node and npm, and `npm ci` of tests/js/*/ for the JavaScript
#            suites)
#   bench    `make bench`, `make soak`: build, and the benchmarks' tools
#            (the tracers compared, rt-tests, gnuplot for the plots; for
#            slobench the servers nginx-light and redis-server, and wrk and
#            redis-benchmark (redis-server's redis-tools) as cross-checks)
#   vm       `make test-kernels`: test, and what boots the kernel matrix in
#            VMs (scripts/vm/): qemu, a static busybox for the initramfs, kmod,
#            mkfs.ext4 (e2fsprogs) for the VMs' scratch disk.
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
libyaml-dev
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
nodejs
containerd runc busybox-static
"
# npm for the JavaScript test suites (tests/js/*/): Debian's nodejs comes
# without it, NodeSource's brings its own and conflicts with Debian's npm.
command -v npm >/dev/null 2>&1 || TEST="$TEST npm"
# kubectl for test_kube_real_clients and test_deploy_admission: Debian's,
# unless one is there already from another package (upstream's holds the
# same file, and apt would refuse to replace it).
command -v kubectl >/dev/null 2>&1 || TEST="$TEST kubernetes-client"
BENCH="
jq python3 stress-ng rt-tests util-linux procps linux-perf bpftrace libbpf-tools
gnuplot-nox nginx-light redis-server wrk
"
VM="qemu-system-x86 busybox-static kmod e2fsprogs"

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

# The JavaScript test suites' pinned packages (tests/js/*/package-lock.json),
# by npm ci, again only after the lock file changed (a copy is kept beside
# the packages). A failure is said, not fatal: those tests then skip.
js_suites() {
	# shellcheck disable=SC2086 # one package a word
	printf '%s\n' $PKGS | grep -qx nodejs || return 0
	js_root=$(cd "$(dirname "$0")/.." && pwd)
	for js_dir in "$js_root"/tests/js/*/; do
		[ -f "$js_dir/package-lock.json" ] || continue
		cmp -s "$js_dir/package-lock.json" "$js_dir/node_modules/.qoslet-lock" && continue
		if (cd "$js_dir" && npm ci --no-audit --no-fund --loglevel=error >&2); then
			cp "$js_dir/package-lock.json" "$js_dir/node_modules/.qoslet-lock"
		else
			echo "scripts/deps.sh: npm ci failed in ${js_dir#"$js_root"/}: its tests will skip" >&2
		fi
	done
}

missing=""
# shellcheck disable=SC2086 # one package a word
for p in $(printf '%s\n' $PKGS | sort -u); do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && { js_suites; exit 0; }

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
js_suites
