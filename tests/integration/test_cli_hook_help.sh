#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Each view's --help states the default hook, and the view takes that hook:
# with --hook auto the views attach tp_btf (through the cut-down kernel BTF,
# which carries the attach ids: no parse of the whole kernel BTF), and raw_tp
# only where the kernel refuses tp_btf, with a warning that says so. The test
# reads the hook from what -v reports and holds it to what --help says; an
# explicit --hook is what -v reports too.
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
	grep -qF 'auto (default: tp_btf, the cheapest' <<<"$help" ||
		fail "qoslet $view --help does not state the default hook: $(grep -A3 -- --hook <<<"$help")"
done
log "ok: every view's --help states the default hook"

# tp_btf, or raw_tp where the kernel refused it and the view said so.
want=tp_btf
got=$(attached_hook runqlat 0.2 1)
if [ "$got" = raw_tp ] && grep -q 'tp_btf programs did not load' "$TMP/err"; then
	log "the kernel refused tp_btf: $(grep 'tp_btf programs did not load' "$TMP/err" | head -n 1)"
	want=raw_tp
fi
[ "$got" = "$want" ] || fail "--help says the default is tp_btf, -v reports $got: $(tail -n 3 "$TMP/err")"
grep -q 'parse the full BTF\|no attach ids' "$TMP/err" &&
	fail "the view parsed the full kernel BTF: $(grep 'full BTF\|attach ids' "$TMP/err" | head -n 1)"
log "ok: runqlat's default hook is $got, through the cut-down kernel BTF"

for view in blame top; do
	args=(0.2 1)
	[ "$view" = top ] && args=(-j 0.2 1)
	got=$(attached_hook "$view" "${args[@]}")
	[ "$got" = "$want" ] || fail "qoslet $view: the default is $want here, -v reports $got"
done
log "ok: blame and top take the same default"

for hook in tp_btf raw_tp; do
	got=$(attached_hook runqlat --hook "$hook" 0.2 1)
	[ "$got" = "$hook" ] || fail "--hook $hook: -v reports $got"
done
log "ok: an explicit --hook is the one -v reports"
