#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/reaction.sh's probe and report.

    reaction.py probe --url URL --socket PATH --pages N --out FILE
    reaction.py report --work DIR --output FILE

probe: just after one of fragd's ticks (the worst moment for a stall: the longest wait for the
next), grows the hugetlb pool by the free 2 MiB blocks plus N pages (a child writes
/proc/sys/vm/nr_hugepages) and times,
from the first rise of /proc/vmstat compact_stall (read every 10 ms), the first scrape (every
50 ms) whose fragd_direct_stall_entries_total{phase="compaction"} rose, and the start of fragd's
first action of trigger demand (its start_unix_ns in the status answer). Writes one JSON object;
exit status 3 when the kernel stalled fewer than MIN_STALLS times (the run is made again), 1 when
a time is missing after 60 s. The pool is put back to where it was.
report: the section from the runs' JSON (DIR/rROUND-ARM/run.json) and DIR/meta.env.
"""
import glob
import json
import os
import subprocess
import sys
import time
import urllib.request

from benchlib import (control_request, free_2m_blocks, measured_on, prom_samples, prom_sum, publish,
                      read_env, read_int, read_vmstat, required_args, section_head, table)
from verdict import Verdict, median, median_difference, spread

HP = "/proc/sys/vm/nr_hugepages"
TIMEOUT_S = 60
MIN_STALLS = 10  # a burst with fewer is run again (exit status 3)


def compact_stall():
    return read_vmstat()["compact_stall"]  # KeyError: a kernel without CONFIG_COMPACTION


def scrape(url):
    with urllib.request.urlopen(url, timeout=2) as r:
        return prom_samples(r.read().decode())


def fragd_stalls(url):
    s = scrape(url)
    return prom_sum(s, "fragd_direct_stall_entries_total", phase="compaction"), prom_sum(s, "fragd_actions_total")


def after_a_tick(url):
    """Returns just after fragd's next tick: when fragd_collector_tick_seconds (the last tick's
    duration) changes, read every 10 ms. A stall then waits the longest for the next tick."""
    last = prom_sum(scrape(url), "fragd_collector_tick_seconds")
    end = time.monotonic() + 5
    while time.monotonic() < end:
        time.sleep(0.01)
        if prom_sum(scrape(url), "fragd_collector_tick_seconds") != last:
            return time.time_ns()
    sys.exit("fragd_collector_tick_seconds did not change in 5 s: no tick seen")


def demand_starts(sock):
    """-> the start_unix_ns of the finished actions of trigger demand, by id."""
    st = json.loads(control_request(sock, b'{"cmd":"status"}\n'))
    return {a["id"]: a.get("start_unix_ns") for a in st.get("actions", []) if a.get("trigger") == "demand"}


def probe(a):
    pool0 = read_int(HP)
    k0 = compact_stall()
    f0, acts0 = fragd_stalls(a.url)
    before = demand_starts(a.socket)
    free = free_2m_blocks()  # more than these, so that a.pages of them need compaction
    t_tick = after_a_tick(a.url)
    t_burst = time.time_ns()
    writer = subprocess.Popen(["sh", "-c", f"echo {pool0 + free + a.pages} > {HP}"])
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
        reached = read_int(HP)
        with open(HP, "w") as f:
            f.write(str(pool0))
    out = {"tick_ns": t_tick, "burst_ns": t_burst, "stall_ns": t_k, "seen_ns": t_seen, "acted_ns": t_act,
           "kernel_stalls": compact_stall() - k0, "free_2m_blocks": free, "asked": free + a.pages,
           "granted": reached - pool0}
    with open(a.out, "w") as f:
        json.dump(out, f)
    if out["kernel_stalls"] < MIN_STALLS:  # the demand trigger wants more than 5 in 5 s
        print(f"the burst stalled {out['kernel_stalls']} times, fewer than {MIN_STALLS}: no demand to act on",
              file=sys.stderr)
        sys.exit(3)
    if None in (t_k, t_seen, t_act):
        sys.exit(f"a time is missing after {TIMEOUT_S} s: {out}")


def delays(run, tick):
    """-> the columns of a run's row: (the kernel's first stall after the tick, seen, the tick that
    published the stall (1: the first after the stall), acted); seconds, seen and acted after the stall."""
    seen, acted = (run["seen_ns"] - run["stall_ns"]) / 1e9, (run["acted_ns"] - run["stall_ns"]) / 1e9
    return (run["stall_ns"] - run["tick_ns"]) / 1e9, seen, int((run["seen_ns"] - run["tick_ns"]) / 1e9 // tick), acted


def report(a):
    m = read_env(os.path.join(a.work, "meta.env"))
    tick = float(m.get("tick_s") or 1)
    runs = {}
    for p in glob.glob(os.path.join(a.work, "r*-*", "run.json")):
        rnd, arm = os.path.basename(os.path.dirname(p))[1:].split("-")
        with open(p) as f:
            runs[(int(rnd), arm)] = delays(json.load(f), tick)
    rounds = sorted({r for r, arm in runs if (r, "head") in runs and (r, "base") in runs})
    if not rounds:
        sys.exit(f"no round with both arms in {a.work}")
    head, base = ([runs[(r, arm)] for r in rounds] for arm in ("head", "base"))
    seen = Verdict([h[2] for h in head], median, 1, "<=", "rounds")
    acted = Verdict([(h[3], b[3]) for h, b in zip(head, base)], median_difference(), (-tick / 2, tick / 2),
                    "within", "rounds")
    lines = section_head("How soon fragd sees a stall and acts on it", m)
    lines += [
        f"Produced by: `bash bench/reaction.sh` ({len(rounds)} rounds; this build against commit {m['base']}, "
        f"binary sha256 {m['base_fragd_sha']}). Each round runs both builds, the order alternating. A run: "
        f"vm.compaction_proactiveness 0, `fragmenter --percent {m['percent']}`, fragd in act mode with only the "
        f"demand trigger (order >= 9, more than 1 stall/s over 5 s; method node), {m['settle_s']} s, then, just "
        "after one of fragd's ticks (seen as `fragd_collector_tick_seconds` changing, read every 10 ms: the stall "
        "that follows waits the longest for the next tick), the hugetlb pool grown by the free 2 MiB blocks plus "
        f"{m['pages']} pages. From the kernel's first direct compaction (/proc/vmstat compact_stall rising, read "
        "every 10 ms): **seen**, the first scrape of /metrics (every 50 ms) whose "
        "`fragd_direct_stall_entries_total{phase=\"compaction\"}` rose; **acted**, the start of fragd's first action "
        "of trigger demand (`start_unix_ns` in the status answer).",
        "",
        measured_on(m) + ".",
        "",
        *table(["build", "first stall after a tick", "seen after the first stall", "the tick that showed it",
                "acted after the first stall"], "lrrrr"),
    ]
    ms = lambda x: f"{x * 1000:.0f} ms"  # noqa: E731
    for name, rows in (("this build", head), (m["base"], base)):
        cells = [spread(column, fmt) for column, fmt in zip(zip(*rows), (ms, ms, "{:.0f}", ms))]
        lines.append("| " + " | ".join([name] + cells) + " |")
    lines += [
        "",
        "- A stall in fragd's metrics within one tick: the tick that showed it, counted from the one just before "
        f"the stall (1: the next; the probe's scrape every 50 ms and a tick's own time come on top of the "
        f"{tick:g} s), median {seen.text('{:.0f}')}.",
        f"- The demand trigger's reaction unchanged: this build's median minus {m['base']}'s within half a tick "
        f"either way: {acted.text('{:+.3f}')} s.",
        f"- Runs made again because the kernel stalled fewer than {MIN_STALLS} times in the burst (the trigger "
        f"wants more than 5 in 5 s; order-9 compaction deferred after a burst's failures is ended before each "
        f"run): {m.get('redone', '0')}.",
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
