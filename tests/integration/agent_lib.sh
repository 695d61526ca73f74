# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash disable=SC2034
#
# Helpers for the agent's tests, on top of lib.sh. The agent reads more than
# the cpu controller: CPU time (cpuacct), cpusets and memory. On a hybrid
# host those are separate v1 hierarchies, so a unit must exist under the
# same path in each; on cgroup v2 they are one tree with the controllers
# enabled for the children. After test_setup:
#
#	agent_setup                       # the test's parent in every hierarchy
#	be=$(agent_cgroup be/pod1)        # a cgroup in all of them; prints its cpu path
#	agent_run "$be" 0 stress-ng ...   # runs a command in it (all hierarchies)
#	agent_config '{"suppress": {...}}' # writes $TMP/agent.json (cgroup_root, state_dir set)
#	agent_config '{'"$AGENT_POLICIES_OFF"', "memory_qos": {...}}'  # one policy alone
#	agent_start [ARGS]                # qoslet agent in the background; AGENT_PID
#	agent_stop                        # SIGTERM, waits for the clean stop
#	configmap_swap DIR FILE           # a ConfigMap volume in DIR gets FILE's content
#	agent_memory_limit 800            # the parent's memory capped: the agent's capacity
#	agent_memhog "$cg" 250            # a memhog holding 250 MiB in a cgroup, charged
#	prometheus_start "$PORT"          # a real Prometheus scraping the agent's port; PROM_PORT
#	prom_query 'up{job="qoslet"}'     # its /api/v1/query answer (JSON)
#
# Everything below the test's parent is removed on exit, in every hierarchy.

AGENT_CTRLS=()  # mount points of the other v1 hierarchies with a mirror
AGENT_PID=""
# Config members that turn off every policy on by default (a test then adds the one it runs).
AGENT_POLICIES_OFF='"suppress": {"enabled": false, "cpu_idle": false}, "burst": {"policy": "none"},
	"evict": {"cpu": {"enabled": false}, "memory": {"enabled": false}},
	"interference": {"enabled": false}, "capacity": {"enabled": false}'
# jq: p99 in ns of a recorded histogram (.slots), interpolated as hist_quantile_ns does.
# shellcheck disable=SC2016,SC2034 # jq, not shell; used by the tests that source this file
RQ_P99_JQ='def p99: .slots as $s | ($s | add) as $t | (0.99 * $t) as $r
	| if $t == 0 then 0 else
	reduce range(0; 27) as $i ({cum: 0, res: null};
		if .res != null then .
		elif $s[$i] == 0 or .cum + $s[$i] < $r then .cum += $s[$i]
		else (if $i == 0 then 0 else pow(2; $i + 9) end) as $lo
			| .res = (if $i == 26 then $lo
				else $lo + (pow(2; $i + 10) - $lo) * ($r - .cum) / $s[$i] end)
		end) | .res end;'
AGENT_OUT=""    # decisions (JSON lines)
AGENT_ERR=""    # log
STATE_DIR=""
AGENT_V2_CTRLS="+cpu +cpuset +memory" # v2: what agent_setup enables for the units (+io if there)

# Mount point of the v1 hierarchy holding controller $1, or nothing.
v1_mount() {
	awk -v c="$1" '$3 == "cgroup" { n = split($4, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) { print $2; exit } }' /proc/mounts
}

cg_is_v2() {
	[ -e "$CG_ROOT/cgroup.controllers" ]
}

agent_setup() {
	local c mnt
	STATE_DIR=$TMP/state
	AGENT_OUT=$TMP/decisions.jsonl
	AGENT_ERR=$TMP/agent.err
	if cg_is_v2; then
		# Controllers must be enabled level by level for the units below;
		# io too where the kernel offers it, as on a node (kubepods has it):
		# without it a unit has no io.stat, and an I/O stall no culprit.
		! grep -qw io "$TEST_PARENT/cgroup.controllers" || AGENT_V2_CTRLS="$AGENT_V2_CTRLS +io"
		echo "$AGENT_V2_CTRLS" >"$TEST_PARENT/cgroup.subtree_control" ||
			skip "cannot enable ${AGENT_V2_CTRLS//+/} below $TEST_PARENT"
		return 0
	fi
	for c in cpuacct cpuset memory freezer; do
		mnt=$(v1_mount "$c")
		[ -n "$mnt" ] && [ "$mnt" != "$CG_ROOT" ] || continue
		mkdir "$mnt$TEST_PARENT_REL" || fail "cannot create $mnt$TEST_PARENT_REL"
		EXTRA_PARENTS+=("$mnt$TEST_PARENT_REL")
		AGENT_CTRLS+=("$mnt")
		[ "$c" = cpuset ] && _cpuset_inherit "$mnt$TEST_PARENT_REL"
	done
	return 0
}

# A new v1 cpuset has no CPUs and no memory nodes: take the parent's.
_cpuset_inherit() {
	cat "$1/../cpuset.cpus" >"$1/cpuset.cpus"
	cat "$1/../cpuset.mems" >"$1/cpuset.mems"
}

# agent_cgroup REL: creates $TEST_PARENT/REL (and its parents) in every
# hierarchy the agent reads; prints the cpu hierarchy's path.
agent_cgroup() {
	local rel=$1 part path="" mnt
	IFS=/ read -ra parts <<<"$rel"
	for part in "${parts[@]}"; do
		path=$path/$part
		# v2: a parent passes the controllers on, also one made earlier as a leaf
		if [ -d "$TEST_PARENT$path" ]; then
			[ "$path" = "/$rel" ] || ! cg_is_v2 ||
				grep -qw cpu "$TEST_PARENT$path/cgroup.subtree_control" ||
				echo "$AGENT_V2_CTRLS" >"$TEST_PARENT$path/cgroup.subtree_control" ||
				fail "cannot enable the controllers below $TEST_PARENT$path"
			continue
		fi
		mkdir "$TEST_PARENT$path" || fail "cannot create $TEST_PARENT$path"
		if cg_is_v2 && [ "$path" != "/$rel" ]; then
			echo "$AGENT_V2_CTRLS" >"$TEST_PARENT$path/cgroup.subtree_control"
		fi
		for mnt in "${AGENT_CTRLS[@]}"; do
			mkdir "$mnt$TEST_PARENT_REL$path" || fail "cannot create $mnt$TEST_PARENT_REL$path"
			[ -e "$mnt$TEST_PARENT_REL$path/cpuset.cpus" ] &&
				_cpuset_inherit "$mnt$TEST_PARENT_REL$path"
		done
	done
	echo "$TEST_PARENT/$rel"
}

# The same cgroup in the hierarchy of controller $2 (cpu: the path itself).
agent_cg_in() {
	local cg=$1 c=$2 mnt
	[ "$c" = cpu ] || cg_is_v2 || { mnt=$(v1_mount "$c") && cg=$mnt${cg#"$CG_ROOT"}; }
	echo "$cg"
}

# _cg_exec CG CMD...: runs CMD (exec, same pid) in CG of every hierarchy.
_cg_exec() {
	local cg=$1 mnt dirs
	shift
	dirs=$cg
	for mnt in "${AGENT_CTRLS[@]}"; do
		dirs="$dirs $mnt${cg#"$CG_ROOT"}"
	done
	# shellcheck disable=SC2016
	exec sh -c 'for d in $1; do echo $$ > "$d/cgroup.procs" || exit 126; done; shift; exec "$@"' sh "$dirs" "$@"
}

# agent_run CG CPU CMD...: like cg_run, in CG of every hierarchy. CPU may be
# a list ("0,1"). CG_PID is the command's pid.
agent_run() {
	local cg=$1 cpu=$2
	shift 2
	_cg_exec "$cg" taskset -c "$cpu" "$@" >"$TMP/bg.$BASHPID.$RANDOM.log" 2>&1 &
	CG_PID=$!
	BG_PIDS+=("$CG_PID")
	for _ in $(seq 1 100); do
		grep -qx "$CG_PID" "$cg/cgroup.procs" 2>/dev/null && return 0
		kill -0 "$CG_PID" 2>/dev/null || fail "agent_run: '$*' exited at once"
		sleep 0.01
	done
	fail "agent_run: pid $CG_PID never appeared in $cg/cgroup.procs"
}

# agent_loads_stop: ends every process the test started so far (by pid, the
# agent stopped first) and forgets them. 2>/dev/null: bash's notices.
agent_loads_stop() {
	local pid
	{
		for pid in "${BG_PIDS[@]}"; do
			kill -TERM "$pid" || true
		done
		for pid in "${BG_PIDS[@]}"; do
			wait "$pid" || true
		done
	} 2>/dev/null
	BG_PIDS=()
}

# agent_config JSON: the test's config, $TMP/agent.json: JSON merged over a
# base that points the agent at the test's parent, its own state directory,
# and the decisions file. The HTTP endpoint is off (tests run side by side and
# would race for its port): a test that wants it turns it on with a free port.
agent_config() {
	jq -n --arg root "${TEST_PARENT_REL#/}" --arg state "$STATE_DIR" --arg out "$AGENT_OUT" \
		--argjson extra "${1:-{\}}" \
		'{cgroup_root: $root, state_dir: $state, decisions: {file: $out}, http: {enabled: false}} * $extra' \
		>"$TMP/agent.json" || fail "agent_config: bad JSON: $1"
	chmod 600 "$TMP/agent.json"
}

# agent_start [OPTION...]: the agent on the test's config, ready to tick; in
# cgroup AGENT_CG when that is set (else the test's own).
agent_start() {
	local join=()
	[ -z "${AGENT_CG:-}" ] || join=(_cg_exec "$AGENT_CG")
	"${join[@]}" "$QOSLET" agent --config "$TMP/agent.json" --pin-dir "$PIN_DIR" "$@" 2>>"$AGENT_ERR" &
	AGENT_PID=$!
	BG_PIDS+=("$AGENT_PID")
	local ms
	ms=$(time_bound_ms 10000) # loading and verifying the BPF programs: slow under TCG
	for _ in $(seq 1 $((ms / 50))); do
		grep -q "agent: managing" "$AGENT_ERR" 2>/dev/null && return 0
		kill -0 "$AGENT_PID" 2>/dev/null || fail "agent exited at start: $(tail -n 5 "$AGENT_ERR")"
		sleep 0.05
	done
	fail "agent did not start within $((ms / 1000)) s: $(tail -n 5 "$AGENT_ERR")"
}

agent_stop() {
	kill -TERM "$AGENT_PID" 2>/dev/null || true
	wait_exit "$AGENT_PID" $(($(time_bound_ms 5000) / 1000)) "qoslet agent" || fail "agent exited with status $? on SIGTERM: $(tail -n 5 "$AGENT_ERR")"
}

# require_fileload: FILELOAD, the page-cache and disk load helper
# (tests/helpers/fileload.c), built.
require_fileload() {
	FILELOAD=${FILELOAD:-$QOSLET_ROOT/build/tests/helpers/fileload}
	[ -x "$FILELOAD" ] || fail "$FILELOAD is missing: run make $FILELOAD"
}

# decisions FILTER: the decisions (one JSON array) matching the jq FILTER.
decisions() {
	[ -s "$AGENT_OUT" ] || { echo "[]"; return 0; }
	jq -sc "map(select($1))" "$AGENT_OUT"
}

# wait_decision FILTER SECONDS: waits for a decision matching FILTER; prints it.
wait_decision() {
	local filter=$1 secs=$2 d
	for _ in $(seq 1 $((secs * 10))); do
		d=$(decisions "$filter" | jq -c '.[0] // empty')
		[ -n "$d" ] && { echo "$d"; return 0; }
		kill -0 "$AGENT_PID" 2>/dev/null || fail "agent exited: $(tail -n 5 "$AGENT_ERR")"
		sleep 0.1
	done
	return 1
}

# assert_replay REC: `qoslet replay` of the recording REC gives exactly the
# decisions the live agent wrote to AGENT_OUT, by their identity (what,
# where, when, how much); the replayed records stay in $TMP/replay.jsonl.
assert_replay() {
	local key='[.ts_ns, .kind, .rule, .target.cgroup, .value, .related.cgroup]'
	jq -c "$key" "$AGENT_OUT" >"$TMP/live.keys"
	"$QOSLET" replay "$1" -j >"$TMP/replay.jsonl" || fail "replay of $1 failed"
	assert_json_lines "$TMP/replay.jsonl"
	jq -c "$key" "$TMP/replay.jsonl" >"$TMP/replay.keys"
	diff "$TMP/live.keys" "$TMP/replay.keys" >"$TMP/diff" ||
		fail "replay differs from the live run: $(head -n 20 "$TMP/diff")"
	log "ok: replay gave the live run's $(wc -l <"$TMP/live.keys") decisions"
}

# assert_cpus_restored SETDIR ORIG PARENT_EFF WHAT: after the agent gave
# cpuset SETDIR (its path in the cpuset hierarchy) back, its cpuset.cpus is
# ORIG, what it held before the agent, or, when ORIG is "" (v2: inherit) and
# the kernel refuses to empty a cpuset with tasks (v2 before 6.x, ENOSPC),
# PARENT_EFF, the CPUs inheriting gave, which the agent must have said
# (user/actuate/restore.c).
assert_cpus_restored() {
	local now
	now=$(cat "$1/cpuset.cpus")
	if [ -z "$2" ] && [ -n "$now" ]; then
		assert_eq "$now" "$3" "$4: its parent's CPUs (the kernel refuses \"\" while it has tasks)"
		grep -q "refuses to empty .*cpuset.cpus while it has tasks" "$AGENT_ERR" ||
			fail "the agent did not say why it wrote \"$now\" instead of \"\": $(grep -i cpuset "$AGENT_ERR" | tail -n 3)"
	else
		assert_eq "$now" "$2" "$4"
	fi
}

# cfs_quota CG: the quota in us (-1 unlimited), v1 or v2.
cfs_quota() {
	if [ -e "$1/cpu.cfs_quota_us" ]; then
		cat "$1/cpu.cfs_quota_us"
	else
		read -r q _ <"$1/cpu.max"
		[ "$q" = max ] && q=-1
		echo "$q"
	fi
}

# configmap_swap DIR FILE: DIR becomes, or is updated as, a Kubernetes
# ConfigMap volume whose config.json has FILE's content, the way the
# kubelet's AtomicWriter does it: a new "..YYYY_MM_DD_..." directory, a
# "..data_tmp" symlink to it renamed over "..data" (rename(2) is atomic),
# the old directory removed; DIR/config.json is a symlink to
# ..data/config.json throughout.
configmap_swap() {
	local dir=$1 old new
	mkdir -p "$dir"
	old=$(readlink "$dir/..data" 2>/dev/null || true)
	new=..$(date -u +%Y_%m_%d_%H_%M_%S).$RANDOM$RANDOM
	mkdir "$dir/$new"
	cp "$2" "$dir/$new/config.json"
	chmod 644 "$dir/$new/config.json"
	ln -s "$new" "$dir/..data_tmp"
	mv -T "$dir/..data_tmp" "$dir/..data"
	[ -z "$old" ] || rm -rf "${dir:?}/$old"
	[ -L "$dir/config.json" ] || ln -s ..data/config.json "$dir/config.json"
}

# agent_memory_limit MIB: caps the test parent's memory at MIB MiB, which the
# agent takes as the node's memory capacity, so that a few hundred MiB put it
# over a threshold without filling the machine. Sets USAGE to the name of the
# usage file (v1 or v2). Skips without a memory controller.
agent_memory_limit() {
	local mem
	mem=$(agent_cg_in "$TEST_PARENT" memory)
	[ -d "$mem" ] || skip "no memory controller"
	if [ -e "$mem/memory.limit_in_bytes" ]; then
		echo $(($1 * 1024 * 1024)) >"$mem/memory.limit_in_bytes"
		USAGE=memory.usage_in_bytes
	elif [ -e "$mem/memory.max" ]; then
		echo $(($1 * 1024 * 1024)) >"$mem/memory.max"
		USAGE=memory.current
	else
		skip "memory controller without a limit file (memory.limit_in_bytes nor memory.max)"
	fi
}

# agent_memhog CG MIB: build/tests/helpers/memhog holding MIB MiB in CG (on
# every CPU, for 120 s at most, so it ends even if cleanup never runs);
# returns once the cgroup is charged that much. CG_PID is its pid.
agent_memhog() {
	local cg=$1 mib=$2 mem hog=${MEMHOG:-$QOSLET_ROOT/build/tests/helpers/memhog}
	mem=$(agent_cg_in "$cg" memory)
	agent_run "$cg" "$(seq -s, 0 $(($(nproc) - 1)))" "$hog" "$mib" 120
	for _ in $(seq 1 600); do
		[ "$(cat "$mem/$USAGE")" -ge $((mib * 1024 * 1024)) ] && return 0
		kill -0 "$CG_PID" 2>/dev/null || fail "memhog $mib MiB in $cg exited"
		sleep 0.05
	done
	fail "memhog in $cg charged only $(cat "$mem/$USAGE") bytes after 30 s"
}

PROM_PORT=""

# prometheus_start PORT: a Prometheus server (its own storage in $TMP/tsdb)
# scraping the agent on 127.0.0.1:PORT every second, as the job "qoslet" (the
# PodMonitor's job, docs/deploy.md); it listens on 127.0.0.1:$PROM_PORT.
prometheus_start() {
	PROM_PORT=$(free_port)
	cat >"$TMP/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: qoslet
    static_configs: [{targets: ["127.0.0.1:$1"]}]
EOF
	prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/tsdb" \
		--web.listen-address="127.0.0.1:$PROM_PORT" >"$TMP/prometheus.log" 2>&1 &
	BG_PIDS+=("$!")
}

prom_query() {
	curl -s --get "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"
}
