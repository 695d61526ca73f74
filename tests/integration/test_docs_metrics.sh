#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# docs/metrics/ says what a real agent exports, no more and no less. A real
# agent (HTTP on, the Kubernetes link on against the API stand-in of
# kube_lib.sh, an LS unit with run-queue waits and a CFS quota, a BE unit)
# runs a few ticks; then, over the metric families of its /metrics (the
# "# TYPE" lines of qoslet_* and process_*) and those the docs list (table
# rows starting with `qoslet_...` or `process_...` in docs/metrics/*.md):
#   - every family emitted is documented;
#   - every family documented is emitted, or listed in docs/metrics/agent.md's
#     "Families that can be absent" with the condition it needs;
#   - every family listed there as conditional is documented.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

require_root
require_cmds jq curl python3
require_binaries
test_setup
agent_setup
kube_require

DOCS=$QOSLET_ROOT/docs/metrics
NODE=n1 # the node of tests/helpers/kube_pods.json's pods
PORT=$(free_port)

kube_start "$NODE"

ls=$(agent_cgroup ls)
be=$(agent_cgroup be)
if [ -e "$ls/cpu.cfs_quota_us" ]; then
	echo 50000 >"$ls/cpu.cfs_quota_us"
elif [ -e "$ls/cpu.max" ]; then
	echo "50000 100000" >"$ls/cpu.max"
fi
agent_run "$ls" 0 "$DUTYCYCLE" 1000 0 "$(load_lifetime_s)"
agent_run "$ls" 0 "$DUTYCYCLE" 1000 0 "$(load_lifetime_s)"
agent_run "$be" 1 "$DUTYCYCLE" 1000 0 "$(load_lifetime_s)"
agent_config '{"classes": [{"glob": "'"${ls#"$CG_ROOT"/}"'", "class": "LS"},
		{"glob": "'"${be#"$CG_ROOT"/}"'", "class": "BE"}],
	"http": {"enabled": true, "address": "127.0.0.1", "port": '"$PORT"', "cgroups": "all"},
	"kubernetes": {"enabled": true, "kubeconfig": "'"$KUBE_TMP/kubeconfig"'",
		"node_name": "'"$NODE"'", "resync_s": 1, "timeout_s": 2}}'
agent_start

# Three ticks, so every per-tick family has had its chance.
ticks=0
for _ in $(seq 1 200); do
	curl -sf "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt" || true
	ticks=$(awk '$1 == "qoslet_agent_ticks_total" { print $2 }' "$TMP/metrics.txt")
	[ "${ticks:-0}" -ge 3 ] && break
	sleep 0.1
done
[ "${ticks:-0}" -ge 3 ] || fail "no 3 ticks on /metrics within 20 s: $(tail -n 5 "$AGENT_ERR")"

awk '$1 == "#" && $2 == "TYPE" && $3 ~ /^(qoslet|process)_/ { print $3 }' "$TMP/metrics.txt" |
	sort -u >"$TMP/emitted"
grep -hoE '^\| `(qoslet|process)_[a-z0-9_]*`' "$DOCS"/*.md | tr -d '|` ' | sort -u >"$TMP/documented"
# The conditional table: rows of the section up to the next heading.
awk '/^## Families that can be absent/ { on = 1; next } on && /^#/ { exit }
	on && /^\| `(qoslet|process)_/ { print }' "$DOCS/agent.md" >"$TMP/conditional.rows"
[ -s "$TMP/conditional.rows" ] || fail "docs/metrics/agent.md has no 'Families that can be absent' table"
# Each row names its condition: a second cell that is not empty.
awk -F'|' '{ gsub(/^ +| +$/, "", $3); if ($3 == "") { print; bad = 1 } } END { exit bad }' \
	"$TMP/conditional.rows" >"$TMP/no_condition" || fail "conditional families without a condition: $(cat "$TMP/no_condition")"
cut -d'|' -f2 "$TMP/conditional.rows" | tr -d '` ' | sort -u >"$TMP/conditional"
log "emitted $(wc -l <"$TMP/emitted"), documented $(wc -l <"$TMP/documented"), conditional $(wc -l <"$TMP/conditional")"

undocumented=$(comm -23 "$TMP/emitted" "$TMP/documented" | tr '\n' ' ')
[ -z "$undocumented" ] || fail "emitted on /metrics but not in docs/metrics/: $undocumented"
missing=$(comm -23 "$TMP/documented" "$TMP/emitted" | comm -23 - "$TMP/conditional" | tr '\n' ' ')
[ -z "$missing" ] || fail "documented in docs/metrics/ but not emitted, and not listed as conditional: $missing"
stale=$(comm -23 "$TMP/conditional" "$TMP/documented" | tr '\n' ' ')
[ -z "$stale" ] || fail "listed as conditional but documented nowhere in docs/metrics/: $stale"
log "ok: every emitted family is documented; absent here (conditional): $(comm -23 "$TMP/documented" "$TMP/emitted" | tr '\n' ' ')"
agent_stop
test_end
