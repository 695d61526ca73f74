#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The alerts (scripts/deploy/prometheusrule.yaml) with promtool. Needs no
# cluster and no root:
#  - the PrometheusRule's spec passes `promtool check rules`;
#  - every alert has a severity, a summary and a description that points to
#    its section of docs/dashboards.md, which has one ("### QosletX") for each
#    alert and none for an alert that does not exist; every metric selector
#    in the expressions says job="qoslet" (the PodMonitor's job);
#  - tests/integration/qoslet-rules.test.yaml has, for every alert, a case
#    where it fires and one where it must not, and `promtool test rules`
#    passes it (the firing cases check the labels and the rendered
#    annotations too).
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

require_cmds python3 promtool
python3 -c 'import yaml' 2>/dev/null || skip "needs python3-yaml (scripts/deps.sh installs it)"

TMP=$(mktemp -d "/tmp/qoslet-$TEST_NAME.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
TESTS_FILE=$QOSLET_ROOT/tests/integration/qoslet-rules.test.yaml

python3 - "$QOSLET_ROOT" "$TMP" "$TESTS_FILE" <<'EOF'
import os, re, sys
import yaml

root, tmp, tests_file = sys.argv[1:4]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def ok(msg):
    print("# ok: " + msg)


rule = yaml.safe_load(open(os.path.join(root, "scripts", "deploy", "prometheusrule.yaml")))
if rule.get("kind") != "PrometheusRule" or rule.get("apiVersion") != "monitoring.coreos.com/v1":
    fail("prometheusrule.yaml is not a monitoring.coreos.com/v1 PrometheusRule")
# promtool reads plain rule files: the spec is one (groups: ...).
with open(os.path.join(tmp, "qoslet-rules.yaml"), "w") as f:
    yaml.safe_dump(rule["spec"], f, sort_keys=False)

alerts = {}
for g in rule["spec"]["groups"]:
    for r in g["rules"]:
        if "alert" in r:
            if r["alert"] in alerts:
                fail("alert %s is defined twice" % r["alert"])
            alerts[r["alert"]] = r
if not alerts:
    fail("prometheusrule.yaml defines no alert")

docs = open(os.path.join(root, "docs", "dashboards.md")).read()
doc_alerts = set(re.findall(r"^### (Qoslet\w+)$", docs, re.M))
if doc_alerts != set(alerts):
    fail("docs/dashboards.md's alert sections %s are not the rules' alerts %s"
         % (sorted(doc_alerts), sorted(alerts)))
ok("docs/dashboards.md has a section for each alert: %s" % sorted(alerts))

for name, r in alerts.items():
    ann = r.get("annotations", {})
    if not ann.get("summary") or not ann.get("description"):
        fail("%s has no summary or description" % name)
    if ("docs/dashboards.md, %s." % name) not in ann["description"]:
        fail("%s's description does not point to docs/dashboards.md, %s" % (name, name))
    if r.get("labels", {}).get("severity") not in ("info", "warning", "critical"):
        fail("%s has no severity label" % name)
    sels = re.findall(r"\b[a-z_:]+\{([^}]*)\}", r["expr"])
    if not sels or any('job="qoslet"' not in s for s in sels):
        fail("%s: a metric selector without job=\"qoslet\": %s" % (name, r["expr"]))
ok("every alert has a severity, a summary, a description pointing to its doc section, "
   "and selects job=\"qoslet\"")

tests = yaml.safe_load(open(tests_file))
fires, quiet = set(), set()
for t in tests["tests"]:
    for a in t.get("alert_rule_test", []):
        if a["alertname"] not in alerts:
            fail("%s tests alert %s, which does not exist" % (tests_file, a["alertname"]))
        (fires if a.get("exp_alerts") else quiet).add(a["alertname"])
for name in sorted(alerts):
    if name not in fires or name not in quiet:
        fail("%s has no case where %s %s" % (tests_file, name,
                                             "fires" if name not in fires else "stays quiet"))
ok("every alert has a firing and a quiet case in %s" % os.path.basename(tests_file))
EOF

promtool check rules "$TMP/qoslet-rules.yaml" >"$TMP/check.out" 2>&1 ||
	fail "promtool check rules: $(cat "$TMP/check.out")"
log "ok: promtool check rules: $(grep -o 'SUCCESS.*' "$TMP/check.out")"

# rule_files in the tests are relative to the tests file: both side by side.
cp "$TESTS_FILE" "$TMP/"
(cd "$TMP" && promtool test rules "$(basename "$TESTS_FILE")") >"$TMP/test.out" 2>&1 ||
	fail "promtool test rules: $(cat "$TMP/test.out")"
log "ok: promtool test rules: $(grep -c 'alertname:' "$TESTS_FILE") cases pass"
