#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""json_vocab.py DOC VIEW FILE: checks the views' JSON lines against DOC.

DOC is docs/json-output.md: headings "### VIEW: `PATH`" (VIEW a view or
"every view"; PATH a jq path, "." the line; "a cgroup" alone names the cgroup
identity table; "(a cgroup, and:)" includes it), each followed by a table of
| `key` | type | meaning |. FILE holds VIEW's -j lines. Checks, for every
object of every line: each key is documented there with its type, and each
key documented without a condition (", when ...") is present. Also checks
that no key has two types across DOC. Prints every problem; exits 1 if any.
"""
import json
import re
import sys

BASE = {"integer", "number", "string", "boolean", "object", "array"}


def parse_doc(path):
    """{(view, place): {key: (types, required)}} and the identity table."""
    tables, identity, includes = {}, None, {}
    current = None
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^### (.+?): (.*)$", line.rstrip())
        if m:
            view, rest = m.group(1), m.group(2)
            if rest == "a cgroup":
                current = identity = {}
                continue
            pm = re.match(r"^`([^`]+)`(.*)$", rest)
            if not pm:
                raise SystemExit(f"{path}: cannot read heading: {line.strip()}")
            key = ("*" if view == "every view" else view, pm.group(1))
            current = tables.setdefault(key, {})
            includes[key] = "(a cgroup" in pm.group(2)
            continue
        if line.startswith("#"):
            current = None
            continue
        row = re.match(r"^\| `([^`]+)` \| ([^|]+) \|", line)
        if current is not None and row:
            spec = row.group(2).strip()
            required = ", when " not in spec
            spec = spec.split(", when ")[0]
            types = set(t.strip() for t in spec.split(" or "))
            bad = types - BASE - {"null"}
            if bad:
                raise SystemExit(f"{path}: unknown type {bad} for {row.group(1)}")
            current[row.group(1)] = (types, required)
    if identity is None:
        raise SystemExit(f"{path}: no 'a cgroup' table")
    for key, inc in includes.items():
        if inc:
            tables[key] = {**identity, **tables[key]}
    return tables, identity


def type_of(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def spec_for(tables, view, place):
    merged, found = {}, False
    for v in ("*", view):
        if (v, place) in tables:
            merged.update(tables[(v, place)])
            found = True
    return merged if found else None


def check(tables, view, place, obj, where, problems):
    spec = spec_for(tables, view, place)
    if spec is None:
        problems.append(f"{where}: no table for {view} `{place}`")
        return
    for key, val in obj.items():
        if key not in spec:
            problems.append(f"{where}: key '{key}' is not documented for {view} `{place}`")
            continue
        t = type_of(val)
        types = spec[key][0]
        if not (t in types or (t == "integer" and "number" in types)):
            problems.append(f"{where}: '{key}' is {t}, documented as {' or '.join(sorted(types))}")
            continue
        child = (place if place != "." else "") + "." + key
        if key == "probes" and place == ".":
            for name, probe in val.items():
                check(tables, view, ".probes.*", probe, f"{where}.probes.{name}", problems)
        elif t == "object":
            check(tables, view, child, val, f"{where}.{key}", problems)
        elif t == "array":
            for i, item in enumerate(val):
                if isinstance(item, dict):
                    check(tables, view, child + "[]", item, f"{where}.{key}[{i}]", problems)
    for key, (_, required) in spec.items():
        if required and key not in obj:
            problems.append(f"{where}: documented key '{key}' is missing")


def one_type_per_key(tables, problems):
    seen = {}
    for (view, place), spec in tables.items():
        for key, (types, _) in spec.items():
            base = frozenset(types - {"null"})
            prev = seen.setdefault(key, (base, view, place))
            if prev[0] != base:
                problems.append(f"key '{key}' is {'/'.join(sorted(base))} in {view} `{place}` "
                                f"but {'/'.join(sorted(prev[0]))} in {prev[1]} `{prev[2]}`")


def main():
    doc, view, path = sys.argv[1:4]
    tables, _ = parse_doc(doc)
    problems = []
    one_type_per_key(tables, problems)
    n = 0
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        check(tables, view, ".", json.loads(line), f"{view} line {n}", problems)
    if not n:
        problems.append(f"{path}: no lines")
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
