#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A stand-in for the Kubernetes API server in integration tests (stdlib only).

Serves HTTPS with the certificate it is given and checks every request the
way the API reference describes it:
  GET  /api/v1/pods?fieldSelector=spec.nodeName=NODE  -> the fixture's pods on NODE
  POST /api/v1/namespaces/NS/pods/NAME/eviction       -> the next scripted status
Each request must carry "Authorization: Bearer <token>" with the token file's
content at that moment (so a client that caches a rotated token gets 401),
"Accept: application/json" and a qoslet User-Agent; an eviction must send
Content-Type application/json and a policy/v1 Eviction naming the same pod with
a UID precondition. A request that breaks a rule gets 400 (401 for the token),
and the rule it broke goes into the log: one JSON object a line with method,
path, status, violations and the parsed body.

The eviction script is a file of statuses (201, 200, 429, 404, 500), one a
line, consumed from the top; with the file empty the answer is 500. The
chosen port is written to --port-file once the server listens.
"""
import argparse
import json
import os
import re
import socket
import ssl
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EVICT_PATH = re.compile(r"^/api/v1/namespaces/([a-z0-9.-]+)/pods/([a-z0-9.-]+)/eviction$")
MAX_BODY = 64 * 1024
LOCK = threading.Lock()


def status_body(code, reason, message, details=None):
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "code": code,
            "status": "Success" if code < 400 else "Failure"}
    if code >= 400:
        body.update(reason=reason, message=message)
    if details:
        body["details"] = details
    return body


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as libcurl reuses connections
    server_version = "kube-api-test"

    def log_message(self, fmt, *args):  # the JSON log below replaces stderr chatter
        pass

    def record(self, status, violations, body):
        entry = {"method": self.command, "path": self.path, "status": status,
                 "violations": violations, "body": body}
        with LOCK, open(self.server.opts.log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def reply(self, status, doc, violations, body=None):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.record(status, violations, body)

    def common_violations(self):
        v = []
        with open(self.server.opts.token_file, encoding="utf-8") as f:
            token = f.read().strip()
        if self.headers.get("Authorization") != "Bearer " + token:
            v.append("token")
        if self.headers.get("Accept") != "application/json":
            v.append("accept")
        if not (self.headers.get("User-Agent") or "").startswith("qoslet/"):
            v.append("user-agent")
        return v

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

    def refuse(self, v, body=None):
        if "token" in v:
            self.reply(401, status_body(401, "Unauthorized", "Unauthorized"), v, body)
        else:
            self.reply(400, status_body(400, "BadRequest", "violations: " + ",".join(v)),
                       v, body)

    def do_GET(self):
        v = self.common_violations()
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/api/v1/pods":
            self.reply(404, status_body(404, "NotFound", "the server could not find it"),
                       v + ["unexpected-path"])
            return
        try:
            query = urllib.parse.parse_qs(url.query, strict_parsing=True)
        except ValueError:  # empty or malformed query
            query = {}
        sel = query.get("fieldSelector", [])
        if len(sel) != 1 or not sel[0].startswith("spec.nodeName=") or len(query) != 1:
            v.append("field-selector")
        if self.headers.get("Content-Length") not in (None, "0"):
            v.append("get-with-body")
        if v:
            self.refuse(v)
            return
        node = sel[0][len("spec.nodeName="):]
        with open(self.server.opts.pods, encoding="utf-8") as f:
            pods = json.load(f)
        pods["items"] = [p for p in pods["items"] if p.get("spec", {}).get("nodeName") == node]
        self.reply(200, pods, v)

    def do_POST(self):
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
            doc = status_body(code, "InternalError", "scripted failure")
        self.reply(code, doc, v, body)

    def do_method_not_allowed(self):
        self.reply(405, status_body(405, "MethodNotAllowed", "method not allowed"),
                   ["unexpected-method"])

    do_PUT = do_PATCH = do_DELETE = do_method_not_allowed

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
    ap.add_argument("--pods", required=True, help="PodList JSON with spec.nodeName set")
    ap.add_argument("--evict-script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    opts = ap.parse_args()

    class Server(ThreadingHTTPServer):
        address_family = socket.AF_INET6 if ":" in opts.bind else socket.AF_INET
        daemon_threads = True

    srv = Server((opts.bind, 0), Handler)
    srv.opts = opts
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(opts.cert, opts.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = opts.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, opts.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
