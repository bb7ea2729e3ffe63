#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The NFD labels of bench/labels.sh, polled.

usage: labels_poll.py --fragctl PATH --socket PATH --file PATH --seconds S --interval S --out FILE

Every --interval seconds for --seconds, one JSON line in --out: {"t": seconds since the start,
"labels": {name: value} of the feature file's name=value lines (null when the file is missing),
"raw": the values the labels are bucketed from, as fragd answers them now: "2m" and "1g" (free +
makeable of `fragctl preflight 2MB 1 --json` and `1GB 1 --json`) and "score" (the highest node
score of `fragctl status --json`)}. A fragctl call that fails leaves its value null."""
import json
import subprocess
import time

from benchlib import required_args


def ask(fragctl, socket, *args):
    try:
        out = subprocess.run([fragctl, "--socket", socket, *args, "--json"], capture_output=True, timeout=10).stdout
        return json.loads(out)
    except (subprocess.TimeoutExpired, json.JSONDecodeError, OSError):
        return None


def labels(path):
    try:
        with open(path) as f:
            return dict(line.strip().split("=", 1) for line in f if "=" in line and not line.startswith("#"))
    except FileNotFoundError:
        return None


def main():
    a = required_args(__doc__.split("\n")[0], "--fragctl", "--socket", "--file", ("--seconds", float),
                      ("--interval", float), "--out")
    t0 = time.monotonic()
    n = 0
    with open(a.out, "a", buffering=1) as out:
        while (t := time.monotonic() - t0) <= a.seconds:
            raw = {}
            for key, size in (("2m", "2MB"), ("1g", "1GB")):
                j = ask(a.fragctl, a.socket, "preflight", size, "1")
                raw[key] = j["free"] + j["makeable"] if j else None
            st = ask(a.fragctl, a.socket, "status")
            raw["score"] = max((nd.get("score") or 0 for nd in st["nodes"]), default=None) if st else None
            out.write(json.dumps({"t": round(t, 2), "labels": labels(a.file), "raw": raw}) + "\n")
            n += 1
            time.sleep(max(0.0, t0 + n * a.interval - time.monotonic()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
