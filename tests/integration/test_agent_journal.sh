#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A journal that cannot be trusted, or cannot be written, never stops the
# agent nor strands a change (docs/agent-actuator.md, The journal):
#  1. damaged at start: not JSON, truncated (a crashed run's, its first
#     change whole), or of a future version. Each time the agent starts, says
#     so as an error, restores what the file provably holds (the truncated
#     one's whole change), moves the file aside to
#     actuator.json.bad-<time> for a person, counts it in
#     qoslet_agent_errors_total{kind="journal_set_aside"}, and acts (the BE
#     unit under load gets its quota), and a clean stop restores it.
#  2. disk full: the state directory on a full tmpfs of its own. The agent
#     runs, says once that the journal cannot be written, counts it in
#     {kind="journal_write"}, and refuses every write whose original it
#     cannot hold: the BE quota stays as it was. Once there is room, the
#     journal is written again and the quota is set; a clean stop restores it.
#  3. another user holds flock(2) on the managed cgroup directory (any user
#     may open it): the agent still starts and acts; its tree's locks are
#     root's alone (docs/security.md, FILES).
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq curl mount umount
require_binaries
test_setup
agent_setup

be=$(agent_cgroup be)
BE_REL=${be#"$CG_ROOT"/}
agent_run "$be" 0 "$DUTYCYCLE" 1000 0 "$(load_lifetime_s)"
ORIG=$(cfs_quota "$be")
PORT=$(free_port)

# start_on STATE_DIR: the agent with its state there, /metrics on PORT.
start_on() {
	STATE_DIR=$1
	agent_config '{"classes": [{"glob": "'"$BE_REL"'", "class": "BE"}], "suppress": {"min_cpus": 0.2},
		"burst": {"policy": "none"},
		"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"'}}'
	: >"$AGENT_ERR"
	agent_start
}

metric() { # the value of errors_total{kind=$1}, or "none"
	curl -sf "http://127.0.0.1:$PORT/metrics" |
		awk -v k="kind=\"$1\"" 'index($0, "qoslet_agent_errors_total{") == 1 && index($0, k) { print $2; f = 1 } END { if (!f) print "none" }'
}

quota_is() {
	local q
	q=$(cfs_quota "$be")
	case $1 in
	limited) [ "$q" != -1 ] && [ "$q" != "$ORIG" ] ;;
	orig) [ "$q" = "$ORIG" ] ;;
	esac
}
# wait_quota limited|orig SECONDS: waits for the BE quota to be a limit of the agent's, or the original.
wait_quota() {
	for _ in $(seq 1 $(($(time_bound_ms "$2"000) / 100))); do
		quota_is "$1" && return 0
		sleep 0.1
	done
	return 1
}

# ---- 1: damaged journals ----
if [ -e "$be/cpu.cfs_quota_us" ]; then
	QFILE=cpu.cfs_quota_us QORIG=-1 LEFT=30000
else
	QFILE=cpu.max QORIG="max 100000" LEFT="30000 100000"
fi
# The truncated one is a crashed run's of this boot (a journal of another
# boot names nothing that still exists): its first change (the BE quota, left
# at 30 ms) is whole, the second cut in the middle.
BOOT=$(cat /proc/sys/kernel/random/boot_id)
damaged() {
	case $1 in
	not_json) printf '{"version": 1, "changes": [ this is not json' ;;
	truncated) printf '{"version": 1, "boot_id": "%s", "pid": 1, "subtree": "%s", "changes": [{"cgroup": "%s", "file": "%s", "original": "%s"}, {"cgroup": "%s", "fi' \
		"$BOOT" "${TEST_PARENT_REL#/}" "$BE_REL" "$QFILE" "$QORIG" "$BE_REL" ;;
	future) printf '{"version": 99, "changes": []}\n' ;;
	esac
}
for kind in not_json truncated future; do
	dir="$TMP/state-$kind"
	mkdir -m 700 "$dir"
	damaged "$kind" >"$dir/actuator.json"
	[ "$kind" != truncated ] || echo "$LEFT" >"$be/$QFILE"
	start_on "$dir"
	grep -q "actuator.json is damaged" "$AGENT_ERR" || fail "$kind: no error said at start: $(tail -n 3 "$AGENT_ERR")"
	if [ "$kind" = truncated ]; then
		grep -q "restoring the 1 settings it provably holds" "$AGENT_ERR" ||
			fail "truncated: the whole change is not restored: $(grep damaged "$AGENT_ERR")"
	fi
	n=$(find "$dir" -name 'actuator.json.bad-*' | wc -l)
	assert_eq "$n" 1 "$kind: the damaged journal moved aside for a person"
	assert_eq "$(cat "$dir"/actuator.json.bad-*)" "$(damaged "$kind")" "$kind: kept as it was"
	wait_quota limited 10 || fail "$kind: the agent did not act (BE quota $(cfs_quota "$be")): $(tail -n 3 "$AGENT_ERR")"
	assert_eq "$(metric journal_set_aside)" 1 "$kind: journal_set_aside counted"
	agent_stop
	assert_eq "$(cfs_quota "$be")" "$ORIG" "$kind: a clean stop restored the quota"
	log "ok: $kind"
done

# ---- 2: disk full ----
full="$TMP/full"
mkdir "$full"
mount -t tmpfs -o size=64k,mode=700 qoslet-test-full "$full" || skip "cannot mount a tmpfs for the full disk"
MOUNTED="$full"
cleanup_full() { [ -z "${MOUNTED:-}" ] || umount "$MOUNTED" 2>/dev/null || true; }
trap 'rc=$?; cleanup_full; (exit $rc); _test_cleanup' EXIT
dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null || true # until ENOSPC
start_on "$full"
for _ in $(seq 1 $(($(time_bound_ms 10000) / 100))); do
	grep -q "cannot be written" "$AGENT_ERR" && break
	sleep 0.1
done
grep -q "journal $full/actuator.json cannot be written" "$AGENT_ERR" ||
	fail "disk full: not said: $(tail -n 3 "$AGENT_ERR")"
sleep 2 # ticks that would set the quota
assert_eq "$(cfs_quota "$be")" "$ORIG" "disk full: the quota whose original cannot be held is not written"
assert_cmp "$(metric journal_write)" ">=" 1 "disk full: journal_write counted"
assert_eq "$(grep -c "cannot be written" "$AGENT_ERR")" 1 "disk full: said once"
rm "$full/filler"
wait_quota limited 10 || fail "room again: the agent did not act: $(tail -n 3 "$AGENT_ERR")"
grep -q "is written again" "$AGENT_ERR" || fail "room again: not said"
agent_stop
assert_eq "$(cfs_quota "$be")" "$ORIG" "disk full, then room: a clean stop restored the quota"
log "ok: disk full"
umount "$full" && MOUNTED=

require_cmds setpriv flock
setpriv --reuid 65534 --regid 65534 --clear-groups flock -x "$CG_ROOT" sleep 60 &
locker=$!
BG_PIDS+=("$locker")
# setpriv becomes flock, so the lock is listed under its pid; under TCG on a
# busy host taking it took longer than a fixed 0.3 s.
for _ in $(seq 1 $(($(time_bound_ms 3000) / 100))); do
	grep -qE "FLOCK +ADVISORY +WRITE +$locker " /proc/locks && break
	sleep 0.1
done
grep -qE "FLOCK +ADVISORY +WRITE +$locker " /proc/locks || fail "uid 65534 could not take its flock"
start_on "$TMP/state-flocked"
wait_quota limited 10 || fail "a flock by uid 65534 kept the agent from acting: $(tail -n 3 "$AGENT_ERR")"
agent_stop
log "ok: another user's flock on the cgroup directory"
log "pass"
