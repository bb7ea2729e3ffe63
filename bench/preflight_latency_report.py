#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""preflight_latency_report.py WORK FILE: the section of BENCHMARKS.md that
bench/preflight_latency.sh measures (what `fragctl preflight` costs: its latency under
bench/load.sh's load, and fragd's CPU with and without one request a second), from its work
directory; written between <!-- preflight-latency:begin --> and <!-- preflight-latency:end -->
of FILE and printed.

Latency: per round the p50 and p99 of the whole command and of the socket round trip; the goal
p99 < 50 ms gets a verdict with a 95% bootstrap interval of the median of the rounds' p99
(bench/verdict.py). CPU: per pair the difference with - without of fragd's CPU (main thread,
whole process) in points of one core; the goal, at most 0.01 points, gets the interval of the
median difference over the pairs."""
import functools
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import measured_on, positional, publish, read_env, read_runs, section_head, table  # noqa: E402
from verdict import Verdict, median, quantile, spread  # noqa: E402

# This report's cells keep the range of equal values: '0 (0–0)'.
ranged = functools.partial(spread, range_when_equal=True)

CPU_GOAL = 0.01  # points of one core
P99_GOAL = 50.0  # ms


def timer_rows(path):
    """-> {kind: [ms]} of the ok requests, and the count of the others."""
    out, bad = {}, 0
    with open(path) as f:
        for line in f:
            kind, _, dur, verdict = line.rstrip("\n").split("\t", 3)
            if verdict != "ok":
                bad += 1
                continue
            out.setdefault(kind, []).append(float(dur) * 1000)
    return out, bad


def pct(ns, wall_ms):
    return 100.0 * ns / (wall_ms * 1e6)


def load_part(work, m):
    """The lines of part 2: preflight's latency under bench/load.sh's load ([] when not run)."""
    if not os.path.isdir(os.path.join(work, "load")):
        return []
    lines = []
    lines += [f"Under load: memory fragmented (`fragmenter --percent {m['percent']}`), fragd with the shipped "
              f"configs/fragd.yaml, {m['rounds']} rounds of {m['seconds']} s per phase, each with bench/load.sh's "
              f"load ({m['scrapers']} concurrent /metrics scrapers by ab, {m['clients']} fragctl clients by "
              "bench/load_clients.py; phase main: status, hist and map --json in turn, control: status and hist) "
              f"and, beside it, every {m['period']} s `fragctl preflight 2MB 1` timed from fork to exit (the whole "
              "command) and then the socket round trip alone (connect, request, answer). Per round p50 and p99; "
              "the row's figures are medians of the rounds' with their range.", "",
              "| phase | requests (ok / not) | command p50, ms | command p99, ms | socket p50, ms | socket p99, ms | "
              "command max, ms | scrapes / client calls in the rounds |",
              "|---|---:|---:|---:|---:|---:|---:|---|"]
    goals = []
    for phase in ("main", "control"):
        dirs = sorted(glob.glob(os.path.join(work, "load", f"{phase}[0-9]*")), key=lambda d: int(re.sub(r"\D", "", d[-3:])))
        if not dirs:
            continue
        per = {"cmd": {"p50": [], "p99": []}, "socket": {"p50": [], "p99": []}}
        ok = bad = 0
        worst = 0.0
        scrapes = calls = call_errors = 0
        reasons = {}
        for d in dirs:
            rows, b = timer_rows(os.path.join(d, "preflight.tsv"))
            bad += b
            for kind in ("cmd", "socket"):
                xs = rows.get(kind, [])
                ok += len(xs)
                if xs:
                    per[kind]["p50"].append(quantile(xs, 0.5))
                    per[kind]["p99"].append(quantile(xs, 0.99))
            worst = max([worst] + rows.get("cmd", []))
            ab = open(os.path.join(d, "ab.out")).read()
            mm = re.search(r"^Complete requests:\s+(\d+)", ab, re.M)
            scrapes += int(mm.group(1)) if mm else 0
            with open(os.path.join(d, "clients.tsv")) as f:
                for line in f:
                    calls += 1
                    if "\terror" in line:
                        call_errors += 1
                        why = re.sub(r"^error: ", "", line.rstrip("\n").split("\t")[-1])[:70]
                        reasons[why] = reasons.get(why, 0) + 1
        lines.append(f"| {phase} | {ok} / {bad} | {ranged(per['cmd']['p50'], '{:.1f}')} | "
                     f"{ranged(per['cmd']['p99'], '{:.1f}')} | {ranged(per['socket']['p50'], '{:.2f}')} | "
                     f"{ranged(per['socket']['p99'], '{:.2f}')} | {worst:.1f} | {scrapes} / {calls} "
                     f"({call_errors} the clients' check failed{': ' + '; '.join(f'{n} {w}' for w, n in reasons.items()) if reasons else ''}) |")
        for kind, what in (("cmd", "`fragctl preflight 2MB 1`, the whole command"), ("socket", "the socket round trip")):
            xs = per[kind]["p99"]
            v = Verdict(xs, median, P99_GOAL, "<", unit="rounds")
            goals.append(f"| {phase} | {what}: p99 < 50 ms (median of the rounds' p99) | {len(xs)} rounds | "
                         f"{v.text('{:.1f}')} |")

    lines += ["", "Goals (bench/verdict.py, 95% bootstrap interval):", "",
              *table(["phase", "goal", "runs", "verdict"], "llll")] + goals
    return lines


def quiet_part(work, m):
    """The lines of part 1: fragd's CPU with and without one request a second ([] when not run)."""
    if not os.path.isdir(os.path.join(work, "quiet")):
        return []
    lines = []
    quiet = os.path.join(work, "quiet")
    burst_path = os.path.join(quiet, "burst.env")
    burst = read_runs(burst_path)[0] if os.path.exists(burst_path) else {}
    pairs = read_runs(os.path.join(quiet, "pairs.txt")) if os.path.exists(os.path.join(quiet, "pairs.txt")) else []
    cpu_rows, diffs_main, diffs_total = [], [], []
    for p in sorted({int(r["pair"]) for r in pairs}):
        arms = {r["arm"]: r for r in pairs if int(r["pair"]) == p}
        if set(arms) != {"with", "without"}:
            continue
        w, wo = arms["with"], arms["without"]
        mw, mwo = pct(int(w["main_ns"]), int(w["wall_ms"])), pct(int(wo["main_ns"]), int(wo["wall_ms"]))
        tw, two = pct(int(w["total_ns"]), int(w["wall_ms"])), pct(int(wo["total_ns"]), int(wo["wall_ms"]))
        diffs_main.append(mw - mwo)
        diffs_total.append(tw - two)
        cpu_rows.append(f"| {p} | {w['requests']} | {mwo:.4f} | {mw:.4f} | {mw - mwo:+.4f} | {two:.4f} | {tw:.4f} | "
                        f"{tw - two:+.4f} |")
    lines += ["", f"On a quiet host (nothing fragmented; fragd with the shipped configs/fragd.yaml, {m['settle']} s after "
              "its first pageblock scan), fragd's CPU from /proc/PID/task/TID/schedstat (ns on a CPU), in % of one "
              f"core: {len(cpu_rows)} pairs of {m['cpu_seconds']} s windows, one without a request and one with "
              "`fragctl preflight 2MB 1` once a second, their order alternating pair by pair.", "",
              *table(["pair", "requests", "main thread without", "with", "difference", "whole process without",
                      "with", "difference"], "rrrrrrrr")] + cpu_rows
    if burst:
        n = int(burst["requests"])
        main_us = int(burst["main_ns"]) / n / 1000
        total_us = int(burst["total_ns"]) / n / 1000
        lines += ["", f"One request's own cost: {n} preflight requests back to back over the socket (one connection "
                  f"each; {burst['bad']} not ok) took {int(burst['wall_ms']) / 1000:.1f} s and "
                  f"{int(burst['main_ns']) / 1e6:.1f} ms of fragd's main thread ({int(burst['total_ns']) / 1e6:.1f} ms "
                  f"of the whole process): **{main_us:.1f} µs of the main thread per request** ({total_us:.1f} µs in "
                  f"all), so one a second is {total_us / 1e4:.4f}% of a core."]
    cpu_goals = []
    for what, xs in (("main thread", diffs_main), ("whole process", diffs_total)):
        v = Verdict(xs, median, CPU_GOAL, "<=", unit="pairs")
        cpu_goals.append(f"| {what}: with − without one preflight a second, points of a core (median of the "
                         f"pairs) | <= {CPU_GOAL} | {v.text('{:+.4f}')} |")
    lines += ["", *table(["goal", "goal value", "verdict"], "lll")] + cpu_goals
    return lines


def main(work, out_path):
    m = read_env(os.path.join(work, "meta.env"))
    lines = section_head("What preflight costs: latency under load, fragd's CPU", m)
    lines += [f"Produced by: `bash bench/preflight_latency.sh` ({m.get('minutes', '?')} min). "
              + measured_on(m, cpu_model=False) + f"; ab {m['ab_version']}.", ""]

    lines += load_part(work, m) + quiet_part(work, m) + baseline_part(work, m)
    publish(out_path, "preflight-latency", lines)


def baseline_part(work, m):
    """The lines of part 3: this build against a fragd without preflight, no request."""
    path = os.path.join(work, "baseline", "pairs.txt")
    if not os.path.exists(path):
        return []
    pairs = read_runs(path)
    rows, d_main, d_total = [], [], []
    for p in sorted({int(r["pair"]) for r in pairs}):
        arms = {r["arm"]: r for r in pairs if int(r["pair"]) == p}
        if set(arms) != {"this", "baseline"}:
            continue
        t, b = arms["this"], arms["baseline"]
        mt, mb = pct(int(t["main_ns"]), int(t["wall_ms"])), pct(int(b["main_ns"]), int(b["wall_ms"]))
        tt, tb = pct(int(t["total_ns"]), int(t["wall_ms"])), pct(int(b["total_ns"]), int(b["wall_ms"]))
        d_main.append(mt - mb)
        d_total.append(tt - tb)
        rows.append(f"| {p} | {mb:.4f} | {mt:.4f} | {mt - mb:+.4f} | {tb:.4f} | {tt:.4f} | {tt - tb:+.4f} |")
    lines = ["", f"Against a fragd without preflight, ensure and the labels ({m.get('baseline_version', '?')}, binary "
             f"sha256 {m.get('baseline_sha', '?')}, with its own configs/fragd.yaml), on a quiet host: {len(rows)} pairs of "
             f"a fresh fragd of each, {m['settle']} s after its first pageblock scan, then {m['cpu_seconds']} s without "
             "any request; CPU from schedstat, in % of one core, their order alternating pair by pair.", "",
             *table(["pair", "main thread, without the feature", "with it", "difference", "whole process, without",
                     "with", "difference"], "rrrrrrr")] + rows
    lines += ["", *table(["goal", "goal value", "verdict"], "lll")]
    for what, xs in (("main thread", d_main), ("whole process", d_total)):
        v = Verdict(xs, median, CPU_GOAL, "<=", unit="pairs")
        lines.append(f"| {what}: this build − the build without preflight, no request, points of a core (median of "
                     f"the pairs) | <= {CPU_GOAL} | {v.text('{:+.4f}')} |")
    return lines


if __name__ == "__main__":
    main(*positional(2))
