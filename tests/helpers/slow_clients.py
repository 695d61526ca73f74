#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Clients that try to hold an HTTP server's connections (tests/integration/
test_agent_slow_clients.sh).

    slow_clients.py [--seconds S] [--at-once] --group P,127.0.0.2,N,K,KIND [--group ...]

Each group opens K connections from each of N loopback source addresses
(127.0.0.2, 127.0.0.3, ...: all of 127/8 is loopback on Linux, so every
address is a distinct client to the server) to 127.0.0.1:P, and keeps them
as KIND says:

  trickle   a request line, then one header byte every 0.5 s, never ending it
  idle      connects and sends nothing (a client that went silent)
  halfclose half a request line, then shutdown(SHUT_WR): never completes it

A connection the server closes is reopened at the next half-second step
(a real attacker would reopen it), so the server never gets a slot back for
long; with --at-once, as soon as the close is seen, so that a slot freed
is taken back within a millisecond or so (a local process that hammers). After S seconds, prints one
JSON object per group: how many connections were opened, and the lifetimes
(seconds) of those the server closed, so the caller can tell refused ones
(closed at once) from ones cut at a deadline. A client cannot tell when the
server accepted it: a connection waiting in the listen queue counts as
open from its connect.
"""
import argparse
import json
import selectors
import socket
import time


class Conn:
    def __init__(self, group, src):
        self.group = group
        self.src = src
        self.t0 = time.monotonic()
        self.sent = 0
        self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.s.setblocking(False)
        self.s.bind((src, 0))
        try:
            self.s.connect(("127.0.0.1", group["port"]))
        except BlockingIOError:
            pass
        group["opened"] += 1


REQUEST = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: "


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=14)
    ap.add_argument("--at-once", action="store_true",
                    help="reopen a closed connection at once, not at the next step")
    ap.add_argument("--group", action="append", required=True,
                    help="PORT,FIRST_ADDRESS,ADDRESSES,PER_ADDRESS,KIND")
    args = ap.parse_args()
    groups = []
    for spec in args.group:
        port, first, ips, per_ip, kind = spec.split(",")
        if kind not in ("trickle", "idle", "halfclose"):
            ap.error(f"unknown kind {kind}")
        groups.append({"port": int(port), "first": first, "ips": int(ips),
                       "per_ip": int(per_ip), "kind": kind})
    return args.seconds, args.at_once, groups


def main():
    seconds, at_once, groups = parse()
    sel = selectors.DefaultSelector()
    conns = []
    for g in groups:
        g.update(opened=0, lifetimes=[], name=f"{g['kind']}:{g['port']}")
        base = [int(x) for x in g["first"].split(".")]
        g["srcs"] = [".".join(map(str, base[:3] + [base[3] + i])) for i in range(g["ips"])]

    def open_one(g, src):
        c = Conn(g, src)
        conns.append(c)
        sel.register(c.s, selectors.EVENT_READ, c)

    for g in groups:
        for src in g["srcs"]:
            for _ in range(g["per_ip"]):
                open_one(g, src)
    reopen = []
    end = time.monotonic() + seconds
    next_tick = time.monotonic()
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.1):
            c = key.data
            try:
                data = c.s.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            except BlockingIOError:
                continue
            if data:
                continue  # an answer (a refusal page): keep reading until it closes
            c.group["lifetimes"].append(round(time.monotonic() - c.t0, 2))
            sel.unregister(c.s)
            c.s.close()
            conns.remove(c)
            if at_once:
                open_one(c.group, c.src)
            else:
                reopen.append(c)
        now = time.monotonic()
        if now < next_tick:
            continue
        next_tick = now + 0.5
        for c in reopen:
            open_one(c.group, c.src)
        reopen.clear()
        for c in list(conns):
            kind = c.group["kind"]
            try:
                if kind == "trickle":
                    c.s.send(REQUEST if not c.sent else b"a")
                elif kind == "halfclose" and not c.sent:
                    c.s.send(b"GET /met")
                    c.s.shutdown(socket.SHUT_WR)
                c.sent += 1
            except (BlockingIOError, OSError):
                pass  # not connected yet, or closed: the selector reports it
    for g in groups:
        alive = [round(time.monotonic() - c.t0, 2) for c in conns if c.group is g]
        print(json.dumps({"group": g["name"], "opened": g["opened"], "closed": g["lifetimes"],
                          "open_at_end": alive}))


if __name__ == "__main__":
    main()
