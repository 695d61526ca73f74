# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash disable=SC2034 # SRV_CMD, SRV_PROTO are for the caller
#
# The real servers from Debian that scripts/bench/slobench.sh measures and
# test_loadgen.sh drives, started the same way in both: one nginx worker
# serving a 1 KiB page, and redis-server with persistence off, each on
# 127.0.0.1. Sourced after lib.sh; the caller runs SRV_CMD (in a cgroup of
# its choice), then server_wait_listen.

# server_cmd KIND PORT DIR: SRV_CMD, the command line of server KIND (web or
# kv) on 127.0.0.1:PORT, its files (config, logs, web root) in DIR; SRV_PROTO,
# loadgen's -p for it. The web root should be on tmpfs (the caller's choice:
# a page from disk is in the page cache anyway after the first request).
server_cmd() {
	local kind=$1 port=$2 dir=$3
	mkdir -p "$dir/www" "$dir/nginx"
	case $kind in
	web)
		SRV_PROTO=http
		[ -e "$dir/www/index.html" ] || head -c 1024 /dev/zero | tr '\0' x >"$dir/www/index.html"
		# One worker (issue 14's server), no access log (a disk write a request),
		# keep-alive without a request limit (nginx closes after 1000 by default).
		# The worker runs as the caller (root would otherwise hand it to nobody,
		# who cannot read the caller's private temporary directory).
		cat >"$dir/nginx.conf" <<-EOC
			user $(id -un);
			worker_processes 1;
			daemon off;
			pid $dir/nginx/nginx.pid;
			error_log $dir/server.log warn;
			events { worker_connections 256; }
			http {
			    access_log off;
			    client_body_temp_path $dir/nginx;
			    keepalive_requests 1000000;
			    server {
			        listen 127.0.0.1:$port;
			        root $dir/www;
			    }
			}
		EOC
		SRV_CMD=(/usr/sbin/nginx -e "$dir/server.log" -c "$dir/nginx.conf")
		;;
	kv)
		SRV_PROTO=redis
		SRV_CMD=(redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no
			--daemonize no --protected-mode no --dir "$dir" --logfile "$dir/server.log")
		;;
	*) fail "server_cmd: unknown server '$kind'" ;;
	esac
}

# Skips the test (or benchmark) when server KIND is not installed.
server_require() {
	case $1 in
	web) [ -x /usr/sbin/nginx ] || skip "nginx is missing (scripts/deps.sh bench installs nginx-light)" ;;
	kv) command -v redis-server >/dev/null || skip "redis-server is missing (scripts/deps.sh bench installs it)" ;;
	esac
}

# server_wait_listen PORT PID DIR: waits up to 5 s for a listener on
# 127.0.0.1:PORT; fails when the server (PID) exits first.
server_wait_listen() {
	for _ in $(seq 1 100); do
		(: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || fail "the server exited at start: $(tail -n 3 "$3/server.log" 2>/dev/null)"
		sleep 0.05
	done
	fail "nothing listens on 127.0.0.1:$1 after 5 s"
}
