#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Set-up fits its purpose (scripts/deps.sh): the build profile holds none of
# the test or bench tools; `make` asks for no other profile, and the goals
# that need more ask for theirs (make -n: nothing runs); an unknown profile
# is a usage error; with nothing missing, any profile returns 0 without root
# (an unprivileged make must not fail on apt).
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_cmds make setpriv
[ -z "${QOSLET_VM:-}" ] || skip "make -n writes build/version.stamp; the VM mounts the tree read-only"

DEPS=$QOSLET_ROOT/scripts/deps.sh
rc=0
"$DEPS" bogus 2>/dev/null || rc=$?
assert_eq "$rc" 2 "scripts/deps.sh bogus exit status"

build=$(sed -n '/^BUILD="/,/^"/p' "$DEPS" | sed '1s/^BUILD="//; $d' | tr ' ' '\n' | sed '/^$/d' | sort -u)
for pkg in prometheus valgrind buildah bpftrace stress-ng libcmocka-dev go-md2man; do
	! grep -qx "$pkg" <<<"$build" || fail "the build profile installs $pkg, which building does not need"
done
log "ok: the build profile has $(wc -l <<<"$build") packages, none of the test or bench tools"

# make -n GOAL: the deps.sh profiles it would run, in order.
profiles() {
	make -s -n -C "$QOSLET_ROOT" "$@" 2>/dev/null | awk '$1 ~ /scripts\/deps.sh$/ { print $2 }' | tr '\n' ' '
}
assert_eq "$(profiles all)" "" "make (all) runs no deps profile beyond its build check"
for goal in test:test test-unit:test test-integration:test bench:bench soak:bench \
	test-kernels:vm image:image fuzz:test asan:test; do
	got=$(profiles "${goal%%:*}")
	[[ " $got" == *" ${goal#*:} "* ]] ||
		fail "make ${goal%%:*} should install the ${goal#*:} profile; it runs: '$got'"
	log "ok: make ${goal%%:*} -> scripts/deps.sh $got"
done

# Nothing missing: every profile is a no-op, also without root. nobody runs
# a copy: root may keep the checkout where nobody cannot reach it (a clone in
# /root, mode 700). The copy has what deps.sh reads: itself and, per
# JavaScript suite, the lock file and the copy npm ci left beside its packages.
if "$DEPS" all >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	TMP=$(mktemp -d "/tmp/qoslet-$TEST_NAME.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT
	copy=$TMP/nobody
	mkdir -p "$copy/scripts"
	cp "$DEPS" "$copy/scripts/deps.sh"
	for lock in "$QOSLET_ROOT"/tests/js/*/package-lock.json; do
		[ -f "$lock" ] || continue
		suite=$copy/tests/js/$(basename "$(dirname "$lock")")
		mkdir -p "$suite/node_modules"
		cp "$lock" "$suite/"
		[ ! -f "$(dirname "$lock")/node_modules/.qoslet-lock" ] ||
			cp "$(dirname "$lock")/node_modules/.qoslet-lock" "$suite/node_modules/"
	done
	chmod -R a+rX "$copy"
	chmod a+x "$TMP"
	for p in build install image test bench vm all; do
		rc=0
		setpriv --reuid=65534 --regid=65534 --clear-groups "$copy/scripts/deps.sh" "$p" >/dev/null 2>&1 || rc=$?
		assert_eq "$rc" 0 "scripts/deps.sh $p as nobody with nothing missing"
	done
else
	skip_part "profiles without root (packages are missing here, or not root)"
fi
test_end
