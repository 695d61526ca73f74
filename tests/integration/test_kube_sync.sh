#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The agent's link to the Kubernetes API (user/kube/sync.c, driven by
# tests/helpers/kubesync) against the HTTPS stand-in for the API server
# (tests/helpers/kube_api_server.py), which checks method, path, headers,
# token, content type and body of every call:
#   1. Events: one per (pod, reason, note), repeats become series PATCHes
#      with a growing count, at most one per event interval; the node
#      condition: False first, True on interference with a new transition
#      time, no rewrite of an unchanged status; a token rotated mid-run.
#   2. The Event rate limit: a burst creates at most events_per_minute Events
#      and counts the rest as dropped (from a node with a 253-character name,
#      which must not make reportingInstance longer than the API takes).
#      client-go's correlator: 13 similar occurrences (other notes) are 10
#      Events and one combined Event; the spam filter takes 25 Events of one
#      pod, then drops.
#   3. Evictions: 429, 429, 201 retried after 1 s and 2 s; 404 gone; 403
#      failed at once; 500 retried.
#   4. An API outage (503 everywhere): the link backs off and recovers.
#   5. Refusals (403, then 422, to every call): each is retried at its own
#      interval, with a backoff (the pod list), or not at all, never every
#      second.
#   6. A stop while a call hangs returns within about a second (the client's
#      cancel flag).
#   7. The node's batch resources: a drop written at once, a rise at most
#      once per min interval (a newer value replaces one still waiting), 0
#      when the loop's value expired, 0 at stop; with the condition on, a
#      change of both is one patch, and nothing changing is no write at all;
#      the capacity policy itself (kubesync's load command) over an hour of
#      a swinging LS load: one patch, its published figure.
# Needs no root: it touches no cgroups. About 55 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

skip_in_tcg "judges the API thread's intervals and rate limits to the second (events every 2 s, series, backoff)"
require_cmds jq
KUBESYNC=${KUBESYNC:-$QOSLET_ROOT/build/tests/helpers/kubesync}
[ -x "$KUBESYNC" ] || fail "$KUBESYNC is missing: run make $KUBESYNC"

kube_scratch
kube_require

# ---- a CA, a server certificate it signs, the API stand-in, a kubeconfig --------------
kube_certs
kube_server 127.0.0.1 "$TMP/port" --node n1 --down-file "$TMP/down" --delay-file "$TMP/delay" ||
	fail "API stand-in did not start: $(cat "$TMP/server.err")"
kube_kubeconfig "$TMP/kubeconfig" "$(cat "$TMP/port")"

# ---- helpers -----------------------------------------------------------------------
# run_sync NAME [kubesync options...] < commands: runs the link for one part of the test
# on node $SYNC_NODE; its output is $TMP/NAME.out, the API calls it made $TMP/NAME.log.
SYNC_NODE=n1
run_sync() {
	local name=$1 start rc=0
	shift
	start=$(wc -l <"$TMP/api.log")
	timeout 40 "$KUBESYNC" "$TMP/kubeconfig" "$SYNC_NODE" "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	[ "$rc" = 0 ] || fail "kubesync ($name) exited with $rc: $(cat "$TMP/$name.out" "$TMP/$name.err")"
	sleep 0.2 # the server logs a call just after it answered it
	# (a watch's end is logged when the server notices it: maybe in the next part's time)
	tail -n +"$((start + 1))" "$TMP/api.log" | jq -c 'select(.verb != "watch-end")' >"$TMP/$name.log"
	sed 's/^/#   /' "$TMP/$name.out"
}
# stat_of NAME KEY: the last value kubesync printed for KEY.
stat_of() {
	awk -v k="$2" '$1 == "stat" && $2 == k { v = $3 } END { print v }' "$TMP/$1.out"
}
# calls NAME JQ-CONDITION: how many calls of that part match.
calls() {
	jq -s "map(select($2)) | length" "$TMP/$1.log"
}
# The times (Unix s) of matching calls, one a line.
call_times() {
	jq -r "select($2) | .time" "$TMP/$1.log"
}
# Every gap between consecutive lines of times must be at least MIN seconds.
assert_gaps() { # TIMES MIN MESSAGE
	local gaps
	gaps=$(echo "$1" | awk 'NR > 1 { printf "%.3f ", $1 - p } { p = $1 }')
	[ -n "$gaps" ] || fail "$3: fewer than two calls"
	for g in $gaps; do
		assert_cmp "$g" ">=" "$2" "$3"
	done
}
POST_EVENT='.method == "POST" and (.path | test("/events$"))'
PATCH_EVENT='.method == "PATCH" and (.path | test("/events/"))'
NODE_STATUS='.method == "PATCH" and .path == "/api/v1/nodes/n1/status"'
EVICT='.method == "POST" and (.path | endswith("/eviction"))'

# ---- 1. Events, series, node condition, token rotation -------------------------------
log "1. events and series (interval 2 s), node condition, token rotation"
{
	echo "event u-a ns1 pod-a Interference 1"
	echo "event u-b ns1 pod-b Interference 1"
	echo "event u-a ns1 pod-a Suppressed 1"
	echo "sleep 0.5"
	echo "event u-a ns1 pod-a Interference 3"
	echo "sleep 1"
	echo "condition on web/frontend-0 delayed by batch/spark-exec-1"
	echo "sleep 1"
	echo "condition on web/frontend-0 delayed by batch/spark-exec-1"
	echo "condition on web/frontend-0 delayed by batch/spark-exec-2"
	echo "sleep 0.5"
	sleep 3.2 # the first series PATCH is done by now
	# Rotated as the kubelet does: a new file renamed over the old one.
	echo "token-two" >"$TMP/token.new"
	mv "$TMP/token.new" "$TMP/token"
	date +%s.%N >"$TMP/rotated"
	echo "event u-a ns1 pod-a Interference 2"
	echo "event u-c ns2 pod-c Interference 1"
	echo "sleep 3"
	echo "condition off no interference seen"
	echo "sleep 1.5"
	echo "stats"
	echo "stop"
} | run_sync events --event-interval 2 --events-per-minute 60 --resync 30

assert_eq "$(calls events '.violations != []')" 0 "calls with violations"
assert_eq "$(calls events "$POST_EVENT and .status == 201")" 4 "Events created"
assert_eq "$(stat_of events requests.event_create)" 4 "event_create counted"
assert_eq "$(jq -s -c "map(select($POST_EVENT)) | map(.body | [.metadata.namespace,
	.regarding.name, .regarding.uid, .reason]) | sort" "$TMP/events.log")" \
	'[["ns1","pod-a","u-a","Interference"],["ns1","pod-a","u-a","Suppressed"],["ns1","pod-b","u-b","Interference"],["ns2","pod-c","u-c","Interference"]]' \
	"one Event per (pod, reason)"
assert_eq "$(jq -s "map(select($POST_EVENT) | .body | select(.metadata.name |
	test(\"^[a-z0-9.-]+[.][0-9a-f]{16}$\") | not)) | length" "$TMP/events.log")" 0 \
	"Event names: the pod's, a dot, 16 hex digits"
assert_eq "$(jq -s "map(select($POST_EVENT) | .body | select(.metadata.name[:(.regarding.name |
	length) + 1] != .regarding.name + \".\")) | length" "$TMP/events.log")" 0 \
	"Event names start with the pod's"
assert_eq "$(jq -s -r "map(select($POST_EVENT)) | map(.body | [.type, .action,
	.reportingController, .reportingInstance] | join(\" \")) | unique | .[]" "$TMP/events.log")" \
	"Warning Detect qoslet.io/agent qoslet-n1" "Event type, action and reporter"
name=$(jq -r "select($POST_EVENT and .body.reason == \"Interference\" and
	.body.regarding.name == \"pod-a\") | .body.metadata.name" "$TMP/events.log")
# Only pod-a's Interference was repeated: its PATCHes carry 4 (1 + 3), then 6 (+ 2).
assert_eq "$(jq -s -c "map(select($PATCH_EVENT)) | map([.path, .body.series.count])" \
	"$TMP/events.log")" \
	"[[\"/apis/events.k8s.io/v1/namespaces/ns1/events/$name\",4],[\"/apis/events.k8s.io/v1/namespaces/ns1/events/$name\",6]]" \
	"series PATCHes of the repeated Event"
assert_eq "$(stat_of events aggregated)" 5 "occurrences aggregated"
# One call per Event per interval: the server's arrival times, with 50 ms for the
# difference in client-side work before two requests.
assert_gaps "$(call_times events "($POST_EVENT and .body.metadata.name == \"$name\") or
	($PATCH_EVENT and (.path | endswith(\"/$name\")))")" 1.95 "event interval between calls"

# Node condition: nothing before the loop says it, then True (the repeats
# unsent), then False.
assert_eq "$(jq -s -r "map(select($NODE_STATUS)) | map(.body.status.conditions[0] |
	[.type, .status, .reason] | join(\" \")) | .[]" "$TMP/events.log" | paste -sd,)" \
	"QoSletInterference True InterferenceDetected,QoSletInterference False NoInterference" \
	"node condition writes"
assert_eq "$(jq -s -r "map(select($NODE_STATUS)) | .[0].body.status.conditions[0].message" \
	"$TMP/events.log")" "web/frontend-0 delayed by batch/spark-exec-1" "condition message"
transitions=$(jq -s -r "map(select($NODE_STATUS)) | map(.body.status.conditions[0]) |
	map(.lastTransitionTime) | .[]" "$TMP/events.log")
assert_eq "$(echo "$transitions" | sort -u | wc -l)" 2 "a new lastTransitionTime on each change"
assert_eq "$(echo "$transitions" | paste -sd' ')" "$(echo "$transitions" | sort | paste -sd' ')" \
	"transition times in order"
assert_eq "$(jq -s "map(select($NODE_STATUS)) | map(.body.status.conditions[0] |
	select(.lastHeartbeatTime != .lastTransitionTime)) | length" "$TMP/events.log")" 0 \
	"each write is a transition (heartbeat = transition)"
assert_eq "$(stat_of events condition)" false "condition in the stats"
assert_eq "$(stat_of events requests.node_status)" 2 "node_status calls"

# The token rotation: calls after it were made with the new token (else 401 above).
after=$(jq -s --argjson t "$(cat "$TMP/rotated")" 'map(select(.time > $t and .status < 300)) |
	length' "$TMP/events.log")
assert_cmp "$after" ">=" 3 "successful calls after the token rotation"
for k in list_pods evict event_create event_patch node_status; do
	assert_eq "$(stat_of events "errors.$k")" 0 "errors.$k"
done

# ---- 2. rate limit ---------------------------------------------------------------------
log "2. rate limit: 3 Events a minute, a burst of 8 (on a node with a 253-character name)"
{
	for i in 1 2 3 4 5 6 7 8; do
		echo "event u-r$i ns1 burst-$i Interference 1"
	done
	echo "sleep 2"
	echo "stats"
	echo "stop"
} | SYNC_NODE=$(printf 'node-%0248d' 0) run_sync burst --events-per-minute 3 --event-interval 60 --resync 30 --no-condition
assert_eq "$(calls burst '.violations != []')" 0 "calls with violations"
assert_eq "$(calls burst "$POST_EVENT and .status == 201")" 3 "Events the burst created"
assert_eq "$(stat_of burst dropped)" 5 "occurrences counted as dropped"
assert_eq "$(calls burst "$NODE_STATUS")" 0 "no node condition when it is off"

log "2b. similar occurrences combined; the spam filter per pod"
{
	echo "similar u-s ns1 pod-s Interference 13"
	for r in A B C D E F G H I J K L M N O P Q R S T U V W X Y Z Aa Ab Ac Ad; do
		echo "event u-t ns1 pod-t Reason$r 1"
	done
	echo "sleep 2"
	echo "stats"
	echo "stop"
} | run_sync similar --events-per-minute 6000 --event-interval 60 --resync 30 --no-condition
assert_eq "$(calls similar "$POST_EVENT and .body.regarding.name == \"pod-s\"")" 11 \
	"13 similar occurrences: 10 Events and a combined one"
assert_eq "$(jq -s -r "map(select($POST_EVENT and .body.regarding.name == \"pod-s\")) |
	.[-1].body.note" "$TMP/similar.log")" \
	"(combined from similar events): kubesync: Interference occurrence 11 of 13" \
	"the combined Event's note"
assert_eq "$(calls similar "$POST_EVENT and .body.regarding.name == \"pod-t\"")" 25 \
	"30 Events on one pod: the spam filter's burst of 25"
assert_eq "$(stat_of similar dropped)" 5 "the rest dropped"

# ---- 3. evictions ----------------------------------------------------------------------
log "3. evictions: 429 429 201; 404; 403; 500 201"
printf '429\n429\n201\n404\n403\n500\n201\n' >"$TMP/evict-script"
{
	echo "evict u-a batch pdb-guarded"
	# Its three tries span 3 s (waits of 1 and 2 s) from the first, which a busy
	# machine can start a second late: 6 s keeps u-b's request after them.
	echo "sleep 6"
	# One at a time: the script's statuses go to whichever request comes next.
	echo "evict u-b batch gone-already"
	echo "sleep 0.5"
	echo "evict u-c batch forbidden"
	echo "sleep 0.5"
	echo "evict u-d batch flaky"
	echo "evict u-d batch flaky"
	echo "sleep 4"
	echo "results"
	echo "stats"
	echo "stop"
} | run_sync evict --resync 30 --no-condition --no-events
assert_eq "$(calls evict '.violations != []')" 0 "calls with violations"
assert_eq "$(grep '^result ' "$TMP/evict.out" | awk '{ print $2, $3, $4, $5 }' | paste -sd,)" \
	"u-a retry 1 429,u-a retry 2 429,u-a evicted 3 201,u-b gone 1 404,u-c failed 1 403,u-d retry 1 500,u-d evicted 2 201" \
	"eviction results"
grep -q '^error evict -114$' "$TMP/evict.out" || fail "a second request for u-d was not refused"
grep -q '^result u-a retry 1 429 [0-9]* .*disruption budget' "$TMP/evict.out" ||
	fail "the 429's message is not in the result"
assert_gaps "$(call_times evict "$EVICT and (.path | endswith(\"/pdb-guarded/eviction\"))" |
	head -2)" 1 "wait before the 2nd attempt"
assert_gaps "$(call_times evict "$EVICT and (.path | endswith(\"/pdb-guarded/eviction\"))" |
	tail -2)" 2 "wait before the 3rd attempt"
assert_eq "$(calls evict "$EVICT and (.path | endswith(\"/forbidden/eviction\"))")" 1 \
	"403 tried once"
assert_eq "$(calls evict "$EVICT and .body.deleteOptions.preconditions.uid == \"u-a\"")" 3 \
	"UID precondition sent"
assert_eq "$(stat_of evict requests.evict)" 7 "evict calls"
assert_eq "$(stat_of evict errors.evict)" 2 "evict errors (403, 500)"

# ---- 4. outage -------------------------------------------------------------------------
log "4. outage: 503 for 4 s, then back"
echo 201 >"$TMP/evict-script"
touch "$TMP/down"
{
	echo "event u-o ns1 pod-o Interference 1"
	echo "condition on during the outage"
	echo "evict u-o batch outage-pod"
	sleep 4
	date +%s.%N >"$TMP/up"
	rm "$TMP/down"
	echo "sleep 5"
	echo "stats"
	echo "pods"
	echo "results"
	echo "stop"
} | run_sync outage --resync 3 --event-interval 60
up=$(cat "$TMP/up")
assert_eq "$(calls outage '.violations != []')" 0 "calls with violations"
during=$(jq -s --argjson t "$up" 'map(select(.time < $t)) | length' "$TMP/outage.log")
assert_eq "$(jq -s --argjson t "$up" 'map(select(.time < $t and .status != 503)) | length' \
	"$TMP/outage.log")" 0 "answers during the outage were 503"
# Unchecked, 4 kinds of call a second would be ~16; each thread backs off on its own
# (the calls thread 1, 2 s; the pod informer 0.5-1, 1-2, 2-4 s): at most 3 and 4.
lists=$(jq -s --argjson t "$up" 'map(select(.time < $t and .method == "GET")) | length' \
	"$TMP/outage.log")
assert_cmp "$lists" "<=" 4 "pod lists during 4 s of outage"
assert_cmp "$((during - lists))" "<=" 3 "other calls during 4 s of outage"
assert_cmp "$during" ">=" 3 "the link kept trying during the outage"
assert_cmp "$(stat_of outage errors.list_pods)" ">=" 3 "list errors counted"
assert_eq "$(stat_of outage listed)" 1 "pods listed after the outage"
assert_eq "$(stat_of outage pods)" 3 "pods on n1"
grep -qx 'pods 3' "$TMP/outage.out" || fail "no fresh pod list after the outage"
assert_eq "$(calls outage "$POST_EVENT and .status == 201")" 1 "the Event sent after the outage"
assert_eq "$(calls outage "$NODE_STATUS and .status == 200 and
	.body.status.conditions[0].status == \"True\"")" 1 "the condition written after the outage"
grep -q '^result u-o evicted ' "$TMP/outage.out" || fail "the eviction was not sent after the outage"
first_ok=$(jq -s 'map(select(.status < 300)) | .[0].time' "$TMP/outage.log")
assert_cmp "$(awk -v a="$first_ok" -v b="$up" 'BEGIN { printf "%.3f", a - b }')" "<=" 3.5 \
	"seconds to recover"

# ---- 5. refusals ------------------------------------------------------------------------
# 403 as with RBAC rules missing, 422 as from an admission webhook that rejects.
for code in 403 422; do
	log "5. refusals: $code for every call"
	echo "$code" >"$TMP/down"
	{
		echo "event u-f ns1 pod-f Interference 1"
		echo "condition on refused"
		echo "evict u-f batch refused-pod"
		echo "sleep 4"
		echo "stats"
		echo "results"
		echo "stop"
	} | run_sync "refused-$code" --resync 30 --event-interval 60
	rm "$TMP/down"
	# Each refused call waits for its own interval, not for a second; a
	# refused Event and eviction are not tried again; the pod list backs off (0.5-1 s,
	# then 1-2 s, then 2-4 s: at most 3 in 4 s), as client-go's reflector does.
	for k in event_create evict; do
		assert_eq "$(stat_of "refused-$code" "requests.$k")" 1 "$k calls refused with $code in 4 s"
		assert_eq "$(stat_of "refused-$code" "errors.$k")" 1 "$k errors"
	done
	# The link's first round may write the condition before the loop asked for "on":
	# one refused write for each state asked, no more.
	status_calls=$(stat_of "refused-$code" requests.node_status)
	assert_cmp "$status_calls" "<=" 2 "node_status calls refused with $code in 4 s"
	assert_eq "$(stat_of "refused-$code" errors.node_status)" "$status_calls" "node_status errors"
	lists=$(stat_of "refused-$code" requests.list_pods)
	assert_cmp "$lists" "<=" 3 "list_pods calls refused with $code in 4 s"
	assert_cmp "$lists" ">=" 2 "list_pods tried again after a backoff"
	grep -q "^result u-f failed 1 $code " "$TMP/refused-$code.out" ||
		fail "the refused eviction did not fail at once"
	assert_eq "$(wc -l <"$TMP/refused-$code.log")" "$((2 + status_calls + lists))" \
		"calls the server saw"
done

# ---- 6. stop while a call hangs ---------------------------------------------------------
log "6. stop while the API server hangs"
echo 30 >"$TMP/delay"
{
	echo "sleep 1.5"
	echo "stats"
	echo "stop"
} | run_sync hang --timeout 20
rm "$TMP/delay"
assert_eq "$(stat_of hang requests.list_pods)" 0 "the list call was still in flight"
ms=$(awk '$1 == "stop" { print $2 }' "$TMP/hang.out")
# libcurl asks the cancel flag about once a second while no data moves.
assert_cmp "$ms" "<=" "$(time_bound_ms 1500)" "ms kube_sync_stop took with a call in flight"

# ---- 7. batch resources -----------------------------------------------------------------
log "7. batch resources: a rise at most once per 2 s (a drop at once), expiry, stop"
{
	echo "batch 1000 4096 3" # the first value: at once
	echo "sleep 0.5"
	echo "batch 1050 4096 3" # a rise waits the min interval: replaced before then
	echo "batch 1500 4096 3" # 2 s after the first
	echo "sleep 2.5"
	echo "batch 0 0 3" # a drop to 0: at once
	echo "sleep 0.5"
	echo "batch 800 4096 3" # off 0: 2 s after the 0
	echo "sleep 6"         # no value for 3 s: 0
	echo "batch 700 4096 3" # off 0 again, 2 s or more after that 0
	echo "sleep 1.5"
	echo "stats"
	echo "stop" # it wrote 700: 0 at stop
} | run_sync batch --no-condition --no-events --batch 0.10,2
BATCH='.method == "PATCH" and .path == "/api/v1/nodes/n1/status" and .body.status.capacity != null'
assert_eq "$(calls batch '.violations != []')" 0 "batch patches broke no rule"
assert_eq "$(jq -s -c "map(select($BATCH)) | map(.body.status.capacity | [.[\"kubernetes.io/batch-cpu\"], .[\"kubernetes.io/batch-memory\"]] | join(\"/\"))" \
	"$TMP/batch.log")" '["1000/4096","1500/4096","0/0","800/4096","0/0","700/4096","0/0"]' \
	"batch patches: first, the rise, 0, off 0, expired, off 0, stop"
times=$(call_times batch "$BATCH")
gap() { echo "$times" | awk -v a="$1" -v b="$2" 'NR == a { x = $1 } NR == b { y = $1 } END { printf "%.3f\n", y - x }'; }
assert_cmp "$(gap 1 2)" ">=" 1.9 "1500 waited for the min interval"
# upper bounds: the put's time and the slack of a loaded machine (x10 under TCG)
assert_cmp "$(gap 1 3)" "<=" "$(awk -v s="$(time_bound_ms 500)" 'BEGIN { print 3 + s / 1000 }')" \
	"a drop to 0 went at once (put 3 s after the first value)"
assert_cmp "$(gap 3 4)" ">=" 1.9 "800 waited for the min interval"
# 800 was put 3.5 s after the first value, good for 3 s: 0 from 6.5 s on, checked once a second
assert_cmp "$(gap 1 5)" ">=" 6 "an expired value goes to 0, not before it expired (the first call's TLS set-up aside)"
assert_cmp "$(gap 1 5)" "<=" "$(awk -v s="$(time_bound_ms 1500)" 'BEGIN { print 6.5 + s / 1000 }')" \
	"an expired value goes to 0 within a second or so"
assert_eq "$(stat_of batch requests.node_status)" 6 "node_status calls before the stop"

log "7b. the condition and the batch resources: one patch for both, none when nothing changes"
{
	echo "condition off quiet"
	echo "batch 1000 4096 30"
	echo "sleep 1.5" # the first: both in one patch
	echo "batch 1000 4096 30" # unchanged: nothing
	echo "condition on web/a delayed"
	echo "batch 2000 4096 30" # both change: one patch
	echo "sleep 4"           # nothing changes: nothing written
	echo "stats"
	echo "stop" # batch to 0, the True condition to Unknown: one patch
} | run_sync both --event-interval 60 --batch 0.10,0.5
STATUS='.method == "PATCH" and .path == "/api/v1/nodes/n1/status"'
assert_eq "$(jq -s -c "map(select($STATUS)) | map(.body.status | [(.conditions[0].status // \"-\"),
	(.capacity[\"kubernetes.io/batch-cpu\"] // \"-\")] | join(\"/\"))" "$TMP/both.log")" \
	'["False/1000","True/2000","Unknown/0"]' "one patch per change, holding all that changed"

log "7c. the capacity policy: an hour of LS swinging 1 to 3 CPUs every 10 minutes, one patch"
# 16 CPUs x 0.60 - the peak 3 = 6.6, less the step: 5940m; memory 64 GiB x 0.65 - 8 GiB,
# less the step. The policy's clock is the load lines' (an hour in a moment); the link's
# is real: 0 while warming up, the figure a min interval (1 s) later.
awk 'BEGIN { for (t = 0; t <= 3600; t += 2)
	printf "load %d %.4f %.0f\n", t, 2 + cos(2 * 3.14159265 * t / 600), 8 * 2^30
	print "sleep 1.5"; print "stats"; print "stop" }' |
	run_sync policy --no-condition --no-events --batch 0.10,1 --hold 3600
mem=$(awk 'BEGIN { printf "%.0f", int(0.9 * int(64 * 2^30 * 0.65 - 8 * 2^30)) }')
# (the warm-up's 0 is written too when the link's thread sees it before the lines after)
assert_eq "$(jq -s -c "map(select($BATCH)) | map(.body.status.capacity | [.[\"kubernetes.io/batch-cpu\"], .[\"kubernetes.io/batch-memory\"]] | join(\"/\")) | .[(if .[0] == \"0/0\" then 1 else 0 end):]" \
	"$TMP/policy.log")" "[\"5940/$mem\",\"0/0\"]" "the published figure once, 0 at stop"

[ ! -s "$TMP/server.err" ] || fail "the API stand-in reported errors: $(cat "$TMP/server.err")"
echo "PASS"
