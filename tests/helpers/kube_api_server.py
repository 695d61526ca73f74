#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A stand-in for the Kubernetes API server in integration tests (stdlib only).

Serves HTTPS with the certificate it is given and checks every request the
way the API reference describes it:
  GET   /api/v1/pods?fieldSelector=spec.nodeName=NODE   -> the fixture's pods on NODE
  POST  /api/v1/namespaces/NS/pods/NAME/eviction        -> the next scripted status
  POST  /apis/events.k8s.io/v1/namespaces/NS/events     -> 201 (409 for a name taken)
  PATCH /apis/events.k8s.io/v1/namespaces/NS/events/N   -> 200 (404 for an unknown one)
  PATCH /api/v1/nodes/NODE/status                       -> 200 (404 for another node)
  GET   /api/v1/nodes/NODE?resourceVersion=0            -> the Node: --node-labels, and its
                                                           status as patched (404 another)
Each request must carry "Authorization: Bearer <token>" with the token file's
content at that moment, or the content it replaced within the last
--token-grace seconds (a real API server keeps a rotated token valid until it
expires; the grace covers a request built just before the file changed), so a
client that keeps a rotated token gets 401,
"Accept: application/json" and a qoslet User-Agent; an eviction must send
Content-Type application/json and a policy/v1 Eviction naming the same pod with
a UID precondition. A request that breaks a rule gets 400 (401 for the token),
and the rule it broke goes into the log: one JSON object a line with method,
path, status, violations, the parsed body and the time it arrived (Unix
seconds, float).

An Event must be an events.k8s.io/v1 Event about a Pod in the same namespace
(a name that is a DNS-1123 subdomain: labels of [a-z0-9-] beginning and ending
alphanumeric, at most 253 in all; eventTime as MicroTime, reportingController,
reportingInstance, action, reason, type Normal/Warning, a note of at most
1 KiB); its update a merge patch
(application/merge-patch+json) of series {count >= 2, lastObservedTime} only.
A node status patch must be a strategic merge patch
(application/strategic-merge-patch+json) of status.conditions entries with
type, status True/False/Unknown, reason, message and RFC 3339 heartbeat and
transition times, or of status.capacity and status.allocatable, both holding
the same kubernetes.io/batch-cpu and kubernetes.io/batch-memory, whole numbers
as strings; the node's resources are kept and answered like its conditions.

The eviction script is a file of statuses (201, 200, 429, 403, 404, 500, ...),
one a line, consumed from the top; with the file empty the answer is 500. While
the --down-file exists every request gets the status it holds, 503 (an API
server in trouble) when it is empty, or say 403 (a refusal). While
the --delay-file exists every request waits as many seconds as it holds (30 when
it is empty) before it is answered, as a hung API server would; a client that
gives up meanwhile is no error. The chosen port is written to --port-file once
the server listens.

With --client-ca the server asks for a client certificate (optional) and
verifies it against that CA, as an API server started with --client-ca-file
does: a request over a verified certificate is authenticated as the
certificate's CN and needs no token (a bad certificate fails the handshake).
With --log-auth each log entry also has "user" (that CN, else null) and
"bearer" (the token presented, else null), so a test can see which
credentials arrived.
Pods are listed and watched as the API reference describes it (see the
WATCH section below the handler): the pods file is the store's truth, and a
change to it (rewritten by a test) becomes ADDED/MODIFIED/DELETED events with
a new resourceVersion each.
  GET /api/v1/pods[?...]  and  /api/v1/namespaces/NS/pods[?...]
    limit/continue paginate (a continue token older than the last compaction
    gets 410 Gone); resourceVersion "0" or unset is the newest, another
    version older than the compaction 410; watch=true streams one JSON event a
    line over a chunked response from resourceVersion (ADDED for every pod
    first when it is unset or "0"), BOOKMARKs every --bookmark-interval
    seconds with allowWatchBookmarks=true, and ends cleanly after
    timeoutSeconds. A watch from a version older than the compaction gets an
    ERROR event with a 410 Status (--gone-status: an HTTP 410 instead).
  SIGUSR1 compacts: history before now is gone, and every open watch gets an
    ERROR 410 event and ends. SIGUSR2 drops every open watch's connection
    without ending its response (a network cut).
  GET /api, /apis, /api/v1, /version: the discovery documents kubectl reads.
Every LIST and WATCH is logged with "verb" ("list" or "watch") when it
starts. qoslet's own calls must carry the node's field selector; with
--foreign-clients other clients (kubectl, client libraries) may call without
it and with their own User-Agent and Accept, as the real server allows.
"""
import argparse
import base64
import json
import os
import random
import re
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PODS_PATH = re.compile(r"^/api/v1(?:/namespaces/([a-z0-9.-]+))?/pods$")
EVICT_PATH = re.compile(r"^/api/v1/namespaces/([a-z0-9.-]+)/pods/([a-z0-9.-]+)/eviction$")
EVENTS_PATH = re.compile(r"^/apis/events\.k8s\.io/v1/namespaces/([a-z0-9.-]+)/events$")
EVENT_PATH = re.compile(r"^/apis/events\.k8s\.io/v1/namespaces/([a-z0-9.-]+)/events/([a-z0-9.-]+)$")
NODE_STATUS_PATH = re.compile(r"^/api/v1/nodes/([a-z0-9.-]+)/status$")
NODE_PATH = re.compile(r"^/api/v1/nodes/([a-z0-9.-]+)$")
MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
QUANTITY = re.compile(r"^(0|[1-9][0-9]*)$")  # whole numbers: milli-CPUs, bytes
CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]{0,127}$")
DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN = re.compile(r"^(?=.{1,253}$)%s(\.%s)*$" % (DNS_LABEL, DNS_LABEL))
# The reasons of the Status bodies the eviction script's codes get.
STATUS_REASONS = {401: "Unauthorized", 403: "Forbidden", 409: "Conflict", 422: "Invalid",
                  429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}
EVENTS = {}  # (namespace, name) -> the stored Event
CONDITIONS = {}  # type -> the node's condition
RESOURCES = {"capacity": {}, "allocatable": {}}  # the node's batch resources as patched
MAX_BODY = 64 * 1024
LOCK = threading.Lock()
TOKENS = {"current": None, "previous": None, "changed": 0.0}  # what the token file held
# Signals only bump these (a handler must not take LOCK): the store acts on them.
SIGNALS = {"compact": 0, "drop": 0}


class Store:
    """The pods as the API server's storage keeps them: a resourceVersion
    counter, the objects at their versions, and the events since the last
    compaction. The pods file is re-read when it changes (its mtime and size)."""

    def __init__(self, path):
        self.path = path
        self.cond = threading.Condition(LOCK)
        # Versions start from the clock: a restarted server is newer than before, and its
        # empty history makes a watch from an older version 410, as after a compaction.
        self.rv = int(time.time() * 1000)
        self.compacted = self.rv  # a watch or continue token from before this is gone
        self.pods = {}  # uid -> pod
        self.history = []  # (rv, type, pod)
        self.stamp = None
        self.compact_seen = 0
        with LOCK:
            self.refresh()

    def refresh(self):
        """Under LOCK: takes a changed pods file and a compaction signal."""
        if SIGNALS["compact"] != self.compact_seen:
            self.compact_seen = SIGNALS["compact"]
            self.rv += 1
            self.compacted = self.rv
            self.history = []
            self.cond.notify_all()
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        if (st.st_mtime_ns, st.st_size) == self.stamp:
            return
        try:
            with open(self.path, encoding="utf-8") as f:
                items = json.load(f).get("items", [])
        except ValueError:
            return  # written as we read: the next look takes it
        self.stamp = (st.st_mtime_ns, st.st_size)
        new = {}
        for p in items:
            uid = p.get("metadata", {}).get("uid")
            if uid:
                new[uid] = p
        for uid in list(self.pods):
            if uid not in new:
                self.emit("DELETED", self.pods.pop(uid))
        def bare(p):
            return dict(p, metadata={k: v for k, v in p.get("metadata", {}).items()
                                     if k != "resourceVersion"})
        for uid, p in new.items():
            old = self.pods.get(uid)
            if old is None or bare(old) != bare(p):
                self.emit("MODIFIED" if old is not None else "ADDED", p)
        self.cond.notify_all()

    def emit(self, kind, pod):
        self.rv += 1
        pod = json.loads(json.dumps(pod))
        pod.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        if kind != "DELETED":
            self.pods[pod["metadata"]["uid"]] = pod
        self.history.append((self.rv, kind, pod))


STORE = None


def as_object(pod):
    """A watch event's object names its kind, which a list's items need not (clients check)."""
    return dict(pod, kind="Pod", apiVersion="v1")


def status_body(code, reason, message, details=None):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "code": code,
            "status": "Success" if code < 400 else "Failure"}
    if code >= 400:
        body.update(reason=reason, message=message)
    if details:
        body["details"] = details
    return body


# What kubectl reads before it lists or watches pods (the discovery documents).
DISCOVERY = {
    "/version": {"major": "1", "minor": "30", "gitVersion": "v1.30.0-qoslet-test",
                 "platform": "linux/amd64"},
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                             "serverAddress": "127.0.0.1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
         "verbs": ["get", "list", "watch"], "shortNames": ["po"], "categories": ["all"]},
        {"name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy",
         "version": "v1", "kind": "Eviction", "verbs": ["create"]},
        {"name": "nodes", "singularName": "node", "namespaced": False, "kind": "Node",
         "verbs": ["get", "list", "watch"], "shortNames": ["no"]},
        {"name": "nodes/status", "singularName": "", "namespaced": False, "kind": "Node",
         "verbs": ["get", "patch"]}]},
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as libcurl reuses connections
    server_version = "kube-api-test"

    def log_message(self, fmt, *args):  # the JSON log below replaces stderr chatter
        pass

    def parse_request(self):
        self.arrived = time.time()  # each request of a kept-alive connection
        self.verb = None
        return super().parse_request()

    def record(self, status, violations, body, sent=None, verb=None):
        """One log line; sent: the response's bytes (a watch's at its end, as "watch-end")."""
        entry = {"bytes": sent,
                 "method": self.command, "path": self.path, "status": status,
                 "violations": violations, "body": body, "time": self.arrived,
                 "verb": verb or getattr(self, "verb", None),
                 "agent": self.headers.get("User-Agent") if self.headers else None}
        if self.server.opts.log_auth and self.headers:
            auth = self.headers.get("Authorization") or ""
            entry.update(user=self.cert_user(),
                         bearer=auth[7:] if auth.startswith("Bearer ") else None)
        with LOCK, open(self.server.opts.log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def reply(self, status, doc, violations, body=None):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.record(status, violations, body, len(data))

    def token_valid(self, auth):
        with open(self.server.opts.token_file, encoding="utf-8") as f:
            token = f.read().strip()
        with LOCK:
            if token != TOKENS["current"]:
                TOKENS.update(previous=TOKENS["current"], current=token, changed=self.arrived)
            if auth == "Bearer " + token:
                return True
            return (TOKENS["previous"] is not None and auth == "Bearer " + TOKENS["previous"]
                    and self.arrived - TOKENS["changed"] <= self.server.opts.token_grace)

    def cert_user(self):
        """The CN of the client certificate the handshake verified, or None."""
        cert = self.connection.getpeercert() if self.server.opts.client_ca else None
        for rdn in (cert or {}).get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    return value
        return None

    def common_violations(self):
        v = []
        if not self.cert_user() and not self.token_valid(self.headers.get("Authorization") or ""):
            v.append("token")
        if self.foreign():
            return v
        if self.headers.get("Accept") != "application/json":
            v.append("accept")
        if not (self.headers.get("User-Agent") or "").startswith("qoslet/"):
            v.append("user-agent")
        return v

    def foreign(self):
        """With --foreign-clients, a client that is not qoslet (kubectl, a library)."""
        return self.server.opts.foreign_clients and \
            not (self.headers.get("User-Agent") or "").startswith("qoslet/")

    def read_body(self, v):
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            v.append("body-too-large")
            return None
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            v.append("body-not-json")
            return None

    def content_type(self, v, want):
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != want:
            v.append("content-type")

    def down(self):
        """While the down file exists: its status (503 when empty) for every request.
        First, while the delay file exists, the answer waits."""
        try:
            with open(self.server.opts.delay_file, encoding="utf-8") as f:
                time.sleep(float(f.read().strip() or 30))
        except FileNotFoundError:
            pass
        try:
            with open(self.server.opts.down_file, encoding="utf-8") as f:
                code = int(f.read().strip() or 503)
        except FileNotFoundError:
            return False
        # Read past the body: unread, it would be taken for the next request on this connection.
        self.rfile.read(min(int(self.headers.get("Content-Length") or 0), MAX_BODY))
        self.reply(code, status_body(code, STATUS_REASONS.get(code, "InternalError"),
                                     "scripted outage"), [])
        return True

    def refuse(self, v, body=None):
        if "token" in v:
            self.reply(401, status_body(401, "Unauthorized", "Unauthorized"), v, body)
        else:
            self.reply(400, status_body(400, "BadRequest", "violations: " + ",".join(v)),
                       v, body)

    def do_GET(self):
        if self.down():
            return
        url = urllib.parse.urlsplit(self.path)
        if url.path in DISCOVERY:
            self.reply(200, DISCOVERY[url.path], [])
            return
        if PODS_PATH.match(url.path):
            self.get_pods(url, PODS_PATH.match(url.path).group(1))
            return
        if NODE_PATH.match(url.path):
            self.get_node(url, NODE_PATH.match(url.path).group(1))
            return
        self.reply(404, status_body(404, "NotFound", "the server could not find it"),
                   self.common_violations() + ["unexpected-path"])

    def get_pods(self, url, ns):
        """LIST or WATCH of pods (the module's docstring says what is checked)."""
        v = self.common_violations()
        try:
            query = urllib.parse.parse_qs(url.query, strict_parsing=True)
        except ValueError:  # empty or malformed query
            query = {}
        allowed = {"fieldSelector", "labelSelector", "limit", "continue", "resourceVersion",
                   "resourceVersionMatch", "watch", "allowWatchBookmarks", "timeoutSeconds"}
        q = {k: vals[-1] for k, vals in query.items()}
        if any(len(vals) != 1 for vals in query.values()) or not set(q) <= allowed:
            v.append("query")
        sel = q.get("fieldSelector")
        if sel is not None and not sel.startswith("spec.nodeName="):
            v.append("field-selector")
        if (sel is None and not self.foreign()) or ns is not None and not self.foreign():
            v.append("field-selector")
        if self.headers.get("Content-Length") not in (None, "0"):
            v.append("get-with-body")
        watch = q.get("watch") in ("true", "1")
        if watch and "continue" in q or "continue" in q and q.get("resourceVersion"):
            v.append("continue-with-version")
        if "limit" in q and not re.match(r"^[1-9][0-9]*$", q["limit"]):
            v.append("limit")
        self.verb = "watch" if watch else "list"
        if v:
            self.refuse(v)
            return
        node = sel[len("spec.nodeName="):] if sel else None

        def wanted(p):
            return (node is None or p.get("spec", {}).get("nodeName") == node) and \
                (ns is None or p.get("metadata", {}).get("namespace") == ns)
        if watch:
            self.watch_pods(q, wanted)
        else:
            self.list_pods(q, wanted)

    def list_pods(self, q, wanted):
        with LOCK:
            STORE.refresh()
            rv, compacted = STORE.rv, STORE.compacted
            pods = sorted((p for p in STORE.pods.values() if wanted(p)),
                          key=lambda p: (p["metadata"].get("namespace", ""),
                                         p["metadata"].get("name", "")))
        start = 0
        if "continue" in q:
            try:
                tok = json.loads(base64.b64decode(q["continue"]))
                start, rv = int(tok["start"]), int(tok["rv"])
            except (ValueError, KeyError, TypeError):
                self.refuse(["continue-token"])
                return
            if rv < compacted:
                self.reply(410, status_body(410, "Expired",
                                            "The provided continue parameter is too old to "
                                            "display a consistent list result."), [])
                return
        elif q.get("resourceVersion") not in (None, "", "0") and \
                int(q["resourceVersion"]) < compacted:
            self.reply(410, status_body(410, "Expired", "too old resource version: %s (%d)"
                                        % (q["resourceVersion"], compacted)), [])
            return
        meta = {"resourceVersion": str(rv)}
        if "limit" in q and len(pods) - start > int(q["limit"]):
            end = start + int(q["limit"])
            meta["continue"] = base64.b64encode(json.dumps(
                {"rv": rv, "start": end}).encode()).decode()
            meta["remainingItemCount"] = len(pods) - end
        else:
            end = len(pods)
        self.reply(200, {"kind": "PodList", "apiVersion": "v1", "metadata": meta,
                         "items": pods[start:end]}, [])

    def chunk(self, doc):
        data = json.dumps(doc).encode() + b"\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()
        self.streamed += len(data)

    def watch_pods(self, q, wanted):
        """Streams events from resourceVersion until timeoutSeconds, a compaction or a drop."""
        opts = self.server.opts
        timeout = float(q.get("timeoutSeconds") or opts.watch_timeout)
        end = time.time() + timeout
        bookmarks = q.get("allowWatchBookmarks") == "true"
        drop_seen = SIGNALS["drop"]
        with LOCK:
            STORE.refresh()
            since = q.get("resourceVersion") or "0"
            gone = since != "0" and int(since) < STORE.compacted
            if since == "0":
                backlog = [("ADDED", p) for p in STORE.pods.values() if wanted(p)]
                since = STORE.rv
            else:
                since = int(since)
                backlog = []
        if gone and opts.gone_status:
            self.reply(410, status_body(410, "Expired", "too old resource version"), [])
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.record(200, [], None)
        self.streamed = 0
        try:
            self.stream_events(q, wanted, gone, since, backlog, end, bookmarks, drop_seen)
        finally:
            self.record(200, [], None, self.streamed, "watch-end")

    def stream_events(self, q, wanted, gone, since, backlog, end, bookmarks, drop_seen):
        """The body of a watch (watch_pods), until its end, a compaction or a drop."""
        opts = self.server.opts
        try:
            if gone:
                self.chunk({"type": "ERROR", "object": status_body(
                    410, "Expired", "too old resource version: %s" % since)})
                self.wfile.write(b"0\r\n\r\n")
                return
            for kind, p in backlog:
                self.chunk({"type": kind, "object": as_object(p)})
            next_bookmark = time.time() + opts.bookmark_interval
            while True:
                with LOCK:
                    STORE.cond.wait(0.1)
                    STORE.refresh()
                    compacted = STORE.compacted > since
                    news = [(rv, k, p) for rv, k, p in STORE.history if rv > since]
                    current = STORE.rv
                if SIGNALS["drop"] != drop_seen:
                    # A cut: the response ends without its last chunk.
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if compacted:  # what came between is gone: the client must list again
                    self.chunk({"type": "ERROR", "object": status_body(
                        410, "Expired", "too old resource version: %d" % since)})
                    break
                for rv, k, p in news:
                    since = rv
                    if wanted(p):
                        self.chunk({"type": k, "object": as_object(p)})
                since = max(since, current) if not news else since
                now = time.time()
                if bookmarks and now >= next_bookmark:
                    self.chunk({"type": "BOOKMARK", "object": {
                        "kind": "Pod", "apiVersion": "v1",
                        "metadata": {"resourceVersion": str(since)}}})
                    next_bookmark = now + opts.bookmark_interval
                if now >= end:
                    break
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def do_POST(self):
        if self.down():
            return
        if EVENTS_PATH.match(self.path):
            self.post_event(EVENTS_PATH.match(self.path).group(1))
            return
        v = self.common_violations()
        m = EVICT_PATH.match(self.path)
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        if ctype != "application/json":
            v.append("content-type")
        body = self.read_body(v)
        if not m:
            self.reply(404, status_body(404, "NotFound", "the server could not find it"),
                       v + ["unexpected-path"], body)
            return
        ns, name = m.groups()
        want = {"apiVersion": "policy/v1", "kind": "Eviction"}
        if not isinstance(body, dict) or any(body.get(k) != w for k, w in want.items()):
            v.append("eviction-kind")
        elif body.get("metadata") != {"name": name, "namespace": ns}:
            v.append("eviction-metadata")
        else:
            uid = body.get("deleteOptions", {}).get("preconditions", {}).get("uid")
            if not isinstance(uid, str) or not uid:
                v.append("eviction-uid-precondition")
        if v:
            self.refuse(v, body)
            return
        code = self.next_status()
        if code in (200, 201):
            doc = status_body(code, "", "")
        elif code == 429:
            doc = status_body(429, "TooManyRequests",
                              "Cannot evict pod as it would violate the pod's disruption budget.",
                              {"causes": [{"reason": "DisruptionBudget",
                                           "message": "The disruption budget pdb needs 1 "
                                                      "healthy pods and has 1 currently"}]})
        elif code == 404:
            doc = status_body(404, "NotFound", 'pods "%s" not found' % name,
                              {"name": name, "kind": "pods"})
        else:
            doc = status_body(code, STATUS_REASONS.get(code, "InternalError"),
                              "scripted failure")
        self.reply(code, doc, v, body)

    def post_event(self, ns):
        v = self.common_violations()
        self.content_type(v, "application/json")
        ev = self.read_body(v)
        if not isinstance(ev, dict):
            v.append("event-not-object")
            self.refuse(v, ev)
            return
        meta, reg = ev.get("metadata") or {}, ev.get("regarding") or {}
        checks = {
            "event-kind": ev.get("apiVersion") == "events.k8s.io/v1" and ev.get("kind") == "Event",
            "event-name": isinstance(meta.get("name"), str) and
                          DNS_SUBDOMAIN.match(meta["name"]) is not None,
            "event-namespace": meta.get("namespace") == ns,
            "event-time": isinstance(ev.get("eventTime"), str) and
                          MICRO_TIME.match(ev["eventTime"]) is not None,
            "event-controller": isinstance(ev.get("reportingController"), str) and
                                "/" in ev["reportingController"],
            "event-instance": isinstance(ev.get("reportingInstance"), str) and
                              0 < len(ev["reportingInstance"]) <= 128,
            "event-action": isinstance(ev.get("action"), str) and CAMEL.match(ev["action"]),
            "event-reason": isinstance(ev.get("reason"), str) and CAMEL.match(ev["reason"]),
            "event-type": ev.get("type") in ("Normal", "Warning"),
            "event-note": isinstance(ev.get("note"), str) and
                          len(ev["note"].encode()) <= 1024,
            "event-regarding": reg.get("apiVersion") == "v1" and reg.get("kind") == "Pod" and
                               reg.get("namespace") == ns and bool(reg.get("name")) and
                               bool(reg.get("uid")),
            "event-no-series": "series" not in ev,
        }
        v += [k for k, ok in checks.items() if not ok]
        if v:
            self.refuse(v, ev)
            return
        key = (ns, meta["name"])
        with LOCK:
            taken = key in EVENTS
            if not taken:
                EVENTS[key] = ev
        if taken:
            self.reply(409, status_body(409, "AlreadyExists", "events \"%s\" already exists"
                                        % meta["name"]), v, ev)
        else:
            self.reply(201, ev, v, ev)

    def do_PATCH(self):
        if self.down():
            return
        v = self.common_violations()
        m_ev, m_node = EVENT_PATH.match(self.path), NODE_STATUS_PATH.match(self.path)
        if not m_ev and not m_node:
            self.reply(404, status_body(404, "NotFound", "the server could not find it"),
                       v + ["unexpected-path"])
            return
        self.content_type(v, "application/merge-patch+json" if m_ev
                          else "application/strategic-merge-patch+json")
        patch = self.read_body(v)
        if m_ev:
            self.patch_event(m_ev.groups(), patch, v)
        else:
            self.patch_node(m_node.group(1), patch, v)

    def patch_event(self, key, patch, v):
        series = patch.get("series") if isinstance(patch, dict) else None
        if not isinstance(series, dict) or set(patch) != {"series"} or \
                set(series) != {"count", "lastObservedTime"} or \
                not isinstance(series["count"], int) or series["count"] < 2 or \
                not isinstance(series["lastObservedTime"], str) or \
                not MICRO_TIME.match(series["lastObservedTime"]):
            v.append("event-series-patch")
        if v:
            self.refuse(v, patch)
            return
        with LOCK:
            ev = EVENTS.get(key)
            if ev:
                ev["series"] = series
        if not ev:
            self.reply(404, status_body(404, "NotFound", 'events "%s" not found' % key[1]),
                       v, patch)
        else:
            self.reply(200, ev, v, patch)

    def node_doc(self, node):
        """The Node as stored: its labels (the --node-labels file, read anew each
        time: a test relabels the node by rewriting it) and its status as patched."""
        labels = {}
        try:
            with open(self.server.opts.node_labels, encoding="utf-8") as f:
                labels = json.load(f)
        except FileNotFoundError:
            pass
        with LOCK:
            return {"kind": "Node", "apiVersion": "v1",
                    "metadata": {"name": node, "labels": labels},
                    "status": {"conditions": list(CONDITIONS.values()),
                               "capacity": dict(RESOURCES["capacity"]),
                               "allocatable": dict(RESOURCES["allocatable"])}}

    def get_node(self, url, node):
        """qoslet reads its Node from the watch cache (resourceVersion=0), not from etcd."""
        v = self.common_violations()
        if urllib.parse.parse_qs(url.query).get("resourceVersion") != ["0"] and \
                not self.foreign():
            v.append("node-get-not-cached")
        if v:
            self.refuse(v)
            return
        if node != self.server.opts.node:
            self.reply(404, status_body(404, "NotFound", 'nodes "%s" not found' % node), v)
            return
        self.reply(200, self.node_doc(node), v)

    def patch_node(self, node, patch, v):
        status = patch.get("status") if isinstance(patch, dict) else None
        if not isinstance(status, dict) or not status or set(patch) != {"status"} or \
                not set(status) <= {"conditions", "capacity", "allocatable"}:
            v.append("node-status-patch")
            status = {}
        conds = status.get("conditions", [])
        if "conditions" in status and (not isinstance(conds, list) or not conds):
            v.append("node-status-patch")
            conds = []
        for c in conds:
            if not isinstance(c, dict) or not isinstance(c.get("type"), str) or \
                    c.get("status") not in ("True", "False", "Unknown") or \
                    not CAMEL.match(str(c.get("reason"))) or \
                    not isinstance(c.get("message"), str) or \
                    not TIME.match(str(c.get("lastHeartbeatTime"))) or \
                    not TIME.match(str(c.get("lastTransitionTime"))):
                v.append("node-condition")
        if "capacity" in status or "allocatable" in status:
            self.check_batch(status, v)
        if v:
            self.refuse(v, patch)
            return
        if node != self.server.opts.node:
            self.reply(404, status_body(404, "NotFound", 'nodes "%s" not found' % node), v,
                       patch)
            return
        with LOCK:
            for c in conds:
                CONDITIONS[c["type"]] = c
            for key in ("capacity", "allocatable"):
                RESOURCES[key].update(status.get(key, {}))
        self.reply(200, self.node_doc(node), v, patch)

    @staticmethod
    def check_batch(status, v):
        """The agent's batch resources: both maps, the same two quantities in each."""
        cap, alloc = status.get("capacity"), status.get("allocatable")
        if not isinstance(cap, dict) or cap != alloc or \
                set(cap) != {"kubernetes.io/batch-cpu", "kubernetes.io/batch-memory"} or \
                not all(isinstance(q, str) and QUANTITY.match(q) for q in cap.values()):
            v.append("node-batch-resources")

    def do_method_not_allowed(self):
        self.reply(405, status_body(405, "MethodNotAllowed", "method not allowed"),
                   ["unexpected-method"])

    do_PUT = do_DELETE = do_method_not_allowed

    def next_status(self):
        with LOCK:
            with open(self.server.opts.evict_script, encoding="utf-8") as f:
                lines = [l.strip() for l in f if l.strip()]
            with open(self.server.opts.evict_script, "w", encoding="utf-8") as f:
                f.write("".join(l + "\n" for l in lines[1:]))
        return int(lines[0]) if lines else 500


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--token-grace", type=float, default=2.0,
                    help="seconds the token a rotation replaced stays valid")
    ap.add_argument("--pods", required=True, help="PodList JSON with spec.nodeName set")
    ap.add_argument("--evict-script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--node", default="n1", help="the one node whose status may be patched")
    ap.add_argument("--node-labels", default="/nonexistent",
                    help="a JSON object: the node's labels (read at each GET; none without it)")
    ap.add_argument("--down-file", default="/nonexistent",
                    help="while this file exists, every request gets the status it holds "
                         "(503 when empty)")
    ap.add_argument("--delay-file", default="/nonexistent",
                    help="while this file exists, every answer waits the seconds it holds")
    ap.add_argument("--client-ca", help="verify client certificates against this CA; "
                    "a verified certificate's CN is the user, and needs no token")
    ap.add_argument("--log-auth", action="store_true",
                    help="log each request's certificate user and bearer token")
    ap.add_argument("--port", type=int, default=0,
                    help="the port to listen on (0: any); a restart may take its old one")
    ap.add_argument("--bookmark-interval", type=float, default=5.0,
                    help="seconds between BOOKMARK events on a watch that allows them")
    ap.add_argument("--watch-timeout", type=float, default=1800.0,
                    help="a watch's end when it gives no timeoutSeconds")
    ap.add_argument("--gone-status", action="store_true",
                    help="answer a watch from a compacted version with HTTP 410, not an "
                         "ERROR event")
    ap.add_argument("--foreign-clients", action="store_true",
                    help="let clients other than qoslet list and watch pods")
    opts = ap.parse_args()
    global STORE
    STORE = Store(opts.pods)
    signal.signal(signal.SIGUSR1, lambda *_: SIGNALS.update(compact=SIGNALS["compact"] + 1))
    signal.signal(signal.SIGUSR2, lambda *_: SIGNALS.update(drop=SIGNALS["drop"] + 1))

    class Server(ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in opts.bind else socket.AF_INET
        daemon_threads = True
        allow_reuse_address = True  # a restarted server takes its port again at once

        def handle_error(self, request, client_address):
            # A client that gave up on a delayed answer is expected; the rest is a bug here.
            if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
                super().handle_error(request, client_address)

    srv = Server((opts.bind, opts.port), Handler)
    srv.opts = opts
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(opts.cert, opts.key)
    if opts.client_ca:
        ctx.load_verify_locations(opts.client_ca)
        ctx.verify_mode = ssl.CERT_OPTIONAL
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = opts.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, opts.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
