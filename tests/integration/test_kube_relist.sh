#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The pod informer's manners with the API server (docs/kubernetes.md, "What
# each agent costs the API server"), held by the agent's own link
# (tests/helpers/kubesync) against the HTTPS stand-in
# (tests/helpers/kube_api_server.py), which serves LISTs as the API server
# does before 1.31 and logs for each whether its watch cache or only etcd
# could answer it:
#   1. the first LIST asks for resourceVersion=0 (the watch cache) with no
#      limit, gzip negotiated; terminated pods are not kept, a label over the
#      API's bounds neither, and only the label keys asked for are kept (new
#      keys end the watch and relist, from the cache);
#   2. a compaction while watching (an ERROR event holding a 410) relists
#      from the last version seen, from the cache, after a backoff;
#   3. a watch that starts from a compacted version (an HTTP 410) the same;
#   4. only when that LIST is itself 410 does the next one read the newest
#      (no resourceVersion: a quorum read), after a backoff; the relist after
#      that uses the last version again;
#   5. a node whose pods overflow the 16 MiB response cap: the list is read
#      again in pages, halving from 500 until a page fits, down to one pod; a
#      pod alone over the cap is skipped (named from the page's head), one
#      over the 2 MiB per-pod bound too, and the others are kept; a watch
#      event over the bound skips that pod and the watch goes on.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/kube_lib.sh
. "$(dirname "$0")/kube_lib.sh"

require_cmds jq
KUBESYNC=${KUBESYNC:-$QOSLET_ROOT/build/tests/helpers/kubesync}
[ -x "$KUBESYNC" ] || fail "$KUBESYNC is missing: run make $KUBESYNC"

SYNC_PID=
end_sync() {
	exec 3>&- 2>/dev/null || true
	[ -z "$SYNC_PID" ] || { kill "$SYNC_PID" 2>/dev/null; wait "$SYNC_PID" 2>/dev/null; } || true
}
kube_scratch end_sync
kube_require

# pods FILE SPEC...: a PodList of pods NAME:NODE[:PHASE[:ANNOTATION_BYTES]] in namespace
# "t", uid u-NAME, labels app/tier/team and one value over the API's 63 bytes.
pods() {
	local file=$1
	shift
	"$KUBE_PY" - "$file" "$@" <<'PY'
import json, os, sys
items = []
for spec in sys.argv[2:]:
    name, node, *rest = spec.split(":")
    phase = rest[0] if rest and rest[0] else "Running"
    pad = int(rest[1]) if len(rest) > 1 else 0
    meta = {"name": name, "namespace": "t", "uid": "u-" + name,
            "labels": {"app": name, "tier": "be", "team": "x", "long": "v" * 64}}
    if pad:
        meta["annotations"] = {"pad": "x" * pad}
    items.append({"metadata": meta, "spec": {"nodeName": node},
                  "status": {"qosClass": "BestEffort", "phase": phase}})
with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump({"kind": "PodList", "apiVersion": "v1", "items": items}, f)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
PY
}

# The link on node n1, fed commands through a fifo (fd 3); its output in $TMP/sync.out.
start_sync() {
	rm -f "$TMP/cmd"
	mkfifo "$TMP/cmd"
	"$KUBESYNC" "$TMP/kubeconfig" n1 --resync 0 --no-events --no-condition <"$TMP/cmd" \
		>"$TMP/sync.out" 2>"$TMP/sync.err" &
	SYNC_PID=$!
	exec 3>"$TMP/cmd"
}
stop_sync() {
	echo stop >&3
	exec 3>&-
	wait "$SYNC_PID" || fail "kubesync exited with $?: $(tail -n 5 "$TMP/sync.err")"
	SYNC_PID=
}
# ask CMD END: sends CMD and waits for one more line starting with END.
ask() {
	local before
	before=$(grep -c "^$2" "$TMP/sync.out" || true)
	echo "$1" >&3
	for _ in $(seq 100); do
		[ "$(grep -c "^$2" "$TMP/sync.out" || true)" -gt "$before" ] && return 0
		sleep 0.1
	done
	fail "kubesync did not answer '$1': $(tail -n 5 "$TMP/sync.out" "$TMP/sync.err")"
}
stat_of() {
	ask stats "stat condition"
	awk -v k="$1" '$1 == "stat" && $2 == k { v = $3 } END { print v }' "$TMP/sync.out"
}
# podset: the link's newest set, "UID LABELS" a line.
podset() {
	ask podset "podset "
	awk '/^podset / { n = NR } { l[NR] = $0 } END {
		for (i = n - 1; i > 0 && l[i] ~ /^pod /; i--) print l[i] }' "$TMP/sync.out" |
		awk '{ print $2, $5 }' | sort
}
lists() { kube_api '.verb == "list"'; }
n_lists() { lists | jq length; }
# wait_lists N SECONDS: until the stand-in saw at least N LISTs.
wait_lists() {
	for _ in $(seq $(($2 * 10))); do
		[ "$(n_lists)" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "fewer than $1 LISTs after $2 s: $(lists | jq -c 'map([.path, .status])')"
}
# wait_watches N: until the stand-in saw at least N WATCHes start.
wait_watches() {
	for _ in $(seq 100); do
		[ "$(kube_api '.verb == "watch"' | jq length)" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "fewer than $1 WATCHes: $(kube_api '.verb != null' | jq -c 'map([.verb, .path, .status])')"
}
list_n() { lists | jq -c ".[$1]"; } # the Nth LIST's log entry (0-based, -1 the last)
now() { date +%s.%N; }
PATH0="/api/v1/pods?fieldSelector=spec.nodeName%3Dn1"

kube_certs
KUBE_PODS=$TMP/pods.json
pods "$KUBE_PODS" web:n1 db:n1 batch:n1 done:n1:Succeeded failed:n1:Failed other:n2
kube_server 127.0.0.1 "$TMP/port" --node n1 --bookmark-interval 1 --gone-status \
	--gzip-threshold 0 --list-gone-file "$TMP/list-gone" --stats "$TMP/stats.json" ||
	fail "API stand-in did not start: $(cat "$TMP/server.err")"
kube_kubeconfig "$TMP/kubeconfig" "$(cat "$TMP/port")"
SERVER=${KUBE_SERVER_PIDS[-1]}

# ---- 1. the first LIST, gzip, what is kept ----------------------------------------------
log "1. the first LIST: resourceVersion=0, no limit, gzip; what the set keeps"
start_sync
wait_watches 1
first=$(list_n 0)
assert_eq "$(echo "$first" | jq -r .path)" "$PATH0&resourceVersion=0" "the first LIST's query"
assert_eq "$(echo "$first" | jq -r .source)" cache "the first LIST is the watch cache's"
assert_eq "$(echo "$first" | jq -r .gzip)" true "the first LIST came gzipped"
assert_cmp "$(echo "$first" | jq .bytes)" "<" "$(echo "$first" | jq .decoded)" "gzip shrank it"
set=$(podset)
echo "$set" | sed 's/^/#   /'
assert_eq "$(echo "$set" | awk '{ print $1 }' | paste -sd' ')" "u-batch u-db u-web" \
	"the running pods on n1 (not the Succeeded, Failed or n2 ones)"
assert_eq "$(echo "$set" | awk '$1 == "u-web" { print $2 }' | tr ',' '\n' | sort | paste -sd' ')" \
	"app=web team=x tier=be" "labels kept: all but the one over 63 bytes"
assert_eq "$(stat_of terminated)" 2 "terminated pods counted"
n=$(n_lists)
echo "labels app tier" >&3
wait_lists $((n + 1)) 10
assert_eq "$(list_n -1 | jq -r .source)" cache "the relist for new label keys is the cache's"
assert_cmp "$(list_n -1 | jq -r '.rv | tonumber')" ">" 0 "... from the last version seen"
sleep 0.3
assert_eq "$(podset | awk '$1 == "u-web" { print $2 }')" "app=web,tier=be" "only the keys asked for"

# ---- 2. a compaction while watching: an ERROR event holding a 410 -----------------------
log "2. a compaction while watching (ERROR 410): relist from the last version, after a backoff"
wait_watches 2
n=$(n_lists)
t0=$(now)
kill -USR1 "$SERVER"
wait_lists $((n + 1)) 10
relist=$(list_n -1)
echo "# $relist" | cut -c1-300
assert_eq "$(echo "$relist" | jq -r .source)" cache "the relist after ERROR 410 is the cache's"
assert_cmp "$(echo "$relist" | jq -r '.rv | tonumber')" ">" 0 "... with the last version seen"
assert_eq "$(echo "$relist" | jq -r .limit)" null "... and no limit"
assert_cmp "$(echo "$relist" | jq .time)" ">=" "$(echo "$t0 + 0.45" | bc)" "... after a backoff"
assert_eq "$(echo "$relist" | jq .status)" 200 "... answered"

# ---- 3. a watch from a compacted version: an HTTP 410 -----------------------------------
log "3. a watch from a compacted version (HTTP 410): the same"
wait_watches 3
n=$(n_lists)
kill -USR2 "$SERVER" # the watch is cut: the link watches again from its version, later
sleep 0.1
kill -USR1 "$SERVER" # meanwhile that version is compacted
wait_lists $((n + 1)) 15
assert_cmp "$(kube_api '.verb == "watch" and .status == 410' | jq length)" ">=" 1 "a watch answered 410"
relist=$(list_n -1)
assert_eq "$(echo "$relist" | jq -r .source)" cache "the relist after HTTP 410 is the cache's"
assert_cmp "$(echo "$relist" | jq -r '.rv | tonumber')" ">" 0 "... with the last version seen"

# ---- 4. the relist itself 410: a quorum read, once ---------------------------------------
log "4. the relist itself 410: then (and only then) a quorum read"
wait_watches 5
n=$(n_lists)
touch "$TMP/list-gone"
kill -USR1 "$SERVER"
wait_lists $((n + 2)) 15
rm -f "$TMP/list-gone"
gone=$(list_n "$n") quorum=$(list_n $((n + 1)))
assert_eq "$(echo "$gone" | jq .status)" 410 "the relist from the last version got 410"
assert_eq "$(echo "$quorum" | jq -r .path)" "$PATH0" "then the newest: no resourceVersion"
assert_eq "$(echo "$quorum" | jq -r .source)" etcd "... which only etcd serves"
assert_cmp "$(echo "$quorum" | jq .time)" ">=" "$(echo "$(echo "$gone" | jq .time) + 0.45" | bc)" \
	"... after a backoff"
wait_watches 6
n=$(n_lists)
kill -USR1 "$SERVER"
wait_lists $((n + 1)) 10
assert_eq "$(list_n -1 | jq -r .source)" cache "the next relist uses the last version again"
assert_eq "$(stat_of etcd_lists)" 1 "LISTs only etcd serves: the one quorum read"
stop_sync
assert_eq "$(lists | jq 'map(select(.source == "etcd")) | length')" 1 "etcd LISTs the stand-in saw"
assert_eq "$(kube_violations | wc -l)" 0 "violations: $(kube_violations | head -n 3)"
jq -c '{verbs, etcd_lists}' "$TMP/stats.json" | sed 's/^/# stand-in stats: /'
assert_eq "$(jq .etcd_lists "$TMP/stats.json")" 1 "the stand-in's count of etcd LISTs"

# ---- 5. pods over the response cap and the per-pod bound --------------------------------
log "5. oversized: 12 pods of 1.4 MiB, one of 17 MiB, one of 2.5 MiB, two small"
mib=1048576
spec=(small-a:n1 small-b:n1 "big:n1::$((5 * mib / 2))" "huge:n1::$((17 * mib))")
for i in $(seq -w 1 12); do
	spec+=("heavy-$i:n1::$((14 * mib / 10))")
done
pods "$KUBE_PODS" "${spec[@]}"
: >"$TMP/api.log"
start_sync
wait_watches 1
sizes=$(lists | jq -c 'map({limit, rv, source, status})')
echo "# LISTs: $sizes"
assert_eq "$(list_n 0 | jq -r .path)" "$PATH0&resourceVersion=0" "first the whole list, from the cache"
assert_eq "$(list_n 1 | jq -r .path)" "$PATH0&limit=500" \
	"over the cap: pages of 500, without resourceVersion=0 (the cache ignores a limit with it)"
assert_eq "$(lists | jq -c '[.[1:][] | .limit] | map(select(. > 1)) | unique | sort')" \
	"[3,7,15,31,62,125,250,500]" "halved down to pages of one"
assert_cmp "$(lists | jq 'map(select(.limit == 1)) | length')" ">=" 1 "pages of one pod"
assert_eq "$(stat_of pods)" 14 "pods kept: all but the 17 MiB and the 2.5 MiB one"
assert_eq "$(stat_of skipped_size)" 2 "pods skipped for their size"
assert_eq "$(stat_of pod_lists)" 1 "one complete list"
set=$(podset | awk '{ print $1 }')
echo "$set" | grep -qx u-huge && fail "the 17 MiB pod was kept"
echo "$set" | grep -qx u-big && fail "the 2.5 MiB pod was kept"
log "a watch event over the bound skips that pod; the watch goes on"
watches=$(kube_api '.verb == "watch"' | jq length)
spec[3]="huge:n1:Running:$((17 * mib + 1))" # MODIFIED: 17 MiB
spec+=(small-c:n1)
pods "$KUBE_PODS" "${spec[@]}"
for _ in $(seq 100); do
	[ "$(stat_of pods)" = 15 ] && break
	sleep 0.2
done
assert_eq "$(stat_of pods)" 15 "the pod added after the oversized event, from the same watch"
assert_eq "$(stat_of skipped_size)" 3 "the oversized event skipped"
assert_eq "$(stat_of watch_broken)" 0 "no watch broken"
assert_eq "$(stat_of pod_lists)" 1 "no relist"
assert_eq "$(kube_api '.verb == "watch"' | jq length)" "$watches" "the same watch"
stop_sync
assert_eq "$(kube_violations | wc -l)" 0 "violations: $(kube_violations | head -n 3)"
grep -q "pod t/huge (uid u-huge) alone is over the response cap: skipped" "$TMP/sync.err" ||
	fail "the skip of the 17 MiB pod is not logged: $(grep huge "$TMP/sync.err")"
grep -q "pod t/big (uid u-big) is .* bytes of JSON, over the 2097152-byte bound" "$TMP/sync.err" ||
	fail "the skip of the 2.5 MiB pod is not logged: $(grep big "$TMP/sync.err")"
[ ! -s "$TMP/server.err" ] || fail "the API stand-in reported errors: $(cat "$TMP/server.err")"
test_end
