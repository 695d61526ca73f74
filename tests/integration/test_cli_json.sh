#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# One JSON vocabulary across the views (docs/json-output.md): with load in a
# kubepods-shaped container cgroup that has a CPU quota, every view's -j
# lines carry only documented keys with their documented types, every
# unconditional key, and "schema" 1 and the node's name; the container's row
# names it the same way in every view (qos, pod and container as strings, from
# the path); top's rq_p99_ns and runqlat's p99_ns are both integers.
# runqlat lists cgroups worst p99_ns first, and --top N keeps the first N.
# memstall's rows need an OOM and a memory limit: test_memstall checks them
# against the same tables; here only its line's keys are checked.
# shellcheck disable=SC2016 # jq filters are single-quoted
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_root
require_cmds jq python3
require_binaries
test_setup

CG=$(kube_cgroup burstable)
REL=$(cg_rel "$CG")
# A quota the load exceeds, so throttle reports the cgroup.
if [ -e "$CG/cpu.cfs_quota_us" ]; then
	echo 20000 >"$CG/cpu.cfs_quota_us"
elif [ -e "$CG/cpu.max" ]; then
	echo "20000 100000" >"$CG/cpu.max"
else
	skip "kernel without CONFIG_CFS_BANDWIDTH: throttle would have no rows"
fi
for _ in 1 2; do
	cg_run "$CG" 0 "$DUTYCYCLE" 900 100 "$(load_lifetime_s)"
done
NODE=${NODE_NAME:-$(uname -n)}
log "load in $REL, node $NODE"

for view in top runqlat blame cpi throttle memstall; do
	out=$TMP/$view.json
	rc=0
	timeout -k 5 60 "$QOSLET" "$view" -j --pin-dir "$PIN_DIR" 1 2 >"$out" 2>"$TMP/$view.err" || rc=$?
	[ "$rc" = 0 ] || fail "qoslet $view -j exited $rc: $(tail -n 5 "$TMP/$view.err")"
	assert_json_lines "$out"
	assert_json_vocab "$view" "$out"
	assert_json "$(tail -n 1 "$out")" ".schema == 2 and .node == \"$NODE\" and .view == \"$view\"" \
		"$view: schema, node and view"
	if [ "$view" != memstall ]; then
		row=$(jq -c --arg p "$REL" '[(.cgroups // .victims)[] | select(.path == $p)][0] // empty' "$out" | tail -n 1)
		[ -n "$row" ] || fail "$view -j: no row for the load's cgroup $REL: $(tail -c 600 "$out")"
		assert_json "$row" '.qos == "burstable" and (.pod | type == "string") and (.container | type == "string")' \
			"$view: the container's qos, pod and container"
		pod=$(jget "$row" .pod) container=$(jget "$row" .container)
		# The path holds the UID with dashes (cgroupfs) or underscores (systemd).
		[[ $REL == *"pod$pod"* || $REL == *"pod${pod//-/_}"* ]] || fail "$view: pod $pod is not in $REL"
		[[ $REL == *"$container"* ]] || fail "$view: container $container is not in $REL"
	fi
	log "ok: $view -j matches docs/json-output.md"
done
# top opens no software stand-ins for CPI, which it never shows (qoslet-top(8)).
assert_json "$(tail -n 1 "$TMP/top.json")" '.cpi_hardware or (.probes.cpi.detail | test("CPU time only"))' \
	"top without a PMU: CPU time only, no counters"
assert_json "$(jq -c --arg p "$REL" '[.cgroups[] | select(.path == $p)][0]' "$TMP/top.json" | tail -n 1)" \
	'.rq_p99_ns | type == "number" and floor == .' "top: rq_p99_ns is whole nanoseconds"
log "ok: every view's -j output uses the vocabulary of docs/json-output.md"

# Sorted by p99, worst first; --top keeps that many.
assert_json "$(tail -n 1 "$TMP/runqlat.json")" '[.cgroups[].p99_ns] | length >= 2 and . == (sort | reverse)' \
	"runqlat: cgroups sorted by p99_ns, worst first"
rc=0
timeout -k 5 60 "$QOSLET" runqlat -j --top 1 --pin-dir "$PIN_DIR" 1 2 >"$TMP/top1.json" 2>"$TMP/top1.err" || rc=$?
[ "$rc" = 0 ] || fail "qoslet runqlat --top 1 exited $rc: $(tail -n 5 "$TMP/top1.err")"
assert_json "$(tail -n 1 "$TMP/top1.json")" '.cgroups | length == 1' "runqlat --top 1: one cgroup"
test_end
