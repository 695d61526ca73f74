#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Each view's --help states the default hook, and the view takes that hook:
# with --hook auto the views attach raw_tp through the cut-down kernel BTF
# where it can be had (it spares them a parse of the whole kernel BTF), else
# tp_btf. The test reads the hook from what -v reports and holds it to what
# --help says for this machine; an explicit --hook is what -v reports too.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_root
require_binaries
test_setup

# attached_hook VIEW ARGS...: the hook the sched probe reports under -v.
attached_hook() {
	local view=$1 err=$TMP/err
	shift
	timeout -k 5 60 "$QOSLET" "$view" -v --pin-dir "$PIN_DIR" "$@" >/dev/null 2>"$err" ||
		fail "qoslet $view $*: exit $?: $(tail -n 3 "$err")"
	sed -n 's/.*sched probe: attached (\([a-z_]*\),.*/\1/p' "$err" | head -n 1
}

for view in runqlat blame top; do
	help=$("$QOSLET" "$view" --help)
	grep -qF 'auto (default: raw_tp through the' <<<"$help" ||
		fail "qoslet $view --help does not state the default hook: $(grep -A2 -- --hook <<<"$help")"
done
log "ok: every view's --help states the default hook"

# Where the cut-down copy can be had, auto means raw_tp; the first view of a
# boot writes the copy, so look after a run.
got=$(attached_hook runqlat 0.2 1)
if ls /run/qoslet/vmlinux-*.btf >/dev/null 2>&1; then
	want=raw_tp
else
	want=tp_btf
fi
[ "$got" = "$want" ] || fail "--help says the default is $want here, -v reports $got"
log "ok: runqlat's default hook is $got, as --help says for this machine"

for view in blame top; do
	args=(0.2 1)
	[ "$view" = top ] && args=(-j 0.2 1)
	got=$(attached_hook "$view" "${args[@]}")
	[ "$got" = "$want" ] || fail "qoslet $view: --help says the default is $want here, -v reports $got"
done
log "ok: blame and top take the same default"

for hook in tp_btf raw_tp; do
	got=$(attached_hook runqlat --hook "$hook" 0.2 1)
	[ "$got" = "$hook" ] || fail "--hook $hook: -v reports $got"
done
log "ok: an explicit --hook is the one -v reports"
