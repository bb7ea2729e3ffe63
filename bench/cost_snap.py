#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One snapshot of a running fragd for bench/cost.sh, as one JSON line appended to OUT.

usage: cost_snap.py PID URL OUT

The snapshot: the monotonic and Unix time; utime + stime of the process (/proc/PID/stat,
fields 14 + 15, clock ticks) and of each thread (/proc/PID/task/TID/stat, with its comm
and nice value); the host's CPU time by state (the "cpu" line of /proc/stat), to tell how
quiet the host was; and from one scrape of URL the samples of fragd_scan_* and
fragd_scans_total (empty when fragd does not export them). Exit status 1 when /proc/PID is
gone or the scrape fails.
"""
import json
import os
import sys
import time
import urllib.request

import benchlib

KEEP = ("fragd_scan_cpu_seconds_total", "fragd_scan_pageblocks_read_total", "fragd_scans_total")


def main():
    pid, url, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    snap = {"mono": time.monotonic(), "unix": time.time(), "clk_tck": os.sysconf("SC_CLK_TCK")}
    try:
        _, f = benchlib.proc_stat(f"/proc/{pid}/stat")
        snap["proc_ticks"] = int(f[11]) + int(f[12])
        snap["threads"] = threads = []
        for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
            try:
                comm, t = benchlib.proc_stat(f"/proc/{pid}/task/{tid}/stat")
            except (FileNotFoundError, ProcessLookupError):
                continue  # ended between listdir and open
            threads.append({"tid": int(tid), "comm": comm, "ticks": int(t[11]) + int(t[12]), "nice": int(t[16])})
    except (FileNotFoundError, ProcessLookupError):
        sys.exit(f"cost_snap: /proc/{pid} is gone")
    with open("/proc/stat") as f:
        snap["host_cpu"] = [int(x) for x in f.readline().split()[1:]]
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            text = r.read().decode()
    except OSError as e:
        sys.exit(f"cost_snap: scrape {url}: {e}")
    snap["metrics"] = {benchlib.prom_key(n, l): v for n, l, v in benchlib.prom_samples(text) if n.startswith(KEEP)}
    with open(out, "a") as o:
        o.write(json.dumps(snap) + "\n")


if __name__ == "__main__":
    main()
