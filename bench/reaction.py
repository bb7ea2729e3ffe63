#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/reaction.sh's probe and report.

    reaction.py probe --url URL --socket PATH --pages N --out FILE
    reaction.py report --work DIR --output FILE

probe: grows the hugetlb pool by N pages (a child writes /proc/sys/vm/nr_hugepages) and times,
from the first rise of /proc/vmstat compact_stall (read every 10 ms), the first scrape (every
50 ms) whose fragd_direct_stall_entries_total{phase="compaction"} rose, and the start of fragd's
first action of trigger demand (its start_unix_ns in the status answer). Writes one JSON object;
exit status 1 when a time is missing after 60 s. The pool is put back to where it was.
report: the section from the runs' JSON (DIR/rROUND-ARM/run.json) and DIR/meta.env.
"""
import glob
import json
import os
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (control_request, measured_on, prom_samples, prom_sum, publish, read_env,  # noqa: E402
                      required_args, section_head)
from verdict import Verdict, median, median_difference, spread  # noqa: E402

HP = "/proc/sys/vm/nr_hugepages"
TIMEOUT_S = 60


def compact_stall():
    with open("/proc/vmstat") as f:
        for line in f:
            if line.startswith("compact_stall "):
                return int(line.split()[1])
    sys.exit("/proc/vmstat has no compact_stall: a kernel without CONFIG_COMPACTION")


def fragd_stalls(url):
    with urllib.request.urlopen(url, timeout=2) as r:
        s = prom_samples(r.read().decode())
    return prom_sum(s, "fragd_direct_stall_entries_total", phase="compaction"), prom_sum(s, "fragd_actions_total")


def demand_starts(sock):
    """-> the start_unix_ns of the finished actions of trigger demand, by id."""
    st = json.loads(control_request(sock, b'{"cmd":"status"}\n'))
    return {a["id"]: a.get("start_unix_ns") for a in st.get("actions", []) if a.get("trigger") == "demand"}


def probe(a):
    with open(HP) as f:
        pool0 = int(f.read())
    k0 = compact_stall()
    f0, acts0 = fragd_stalls(a.url)
    before = demand_starts(a.socket)
    t_burst = time.time_ns()
    writer = subprocess.Popen(["sh", "-c", f"echo {pool0 + a.pages} > {HP}"])
    t_k = t_seen = t_act = None
    next_scrape = 0.0
    end = time.monotonic() + TIMEOUT_S
    try:
        while time.monotonic() < end and t_act is None:
            now = time.time_ns()
            if t_k is None and compact_stall() > k0:
                t_k = now
            if time.monotonic() >= next_scrape:
                next_scrape = time.monotonic() + 0.05
                stalls, acts = fragd_stalls(a.url)
                if t_seen is None and stalls > f0:
                    t_seen = time.time_ns()
                if acts > acts0:  # an action ended: its start is in the status answer
                    new = {i: t for i, t in demand_starts(a.socket).items() if i not in before and t}
                    t_act = min(new.values()) if new else None
            time.sleep(0.01)
    finally:
        writer.wait()
        with open(HP, "w") as f:
            f.write(str(pool0))
    out = {"burst_ns": t_burst, "stall_ns": t_k, "seen_ns": t_seen, "acted_ns": t_act,
           "kernel_stalls": compact_stall() - k0, "pages": a.pages}
    with open(a.out, "w") as f:
        json.dump(out, f)
    if None in (t_k, t_seen, t_act):
        sys.exit(f"a time is missing after {TIMEOUT_S} s: {out}")


def delays(run):
    """-> (seen, acted) in seconds after the kernel's first stall."""
    return ((run["seen_ns"] - run["stall_ns"]) / 1e9, (run["acted_ns"] - run["stall_ns"]) / 1e9)


def report(a):
    m = read_env(os.path.join(a.work, "meta.env"))
    runs = {}
    for p in glob.glob(os.path.join(a.work, "r*-*", "run.json")):
        rnd, arm = os.path.basename(os.path.dirname(p))[1:].split("-")
        with open(p) as f:
            runs[(int(rnd), arm)] = delays(json.load(f))
    rounds = sorted({r for r, arm in runs if (r, "head") in runs and (r, "base") in runs})
    if not rounds:
        sys.exit(f"no round with both arms in {a.work}")
    tick = float(m.get("tick_s") or 1)
    head = [runs[(r, "head")] for r in rounds]
    base = [runs[(r, "base")] for r in rounds]
    ms = lambda x: f"{x * 1000:.0f} ms"  # noqa: E731
    seen = Verdict([h[0] for h in head], median, tick, "<=", "rounds")
    acted = Verdict([(h[1], b[1]) for h, b in zip(head, base)], median_difference(), (-tick / 2, tick / 2),
                    "within", "rounds")
    lines = section_head("How soon fragd sees a stall and acts on it", m)
    lines += [
        f"Produced by: `bash bench/reaction.sh` ({len(rounds)} rounds; this build against commit {m['base']}, "
        f"binary sha256 {m['base_fragd_sha']}). Each round runs both builds, the order alternating. A run: "
        "vm.compaction_proactiveness 0, `fragmenter --percent "
        f"{m['percent']}`, fragd in act mode with only the demand trigger (order >= 9, more than 1 stall/s over 5 s; "
        f"method node), {m['settle_s']} s, then the hugetlb pool grown by {m['pages']} pages. From the kernel's "
        "first direct compaction (/proc/vmstat compact_stall rising, read every 10 ms): **seen**, the first scrape "
        "of /metrics (every 50 ms) whose `fragd_direct_stall_entries_total{phase=\"compaction\"}` rose; **acted**, "
        "the start of fragd's first action of trigger demand (`start_unix_ns` in the status answer).",
        "",
        measured_on(m) + ".",
        "",
        "| build | seen after the first stall | acted after the first stall |",
        "|---|---:|---:|",
        f"| this build | {spread([h[0] for h in head], ms)} | {spread([h[1] for h in head], ms)} |",
        f"| {m['base']} | {spread([b[0] for b in base], ms)} | {spread([b[1] for b in base], ms)} |",
        "",
        f"- A stall in fragd's metrics within one tick ({tick:g} s): median {seen.text('{:.3f}')} s.",
        f"- The demand trigger's reaction unchanged: this build's median minus {m['base']}'s within half a tick "
        f"either way: {acted.text('{:+.3f}')} s.",
    ]
    publish(a.output, "reaction", lines)


if __name__ == "__main__":
    cmd = sys.argv.pop(1) if len(sys.argv) > 1 else ""
    if cmd == "probe":
        probe(required_args(None, "--url", "--socket", ("--pages", int), "--out"))
    elif cmd == "report":
        report(required_args(None, "--work", "--output"))
    else:
        sys.exit(__doc__)
