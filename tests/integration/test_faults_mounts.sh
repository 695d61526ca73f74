#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# bpffs or tracefs missing (docs/faults.md), in private mount namespaces
# (unshare -m), so the node's own mounts are never touched:
#  1. Neither bpffs nor tracefs mounted: the agent (dry-run) mounts bpffs on
#     /sys/fs/bpf, says so, and its probes attach; `qoslet top` then runs on
#     the same pins. It mounts tracefs too (no probe needs it, but people
#     tracing on the node expect it), and says so.
#  2. No bpffs and no right to mount one (CAP_SYS_ADMIN dropped): `qoslet
#     top` exits 1 saying what is missing and the three ways to fix it; the
#     agent says the same, then runs on the cgroup counters alone.
#  3. --pin-dir not on a bpf filesystem: `qoslet top` exits 1 and says so.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq setpriv unshare timeout
require_binaries
test_setup
agent_setup

be=$(agent_cgroup be)
agent_run "$be" 0 "$DUTYCYCLE" 2000 2000 "$(load_lifetime_s)"
agent_config '{"classes": [{"glob": "'"${be#"$CG_ROOT"/}"'", "class": "BE"}]}'

# in_ns SCRIPT ARGS...: runs the bash SCRIPT in a new private mount namespace
# after unmounting bpffs and tracefs there; $1.. are ARGS. It dies with its
# namespace, and so does every mount made in it.
in_ns() {
	local script=$1
	shift
	timeout -k 5 60 unshare -m --propagation private bash -c '
		set -u
		for m in /sys/fs/bpf /sys/kernel/tracing /sys/kernel/debug/tracing; do
			umount -R "$m" 2>/dev/null
		done
		if grep -qE " (bpf|tracefs) " /proc/self/mounts; then
			echo "SKIP: bpffs or tracefs still mounted in the namespace"
			exit 77
		fi
		'"$script" ns "$@"
}

agent_ns() { # the agent's command line, for the scripts run in_ns
	echo "$QOSLET agent --config $TMP/agent.json --pin-dir $PIN_DIR --dry-run --duration 3"
}

# ---- 1: the agent mounts bpffs (and tracefs) ----
rc=0
in_ns '
	'"$(agent_ns)"' 2>"$1/agent1.err" || exit 10
	timeout 30 '"$QOSLET"' top -j --pin-dir '"$PIN_DIR"' 0.5 1 >"$1/top1.out" 2>"$1/top1.err" || exit 11
	grep -E " (bpf|tracefs) " /proc/self/mounts >"$1/mounts1"' "$TMP" || rc=$?
[ "$rc" = 77 ] && skip "cannot hide bpffs and tracefs in a mount namespace"
[ "$rc" = 0 ] || fail "run 1 failed ($rc): $(cat "$TMP"/agent1.err "$TMP"/top1.err 2>/dev/null | tail -n 5)"
grep -q "nothing was mounted on /sys/fs/bpf: mounted bpffs there" "$TMP/agent1.err" ||
	fail "the agent did not say it mounted bpffs: $(cat "$TMP/agent1.err")"
grep -q "sched probe: attached" "$TMP/agent1.err" || fail "no probe attached: $(cat "$TMP/agent1.err")"
assert_json "$(cat "$TMP/top1.out")" '.probes.sched.on and .probes.memstall.on' \
	"top on the agent's bpffs: probes on"
assert_eq "$(awk '{ print $2, $3 }' "$TMP/mounts1" | sort | tr '\n' ' ')" \
	"/sys/fs/bpf bpf /sys/kernel/tracing tracefs " "mounts in the namespace afterwards"
grep -q "mounted tracefs there" "$TMP/agent1.err" || fail "the tracefs mount is not logged"
[ ! -e "$PIN_DIR" ] || fail "$PIN_DIR exists outside the namespace: the node's bpffs was used"
log "ok: the namespace's bpffs died with it"

# ---- 2: no bpffs, and no right to mount one ----
NOADMIN="setpriv --bounding-set -sys_admin --inh-caps -sys_admin"
rc=0
in_ns '
	rc=0
	timeout 30 '"$NOADMIN $QOSLET"' top -j --pin-dir '"$PIN_DIR"' 0.5 1 >"$1/top2.out" 2>"$1/top2.err" || rc=$?
	echo "$rc" >"$1/top2.rc"
	'"$NOADMIN $(agent_ns)"' 2>"$1/agent2.err"' "$TMP" || rc=$?
[ "$rc" = 0 ] || fail "the agent without bpffs exited $rc: $(tail -n 5 "$TMP/agent2.err")"
assert_eq "$(cat "$TMP/top2.rc")" 1 "top's exit status without bpffs"
WHY="no bpffs on /sys/fs/bpf and mounting one failed: Operation not permitted; mount it (mount -t bpf bpf /sys/fs/bpf), give qoslet CAP_SYS_ADMIN, or point --pin-dir at a bpf filesystem"
grep -qF "$WHY" "$TMP/top2.err" || fail "top did not explain: $(cat "$TMP/top2.err")"
log "ok: top says: $(cat "$TMP/top2.err")"
[ ! -s "$TMP/top2.out" ] || fail "top printed data without probes: $(cat "$TMP/top2.out")"
grep -qF "$WHY" "$TMP/agent2.err" || fail "the agent did not explain: $(cat "$TMP/agent2.err")"
grep -q "agent: no probe could run" "$TMP/agent2.err" ||
	fail "the agent did not say how it runs on: $(cat "$TMP/agent2.err")"
n=$(sed -n 's/.*stopping after \([0-9]*\) ticks.*/\1/p' "$TMP/agent2.err")
assert_cmp "${n:-0}" ">=" 2 "agent ticks without bpffs"

# ---- 3: a pin directory that is not on bpffs ----
rc=0
timeout 30 "$QOSLET" top -j --pin-dir "$TMP/pins" 0.5 1 >"$TMP/top3.out" 2>"$TMP/top3.err" || rc=$?
assert_eq "$rc" 1 "top's exit status with --pin-dir on tmpfs or disk"
grep -qF "pin directory $TMP/pins is not on a bpf filesystem: mount one there (mount -t bpf bpf DIR) or choose another --pin-dir" \
	"$TMP/top3.err" || fail "top did not explain: $(cat "$TMP/top3.err")"
log "pass"
