#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# scripts/soak/soak.sh [-d SECONDS] [-w WARMUP_S] [-r RATE] [-o DIR]
#
# The soak with churn (docs/soak/README.md): `qoslet agent` (acting, not a dry
# run; HTTP on a free loopback port) manages this run's own parent cgroup
# while
#   - tests/helpers/cgchurn creates and removes RATE (default 50) cgroups a
#     second below it, each with a task that wakes every 100 ms for its 1 s
#     life, in every v1 hierarchy the agent reads; even-numbered ones are LS
#     units, odd ones BE units;
#   - interference comes and goes in cycles of 2 x 20 s: a new LS unit ls-K
#     runs a latency loop (wakelat) for the whole cycle; for the second half a
#     new BE unit be/stress-K runs stress-ng --cpu; both are removed at the
#     cycle's end;
#   - scripts/soak/sample.sh samples the agent's RSS, fds, loop duration and
#     the entries of its pinned maps once a second.
# Then scripts/soak/report.sh writes the table and checks that after the
# first WARMUP_S (default 40, one cycle) nothing grows, and the run checks
# that no map entry names a removed churn cgroup. Runs SECONDS (default
# 120); SECONDS and WARMUP_S are rounded up to whole cycles. With -o, the
# samples (soak.csv) and the plot (soak.png, when gnuplot is installed) go
# to DIR, and the run's facts and table to the marked section of
# DIR/README.md; without, the same is written to a temporary directory that
# is removed with everything else at exit.
#
# Needs root. Exit 0 = every check passed, 77 = cannot run here (the reason
# printed), 1 = a check failed. Everything it made (cgroups in every
# hierarchy, processes, the pin dir) is removed at exit, also on failure.
set -euo pipefail

SOAK=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/lib.sh
. "$SOAK/../../tests/integration/lib.sh"
# shellcheck source-path=SCRIPTDIR/../.. source=tests/integration/agent_lib.sh
. "$SOAK/../../tests/integration/agent_lib.sh"

COMMAND="$0 $*"
DURATION=120
WARMUP=40
RATE=50
OUT=""
PHASE_S=20
while getopts d:w:r:o: opt; do
	case $opt in
	d) DURATION=$OPTARG ;;
	w) WARMUP=$OPTARG ;;
	r) RATE=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*)
		echo "usage: soak.sh [-d SECONDS] [-w WARMUP_S] [-r RATE] [-o DIR]" >&2
		exit 2
		;;
	esac
done
CHURN=$QOSLET_ROOT/build/tests/helpers/cgchurn
WAKELAT=$QOSLET_ROOT/build/tests/helpers/wakelat

require_root
require_cmds jq bpftool curl stress-ng taskset python3
require_binaries
for b in "$CHURN" "$WAKELAT"; do
	[ -x "$b" ] || fail "$b is missing: run make first"
done
# Whole cycles only, so every cycle has both phases.
CYCLES=$(((DURATION + 2 * PHASE_S - 1) / (2 * PHASE_S)))
WARM_CYCLES=$(((WARMUP + 2 * PHASE_S - 1) / (2 * PHASE_S)))
# Two cycles after the warm-up at least: the first is compared with the last.
[ "$CYCLES" -ge $((WARM_CYCLES + 2)) ] ||
	fail "-d $DURATION -w $WARMUP: needs the warm-up and two more cycles of $((2 * PHASE_S)) s"
test_setup
agent_setup
# Without -o the results are written all the same (so the plot and the
# README stay tested), to a directory that goes at exit.
OUT=${OUT:-$TMP/result}
mkdir -p "$OUT"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
churn=$(agent_cgroup churn)
agent_cgroup be >/dev/null
REL=${TEST_PARENT_REL#/}
agent_config '{"classes": [
	{"glob": "'"$REL"'/ls-*", "class": "LS"},
	{"glob": "'"$REL"'/be/*", "class": "BE"},
	{"glob": "'"$REL"'/churn/c*[02468]", "class": "LS"},
	{"glob": "'"$REL"'/churn/c*[13579]", "class": "BE"}],
	"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"'}}'
# shellcheck disable=SC2119 # no extra arguments
agent_start
log "agent $AGENT_PID, http://127.0.0.1:$PORT/metrics"

START=$EPOCHREALTIME
echo "warmup 0" >"$TMP/phase"
churn_dirs=("$churn")
for mnt in "${AGENT_CTRLS[@]}"; do
	churn_dirs+=("$mnt$TEST_PARENT_REL/churn")
done
"$CHURN" -r "$RATE" -l 1000 -w 100 -i "$TMP/churn-ids" "${churn_dirs[@]}" \
	>"$TMP/churn.out" 2>"$TMP/churn.err" &
CHURN_PID=$!
BG_PIDS+=("$CHURN_PID")
"$SOAK/sample.sh" "$AGENT_PID" "$PIN_DIR" "http://127.0.0.1:$PORT/metrics" "$churn" \
	"$CHURN_PID" "$TMP/phase" "$START" "$CG_ROOT" >"$TMP/soak.csv" &
SAMPLER_PID=$!
BG_PIDS+=("$SAMPLER_PID")

# Milliseconds since START.
elapsed_ms() {
	local now=$EPOCHREALTIME
	echo $(((${now%.*} - ${START%.*}) * 1000 + (10#${now#*.} - 10#${START#*.}) / 1000))
}

# Sleeps until SECONDS since START; fails if the agent or the churn stops meanwhile.
sleep_until() {
	while [ "$(elapsed_ms)" -lt $(($1 * 1000)) ]; do
		kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent exited: $(tail -n 5 "$AGENT_ERR")"
		kill -0 "$CHURN_PID" 2>/dev/null || fail "the churn stopped: $(cat "$TMP/churn.err")"
		sleep 0.5
	done
}

# Removes one of the run's scenario cgroups (REL below the parent) in every
# hierarchy, killing what still runs in it (our own processes), and reaps
# PIDS (its processes).
scenario_remove() {
	local rel=$1 mnt
	shift
	cgroup_destroy "$TEST_PARENT/$rel"
	for mnt in "${AGENT_CTRLS[@]}"; do
		cgroup_destroy "$mnt$TEST_PARENT_REL/$rel"
	done
	wait "$@" 2>/dev/null || true
}

# phase NAME K: what the sampler labels the samples with from now on.
phase() {
	echo "$1 $2" >"$TMP/phase"
}

for ((k = 0; k < CYCLES; k++)); do
	c0=$((k * 2 * PHASE_S))
	if [ "$k" -lt "$WARM_CYCLES" ]; then phase warmup "$k"; else phase calm "$k"; fi
	ls=$(agent_cgroup "ls-$k")
	# 1 ms deadlines with 100 us of work each: a service using a tenth of a CPU.
	# Both end 2 s before their cgroups go, so the removal kills nothing on time.
	# shellcheck disable=SC2016 # expanded by that sh
	agent_run "$ls" 0,1 sh -c 'exec "$0" 1000 "$1" 100 >/dev/null' "$WAKELAT" $((2 * PHASE_S - 2))
	ls_pid=$CG_PID
	sleep_until $((c0 + PHASE_S))
	[ "$k" -lt "$WARM_CYCLES" ] || phase stress "$k"
	be=$(agent_cgroup "be/stress-$k")
	# Half a CPU of hog: the machine's other work keeps the rest.
	agent_run "$be" 0,1 stress-ng --cpu 1 --cpu-load 50 --timeout $((PHASE_S - 2))s -q
	be_pid=$CG_PID
	sleep_until $((c0 + 2 * PHASE_S))
	scenario_remove "be/stress-$k" "$be_pid"
	scenario_remove "ls-$k" "$ls_pid"
done

# The end: the churn removes its cgroups, then no map may name any of them.
kill -TERM "$CHURN_PID"
wait_exit "$CHURN_PID" 10 cgchurn || fail "cgchurn: $(cat "$TMP/churn.out" "$TMP/churn.err")"
log "churn: $(cat "$TMP/churn.out")"
phase drain "$CYCLES"
sleep 3 # a few more samples: the maps after the churn
kill -TERM "$SAMPLER_PID" 2>/dev/null || true
wait "$SAMPLER_PID" 2>/dev/null || true
kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent exited: $(tail -n 5 "$AGENT_ERR")"

# What the agent itself keeps per cgroup must go: the originals its actuator
# journaled, and the cgroups its metrics name (asked while it runs).
journaled=0
[ ! -e "$STATE_DIR/actuator.json" ] ||
	journaled=$(jq '[.changes[].cgroup | select(contains("/churn/c"))] | length' "$STATE_DIR/actuator.json")
named=$(curl -s --max-time 5 "http://127.0.0.1:$PORT/metrics" | grep -c '/churn/c' || true)
# Then the maps, with the agent stopped: its programs detach and the maps
# hold still, so each dump ends (lib.sh's map_dump says why that matters).
# The removal sweep runs at each rmdir, so the maps are already what they
# would be with the agent still running.
agent_stop
map_ids() {
	local m
	for m in rq_hist rq_alert_watch cpi_usage memstall_cg throttle_tg; do
		[ -e "$PIN_DIR/$m" ] || continue
		map_dump "$PIN_DIR/$m" "$TMP/$m.json"
		jq -r '.[].formatted.key' "$TMP/$m.json"
	done
	# Both ids of each blame pair.
	map_dump "$PIN_DIR/rq_blame" "$TMP/rq_blame.json"
	jq -r '.[].formatted.key | .victim, .culprit' "$TMP/rq_blame.json"
}
map_ids >"$TMP/ids"
sort -u "$TMP/ids" >"$TMP/ids.after"
leaked=$(grep -cxFf "$TMP/churn-ids" "$TMP/ids.after" || true)
churned=$(wc -l <"$TMP/churn-ids")

rc=0
"$SOAK/report.sh" "$TMP/soak.csv" >"$TMP/table.md" || rc=$?
cat "$TMP/table.md"

# The run's facts, plot and table: the section between the markers in
# DIR/README.md (the rest of that file is left as it is; appended if absent).
write_results() {
	local readme=$OUT/README.md
	cp "$TMP/soak.csv" "$OUT/soak.csv"
	if command -v gnuplot >/dev/null; then
		"$SOAK/plot.sh" "$OUT/soak.csv" "$OUT/soak.png" >/dev/null || fail "plot failed"
	else
		log "gnuplot missing: no plot (scripts/deps.sh installs gnuplot-nox)"
	fi
	{
		echo "<!-- soak:result (written by scripts/soak/soak.sh) -->"
		echo "Command: \`$COMMAND\` ($CYCLES cycles of $((2 * PHASE_S)) s, the first" \
			"$WARM_CYCLES the warm-up), $(date -u +%Y-%m-%d), qoslet $("$QOSLET" --version | awk '{ print $NF }')."
		echo
		echo "Machine: $(nproc) CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo))," \
			"$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)," \
			"kernel $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME"), shared with other work."
		echo
		echo "Churn: $(cat "$TMP/churn.out")."
		echo "After the run, of the $churned removed churn cgroups: $leaked named by a map entry," \
			"$journaled by the actuator's journal, $named by a /metrics line."
		echo
		echo "![RSS, fds, map entries and loop duration over time](soak.png)"
		echo
		cat "$TMP/table.md"
		echo "<!-- /soak:result -->"
	} >"$TMP/result.md"
	[ -e "$readme" ] || : >"$readme"
	if grep -q '^<!-- soak:result' "$readme"; then
		awk -v r="$TMP/result.md" '
			/^<!-- soak:result/ { while ((getline l < r) > 0) print l; skip = 1; next }
			/^<!-- \/soak:result/ { skip = 0; next }
			!skip' "$readme" >"$TMP/README.md"
	else
		{ cat "$readme" && echo && cat "$TMP/result.md"; } >"$TMP/README.md"
	fi
	cp "$TMP/README.md" "$readme"
}
write_results
[ "$rc" = 0 ] || fail "the soak's samples grew after the warm-up (the checks above)"
assert_eq "$leaked" 0 "map entries naming one of the $churned removed churn cgroups"
assert_eq "$journaled" 0 "journal entries naming a removed churn cgroup"
assert_eq "$named" 0 "/metrics lines naming a removed churn cgroup"
agent_stop
