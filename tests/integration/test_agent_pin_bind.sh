#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The DaemonSet mounts only the agent's own bpffs directory (hostPath
# /sys/fs/bpf/qoslet, scripts/deploy/daemonset.yaml), so in the container
# /sys/fs/bpf itself is not bpffs. Staged here as a container sees it, in a
# mount namespace of the test's own (private: nothing leaks to the host): a
# tmpfs over /sys/fs/bpf, and the host's pin directory bind-mounted at its
# path. The agent must pin into that bind mount, so the pins land in the
# host's bpffs and outlive the "container", and must not mount a bpffs of its
# own over /sys/fs/bpf (which would hide the bind mount: the pins would die
# with the namespace).
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds unshare mount
require_binaries
test_setup
agent_setup

[[ $PIN_DIR == /sys/fs/bpf/* ]] || skip "the test's pin directory is not under /sys/fs/bpf ($PIN_DIR)"
mkdir -p "$PIN_DIR"
mkdir "$TMP/host-pins"
agent_config '{}'

# In the namespace: keep a handle on the host directory, cover /sys/fs/bpf
# with a plain tmpfs, then bind the host directory back at its own path.
rc=0
unshare -m --propagation private env PIN_DIR="$PIN_DIR" VIEW="$TMP/host-pins" \
	QOSLET="$QOSLET" CONFIG="$TMP/agent.json" bash -c '
	set -e
	mount --bind "$PIN_DIR" "$VIEW"
	mount -t tmpfs -o size=1m,mode=755 qoslet-test-not-bpffs /sys/fs/bpf
	mkdir -p "$PIN_DIR"
	mount --bind "$VIEW" "$PIN_DIR"
	exec "$QOSLET" agent --config "$CONFIG" --pin-dir "$PIN_DIR" --duration 3
' 2>>"$AGENT_ERR" || rc=$?
assert_eq "$rc" 0 "the agent in the staged container: exit status ($(tail -n 2 "$AGENT_ERR" | tr '\n' ' '))"
if grep -q "mounted bpffs there" "$AGENT_ERR"; then
	fail "the agent mounted a bpffs over the bind mount: $(grep "mounted bpffs" "$AGENT_ERR")"
fi
log "ok: no bpffs mounted over the bind mount"
n=$(find "$PIN_DIR" -maxdepth 1 -type f | wc -l)
assert_cmp "$n" ">=" 1 "maps pinned into the host's bpffs through the bind mount ($(find "$PIN_DIR" -maxdepth 1 -type f -printf '%f ' | cut -c1-120))"
mount | grep -q "qoslet-test-not-bpffs" && fail "the namespace's tmpfs leaked to the host"
log "pass"
