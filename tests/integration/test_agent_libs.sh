#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The libraries opened with dlopen() only when the config needs them
# (user/dl.h): libcurl (the Kubernetes link) and libmicrohttpd (the HTTP
# endpoint). The binary does not link them (nor ncurses, which only `qoslet
# top` on a terminal opens); `qoslet top -j` runs with both
# missing; an agent whose config needs a missing one stops at start with
# the library and its Debian package named (libcurl: exit 2, as a config
# error; libmicrohttpd: exit 1, as a taken port), having changed nothing
# (its state directory is never created). "Missing" is /dev/null
# bind-mounted over the library in a private mount namespace (unshare -m),
# so the node's own files are never touched.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

require_root
require_cmds jq unshare timeout ldd
require_binaries
test_setup
agent_setup
agent_cgroup be/pod1 >/dev/null

linked=$(ldd "$QOSLET")
for lib in libcurl.so.4 libmicrohttpd.so.12 libncursesw.so.6; do
	! grep -q "$lib" <<<"$linked" || fail "$QOSLET links $lib"
done
log "ok: the binary links neither libcurl, libmicrohttpd nor ncurses"

# awk reads ldconfig's whole list: leaving early would kill ldconfig with SIGPIPE,
# which pipefail turns into this script's exit status.
CURL=$(ldconfig -p | awk '$1 == "libcurl.so.4" && !f { print $NF; f = 1 }')
MHD=$(ldconfig -p | awk '$1 == "libmicrohttpd.so.12" && !f { print $NF; f = 1 }')
[ -n "$CURL" ] && [ -n "$MHD" ] || skip "libcurl4 or libmicrohttpd12 is not installed"

# without LIBS... -- CMD...: runs CMD with each LIB replaced by an empty file.
without() {
	local mounts="" lib
	while [ "$1" != -- ]; do
		mounts="$mounts mount --bind /dev/null $1 &&"
		shift
	done
	shift
	RC=0
	timeout -k 5 60 unshare -m --propagation private sh -c "$mounts exec \"\$@\"" sh "$@" \
		>"$TMP/out" 2>"$TMP/err" </dev/null || RC=$?
}

without "$CURL" "$MHD" -- "$QOSLET" top -j --pin-dir "$PIN_DIR" 0.2 1
assert_eq "$RC" 0 "qoslet top -j with libcurl and libmicrohttpd missing: exit status"
jq -e .cgroups "$TMP/out" >/dev/null || fail "top -j printed no JSON: $(head -c 300 "$TMP/out")"
log "ok: qoslet top -j runs with both missing"

# expect_start_error LIB PACKAGE STATUS CONFIG: the agent refuses to start.
expect_start_error() {
	local lib=$1 pkg=$2 status=$3
	agent_config "$4"
	without "$lib" -- "$QOSLET" agent --config "$TMP/agent.json" --pin-dir "$PIN_DIR"
	assert_eq "$RC" "$status" "agent with $(basename "$lib") missing: exit status"
	grep -qF "$(basename "$lib") cannot be loaded" "$TMP/err" ||
		fail "the error does not name $(basename "$lib"): $(tail -n 3 "$TMP/err")"
	grep -qF "install $pkg" "$TMP/err" || fail "the error does not name $pkg: $(tail -n 3 "$TMP/err")"
	[ ! -e "$STATE_DIR" ] || fail "the agent created its state directory: something was done"
	log "ok: $(grep -F 'cannot be loaded' "$TMP/err" | sed 's/.* qoslet: //')"
}

# A kubeconfig that resolves, so that the library is what fails.
echo "token-$RANDOM" >"$TMP/token"
: >"$TMP/ca.crt"
kube_kubeconfig "$TMP/kubeconfig" 1 # port 1: nothing listens; the library is what fails
expect_start_error "$CURL" libcurl4 2 '{"kubernetes": {"enabled": true, "node_name": "n1",
	"kubeconfig": "'"$TMP/kubeconfig"'"}}'
expect_start_error "$MHD" libmicrohttpd12 1 '{"http": {"enabled": true, "port": 1}}'
