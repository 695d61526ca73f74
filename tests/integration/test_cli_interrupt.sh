#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Ctrl-C during an interval prints the partial interval, as bcc's tools do:
# `qoslet runqlat 60` stopped after a few seconds prints those seconds (text
# and -j, where "partial" is true and interval_s is their length), exits 0
# and prints nothing more; so does `top -j` (a view with its own wait). The
# "Tracing ... Hit Ctrl-C to end." line goes to stderr when stdout is a
# terminal, and not when it is piped.
# shellcheck disable=SC2016 # jq filters are single-quoted
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_root
require_cmds jq script
require_binaries
test_setup

RUN_S=3 # how long each view runs before SIGINT
LOAD=$(kube_cgroup burstable)
LOAD_REL=$(cg_rel "$LOAD")
# Two tasks on one CPU wait for each other: the load cgroup has waits to report.
for _ in 1 2; do
	cg_run "$LOAD" 0 "$DUTYCYCLE" 500 500 "$(load_lifetime_s)"
done

# interrupt NAME ARGS...: runs qoslet ARGS (stdout to $TMP/NAME.out), sends
# SIGINT after RUN_S seconds of tracing, and checks it exits 0 within 10 s.
interrupt() {
	local name=$1 rc=0
	shift
	qoslet_bg "$TMP/$name.out" "$TMP/$name.err" "$@"
	wait_pinned 30 "$QOSLET_PID"
	sleep "$RUN_S"
	[ ! -s "$TMP/$name.out" ] || fail "qoslet $* printed before its 60 s interval ended: $(head -c 300 "$TMP/$name.out")"
	kill -INT "$QOSLET_PID"
	wait_exit "$QOSLET_PID" 10 "qoslet $*" || rc=$?
	[ "$rc" = 0 ] || fail "qoslet $* exited $rc after SIGINT: $(tail -n 5 "$TMP/$name.err")"
	! grep -q "Hit Ctrl-C" "$TMP/$name.err" ||
		fail "qoslet $* printed the Ctrl-C hint with stdout piped"
	rm -rf "$PIN_DIR" # the next run loads afresh, so wait_pinned waits for it
}

# -j: one line, marked partial, covering about RUN_S seconds, with the load.
interrupt runqlat_json runqlat -j --pin-dir "$PIN_DIR" 60
assert_json_lines "$TMP/runqlat_json.out"
assert_eq "$(wc -l <"$TMP/runqlat_json.out")" 1 "runqlat -j lines after SIGINT"
line=$(cat "$TMP/runqlat_json.out")
assert_eq "$(jget "$line" .partial)" true "runqlat -j partial"
interval=$(jget "$line" .interval_s)
# The interval starts at the first reading, a little after the maps are pinned.
assert_cmp "$interval" ">=" $((RUN_S - 1)) "runqlat -j interval_s of the interrupted interval"
assert_cmp "$interval" "<" 30 "runqlat -j interval_s of the interrupted interval"
count=$(jq -r --arg p "$LOAD_REL" '[.cgroups[] | select(.path == $p)][0].count // 0' <<<"$line")
assert_cmp "$count" ">" 0 "waits of the load cgroup in the interrupted interval"
log "ok: runqlat -j 60 stopped after ${RUN_S}s printed ${interval}s, partial, $count waits of the load"

# Text: the header names the interrupted interval and the load is in it.
interrupt runqlat_text runqlat --pin-dir "$PIN_DIR" 60
grep -q "run-queue latency per cgroup over .* (interrupted)" "$TMP/runqlat_text.out" ||
	fail "runqlat 60 after SIGINT: no interrupted-interval header: $(head -c 500 "$TMP/runqlat_text.out")"
grep -qF "cgroup $LOAD_REL " "$TMP/runqlat_text.out" ||
	fail "runqlat 60 after SIGINT: the load cgroup is missing: $(head -c 1000 "$TMP/runqlat_text.out")"
log "ok: runqlat 60 stopped after ${RUN_S}s printed the interval so far (text)"

# top has its own wait (keys on a terminal); piped it must behave the same.
interrupt top_json top -j --pin-dir "$PIN_DIR" 60
assert_eq "$(wc -l <"$TMP/top_json.out")" 1 "top -j lines after SIGINT"
assert_eq "$(jq -r .partial "$TMP/top_json.out")" true "top -j partial"
log "ok: top -j 60 stopped after ${RUN_S}s printed the interval so far"

# On a terminal (script(1) gives qoslet a pty), the hint comes first.
script -qec "$QOSLET runqlat --pin-dir $PIN_DIR 0.2 1" "$TMP/tty.out" >/dev/null </dev/null ||
	fail "qoslet runqlat on a pty failed: $(tail -n 5 "$TMP/tty.out")"
grep -q "^Tracing: run-queue latency .*, every 0.2 s... Hit Ctrl-C to end." "$TMP/tty.out" ||
	fail "no Tracing line on a terminal: $(head -c 500 "$TMP/tty.out")"
log "ok: on a terminal: $(grep -m1 ^Tracing "$TMP/tty.out" | tr -d '\r')"

test_end
