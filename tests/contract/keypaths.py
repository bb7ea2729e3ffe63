#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Key paths of fragctl's --json output, and their check against tests/contract/fragctl-json.txt.

  keypaths.py paths COMMAND < output          print the key paths of one command's output
  keypaths.py check LIST COMMAND < output     compare them with the list's lines of COMMAND

A path names where a value sits: `.nodes[].zones[].score` is the "score" of every zone of every
node; `[]` stands for every element of an array. A list line is `COMMAND PATH [optional]`; a path
marked optional may be absent (it appears only in some states: a warning, a detached program, a
pool action); every other path of the command must appear, and no path outside the list may. A
path ending in `{}` is an object whose keys are data (migratetype names), not protocol: its values
are `PATH{}`. The output may hold several JSON documents one after the other (JSON lines).
"""
import json
import sys


def documents(text):
    dec, i, n = json.JSONDecoder(), 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return
        doc, i = dec.raw_decode(text, i)
        yield doc


def paths(doc, maps=frozenset()):
    out = set()

    def walk(v, p):
        if isinstance(v, dict):
            if p + "{}" in maps:
                out.add(p + "{}")
                for x in v.values():
                    walk_value(x, p + "{}")
                return
            for k, x in v.items():
                out.add(p + "." + k)
                walk(x, p + "." + k)
        elif isinstance(v, list):
            for x in v:
                out.add(p + "[]")
                walk(x, p + "[]")

    def walk_value(v, p):
        if isinstance(v, (dict, list)):
            walk(v, p)

    walk(doc, "")
    return out


def read_list(path, command):
    want, optional = set(), set()
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith("#") or f[0] != command:
            continue
        want.add(f[1])
        if len(f) > 2 and f[2] == "optional":
            optional.add(f[1])
    return want, optional


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "paths":
        got = set()
        for d in documents(sys.stdin.read()):
            got |= paths(d)
        for p in sorted(got):
            print(sys.argv[2], p)
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        listed, optional = read_list(sys.argv[2], sys.argv[3])
        if not listed:
            print(f"{sys.argv[2]} lists no path of '{sys.argv[3]}'", file=sys.stderr)
            return 1
        maps = frozenset(p for p in listed if p.endswith("{}"))
        got = set()
        docs = 0
        for d in documents(sys.stdin.read()):
            got |= paths(d, maps)
            docs += 1
        if docs == 0:
            print(f"'{sys.argv[3]}' printed no JSON", file=sys.stderr)
            return 1
        extra = sorted(got - listed)
        missing = sorted(listed - optional - got)
        for p in extra:
            print(f"{sys.argv[3]} {p}: printed, but not in the list", file=sys.stderr)
        for p in missing:
            print(f"{sys.argv[3]} {p}: in the list, but not printed", file=sys.stderr)
        return 1 if extra or missing else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
