#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A change of the config file reloads it as SIGHUP does, with no signal: the
# file is a Kubernetes ConfigMap volume's, and every change is the kubelet's
# atomic swap (a new "..YYYY_MM_DD_..." directory, a "..data_tmp" symlink to
# it renamed over "..data", the old directory removed), while config.json
# stays a symlink to ..data/config.json. A BE unit runs stress-ng under an
# agent whose config has BE suppression off. Then:
#   - a file created next to the config: nothing is reloaded;
#   - a swap to a document that is not JSON: refused with the parser's
#     message, once; the agent runs on with the old config (no suppression);
#   - a swap to the config with suppression on: "reloaded", once for the
#     swap's several renames, and within 4 s a suppression decision lowers the
#     BE quota (the kernel shows it);
#   - a swap to the same bytes again: no reload.
# shellcheck disable=SC2016
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/agent_lib.sh
. "$(dirname "$0")/agent_lib.sh"

require_root
require_cmds jq stress-ng
require_binaries
test_setup
agent_setup

NCPU=$(nproc)
be=$(agent_cgroup be)
ls=$(agent_cgroup ls)
[ -e "$be/cpu.cfs_quota_us" ] || [ -e "$be/cpu.max" ] || skip "no CFS bandwidth control"
agent_run "$be" "$(seq -s, 0 $((NCPU - 1)))" stress-ng --cpu "$NCPU" --timeout 120s
base='{"classes": [{"glob": "'"${ls#"$CG_ROOT"/}"'", "class": "LS"},
		{"glob": "'"${be#"$CG_ROOT"/}"'", "class": "BE"}],
	"burst": {"policy": "none"}, "interference": {"enabled": false},
	"evict": {"memory": {"enabled": false}, "cpu": {"enabled": false}}}'
agent_config "$(jq -c '. * {suppress: {enabled: false, min_cpus: 0.2, cpu_idle: false}}' <<<"$base")"
jq -c '. * {suppress: {enabled: true}}' "$TMP/agent.json" >"$TMP/on.json"
echo '{"suppress": {"enabled": tru}}' >"$TMP/broken.json"

CM=$TMP/configmap
configmap_swap "$CM" "$TMP/agent.json"
CONF=$CM/config.json

agent_start --config "$CONF"
suppress='.rule | startswith("suppress.")'
reloads() { grep -c "reload" "$AGENT_ERR" || true; }
# wait_reload N: waits up to 3 s for the N-th reload line; prints it.
wait_reload() {
	for _ in $(seq 1 30); do
		[ "$(reloads)" -ge "$1" ] && break
		sleep 0.1
	done
	kill -0 "$AGENT_PID" 2>/dev/null || fail "the agent died: $(tail -n 3 "$AGENT_ERR")"
	grep "reload" "$AGENT_ERR" | sed -n "${1}p"
}

sleep 2
assert_eq "$(reloads)" 0 "no reload at start"
assert_eq "$(decisions "$suppress" | jq length)" 0 "no suppression while the config has it off"

echo x >"$CM/unrelated"
sleep 2
assert_eq "$(reloads)" 0 "a file next to the config reloads nothing"

configmap_swap "$CM" "$TMP/broken.json"
line=$(wait_reload 1)
echo "$line" | grep -q "reload refused, the running config stays: $CONF: invalid JSON at line 1" ||
	fail "a broken config: $line (log: $(tail -n 3 "$AGENT_ERR"))"
grep -q "agent: $CONF changed" "$AGENT_ERR" || fail "the change is not logged"
log "ok: a broken config is refused: ${line#* qoslet: }"
sleep 2
assert_eq "$(reloads)" 1 "the swap's renames made one reload"
assert_eq "$(decisions "$suppress" | jq length)" 0 "still no suppression: the running config stays"

configmap_swap "$CM" "$TMP/on.json"
line=$(wait_reload 2)
echo "$line" | grep -q "agent: reloaded $CONF" || fail "a good config: $line"
d=$(wait_decision '.rule == "suppress.cfs_quota" and .outcome == "applied"' 4) ||
	fail "no suppression within 4 s of the reload: $(tail -n 3 "$AGENT_ERR")"
q=$(cfs_quota "$be")
assert_cmp "$q" ">" 0 "the kernel shows a BE quota after the reload"
assert_eq "$(reloads)" 2 "one reload for the good swap"

configmap_swap "$CM" "$TMP/on.json"
sleep 2
assert_eq "$(reloads)" 2 "a swap to the same bytes reloads nothing"
agent_stop
assert_eq "$(cfs_quota "$be")" -1 "the BE quota is restored at the stop"
log "pass"
