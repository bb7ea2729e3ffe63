#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Samples a running fragd for bench/load.sh and bench/soak.sh: one JSON line per sample.

usage: procmon.py --pid PID --interval SEC --out FILE [--url URL] [--socket PATH] [--duration SEC]

Each sample, in this order so that the sampler's own connections never show in the fd count:
/proc/PID (VmRSS, VmHWM, open fds, threads, CPU time of the process and of its threads by
class), /proc/sys/vm/nr_hugepages, then with --url one scrape of fragd's /metrics (its time,
whether it is a valid exposition, and the self and act-mode families listed in KEEP), then with
--socket one `status` request on the control socket (the actions fragd reports). Runs until
SIGTERM / SIGINT or --duration; a sample that cannot read /proc/PID ends the run (fragd is gone)
with exit status 3.

Thread classes: "scan" = threads at nice 10 (fragd's pageblock scanner lowers its own priority
to 10; threads it starts inherit it), "main" = the thread whose id is the pid (collector tick,
control socket), "other" = the rest (the action worker, which runs the kernel's compaction in
its own time, and the HTTP workers): the process total minus the two, so that the classes add
up even if a thread has exited.
"""
import argparse
import json
import os
import signal
import sys
import time
import urllib.request

from benchlib import control_request, proc_stat, prom_key

# Families kept from each scrape (every label set).
KEEP = ("fragd_collector_tick_seconds", "fragd_collector_tick_late_max_seconds", "fragd_collector_ticks_missed_total",
        "fragd_actions_total", "fragd_action_duration_seconds_sum", "fragd_action_duration_seconds_count",
        "fragd_action_pages_migrated_total", "fragd_compaction_duration_seconds_sum",
        "fragd_compaction_duration_seconds_count", "fragd_compaction_runs_total",
        "fragd_compaction_budget_used_seconds", "fragd_compaction_budget_limit_seconds",
        "fragd_node_fragmentation_score_percent", "fragd_hugepages", "fragd_scans_total",
        "fragd_scan_duration_seconds", "fragd_policy_node_hot", "fragd_policy_backoff_misses",
        "fragd_collect_errors_total", "fragd_events_dropped_total")


def stat_ticks(path):
    """-> (utime + stime, nice) of one /proc/.../stat file."""
    rest = proc_stat(path)[1]
    return int(rest[11]) + int(rest[12]), int(rest[16])


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        return next((int(line.split()[1]) for line in f if line.startswith(key + ":")), None)


def proc_sample(pid):
    total, _ = stat_ticks(f"/proc/{pid}/stat")
    main = scan = threads = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            ticks, nice = stat_ticks(f"/proc/{pid}/task/{tid}/stat")
        except (FileNotFoundError, ProcessLookupError):
            continue  # exited between listdir and open
        threads += 1
        if int(tid) == pid:
            main = ticks
        elif nice == 10:
            scan += ticks
    return {
        "rss_kib": status_kib(pid, "VmRSS"),
        "hwm_kib": status_kib(pid, "VmHWM"),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": threads,
        "cpu_ticks": total,
        "cpu_main_ticks": main,
        "cpu_scan_ticks": scan,
        "cpu_other_ticks": max(0, total - main - scan),
    }


def parse_exposition(text):
    """-> (kept samples {name{labels}: value}, problems [str]) of a Prometheus text exposition,
    read with python3-prometheus-client's parser: text it refuses, a sample without a TYPE
    line and a missing core family are problems."""
    from prometheus_client.parser import text_string_to_metric_families
    kept, problems, names = {}, [], set()
    if not text.endswith("\n"):
        problems.append("does not end with a newline")
    try:
        for fam in text_string_to_metric_families(text):
            names.add(fam.name)
            if fam.type == "unknown":
                problems.append(f"{fam.name} has no TYPE line before it")
            for name, labels, v in ((x.name, x.labels, x.value) for x in fam.samples):
                if name.startswith(KEEP):
                    kept[prom_key(name, labels)] = v
    except ValueError as e:
        problems.append(f"not a Prometheus exposition: {str(e)[:120]}")
    for family in ("fragd_build_info", "fragd_collector_tick_seconds", "fragd_bpf_program_attached"):
        if family not in names:
            problems.append(f"no {family} family")
    return kept, problems[:5]


def scrape(url):
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            body = r.read().decode()
            code = r.status
    except Exception as e:  # any failure is one failed sample, described
        return {"scrape_s": time.monotonic() - t0, "scrape_ok": False, "scrape_error": str(e)[:200]}
    dt = time.monotonic() - t0
    kept, problems = parse_exposition(body)
    out = {"scrape_s": dt, "scrape_ok": code == 200 and not problems, "metrics": kept}
    if code != 200:
        out["scrape_error"] = f"HTTP {code}"
    elif problems:
        out["scrape_error"] = "; ".join(problems)
    return out


def control_status(path):
    """-> the `status` answer of fragd's control socket (one JSON line each way)."""
    t0 = time.monotonic()
    try:
        ans = json.loads(control_request(path, b'{"cmd":"status"}\n'))
    except Exception as e:
        return {"status_s": time.monotonic() - t0, "status_ok": False, "status_error": str(e)[:200]}
    out = {"status_s": time.monotonic() - t0, "status_ok": bool(ans.get("ok"))}
    if not ans.get("ok"):
        out["status_error"] = str(ans.get("error"))[:200]
    out["actions"] = ans.get("actions") or []
    out["action_running"] = ans.get("action_running")
    pol = ans.get("policy") or {}
    out["budget_used_ns"] = pol.get("budget_used_ns")
    out["pools"] = ans.get("pools") or []
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--interval", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--url")
    ap.add_argument("--socket")
    ap.add_argument("--duration", type=float)
    a = ap.parse_args()
    if a.interval <= 0:
        sys.exit("procmon: --interval must be > 0")

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    t_start = time.monotonic()
    nxt = t_start
    with open(a.out, "a", buffering=1) as out:
        while not stop:
            now = time.monotonic()
            if a.duration is not None and now - t_start > a.duration:
                break
            rec = {"t": now - t_start, "unix": time.time()}
            try:
                rec.update(proc_sample(a.pid))
            except (FileNotFoundError, ProcessLookupError):
                rec["gone"] = True
                out.write(json.dumps(rec) + "\n")
                sys.exit(3)
            try:
                with open("/proc/sys/vm/nr_hugepages") as f:
                    rec["nr_hugepages"] = int(f.read())
            except OSError:
                pass
            if a.url:
                rec.update(scrape(a.url))
            if a.socket:
                rec.update(control_status(a.socket))
            out.write(json.dumps(rec) + "\n")
            # Fixed due times: a slow sample delays the next one, never shifts the grid.
            nxt += a.interval
            while not stop and time.monotonic() < nxt:
                time.sleep(min(0.2, max(0.0, nxt - time.monotonic())))
            if time.monotonic() > nxt + a.interval:
                nxt = time.monotonic()
    return 0


if __name__ == "__main__":
    sys.exit(main())
