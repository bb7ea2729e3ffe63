#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fragctl clients of bench/load.sh: N loops, each running fragctl back to back
for SECONDS, and every call timed and checked.

usage: load_clients.py --fragctl PATH --socket PATH --clients N --seconds S --out FILE.tsv
                       [--commands status,hist,map]

Client i runs the commands `status`, `hist`, `map --json` (or those --commands
names) in turn, starting at command i mod 3, so that at any time about a third of
the clients run each.
Every call is one fragctl process (one connection, one request). A call is an
error when fragctl exits non-zero or its output is not what it should be:
  status      a "node N: score S" line and the "programs attached:" list
  hist        "order K (4*2^K KiB): fast F  stalled S  failed X" lines, K in 1..10, or, while
              fragd's allocation counting is off (bpf.allocations: adaptive, the shipped
              config, before a stall), its note and "no allocation of order ..."
  map --json  one JSON object, "ok": true, a scan with zones (their classes, usage and
              counts fragctl itself checks with fragd's reader: a malformed answer is
              a non-zero exit), scanned at most 5 s before
              the request (fragctl map's default --max-age) plus the scan's own time, or
              older with fragd's note that full scans are held to their budget
Writes one line per call: client, command, start (s since the run began),
duration (s), exit status, verdict (ok | error: why). Prints a summary line.
Exit status 0 when every call was ok, 1 otherwise.
"""
import argparse
import asyncio
import json
import re
import sys
import time

ALL_COMMANDS = {"status": ("status",), "hist": ("hist",), "map": ("map", "--json")}
STATUS_NODE = re.compile(r"^node \d+: score \d+", re.M)
HIST_ORDER = re.compile(r"^order (\d+) \((\d+) KiB\): fast \d+  stalled \d+  failed \d+", re.M)
HIST_OFF = re.compile(r"^allocation counting is off now .*\nno allocation of order \d+\.\.\d+$", re.M)


def check(cmd, rc, out, err, started_unix):
    """-> "ok" or "error: why" for one call."""
    if rc != 0:
        first = (err.strip().splitlines() or out.strip().splitlines() or ["(no output)"])[0]
        return f"error: exit {rc}: {first[:160]}"
    if cmd == "status":
        if not STATUS_NODE.search(out):
            return "error: status has no 'node N: score S' line"
        if "programs attached:" not in out:
            return "error: status has no 'programs attached:' list"
        return "ok"
    if cmd == "hist":
        # Orders with allocations since fragd attached: order-1 ones never stop on a live host.
        orders = HIST_ORDER.findall(out)
        if not orders:  # fragd's note that counting is off, or an error
            no_line = "error: hist has no 'order K (N KiB): fast F  stalled S  failed X' line"
            return "ok" if HIST_OFF.search(out) else no_line
        for k, kib in orders:
            if not 1 <= int(k) <= 10 or int(kib) != 4 << int(k):
                return f"error: hist line 'order {k} ({kib} KiB)' is not an order 1..10 of 4 KiB pages"
        return "ok"
    try:
        d = json.loads(out)
    except ValueError as e:
        return f"error: map --json is not JSON: {e}"
    if not isinstance(d, dict) or d.get("ok") is not True:
        return f"error: map --json answer not ok: {str(d)[:160]}"
    scan = d.get("scan")
    if not scan or not scan.get("zones"):
        return f"error: map --json has no scan ({d.get('scan_error', 'no scan_error')})"
    # time_ns: when the scan began (CLOCK_REALTIME). fragd scans anew when its last scan
    # ended more than 5 s before it reads the request, so the scan began at most 5 s plus
    # the scan's own duration before the request was sent (0.5 s of slack for the clocks).
    begin = scan["time_ns"] / 1e9
    oldest = started_unix - 5.0 - scan["duration_ns"] / 1e9 - 0.5
    # Full scans asked for are held to pageblocks.full_scan_budget across all clients: past it,
    # fragd answers from its latest map and its note says so (as tests/integration/load_test.sh).
    if begin < oldest and "full_scan_budget" not in (d.get("note") or ""):
        return (f"error: map scan began {started_unix - begin:.1f} s before the request "
                f"(max age 5 s, scan took {scan['duration_ns'] / 1e9:.2f} s)")
    return "ok"


async def client(i, a, t0, deadline, rows):
    commands = [ALL_COMMANDS[c] for c in a.commands.split(",")]
    k = i % len(commands)
    while time.monotonic() < deadline:
        cmd = commands[k % len(commands)]
        k += 1
        s_unix = time.time()
        s = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            a.fragctl, "--socket", a.socket, *cmd,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
        dur = time.monotonic() - s
        verdict = check(cmd[0], proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"), s_unix)
        rows.append((i, " ".join(cmd), s - t0, dur, proc.returncode, verdict))


async def run(a):
    rows = []
    t0 = time.monotonic()
    deadline = t0 + a.seconds
    await asyncio.gather(*(client(i, a, t0, deadline, rows) for i in range(a.clients)))
    return rows, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fragctl", required=True)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--clients", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--commands", default="status,hist,map",
                    help="the mix, comma-separated, from: status, hist, map (map --json)")
    a = ap.parse_args()
    for c in a.commands.split(","):
        if c not in ALL_COMMANDS:
            ap.error(f"unknown command {c!r} in --commands (known: {', '.join(ALL_COMMANDS)})")
    rows, wall = asyncio.run(run(a))
    rows.sort(key=lambda r: r[2])
    with open(a.out, "w") as f:
        for r in rows:
            f.write("%d\t%s\t%.6f\t%.6f\t%d\t%s\n" % r)
    bad = [r for r in rows if r[5] != "ok"]
    print(f"load_clients: {len(rows)} calls by {a.clients} clients in {wall:.1f} s, {len(bad)} errors")
    for r in bad[:5]:
        print(f"load_clients: client {r[0]} {r[1]} at {r[2]:.1f} s: {r[5]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
