#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The Kubernetes manifests (scripts/deploy/) against the binary, each other
# and docs/deploy.md. Needs no cluster and no root:
#  - every manifest parses as YAML, names its kind, and lives in qoslet-system;
#    the kustomization lists every one but the PodMonitor and the
#    PrometheusRule (and itself);
#  - the Grafana dashboard: the kustomization generates the ConfigMap
#    qoslet-dashboard (label grafana_dashboard, no name hash) from
#    qoslet-dashboard.json, which is a dashboard; rendered with kubectl
#    kustomize (when kubectl is there), it holds the file unchanged;
#    docs/dashboards.md describes each panel;
#  - the ConfigMap's config.json passes `qoslet agent --check-config`;
#  - the DaemonSet's command is the image's entrypoint and the binary's path in
#    the image; its arguments use only flags `qoslet agent --help` lists, with
#    the values they take; the --config file is where the ConfigMap is mounted;
#  - the liveness and readiness probes run `qoslet health` (--ready) on the
#    config's http.health_socket, in state_dir, with options its --help
#    lists, and no TCP health port is open; http listens beyond loopback; the
#    NetworkPolicy lets only the monitoring namespace reach metrics; the state_dir is a hostPath at
#    the same path; every hostPath is mounted at its own path; the pin dir
#    (--help's default) is on the mounted bpffs; NODE_NAME comes from
#    spec.nodeName (with kubernetes.node_name empty);
#  - capabilities: drop ALL, add exactly docs/deploy.md's "capability" rows;
#    the container mounts exactly its "mount" rows; the ClusterRole's rules are
#    exactly its API access table (no pods/eviction: the enforce overlay's
#    ClusterRole qoslet-evict grants exactly its Eviction access table); binding, service account, PodMonitor port
#    and selector, tolerations, priority class, requests <= limits, grace
#    period > the API timeout, rolling update without surge, the image name;
#  - safe by default: the ConfigMap's evict.action is "report"; the overlays
#    scripts/deploy-overlays/{observe,enforce} build on scripts/deploy, observe
#    changes nothing, enforce's config.json is the base's with evict.action
#    "kubernetes" (and perhaps evict.nodes) and nothing else (rendered with
#    kubectl kustomize when
#    kubectl is there);
#  - deploy details: maxUnavailable a percentage, minReadySeconds, --log-format
#    json, no CPU limit (memory request <= limit), AppArmor Unconfined and
#    SELinux spc_t (each a row in docs/deploy.md), liveness that waits out more
#    than the agent's 5 s staleness limit;
#  - the PodMonitor: job "qoslet" from the pods' app.kubernetes.io/name (every
#    job="..." in docs/ says "qoslet"), honorLabels false and the operator's
#    namespace/pod/container target labels dropped.
set -euo pipefail
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)
[ -n "$PY" ] || skip "needs python3 (scripts/deps.sh installs it)"
"$PY" -c 'import yaml' 2>/dev/null || skip "needs python3-yaml (scripts/deps.sh installs it)"
[ -x "$QOSLET" ] || fail "$QOSLET is missing: run make first"

TMP=$(mktemp -d "/tmp/qoslet-$TEST_NAME.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

"$QOSLET" agent --help >"$TMP/help.txt" || fail "qoslet agent --help failed"

"$PY" - "$QOSLET_ROOT" "$QOSLET" "$TMP" <<'EOF'
import glob, json, os, re, shutil, subprocess, sys
import yaml

root, qoslet, tmp = sys.argv[1:4]
deploy = os.path.join(root, "scripts", "deploy")
NS = "qoslet-system"


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def ok(msg):
    print("# ok: " + msg)


def check(cond, msg):
    if not cond:
        fail(msg)
    ok(msg)


# ---- every manifest parses ---------------------------------------------------
objs = {}  # (kind, name) -> object
files = sorted(glob.glob(os.path.join(deploy, "*.yaml")))
check(len(files) >= 7, "scripts/deploy holds the manifests (%d files)" % len(files))
for f in files:
    try:
        docs = [d for d in yaml.safe_load_all(open(f)) if d is not None]
    except yaml.YAMLError as e:
        fail("%s does not parse as YAML: %s" % (f, e))
    if not docs:
        fail("%s holds no document" % f)
    for d in docs:
        if not isinstance(d, dict) or not d.get("apiVersion") or not d.get("kind"):
            fail("%s: a document without apiVersion and kind" % f)
        name = (d.get("metadata") or {}).get("name", "")
        if d["kind"] != "Kustomization" and not name:
            fail("%s: a %s without metadata.name" % (f, d["kind"]))
        objs[(d["kind"], name)] = d
ok("%d manifests parse as YAML (%d objects)" % (len(files), len(objs)))


def get(kind, name="qoslet"):
    if (kind, name) not in objs:
        fail("no %s %s in scripts/deploy" % (kind, name))
    return objs[(kind, name)]


cluster_scoped = {"Namespace", "ClusterRole", "ClusterRoleBinding", "Kustomization",
                  "FlowSchema", "PriorityLevelConfiguration"}
for (kind, name), d in objs.items():
    if kind not in cluster_scoped and d["metadata"].get("namespace") != NS:
        fail("%s %s is not in namespace %s" % (kind, name, NS))
get("Namespace", NS)
ok("every namespaced object is in %s" % NS)

kust = get("Kustomization", "")
listed = set(kust.get("resources", []))
# These two need the Prometheus Operator's CRDs: applied by hand, where it runs.
operator_only = {"podmonitor.yaml", "prometheusrule.yaml"}
want = {os.path.basename(f) for f in files} - {"kustomization.yaml"} - operator_only
check(listed == want, "the kustomization lists %s" % sorted(want))
get("PrometheusRule")

# ---- flow control: the agents' own small priority level -----------------------------
fs, plc = get("FlowSchema"), get("PriorityLevelConfiguration")
check(fs["apiVersion"] == plc["apiVersion"] == "flowcontrol.apiserver.k8s.io/v1",
      "FlowSchema and PriorityLevelConfiguration are flowcontrol.apiserver.k8s.io/v1")
check(fs["spec"]["priorityLevelConfiguration"]["name"] == plc["metadata"]["name"],
      "the FlowSchema sends to the qoslet priority level")
# The built-in system-nodes (the kubelets) is 500, service-accounts 9000.
check(500 < fs["spec"]["matchingPrecedence"] < 9000,
      "the FlowSchema matches after the kubelets' and before service-accounts")
subjects = [s_ for r_ in fs["spec"]["rules"] for s_ in r_["subjects"]]
check(subjects == [{"kind": "ServiceAccount",
                    "serviceAccount": {"name": "qoslet", "namespace": NS}}],
      "the FlowSchema takes the agents' ServiceAccount and nobody else")
lim = plc["spec"]["limited"]
# "system", the kubelets' level, has 30 shares.
check(plc["spec"]["type"] == "Limited" and 0 < lim["nominalConcurrencyShares"] < 30,
      "the priority level is limited, smaller than the kubelets' (30 shares)")
check(lim["limitResponse"]["type"] == "Queue", "past its seats, requests queue, then 429")

# ---- the Grafana dashboard -----------------------------------------------------
DASH = "qoslet-dashboard.json"
gens = kust.get("configMapGenerator", [])
check(len(gens) == 1 and gens[0].get("name") == "qoslet-dashboard"
      and gens[0].get("namespace") == NS and gens[0].get("files") == [DASH]
      and gens[0].get("options", {}).get("disableNameSuffixHash") is True
      and gens[0]["options"].get("labels", {}).get("grafana_dashboard") == "1",
      "the kustomization generates ConfigMap qoslet-dashboard from %s, labeled "
      "grafana_dashboard, without a name hash" % DASH)
dash_text = open(os.path.join(deploy, DASH)).read()
dash = json.loads(dash_text)
check(dash.get("uid") == "qoslet" and dash.get("panels") and dash.get("templating"),
      "%s is a Grafana dashboard (uid qoslet, panels, variables)" % DASH)
# docs/dashboards.md's table names every panel (second column), and no other.
dash_doc = open(os.path.join(root, "docs", "dashboards.md")).read()
section = dash_doc.split("\n## THE DASHBOARD\n", 1)[1].split("\n## ", 1)[0]
doc_panels = {m.strip() for m in re.findall(r"^\|[^|]*\| ([^|`]+?) \|", section, re.M)} - {"panel", "---"}
titles = {p["title"] for p in dash["panels"] if p["type"] != "row"}
check(doc_panels == titles, "docs/dashboards.md describes each of the %d panels" % len(titles))
# What the base renders: the objects of its files, and the dashboard's ConfigMap.
base_objs = sorted([k_ for k_ in objs if k_[0] not in ("Kustomization", "PodMonitor", "PrometheusRule")]
                   + [("ConfigMap", "qoslet-dashboard")])

# ---- the config ----------------------------------------------------------------
cm = get("ConfigMap", "qoslet-config")
if "config.json" not in cm.get("data", {}):
    fail("ConfigMap qoslet-config has no config.json")
cfg_file = os.path.join(tmp, "config.json")
with open(cfg_file, "w") as f:
    f.write(cm["data"]["config.json"])
r = subprocess.run([qoslet, "agent", "--check-config", "--config", cfg_file],
                   capture_output=True, text=True)
check(r.returncode == 0,
      "the ConfigMap's config.json passes qoslet agent --check-config (%s)"
      % (r.stdout + r.stderr).strip())
eff = json.loads(subprocess.run([qoslet, "agent", "--print-config", "--config", cfg_file],
                                capture_output=True, text=True, check=True).stdout)

# ---- the DaemonSet's command against the binary and the image ----------------
ds = get("DaemonSet")
pod = ds["spec"]["template"]["spec"]
check(len(pod["containers"]) == 1, "the DaemonSet has one container")
c = pod["containers"][0]

containerfile = open(os.path.join(root, "Containerfile")).read()
m = re.search(r"^ENTRYPOINT (\[.*\])$", containerfile, re.M)
if not m:
    fail("Containerfile has no ENTRYPOINT [...]")
entry = json.loads(m.group(1))
check(c.get("command") == entry, "the DaemonSet's command is the image's ENTRYPOINT %s" % entry)
stager = open(os.path.join(deploy, "image-rootfs.sh")).read()
check(('"$dir%s"' % entry[0]) in stager,
      "image-rootfs.sh puts the binary at %s" % entry[0])

# Options of `qoslet agent --help`: "  -v, --verbose", "      --config FILE  ...".
flags = {}
for line in open(os.path.join(tmp, "help.txt")):
    m = re.match(r"^\s+(?:(-\w), )?(--[a-z][a-z-]*)(?: ([A-Z]+))?(?:\s|$)", line)
    if m:
        for f in (m.group(1), m.group(2)):
            if f:
                flags[f] = m.group(3) is not None
check("--config" in flags and flags["--config"], "--help lists --config FILE")
args = c.get("args", [])
check(args[:1] == ["agent"], "the container runs 'qoslet agent'")
values = {}
i = 1
while i < len(args):
    a = args[i]
    if a not in flags:
        fail("the DaemonSet passes %s, which 'qoslet agent --help' does not list" % a)
    if flags[a]:
        if i + 1 >= len(args):
            fail("%s needs a value" % a)
        values[a] = args[i + 1]
        i += 1
    i += 1
ok("every argument %s is a flag of 'qoslet agent --help'" % args[1:])

mounts = {vm["mountPath"].rstrip("/"): vm for vm in c.get("volumeMounts", [])}
volumes = {v["name"]: v for v in pod.get("volumes", [])}


def mount_of(path):
    """The volumeMount that holds path, and its volume."""
    best = None
    for mp in mounts:
        if path == mp or path.startswith(mp + "/"):
            if best is None or len(mp) > len(best):
                best = mp
    if best is None:
        return None, None
    return mounts[best], volumes.get(mounts[best]["name"])


cfg_path = values.get("--config")
check(cfg_path is not None, "the DaemonSet passes --config")
vm, vol = mount_of(cfg_path)
check(vol is not None and vol.get("configMap", {}).get("name") == "qoslet-config"
      and vm.get("readOnly") is True,
      "--config %s is in the read-only mount of ConfigMap qoslet-config" % cfg_path)
check(os.path.relpath(cfg_path, vm["mountPath"]) in cm["data"],
      "the ConfigMap has the key %s" % os.path.relpath(cfg_path, vm["mountPath"]))

# ---- HTTP, state_dir, host paths, node name -------------------------------------
port = eff["http"]["port"]
ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
check(eff["http"]["enabled"] and eff["http"]["address"] in ("0.0.0.0", "::"),
      "http serves beyond loopback (%s), for the kubelet's probes and Prometheus"
      % eff["http"]["address"])
# The probes: `qoslet health` on the health socket, which only root reaches;
# no TCP health port, which any process of the node could crowd out.
sock = eff["http"].get("health_socket", "")
check(sock and not eff["http"].get("health_port") and set(ports) == {"metrics"},
      "the health checks are on a socket (%s), with no TCP health port" % sock)
check(os.path.dirname(sock) == eff["state_dir"].rstrip("/"),
      "the health socket is in state_dir, a directory only root writes")
for probe, extra in (("livenessProbe", []), ("readinessProbe", ["--ready"])):
    pr = c.get(probe, {})
    cmd = pr.get("exec", {}).get("command", [])
    check(not pr.get("httpGet") and cmd[:2] == [c["command"][0], "health"]
          and sorted(cmd[2:]) == sorted(extra + ["--socket", sock, "--timeout", "1"])
          and cmd[cmd.index("--socket") + 1] == sock,
          "%s runs qoslet health %s on the config's http.health_socket" % (probe, " ".join(extra)))
    r = subprocess.run([qoslet, "health", "--help"], capture_output=True, text=True)
    check(r.returncode == 0 and all(o in r.stdout for o in cmd[2:] if o.startswith("--")),
          "qoslet health --help lists the options %s uses" % probe)
np_ = get("NetworkPolicy")
ing = np_["spec"].get("ingress", [])
check(np_["spec"]["podSelector"].get("matchLabels") == {"app.kubernetes.io/name": "qoslet"}
      and np_["spec"].get("policyTypes") == ["Ingress"] and len(ing) == 1
      and ing[0].get("from") == [{"namespaceSelector": {"matchLabels":
                                  {"kubernetes.io/metadata.name": "monitoring"}}}]
      and [q.get("port") for q in ing[0].get("ports", [])] == ["metrics"],
      "the NetworkPolicy lets only the monitoring namespace in, on metrics alone")

state = eff["state_dir"]
vm, vol = mount_of(state)
check(vm is not None and vm["mountPath"].rstrip("/") == state.rstrip("/")
      and vol.get("hostPath", {}).get("path", "").rstrip("/") == state.rstrip("/")
      and not vm.get("readOnly"),
      "state_dir %s is a writable hostPath mounted at the same path" % state)
for name, v in volumes.items():
    if "hostPath" in v:
        mp = [vm["mountPath"] for vm in c["volumeMounts"] if vm["name"] == name]
        check(mp == [v["hostPath"]["path"]],
              "hostPath %s is mounted at its own path" % v["hostPath"]["path"])
help_text = open(os.path.join(tmp, "help.txt")).read()
m = re.search(r"--pin-dir DIR.*\(default (/[^)]+)\)", help_text)
check(m is not None, "--help names the default pin dir")
vm, vol = mount_of(m.group(1))
check(vol is not None and vol.get("hostPath", {}).get("path") == m.group(1)
      and vol["hostPath"].get("type") == "DirectoryOrCreate" and not vm.get("readOnly"),
      "the pin dir %s alone is mounted from the node's bpffs, writable" % m.group(1))
check(not any(v.get("hostPath", {}).get("path") == "/sys/fs/bpf" for v in volumes.values()),
      "the node's whole /sys/fs/bpf is not mounted")

# The kubelet's directory: read-only, for cpu_manager_state alone. The kubelet
# renames a new checkpoint over it, which a mount of the file would never show,
# so the directory is mounted, and what of it holds secrets is hidden under an
# empty read-only volume: every pod's volumes (Secrets, service-account
# tokens), the kubelet's keys, and the sockets of plugins, device plugins and
# the PodResources API (docs/security.md, ABUSES).
KUBELET = "/var/lib/kubelet"
HIDDEN = ["pods", "pki", "plugins", "plugins_registry", "device-plugins", "pod-resources"]
kvm, kvol = mount_of(eff["cpu_manager_state"])
check(kvm is not None and kvm["mountPath"] == KUBELET and kvm.get("readOnly") is True
      and kvol.get("hostPath", {}).get("path") == KUBELET,
      "cpu_manager_state (%s) is in the read-only mount of %s" % (eff["cpu_manager_state"], KUBELET))
for d in HIDDEN:
    hvm, hvol = mount_of(os.path.join(KUBELET, d, "x"))
    check(hvm is not None and hvm["mountPath"] == os.path.join(KUBELET, d)
          and hvm.get("readOnly") is True and hvol is not None and "emptyDir" in hvol,
          "%s/%s is hidden under an empty read-only volume" % (KUBELET, d))
under = sorted(m for m in mounts if m.startswith(KUBELET + "/"))
check(under == sorted(os.path.join(KUBELET, d) for d in HIDDEN),
      "nothing else is mounted under %s: %s" % (KUBELET, under))

env = {e["name"]: e for e in c.get("env", [])}
check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
      == "spec.nodeName", "NODE_NAME comes from spec.nodeName")
if "kubernetes" in eff:
    check(eff["kubernetes"].get("node_name") == "",
          "kubernetes.node_name is empty, so the agent takes NODE_NAME")

# ---- privileges against docs/deploy.md --------------------------------------------
docs = open(os.path.join(root, "docs", "deploy.md")).read()
sc = c.get("securityContext", {})
caps = sc.get("capabilities", {})
doc_caps = set(re.findall(r"^\| capability `([A-Z_]+)` \|", docs, re.M))
check(doc_caps and set(caps.get("add", [])) == doc_caps and len(caps["add"]) == len(doc_caps),
      "the added capabilities are exactly docs/deploy.md's: %s" % sorted(doc_caps))
check(caps.get("drop") == ["ALL"], "every other capability is dropped")
check(sc.get("privileged") is False and sc.get("readOnlyRootFilesystem") is True
      and sc.get("runAsUser") == 0,
      "not privileged, read-only root filesystem, root user")
doc_mounts = set(re.findall(r"^\| mount `(/[^`]*)` \|", docs, re.M))
check(doc_mounts == set(mounts), "the mounts are exactly docs/deploy.md's: %s" % sorted(doc_mounts))

check(pod.get("hostPID") is True and not pod.get("hostNetwork"), "hostPID, not hostNetwork")
check(pod.get("priorityClassName") == "system-node-critical", "priority system-node-critical")
check({"operator": "Exists"} in pod.get("tolerations", []), "tolerates every taint")
timeout = eff.get("kubernetes", {}).get("timeout_s", 10)
check(pod.get("terminationGracePeriodSeconds", 30) > timeout + 1,
      "the grace period (%s s) covers an API call in flight (%s s) and the restore"
      % (pod.get("terminationGracePeriodSeconds", 30), timeout))
us = ds["spec"].get("updateStrategy", {})
check(us.get("type") == "RollingUpdate" and us.get("rollingUpdate", {}).get("maxSurge") == 0,
      "rolling update, never two agents on a node")


def qty(s):
    s = str(s)
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    for u, f in units.items():
        if s.endswith(u):
            return float(s[:-len(u)]) * f
    return float(s)


res = c.get("resources", {})
req, lim = res.get("requests", {}).get("memory"), res.get("limits", {}).get("memory")
check(req is not None and lim is not None and qty(req) <= qty(lim),
      "memory request %s <= limit %s" % (req, lim))
check(res.get("requests", {}).get("cpu") is not None and "cpu" not in res.get("limits", {}),
      "a CPU request and no CPU limit (a quota would throttle the loop when the node is busy)")
check(re.search(r"^\| no CPU limit \|", docs, re.M) is not None,
      "docs/deploy.md says why there is no CPU limit")

mu = us.get("rollingUpdate", {}).get("maxUnavailable")
check(isinstance(mu, str) and re.fullmatch(r"[1-9][0-9]?%", mu) is not None,
      "maxUnavailable is a percentage (%s)" % mu)
check(ds["spec"].get("minReadySeconds", 0) >= 10,
      "minReadySeconds (%s) lets a new agent tick a while before the rollout moves on"
      % ds["spec"].get("minReadySeconds"))
check(values.get("--log-format") == "json", "the agent logs JSON lines (--log-format json)")
lp = c["livenessProbe"]
check(lp.get("periodSeconds", 10) * lp.get("failureThreshold", 3) > 5,
      "liveness fails only after the agent's 5 s staleness limit (%s s x %s)"
      % (lp.get("periodSeconds", 10), lp.get("failureThreshold", 3)))
check(sc.get("appArmorProfile") == {"type": "Unconfined"}
      and re.search(r"^\| AppArmor `Unconfined` \|", docs, re.M) is not None,
      "AppArmor Unconfined (the default profile denies bpffs writes), as docs/deploy.md says")
check(sc.get("seLinuxOptions", {}).get("type") == "spc_t"
      and re.search(r"^\| SELinux `spc_t` \|", docs, re.M) is not None,
      "SELinux type spc_t, as docs/deploy.md says")

labels = ds["spec"]["template"]["metadata"]["labels"]
sel = ds["spec"]["selector"]["matchLabels"]
check(all(labels.get(k) == v for k, v in sel.items()), "the DaemonSet's selector matches its pods")

# ---- RBAC against docs/deploy.md ----------------------------------------------------
def doc_table_rules(heading):
    """The (group, resource, verb) rows of docs/deploy.md's table under heading."""
    section = docs.split("\n### %s\n" % heading, 1)[1].split("\n#", 1)[0]
    out = set()
    for g, res_, verbs in re.findall(
            r"^\| `([^`]*)` \| `([a-z/]+)` \| ((?:`[a-z]+`(?:, )?)+) \|", section, re.M):
        for v in re.findall(r"`([a-z]+)`", verbs):
            out.add(("" if g == '""' else g, res_, v))
    return out


def role_rules(role):
    out = set()
    for r_ in role["rules"]:
        if set(r_) - {"apiGroups", "resources", "verbs"}:
            fail("a ClusterRole rule with more than groups, resources and verbs: %s" % r_)
        for g in r_["apiGroups"]:
            for res_ in r_["resources"]:
                for v in r_["verbs"]:
                    out.add((g, res_, v))
    return out


doc_rules = doc_table_rules("API access (ClusterRole `qoslet`)")
rules = role_rules(get("ClusterRole"))
check(doc_rules and rules == doc_rules,
      "the ClusterRole's rules are exactly docs/deploy.md's: %s" % sorted(doc_rules))
check(not any(r_[1] == "pods/eviction" for r_ in rules),
      "the base cannot evict: pods/eviction only in the enforce overlay")
# The pod informer lists once and then watches (user/kube/informer.h); it gets nothing.
check({("", "pods", "list"), ("", "pods", "watch")} <= rules and ("", "pods", "get") not in rules,
      "pods: list and watch (the informer), no get")
sa = get("ServiceAccount")
crb = get("ClusterRoleBinding")
check(crb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": "qoslet"}
      and crb["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                               "namespace": NS}]
      and pod.get("serviceAccountName") == sa["metadata"]["name"],
      "the binding gives the ClusterRole to the DaemonSet's service account")

# ---- PodMonitor and image name -------------------------------------------------------
pm = get("PodMonitor")
eps = pm["spec"]["podMetricsEndpoints"]
check(all(labels.get(k) == v for k, v in pm["spec"]["selector"]["matchLabels"].items())
      and [e["port"] for e in eps] == ["metrics"] and ports.get("metrics") == port
      and eps[0].get("path") == "/metrics",
      "the PodMonitor scrapes /metrics on the agent pods' port 'metrics' (%s)" % port)

check(pm["spec"].get("jobLabel") == "app.kubernetes.io/name"
      and labels.get("app.kubernetes.io/name") == "qoslet",
      "the PodMonitor's job is the pods' app.kubernetes.io/name, qoslet")
ep = eps[0]
drops = [r_ for r_ in ep.get("relabelings", []) if r_.get("action") == "labeldrop"]
check(ep.get("honorLabels") is False and len(drops) == 1
      and all(re.fullmatch(drops[0]["regex"], l) for l in ("namespace", "pod", "container")),
      "honorLabels false; the agent pod's namespace, pod and container are not stamped on series")
jobs = set()
for f in glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True):
    jobs |= {(os.path.relpath(f, root), j) for j in re.findall(r'job="([^"]*)"', open(f).read())}
check(jobs and all(j == "qoslet" for _, j in jobs),
      "every job=\"...\" in docs/ is the PodMonitor's job, qoslet: %s" % sorted(jobs))

# ---- safe by default: the overlays ------------------------------------------------
check(eff["evict"]["action"] == "report", "the shipped config only reports evictions")
overlays = os.path.join(root, "scripts", "deploy-overlays")
base_doc = json.loads(cm["data"]["config.json"])
overlay_extra = {"observe": [], "enforce": ["rbac-evict.yaml"]}
for ov in ("observe", "enforce"):
    k = yaml.safe_load(open(os.path.join(overlays, ov, "kustomization.yaml")))
    check(k.get("resources") == ["../../deploy"] + overlay_extra[ov],
          "overlay %s builds on scripts/deploy %s" % (ov, overlay_extra[ov]))
evict_objs = {d["kind"]: d for d in yaml.safe_load_all(
    open(os.path.join(overlays, "enforce", "rbac-evict.yaml"))) if d}
evict_doc = doc_table_rules("Eviction access (ClusterRole `qoslet-evict`, the enforce overlay only)")
check(evict_doc and role_rules(evict_objs["ClusterRole"]) == evict_doc
      and evict_objs["ClusterRoleBinding"]["roleRef"]["name"] == "qoslet-evict"
      and evict_objs["ClusterRoleBinding"]["subjects"] == crb["subjects"],
      "the enforce overlay grants exactly docs/deploy.md's eviction rules %s to the agent"
      % sorted(evict_doc))
patch = yaml.safe_load(open(os.path.join(overlays, "enforce", "evict-kubernetes.yaml")))
enf = json.loads(patch["data"]["config.json"])
check(patch["kind"] == "ConfigMap" and patch["metadata"]["name"] == "qoslet-config"
      and enf["evict"]["action"] == "kubernetes"
      and {**enf, "evict": {k: v for k, v in {**enf["evict"], "action": "report"}.items()
                            if k != "nodes"}} == base_doc,
      "the enforce overlay's config is the base's with evict.action kubernetes (and at most "
      "evict.nodes), nothing else")
kubectl = shutil.which("kubectl")
if kubectl:
    for ov, action in (("observe", "report"), ("enforce", "kubernetes")):
        out = subprocess.run([kubectl, "kustomize", os.path.join(overlays, ov)],
                             capture_output=True, text=True)
        check(out.returncode == 0, "kubectl kustomize renders overlay %s %s" % (ov, out.stderr.strip()))
        rendered = [d for d in yaml.safe_load_all(out.stdout) if d]
        cms = [d for d in rendered if d["kind"] == "ConfigMap"
               and d["metadata"]["name"] == "qoslet-config"]
        check(len(cms) == 1 and json.loads(cms[0]["data"]["config.json"])["evict"]["action"] == action,
              "overlay %s renders evict.action %s" % (ov, action))
        extra = [("ClusterRole", "qoslet-evict"), ("ClusterRoleBinding", "qoslet-evict")] \
            if ov == "enforce" else []
        check(sorted((d["kind"], d["metadata"]["name"]) for d in rendered)
              == sorted(base_objs + extra),
              "overlay %s renders the base's objects %s" % (ov, extra))
    out = subprocess.run([kubectl, "kustomize", deploy], capture_output=True, text=True)
    check(out.returncode == 0, "kubectl kustomize renders scripts/deploy %s" % out.stderr.strip())
    rendered = [d for d in yaml.safe_load_all(out.stdout) if d]
    check(sorted((d["kind"], d["metadata"]["name"]) for d in rendered) == base_objs,
          "scripts/deploy renders its objects and the dashboard's ConfigMap")
    dcm = [d for d in rendered if d["metadata"]["name"] == "qoslet-dashboard"][0]
    check(dcm["metadata"]["namespace"] == NS
          and dcm["metadata"].get("labels", {}).get("grafana_dashboard") == "1"
          and dcm.get("data", {}) == {DASH: dash_text},
          "the rendered ConfigMap qoslet-dashboard holds %s unchanged, labeled grafana_dashboard" % DASH)
else:
    print("# kubectl missing: overlays not rendered")

image = c["image"]
name = image.rsplit(":", 1)[0] if ":" in image.split("/")[-1] else image
check([i["name"] for i in kust.get("images", [])] == [name],
      "the kustomization sets the DaemonSet's image %s" % name)
m = re.search(r"^IMAGE \?= (\S+)$", open(os.path.join(root, "Makefile")).read(), re.M)
check(m is not None and m.group(1) == image, "make image builds %s, the DaemonSet's image" % image)
EOF

echo "# all deployment checks passed"
