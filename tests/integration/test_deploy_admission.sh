#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The admission policies (scripts/deploy-overlays/admission and
# admission-own-node-pods; docs/security.md) evaluated offline, and every
# manifest checked against the Kubernetes API schemas. Needs no cluster and
# no root; about 10 s:
#   - `kubectl kustomize` renders scripts/deploy and every overlay;
#   - tests/js/admission (node --test, with the packages scripts/deps.sh test
#     installed by npm ci from its package-lock.json): each policy's CEL, read
#     from the YAML as shipped, on sample admission requests that must pass
#     and must be refused (a tenant's pod labelled LSE or SYSTEM, an opt-out,
#     a 1 us target, another node's status, an eviction on another node...),
#     every expression evaluated and every validation seen passing and
#     failing; the rendered objects validated against the API schemas
#     (kubernetes-models: types, enums, required fields, and unknown fields);
#     the admission overlays render exactly the objects evaluated.
# Without kubectl the CEL and the manifests as written are still checked,
# and the test then skips, saying the rendering was not.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_cmds node
JS=$QOSLET_ROOT/tests/js/admission
for pkg in @bufbuild/cel kubernetes-models yaml; do
	[ -d "$JS/node_modules/$pkg" ] ||
		skip "tests/js/admission has no $pkg: scripts/deps.sh test runs npm ci there"
done

TMP=$(mktemp -d "/tmp/qoslet-$TEST_NAME.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

rendered=""
if command -v kubectl >/dev/null; then
	mkdir "$TMP/rendered"
	for k in deploy deploy-overlays/observe deploy-overlays/enforce deploy-overlays/admission \
		deploy-overlays/admission-own-node-pods; do
		out=$TMP/rendered/$(basename "$k").yaml
		kubectl kustomize "$QOSLET_ROOT/scripts/$k" >"$out" 2>"$TMP/kustomize.err" ||
			fail "kubectl kustomize scripts/$k: $(cat "$TMP/kustomize.err")"
		log "rendered scripts/$k: $(grep -c '^kind:' "$out") objects"
	done
	rendered=$TMP/rendered
fi

(cd "$JS" && QOSLET_RENDERED=$rendered node --test) >"$TMP/node.out" 2>&1 || {
	grep -E '^ *(not ok|# fail|#)|Error|expected|actual' "$TMP/node.out" | head -n 60 >&2
	fail "tests/js/admission failed (above)"
}
grep -E '^# (tests|pass|fail|skipped) ' "$TMP/node.out"
[ -n "$rendered" ] ||
	skip "kubectl missing: the manifests were not rendered (the CEL and the files as written passed)"
log "ok: every policy expression evaluated on allowed and refused requests; the rendered manifests match the API schemas"
