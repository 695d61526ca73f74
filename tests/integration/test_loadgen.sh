#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/helpers/loadgen (slobench's load generator) against the real servers
# from Debian, started as slobench starts them (server_lib.sh): nginx with one
# worker and redis-server. For each, 2 s closed loop and 2 s open loop at
# 500 req/s:
#   - no errors; the closed loop answers more than 100 requests;
#   - the open loop sends what its schedule says: 1000 requests (999-1000:
#     the last due time may fall on the end), and throughput 500/s +-1%;
#   - the percentiles are ordered: p50 <= p99 <= p99.9 <= max, all > 0;
#   - a p99 for each second, the run's p99 between their least and greatest.
# And its errors: a refused connection exits 1 naming the address; bad
# flags exit 2 naming the flag; --help exits 0.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/server_lib.sh
. "$(dirname "$0")/server_lib.sh"
LOADGEN=${LOADGEN:-$QOSLET_ROOT/build/tests/helpers/loadgen}

require_cmds jq python3
[ -x "$LOADGEN" ] || fail "$LOADGEN is missing: run make $LOADGEN"
server_require web
server_require kv
test_setup

# A latency figure is real time: under TCG it says little, but the counts
# and the order still hold, so this test runs there too.
check_run() {
	local what=$1 out
	shift
	out=$("$LOADGEN" -d 2 -j "$@" 127.0.0.1 "$PORT") || fail "$what: loadgen exited with status $?"
	log "$what: $out"
	assert_json "$out" '.errors == 0' "$what: no errors"
	assert_json "$out" '.latency_us | .p50 > 0 and .p50 <= .p99 and .p99 <= .p999 and .p999 <= .max' \
		"$what: p50 <= p99 <= p99.9 <= max"
	# The whole run's p99 is one of a second's or lies between them.
	assert_json "$out" '(.p99_per_s_us | length == 2 and all(.[]; . > 0)) and
		.latency_us.p99 >= (.p99_per_s_us | min) and .latency_us.p99 <= (.p99_per_s_us | max)' \
		"$what: a p99 for each of the 2 seconds, around the run's"
	if [[ " $* " == *" -w "* ]]; then
		assert_json "$out" '.warmup == 1' "$what: the warm-up reported"
	fi
	if [[ " $* " == *" -r "* ]]; then
		assert_json "$out" '.mode == "open" and .requests >= 999 and .requests <= 1000' "$what: 1000 requests sent on schedule"
		assert_json "$out" '.throughput >= 495 and .throughput <= 505' "$what: 500 req/s"
	else
		assert_json "$out" '.mode == "closed" and .requests > 100' "$what: more than 100 requests"
	fi
}

for kind in web kv; do
	PORT=$(free_port)
	server_cmd "$kind" "$PORT" "$TMP/$kind"
	"${SRV_CMD[@]}" >"$TMP/$kind.out" 2>&1 &
	BG_PIDS+=("$!")
	server_wait_listen "$PORT" "$!" "$TMP/$kind"
	check_run "$kind closed loop" -p "$SRV_PROTO" -c 2
	check_run "$kind open loop" -p "$SRV_PROTO" -c 4 -r 500
	# A warm-up of 1 s before the 2 that count: its 500 requests are sent and counted nowhere.
	check_run "$kind open loop after a warm-up" -p "$SRV_PROTO" -c 4 -r 500 -w 1
done

# Errors. A port nobody listens on: refused at once.
port=$(free_port)
rc=0
err=$("$LOADGEN" -d 1 127.0.0.1 "$port" 2>&1) || rc=$?
assert_eq "$rc" 1 "a refused connection exits 1"
[[ $err == *"127.0.0.1:$port"*"refused"* ]] || fail "the refused connection's message names neither the address nor the cause: $err"
for bad in "-c 0" "-r -5" "-p ftp" "-d 0" "-w -1" "-u nopath"; do
	rc=0
	# shellcheck disable=SC2086 # the flag and its value are two words
	err=$("$LOADGEN" $bad 127.0.0.1 80 2>&1) || rc=$?
	assert_eq "$rc" 2 "loadgen $bad exits 2"
	[[ $err == *"bad value for ${bad% *}"* ]] || fail "loadgen $bad: the message does not name the flag: $err"
done
"$LOADGEN" --help | grep -q "^usage: loadgen" || fail "--help prints no usage"
log "ok: --help"
