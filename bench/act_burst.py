#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Timed kernel writes and a settle watch for bench/act.sh. Prints one JSON object on stdout.

    act_burst.py write PATH VALUE
        One write(2) of VALUE to PATH, timed (e.g. 1 to /proc/sys/vm/compact_memory).
    act_burst.py hugetlb COUNT|free
        One write(2) of COUNT to /proc/sys/vm/nr_hugepages, timed; "free" asks for
        MemFree / 2 MiB read just before the write. The pool is read back (a write
        returns success with a short pool), then put back to its starting value
        (untimed). Refuses to run if the pool is not empty at start.
    act_burst.py exec TARGET -- CMD [ARG...]
        Runs CMD (e.g. hugeadm, fragctl pool set) and polls the global 2 MiB pool
        every 5 ms while it runs. If the pool reaches TARGET, wall_ns ends at the
        poll that saw it reach TARGET (not when CMD noticed and exited); otherwise
        at CMD's exit, or at the pool's last change if that came later (a daemon
        that fills the pool in the background). After the exit the pool is watched
        until it reaches TARGET or has not changed for --settle seconds (default
        15). cmd_wall_ns is CMD's own run time. The pool is left as it is.
    act_burst.py settle --url URL --high H [--quiet 3] [--long-quiet 40] [--max 120]
        Watches /proc/vmstat pgmigrate_success every 0.5 s until the kernel's
        compaction has settled: no growth for --quiet seconds with every node's
        fragmentation score (fragd_node_fragmentation_score_percent at URL) at or
        below H, or no growth for --long-quiet seconds, or --max seconds passed.
        last_growth_s is when it last grew (from the start of the watch).

Each burst also reads the compaction counters of /proc/vmstat (compact_stall,
compact_fail, compact_success, pgmigrate_success) right before and right after
its timed part (vmstat_before, vmstat_after): what the burst alone cost.

The task names itself "act_burst" (prctl PR_SET_NAME) before any timed write, so
that a tracer can pick out its allocations by comm.
"""
import argparse
import ctypes
import json
import re
import subprocess
import urllib.request
import sys
import threading
import time

from benchlib import read_columns, read_int, read_vmstat, timed_write

NR_HUGEPAGES = "/proc/sys/vm/nr_hugepages"
COMM = b"act_burst"
PR_SET_NAME = 15


def set_comm():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NAME, ctypes.c_char_p(COMM), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NAME)")


def vmstat():
    v = read_vmstat()
    return {k: v[k] for k in ("compact_stall", "compact_fail", "compact_success", "pgmigrate_success") if k in v}


def cmd_write(args):
    set_comm()
    before = vmstat()
    t0, dt = timed_write(args.path, args.value)
    after = vmstat()
    return {"path": args.path, "value": args.value, "start_ns": t0, "wall_ns": dt,
            "vmstat_before": before, "vmstat_after": after}


def cmd_hugetlb(args):
    start = read_int(NR_HUGEPAGES)
    if start != 0:
        raise RuntimeError(f"vm.nr_hugepages is {start}, not 0: a pool is in use; free it first")
    free_kib = next(int(w[1]) for w in read_columns("/proc/meminfo") if w[:1] == ["MemFree:"])
    if args.count == "free":
        want = free_kib // 2048
    else:
        want = int(args.count)
        if want <= 0:
            raise ValueError(f"COUNT must be > 0 or 'free', got {args.count}")
    set_comm()
    try:
        before = vmstat()
        t0, dt = timed_write(NR_HUGEPAGES, want)
        granted = read_int(NR_HUGEPAGES)
        after = vmstat()
    finally:
        r0 = time.monotonic_ns()
        with open(NR_HUGEPAGES, "w") as f:
            f.write(f"{start}\n")
        reset_ns = time.monotonic_ns() - r0
    return {"requested": want, "granted": granted, "mem_free_kib": free_kib, "start_ns": t0,
            "wall_ns": dt, "reset_ns": reset_ns, "vmstat_before": before, "vmstat_after": after}


def cmd_exec(args):
    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    if not cmd:
        raise ValueError("exec needs a command after --")
    target = args.target
    start_pool = read_int(NR_HUGEPAGES)
    state = {"pool": start_pool, "changed_ns": None, "max": start_pool}
    done = threading.Event()

    def poll():
        while not done.is_set():
            v = read_int(NR_HUGEPAGES)
            if v != state["pool"]:
                state["pool"] = v
                state["changed_ns"] = time.monotonic_ns()
                state["max"] = max(state["max"], v)
            time.sleep(0.005)

    th = threading.Thread(target=poll, daemon=True)
    before = vmstat()
    t0 = time.monotonic_ns()
    th.start()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    exit_ns = time.monotonic_ns()
    # A daemon may still be filling the pool: watch until the target or a quiet spell.
    while state["pool"] < target:
        last = state["changed_ns"] or exit_ns
        if time.monotonic_ns() - max(last, exit_ns) > args.settle * 1e9:
            break
        time.sleep(0.05)
    done.set()
    th.join()
    after = vmstat()
    final = read_int(NR_HUGEPAGES)
    changed = state["changed_ns"]
    if final >= target and changed is not None:
        end_ns = changed  # the moment the target was reached, not when CMD noticed it
    else:
        end_ns = max(exit_ns, changed or exit_ns)
    return {"cmd": cmd, "exit_status": proc.returncode, "stdout": proc.stdout[-2000:],
            "stderr": proc.stderr[-2000:], "requested": target, "start_pool": start_pool,
            "granted": final, "max_pool": state["max"], "start_ns": t0, "wall_ns": end_ns - t0,
            "cmd_wall_ns": exit_ns - t0, "vmstat_before": before, "vmstat_after": after}


SCORE_RE = re.compile(r'^fragd_node_fragmentation_score_percent\{[^}]*node="(\d+)"[^}]*\} (\S+)$', re.M)


def node_scores(url):
    """-> {node: score} from fragd's /metrics; {} when it does not answer."""
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            text = r.read().decode()
    except OSError:
        return {}
    return {int(n): float(v) for n, v in SCORE_RE.findall(text)}


def cmd_settle(args):
    t0 = time.monotonic()
    first = last = read_vmstat()["pgmigrate_success"]
    grew = t0
    scores = {}
    reason = "max"
    while True:
        time.sleep(0.5)
        now = time.monotonic()
        v = read_vmstat()["pgmigrate_success"]
        if v != last:
            last, grew = v, now
        quiet = now - grew
        if quiet >= args.quiet:
            scores = node_scores(args.url)
            if scores and max(scores.values()) <= args.high:
                reason = "score"
                break
        if quiet >= args.long_quiet:
            reason = "quiet"
            break
        if now - t0 >= args.max:
            scores = node_scores(args.url)
            break
    return {"settled": reason != "max", "reason": reason, "high": args.high, "scores": scores,
            "waited_s": round(time.monotonic() - t0, 3), "last_growth_s": round(grew - t0, 3),
            "pgmigrate_start": first, "pgmigrate_end": last}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="op", required=True)
    w = sub.add_parser("write")
    w.add_argument("path")
    w.add_argument("value")
    h = sub.add_parser("hugetlb")
    h.add_argument("count")
    e = sub.add_parser("exec")
    e.add_argument("target", type=int)
    e.add_argument("--settle", type=float, default=15.0)
    e.add_argument("cmd", nargs=argparse.REMAINDER)
    st = sub.add_parser("settle")
    st.add_argument("--url", required=True)
    st.add_argument("--high", type=float, required=True)
    st.add_argument("--quiet", type=float, default=3.0)
    st.add_argument("--long-quiet", type=float, default=40.0)
    st.add_argument("--max", type=float, default=120.0)
    args = ap.parse_args()
    try:
        out = {"write": cmd_write, "hugetlb": cmd_hugetlb, "exec": cmd_exec, "settle": cmd_settle}[args.op](args)
    except (OSError, ValueError, RuntimeError) as ex:
        print(f"act_burst: {args.op}: {ex}", file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
