#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The scale test's driver (scripts/bench/kube_scale.sh runs it; see there).

  kube_scale.py gen TEMPLATE NODES PODS OUT
      the stand-in's pods: PODS copies of the pod TEMPLATE (kube_pod.jq's) on
      each of NODES nodes, each with its own uid, name and container id
  kube_scale.py run [options]
      many agents' Kubernetes link (tests/helpers/kubesync, one process a
      node) against the running stand-in, through five phases, then the
      figures as JSON (--out)
  kube_scale.py report RESULTS MARKDOWN-HEADER
      the markdown report on stdout

The phases (each one's requests and bytes by verb come from the stand-in's
--stats, read at its start and end; its LISTs from the stand-in's log):
  start     every agent started together; until each watches
  settle    until every agent's capacity policy has seen a hold (hold_s) and
            a window of the load: the first hour after a start is a start's,
            not the steady state's
  steady    STEADY s: the loop's calls of a node whose BE suppression follows
            the load (see feed()), and pod churn: every CHURN s one pod on a
            tenth of the nodes changes

The batch capacity comes from the agent's own capacity policy
(user/policy/capacity.c, in kubesync: its load command), fed the node's LS
load. That policy holds its published figure for an hour, longer than any
steady state this bench can wait, so its clock is simulated: each agent's
load trace is replayed SPEED times faster than real time (a tick every 2 s
of the policy's clock), and the link's min_interval_s is divided by SPEED
to match. Node status patches are then counted per simulated hour; every
other figure is per real hour.
  restart   a rolling restart: each agent stopped and started again, spread
            over RESTART s, then until each watches again
  storm     a compaction (SIGUSR1): every watch gets an ERROR 410
  outage    the API away for OUTAGE s (every watch cut, every request 503),
            then back with its history gone (a restarted API server): until
            every agent watches again
"""
import argparse
import copy
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

NODE_FMT = "scale-node-%04d"
BE_PODS = 4  # pods a node's suppression moves (issue 36's measurement had 4)


def node_name(i):
    return NODE_FMT % i


def pod_uid(i, j):
    return "00000000-0000-4000-8000-%04d%08d" % (i, j)


DEPLOYMENTS = 20  # a node's pods come from this many workloads, each its own image and config


def gen(template, nodes, pods, out):
    """Pods as a node has them: from DEPLOYMENTS workloads (image, labels, config of their
    own), each pod with its own uid, name, IP and container id; a LIST of them compresses
    as a real node's does, not as 110 copies of one pod would."""
    with open(template, encoding="utf-8") as f:
        base = json.load(f)
    rnd = random.Random(36)
    tokens = ["%016x" % rnd.getrandbits(64) for _ in range(DEPLOYMENTS)]
    items = []
    for i in range(nodes):
        for j in range(pods):
            p = copy.deepcopy(base)
            uid, d = pod_uid(i, j), j % DEPLOYMENTS
            p["metadata"].update(uid=uid, name="crunch-%04d-%03d" % (i, j))
            p["metadata"]["labels"].update(app="svc-%02d" % d, **{"pod-template-hash":
                                                                 tokens[d][:10]})
            c = p["spec"]["containers"][0]
            c["image"] = "registry.example.com/team-%02d/svc:%s" % (d, tokens[d][:7])
            for k, e in enumerate(c["env"]):
                e["value"] = "%s-%d-%s" % (e["value"], d, tokens[(d + k) % DEPLOYMENTS])
            p["spec"]["nodeName"] = node_name(i)
            p["status"]["podIP"] = "10.%d.%d.%d" % (i // 250, i % 250, j + 2)
            p["status"]["containerStatuses"][0]["image"] = c["image"]
            hexid = uid.replace("-", "")
            p["status"]["containerStatuses"][0]["containerID"] = "containerd://" + hexid * 2
            items.append(p)
    write_pods(out, items)


def write_pods(path, items):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items}, f,
                  separators=(",", ":"))
    os.rename(path + ".tmp", path)


class Agent:
    """One node's link: a kubesync process fed commands on its stdin."""

    def __init__(self, opts, i):
        step, min_s = opts.batch.split(",")
        self.i, self.node = i, node_name(i)
        self.err = open(os.path.join(opts.workdir, self.node + ".err"), "ab")
        self.proc = subprocess.Popen(
            [opts.kubesync, opts.kubeconfig, self.node, "--resync", "0", "--batch",
             "%s,%g" % (step, float(min_s) / opts.speed), "--hold", str(opts.hold),
             "--node-cpus", str(NODE_CPUS), "--node-memory", str(NODE_MEMORY)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.err)
        self.lock = threading.Lock()
        self.fed = 0  # feed() rounds so far
        self.rnd = random.Random(i)
        self.phase = self.rnd.uniform(0, 2 * math.pi)
        self.started = time.time()
        self.speed = opts.speed
        self.sim_next = 0.0  # the policy's next tick, in seconds of its clock

    def send(self, *lines):
        with self.lock:
            if self.proc.stdin is None:
                return
            try:
                self.proc.stdin.write("".join(l + "\n" for l in lines).encode())
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass

    def stop(self):
        """End of input: the link stops (its stop-time writes included)."""
        with self.lock:
            if self.proc.stdin is not None:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass
                self.proc.stdin = None
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # our own child, by its pid
            self.proc.wait()
        self.err.close()


NODE_CPUS = 16
NODE_MEMORY = 64 << 30
WINDOW_S = 300  # capacity.window_s: kubesync runs the shipped capacity settings
TICK = 2.0  # the policy's tick, seconds of its clock (interval_s of a node this size)


def ls_usage(agent, t):
    """The node's LS + system usage at t seconds of the policy's clock: CPUs swinging between
    1 and 3 over a 10-minute cycle, memory between 18 and 22 GiB over an hour (each node at
    its own phase), both with noise."""
    cpus = 2 + math.sin(2 * math.pi * t / 600 + agent.phase) + agent.rnd.gauss(0, 0.2)
    mem = (20 + 2 * math.sin(2 * math.pi * t / 3600 + agent.phase)) * (1 << 30) \
        + agent.rnd.gauss(0, 128 << 20)
    return max(0.0, cpus), max(0, int(mem))


def feed(agent, tick):
    """What the agent's loop hands its link every 2 s while BE suppression follows a
    varying LS load on BE_PODS pods (user/agent/agent.c, user/kube/report.c): the node's LS
    load, one policy tick per 2 s of the policy's clock, SPEED times faster than real time
    (kubesync runs the agent's capacity policy on it and hands its published figure to the
    link, as the agent's loop does), and the node condition (none), every round; an Event
    occurrence ("Suppressed") only when a pod's suppression starts, not for each quota
    change (report.c holds a suppression until it ends). A restarted agent starts its
    holds, and its policy, over. The link decides what reaches the API."""
    lines = []
    if not agent.fed:
        lines += ["event %s batch crunch-%04d-%03d Suppressed 1" % (pod_uid(agent.i, j),
                                                                   agent.i, j)
                  for j in range(BE_PODS)]
    agent.fed += 1
    sim_now = (time.time() - agent.started) * agent.speed
    while agent.sim_next <= sim_now:
        cpus, mem = ls_usage(agent, agent.sim_next)
        lines.append("load %.3f %.4f %d" % (agent.sim_next, cpus, mem))
        agent.sim_next += TICK
    lines.append("condition off no interference seen in the last 300 s")
    agent.send(*lines)


class Run:
    def __init__(self, opts):
        self.opts = opts
        self.agents = {}
        self.phases = []
        self.stop_feed = threading.Event()
        with open(opts.pods, encoding="utf-8") as f:
            self.items = json.load(f)["items"]

    def stats(self):
        """The stand-in's --stats, fresh (it rewrites the file every second)."""
        time.sleep(1.2)
        with open(self.opts.stats, encoding="utf-8") as f:
            return json.load(f)

    def log_entries(self):
        with open(self.opts.log, encoding="utf-8") as f:
            return [json.loads(l) for l in f if l.strip()]

    def watching(self, since):
        """Nodes with a watch started (and answered 200) after since."""
        nodes = set()
        for e in self.log_entries():
            if e.get("verb") == "watch" and e["time"] >= since and e["status"] == 200:
                nodes.add(node_of(e["path"]))
        return nodes

    def listed(self, since):
        """Nodes that listed (and were answered 200) after since."""
        return set(node_of(e["path"]) for e in self.log_entries()
                   if e.get("verb") == "list" and e["time"] >= since and e["status"] == 200)

    def wait_for(self, seen, since, limit):
        """Until every node is in seen(since), at most limit seconds."""
        want = set(node_name(i) for i in range(self.opts.nodes))
        end = time.time() + limit
        while time.time() < end:
            if want <= seen(since):
                return True
            time.sleep(1)
        return False

    def wait_watching(self, since, limit):
        return self.wait_for(self.watching, since, limit)

    def phase(self, name, body):
        before = self.stats()
        t0 = time.time()
        extra = body() or {}
        t1 = time.time()
        after = self.stats()
        self.phases.append(dict(name=name, t0=t0, t1=t1, before=before, after=after, **extra))
        print("kube_scale: %s: %.0f s" % (name, t1 - t0), file=sys.stderr)

    def feeder(self):
        tick = 0
        while not self.stop_feed.wait(2.0):
            tick += 1
            for a in list(self.agents.values()):
                feed(a, tick)

    def churner(self):
        """Every CHURN s a tenth of the nodes see one of their pods change (a label)."""
        n = 0
        while not self.stop_feed.wait(self.opts.churn):
            n += 1
            for i in range(0, self.opts.nodes, 10):
                node = (i + n) % self.opts.nodes
                p = self.items[node * self.opts.pods_per_node + n % self.opts.pods_per_node]
                p["metadata"]["labels"]["churn"] = str(n)
            write_pods(self.opts.pods, self.items)

    def start_all(self):
        for i in range(self.opts.nodes):
            self.agents[i] = Agent(self.opts, i)
        ok = self.wait_watching(self.phases_t0, 120)
        return {"all_watching": ok}

    def settle(self):
        """Until every agent's policy has seen a hold and a window of its load."""
        need = (self.opts.hold + WINDOW_S) / self.opts.speed
        first = min(a.started for a in self.agents.values())
        time.sleep(max(0.0, first + need + 1 - time.time()))
        return {"simulated_s": (time.time() - first) * self.opts.speed}

    def steady(self):
        time.sleep(self.opts.steady)

    def restart(self):
        t0 = time.time()
        gap = self.opts.restart / self.opts.nodes
        for i in range(self.opts.nodes):
            self.agents[i].stop()
            self.agents[i] = Agent(self.opts, i)
            time.sleep(gap)
        return {"all_watching": self.wait_watching(t0, 120)}

    def storm(self):
        t0 = time.time()
        os.kill(self.opts.server_pid, signal.SIGUSR1)
        ok = self.wait_for(self.listed, t0, 60)
        time.sleep(2)  # the watches after the relists
        return {"signal": t0, "all_watching": ok}

    def outage(self):
        t0 = time.time()
        with open(self.opts.down_file, "w", encoding="utf-8") as f:
            f.write("503\n")
        os.kill(self.opts.server_pid, signal.SIGUSR2)
        time.sleep(self.opts.outage)
        os.kill(self.opts.server_pid, signal.SIGUSR1)  # a restarted server: history gone
        os.unlink(self.opts.down_file)
        back = time.time()
        ok = self.wait_watching(back, 90)
        recovered = time.time() - back
        # Those first watches meet the lost history (410): the relists follow, each after
        # its own backoff, which the outage had grown.
        ok = self.wait_for(self.listed, back, 90) and ok
        time.sleep(2)
        return {"down": t0, "back": back, "all_watching": ok, "recovered_s": recovered}

    def run(self):
        self.phases_t0 = time.time()
        threading.Thread(target=self.feeder, daemon=True).start()
        self.phase("start", self.start_all)
        churn = threading.Thread(target=self.churner, daemon=True)
        churn.start()
        self.phase("settle", self.settle)
        self.phase("steady", self.steady)
        self.phase("restart", self.restart)
        self.phase("storm", self.storm)
        self.phase("outage", self.outage)
        self.stop_feed.set()
        for a in self.agents.values():
            a.stop()
        return analyse(self.opts, self.phases, self.log_entries())


def node_of(path):
    m = re.search(r"spec\.nodeName%3D([a-z0-9.-]+)", path) or \
        re.search(r"/nodes/([a-z0-9.-]+)/status", path)
    return m.group(1) if m else None


def query(path):
    return {k: v[-1] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(path).query).items()}


def delta(before, after):
    """Requests and bytes by verb between two --stats snapshots."""
    out = {}
    for verb, a in after["verbs"].items():
        b = before["verbs"].get(verb, {"requests": 0, "bytes": 0})
        d = {"requests": a["requests"] - b["requests"], "bytes": a["bytes"] - b["bytes"]}
        if d["requests"] or d["bytes"]:
            out[verb] = d
    return out


def peak(snapshot, t0, t1):
    """The most requests the stand-in answered in one second of [t0, t1]."""
    return max([n for s, n in snapshot["per_second"] if t0 - 1 <= s <= t1] or [0])


def analyse(opts, phases, log):
    res = {"nodes": opts.nodes, "pods_per_node": opts.pods_per_node, "phases": {}}
    for p in phases:
        lists = [e for e in log if e.get("verb") == "list" and p["t0"] <= e["time"] < p["t1"]]
        per_node = {}
        for e in lists:
            per_node.setdefault(node_of(e["path"]), []).append(e)
        q = [query(e["path"]) for e in lists]
        ph = {
            "seconds": p["t1"] - p["t0"],
            "verbs": delta(p["before"], p["after"]),
            "etcd_lists": p["after"]["etcd_lists"] - p["before"]["etcd_lists"],
            "peak_requests_per_s": peak(p["after"], p["t0"], p["t1"]),
            "lists": len(lists),
            "lists_by_source": {s: sum(e.get("source") == s for e in lists)
                                for s in ("cache", "etcd")},
            "lists_rv0": sum(x.get("resourceVersion") == "0" for x in q),
            "lists_last_rv": sum(x.get("resourceVersion", "0") != "0" for x in q),
            "lists_with_limit": sum("limit" in x for x in q),
            "max_lists_per_node": max([len(v) for v in per_node.values()] or [0]),
            "list_bytes_mean": (sum(e["bytes"] or 0 for e in lists) / len(lists)
                                if lists else 0),
            "list_decoded_mean": (sum(e.get("decoded") or 0 for e in lists) / len(lists)
                                  if lists else 0),
            "all_watching": p.get("all_watching"),
        }
        by_sec = {}
        for e in lists:
            by_sec[int(e["time"])] = by_sec.get(int(e["time"]), 0) + 1
        ph["peak_lists_per_s"] = max(by_sec.values() or [0])
        ref = p.get("signal") or p.get("back")
        if ref and lists:
            delays = sorted(e["time"] - ref for e in lists)
            ph["list_delay_s"] = {"first": delays[0], "median": delays[len(delays) // 2],
                                  "last": delays[-1]}
        if "simulated_s" in p:
            ph["simulated_s"] = p["simulated_s"]
        if "down" in p:
            during = [e for e in log if p["down"] <= e["time"] < p["back"]]
            ph["requests_while_down"] = len(during)
            ph["recovered_s"] = p["recovered_s"]
        res["phases"][p["name"]] = ph
    timeouts = [int(query(e["path"]).get("timeoutSeconds", 0)) for e in log
                if e.get("verb") == "watch" and e["status"] == 200]
    res["watch_timeout_mean_s"] = sum(timeouts) / len(timeouts) if timeouts else 0
    res["watch_timeouts"] = len(timeouts)
    res["etcd_lists_total"] = sum(p["etcd_lists"] for p in res["phases"].values())
    return res


def fmt_bytes(n):
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return "%.1f %s" % (n / size, unit)
    return "%d B" % n


WRITES = ("create events", "patch events", "patch nodes/status", "create pods/eviction")
SIMULATED = "patch nodes/status"  # driven by the policy's simulated clock in steady state


def report(results, header):
    r = results
    n = r["nodes"]
    st = r["phases"]["steady"]
    hour = 3600.0 / st["seconds"] / n  # steady-state figures per agent and hour
    watches_h = 3600.0 / r["watch_timeout_mean_s"] if r["watch_timeout_mean_s"] else 0
    out = [header, ""]
    out.append("## Steady state, per agent and hour\n")
    out.append("%d agents, %d pods a node, %.0f s; the stand-in's bytes sent (gzip where the "
               "client asked and the answer is over 128 KiB)." % (n, r["pods_per_node"],
                                                                 st["seconds"]))
    out.append("")
    out.append("| verb | requests / hour | bytes / hour |")
    out.append("| --- | --- | --- |")
    writes_h = 0.0
    speed = r.get("speed", 1)
    verbs = dict(st["verbs"])
    verbs.setdefault(SIMULATED, {"requests": 0, "bytes": 0})  # none is a figure too
    for verb, d in sorted(verbs.items()):
        h = hour
        if verb == SIMULATED:
            h = hour / speed  # per hour of the policy's clock
        req = d["requests"] * h
        if verb == "watch pods":
            req = watches_h  # renewals: too rare to count in the window, see below
        if verb in WRITES:
            writes_h += req
        out.append("| %s%s | %.2f | %s |" % (verb, " (per simulated hour)" if h != hour else "",
                                             req, fmt_bytes(d["bytes"] * h)))
    out.append("")
    p = st["verbs"].get(SIMULATED, {"requests": 0})
    out.append("The node status patches follow the capacity policy's clock, which ran %g times "
               "faster than real time: the steady state's %.0f s are %.1f hours of each "
               "agent's load, %.0f agent-hours in all, with %d patch(es) (%.2f per agent-hour). "
               "Before it, every agent's policy had seen %.1f hours of its load (settle)."
               % (speed, st["seconds"], st["seconds"] * speed / 3600,
                  st["seconds"] * speed / 3600 * n, p["requests"],
                  p["requests"] / (st["seconds"] * speed / 3600 * n),
                  r["phases"].get("settle", {}).get("simulated_s", 0) / 3600))
    out.append("")
    out.append("Watch renewals are not counted in the window (a watch lasts 5 to 10 minutes): "
               "the figure is 3600 s over the mean `timeoutSeconds` the agents asked for "
               "(%.0f s over %d watches). LISTs in the window: %d; LISTs only etcd could "
               "serve in the whole run: %d."
               % (r["watch_timeout_mean_s"], r["watch_timeouts"], st["lists"],
                  r["etcd_lists_total"]))
    out.append("")
    out.append("## Restart, compaction storm, outage\n")
    out.append("| phase | seconds | LISTs | per agent (max) | from the cache (rv=0 / last rv) "
               "| etcd-only | peak requests/s | peak LISTs/s | mean LIST bytes (decoded) "
               "| writes per agent |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in ("start", "settle", "restart", "storm", "outage"):
        p = r["phases"][name]
        writes = sum(d["requests"] for v, d in p["verbs"].items() if v in WRITES)
        out.append("| %s | %.0f | %d | %d | %d (%d / %d) | %d | %d | %d | %s (%s) | %.1f |" % (
            name, p["seconds"], p["lists"], p["max_lists_per_node"],
            p["lists_by_source"]["cache"], p["lists_rv0"], p["lists_last_rv"], p["etcd_lists"],
            p["peak_requests_per_s"], p["peak_lists_per_s"], fmt_bytes(p["list_bytes_mean"]),
            fmt_bytes(p["list_decoded_mean"]), writes / n))
    out.append("")
    for name in ("storm", "outage"):
        d = r["phases"][name].get("list_delay_s")
        if d:
            out.append("- %s: relists %.2f to %.2f s after the %s (median %.2f s)." % (
                name, d["first"], d["last"],
                "compaction" if name == "storm" else "API came back", d["median"]))
    for name in ("start", "storm"):
        p = r["phases"][name]
        out.append("- %s: at 5,000 agents with the same spread, about %.0f LISTs a second at "
                   "the peak (%d of %d agents in one second here), each from the watch cache."
                   % (name, p["peak_lists_per_s"] * 5000.0 / n, p["peak_lists_per_s"], n))
    o = r["phases"]["outage"]
    out.append("- outage: %d requests reached the stand-in in its %.0f s away (%.1f an agent), "
               "every agent watched again %.0f s after it came back (the backoff the outage "
               "grew, up to 30 s, spreads them)."
               % (o.get("requests_while_down", 0), r.get("outage_s", 0),
                  o.get("requests_while_down", 0) / n, o.get("recovered_s", 0)))
    out.append("")
    out.append("## Projected to 5,000 nodes x 110 pods\n")
    out.append("From the steady state's per-agent figures above, times 5,000.")
    out.append("")
    reqs_h = sum(d["requests"] for v, d in st["verbs"].items() if v != "watch pods") * hour \
        + watches_h
    bytes_h = sum(d["bytes"] for d in st["verbs"].values()) * hour
    out.append("| | requests / s | API writes / s | bytes / s |")
    out.append("| --- | --- | --- | --- |")
    out.append("| qoslet agents (this branch) | %.1f | %.2f | %s |" % (
        reqs_h * 5000 / 3600, writes_h * 5000 / 3600, fmt_bytes(bytes_h * 5000 / 3600)))
    out.append("")
    out.append("Target: at most 1 API write a second from all agents together: %s."
               % ("met" if writes_h * 5000 / 3600 <= 1 else "NOT met"))
    out.append("Target: no LIST that only etcd can serve: %s (%d in the whole run)."
               % ("met" if r["etcd_lists_total"] == 0 else "NOT met", r["etcd_lists_total"]))
    rs = r["phases"]["restart"]
    out.append("Target: a restart of every agent costs at most one watch-cache LIST each: %s "
               "(at most %d a node, %d of %d from the cache)."
               % ("met" if rs["max_lists_per_node"] <= 1 and rs["etcd_lists"] == 0
                  else "NOT met", rs["max_lists_per_node"], rs["lists_by_source"]["cache"],
                  rs["lists"]))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("template")
    g.add_argument("nodes", type=int)
    g.add_argument("pods", type=int)
    g.add_argument("out")
    r = sub.add_parser("run")
    for a in ("kubesync", "kubeconfig", "pods", "stats", "log", "down_file", "workdir", "out"):
        r.add_argument("--" + a.replace("_", "-"), required=True)
    r.add_argument("--server-pid", type=int, required=True)
    r.add_argument("--nodes", type=int, required=True)
    r.add_argument("--pods-per-node", type=int, required=True)
    r.add_argument("--steady", type=float, default=120)
    r.add_argument("--churn", type=float, default=10)
    r.add_argument("--restart", type=float, default=20)
    r.add_argument("--outage", type=float, default=20)
    r.add_argument("--batch", default="0.10,30",
                   help="capacity.node_status: STEP (a share),MIN_INTERVAL_S")
    r.add_argument("--hold", type=float, default=3600, help="capacity.node_status.hold_s")
    r.add_argument("--speed", type=float, default=60,
                   help="the policy's clock over real time (the load trace replayed faster)")
    p = sub.add_parser("report")
    p.add_argument("results")
    p.add_argument("header")
    opts = ap.parse_args()
    if opts.cmd == "gen":
        gen(opts.template, opts.nodes, opts.pods, opts.out)
    elif opts.cmd == "run":
        res = Run(opts).run()
        res["outage_s"] = opts.outage
        res["speed"] = opts.speed
        res["hold_s"] = opts.hold
        with open(opts.out, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=1)
    else:
        with open(opts.results, encoding="utf-8") as f:
            res = json.load(f)
        with open(opts.header, encoding="utf-8") as f:
            sys.stdout.write(report(res, f.read().rstrip("\n")))


if __name__ == "__main__":
    main()
