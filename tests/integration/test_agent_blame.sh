#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The agent's blame totals against the kernel's. The agent reads only what
# changed since its last tick (it drains rq_blame_fresh) and keeps the
# totals itself (user/probes/blame_totals.h); the CLI views and bpftool read
# every pair of rq_blame and every CPU's cache of recent pairs, per CPU the
# larger of the two (docs/sched-probe.md). Twelve units, each waking every
# millisecond for a few seconds on CPU 0, wait for one another; once all have
# exited and two ticks passed, every pair of two units the agent's /metrics
# publish (the 20 largest) has the wait the pinned maps hold, and so has it
# for a second agent started on the same pins (which starts its totals from
# rq_blame).
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq curl bpftool python3
require_binaries
test_setup
agent_setup

PORT=$(free_port)
# Units u0..u11: 132 pairs, against 16 cache slots per CPU, so that pairs
# keep changing slots and their counts go through rq_blame_fresh.
N=12
declare -A ID_OF
classes=
for i in $(seq 0 $((N - 1))); do
	cg=$(agent_cgroup "u$i")
	UNITS+=("$cg")
	ID_OF[${cg#"$CG_ROOT"}]=$(cg_id "$cg")
	classes="$classes${classes:+,}{\"glob\": \"${cg#"$CG_ROOT"/}\", \"class\": \"LS\"}"
done
agent_config '{"classes": ['"$classes"'],
	"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"'}}'
agent_start --dry-run

# The agent is ticking: the loads start after its totals did. Each unit
# works 1 ms, sleeps 1 ms, all on CPU 0: they queue behind one another.
SECS=4
pids=()
for cg in "${UNITS[@]}"; do
	agent_run "$cg" 0 "$DUTYCYCLE" 1000 1000 "$SECS"
	pids+=("$CG_PID")
done
wait "${pids[@]}" 2>/dev/null || true
sleep 2.5

# kernel_wait_ns VICTIM_ID CULPRIT_ID: the pinned maps' total for the pair.
kernel_wait_ns() {
	jq -n --slurpfile blame "$TMP/rq_blame.json" --slurpfile cache "$TMP/rq_blame_cache.json" \
		--argjson v "$1" --argjson c "$2" '
		[($blame[0][] | .formatted | select(.key.victim == $v and .key.culprit == $c) |
			.values[] | {cpu, w: .value.wait_ns}),
		 ($cache[0][].formatted.values[] | .cpu as $cpu | .value.slot[] |
			select(.val.count > 0 and .key.victim == $v and .key.culprit == $c) |
			{cpu: $cpu, w: .val.wait_ns})] |
		group_by(.cpu) | map(map(.w) | max) | add // 0'
}

# snapshot: the agent's metrics, then the kernel's maps (so the kernel's
# totals are never older than the agent's), into $TMP.
snapshot() {
	local m
	curl -s "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt" || fail "scraping /metrics failed"
	for m in rq_blame rq_blame_cache; do
		map_dump "$PIN_DIR/$m" "$TMP/$m.json"
	done
}

# compare: in the last snapshot, every published pair of two units, the
# agent's wait against the kernel's (the metric has 9 significant digits:
# 0.001% apart at most). Prints the pairs compared; returns 1 at the first
# that differs, saying so in $TMP/differs.
compare() {
	local v c k m n=0
	# "VICTIM CULPRIT SECONDS" of each blame series.
	sed -n 's/^qoslet_blame_wait_seconds_total{cgroup="\([^"]*\)".*culprit_cgroup="\([^"]*\)".*} \(.*\)$/\1 \2 \3/p' \
		"$TMP/metrics.txt" >"$TMP/pairs"
	while read -r v c m; do
		if [ -z "${ID_OF[$v]:-}" ] || [ -z "${ID_OF[$c]:-}" ]; then
			continue
		fi
		k=$(kernel_wait_ns "${ID_OF[$v]}" "${ID_OF[$c]}")
		m=$(python3 -c 'import sys; print(round(float(sys.argv[1]) * 1e9))' "$m")
		if ! python3 -c 'import sys; k, m = int(sys.argv[1]), int(sys.argv[2]); sys.exit(k <= 0 or abs(k - m) > k * 1e-5 + 1)' "$k" "$m"; then
			echo "$v behind $c: agent $m ns, kernel $k ns" >"$TMP/differs"
			return 1
		fi
		n=$((n + 1))
	done <"$TMP/pairs"
	echo "$n"
}

# check WHO: compare, again after a tick while they differ (a slow machine's
# tick may not have come yet), at most 5 times.
check() {
	local who=$1 n
	for _ in 1 2 3 4 5; do
		snapshot
		n=$(compare) && break
		sleep 1
	done
	[ -n "$n" ] || fail "$who: $(cat "$TMP/differs")"
	# The top 20 also holds pairs with other cgroups (other jobs, kernel
	# threads); on a loaded host they take some places, so ask for enough
	# pairs of two units to mean something, not for a quiet machine's dozen.
	assert_cmp "$n" ">=" 5 "$who: published pairs of two units, each equal to the kernel's"
}
check "the agent that saw the waits"

agent_stop
: >"$AGENT_ERR"
agent_start --dry-run
sleep 2.5
check "an agent started after them"
agent_stop
test_end
