#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The README names only what exists: every `qoslet COMMAND` in its code
# (inline spans, which may wrap, and indented blocks) is a command whose
# --help exits 0, every `make TARGET` is a target of the Makefile (a rule
# of its text: nothing is built or run), and every endpoint it names (a code
# span of one path segment, `/metrics`) is a path the HTTP server answers
# (user/report/http.c's handler, read as text).
# shellcheck disable=SC2016 # the python program is single-quoted
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_cmds python3
require_binaries

README=$QOSLET_ROOT/README.md
# The README's code: inline spans (joined across line breaks) and indented blocks.
code=$(python3 -c '
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
blocks = [l for l in text.splitlines() if l.startswith("    ")]
spans = re.findall(r"`([^`]+)`", "\n".join(l for l in text.splitlines() if not l.startswith("    ")))
print("\n".join(s.replace("\n", " ") for s in spans + blocks))' "$README")

mapfile -t commands < <(grep -oE '(^|[ /])qoslet +[a-z][a-z-]*' <<<"$code" | awk '{ print $NF }' | sort -u)
mapfile -t targets < <(grep -oE '(^|[ ;&])make +[a-z][a-z0-9-]*' <<<"$code" | awk '{ print $NF }' | sort -u)
[ "${#commands[@]}" -ge 5 ] || fail "found only ${#commands[@]} qoslet commands in README.md: ${commands[*]}"
[ "${#targets[@]}" -ge 5 ] || fail "found only ${#targets[@]} make targets in README.md: ${targets[*]}"

for c in "${commands[@]}"; do
	rc=0
	"$QOSLET" "$c" --help >/dev/null 2>&1 || rc=$?
	[ "$rc" = 0 ] || fail "README.md names 'qoslet $c', but 'qoslet $c --help' exits $rc"
done
log "ok: README's commands exist: ${commands[*]}"

# The Makefile's rules, read as text: running make, even with -n, could install
# packages (the Makefile checks its dependencies when it is read).
known=$(grep -oE '^[a-z][a-z0-9 -]*:' "$QOSLET_ROOT/Makefile" | tr -d : | tr ' ' '\n' | sort -u)
for t in "${targets[@]}"; do
	grep -qx -- "$t" <<<"$known" || fail "README.md names 'make $t', which the Makefile does not define"
done
log "ok: README's make targets exist: ${targets[*]}"

# The HTTP server's paths: what its handlers compare the URL with.
served=$(grep -oE 'strcmp\(url, "/[a-z]+"\)' "$QOSLET_ROOT/user/report/http.c" | grep -oE '/[a-z]+' | sort -u)
[ "$(wc -l <<<"$served")" -ge 4 ] || fail "found only these paths in user/report/http.c: $served"
mapfile -t endpoints < <(grep -oE '^/[a-z]+$' <<<"$code" | sort -u)
[ "${#endpoints[@]}" -ge 1 ] || fail "README.md names no endpoint"
for e in "${endpoints[@]}"; do
	grep -qx -- "$e" <<<"$served" || fail "README.md names the endpoint $e, which the HTTP server does not serve (it serves: $(tr "\n" " " <<<"$served"))"
done
log "ok: README's endpoints are served: ${endpoints[*]}"
