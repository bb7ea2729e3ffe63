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
import os
import re

from benchlib import (ab_summary, goal_table, measured_on, numbered_dirs, positional, publish,
                      read_env, read_runs, section_head, table)
from verdict import Verdict, median, quantile, ranged

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


def load_part(work, m):
    """The lines of part 2: preflight's latency under bench/load.sh's load ([] when not run)."""
    if not os.path.isdir(os.path.join(work, "load")):
        return []
    rows, goals = [], []
    for phase in ("main", "control"):
        dirs = numbered_dirs(os.path.join(work, "load"), phase)
        if not dirs:
            continue
        p50, p99 = {"cmd": [], "socket": []}, {"cmd": [], "socket": []}  # per round
        ok = bad = scrapes = calls = 0
        worst = 0.0
        reasons = {}  # the clients' failed checks by their message
        for d in dirs:
            ms, b = timer_rows(os.path.join(d, "preflight.tsv"))
            bad += b
            for kind in p50:
                xs = ms.get(kind, [])
                ok += len(xs)
                if xs:
                    p50[kind].append(quantile(xs, 0.5))
                    p99[kind].append(quantile(xs, 0.99))
            worst = max([worst] + ms.get("cmd", []))
            scrapes += int(ab_summary(open(os.path.join(d, "ab.out")).read())["complete"] or 0)
            with open(os.path.join(d, "clients.tsv")) as f:
                for line in f:
                    calls += 1
                    if "\terror" in line:
                        why = re.sub(r"^error: ", "", line.rstrip("\n").split("\t")[-1])[:70]
                        reasons[why] = reasons.get(why, 0) + 1
        failed = ": " + "; ".join(f"{n} {w}" for w, n in reasons.items()) if reasons else ""
        rows.append([phase, f"{ok} / {bad}", ranged(p50["cmd"], "{:.1f}"), ranged(p99["cmd"], "{:.1f}"),
                     ranged(p50["socket"], "{:.2f}"), ranged(p99["socket"], "{:.2f}"), f"{worst:.1f}",
                     f"{scrapes} / {calls} ({sum(reasons.values())} the clients' check failed{failed})"])
        for kind, what in (("cmd", "`fragctl preflight 2MB 1`, the whole command"),
                           ("socket", "the socket round trip")):
            goals.append([phase, f"{what}: p99 < 50 ms (median of the rounds' p99)", f"{len(p99[kind])} rounds",
                          Verdict(p99[kind], median, P99_GOAL, "<", unit="rounds").text("{:.1f}")])
    return [f"Under load: memory fragmented (`fragmenter --percent {m['percent']}`), fragd with the shipped "
            f"configs/fragd.yaml, {m['rounds']} rounds of {m['seconds']} s per phase, each with bench/load.sh's "
            f"load ({m['scrapers']} concurrent /metrics scrapers by ab, {m['clients']} fragctl clients by "
            "bench/load_clients.py; phase main: status, hist and map --json in turn, control: status and hist) "
            f"and, beside it, every {m['period']} s `fragctl preflight 2MB 1` timed from fork to exit (the whole "
            "command) and then the socket round trip alone (connect, request, answer). Per round p50 and p99; "
            "the row's figures are medians of the rounds' with their range.", "",
            *table(["phase", "requests (ok / not)", "command p50, ms", "command p99, ms", "socket p50, ms",
                    "socket p99, ms", "command max, ms", "scrapes / client calls in the rounds"], "lrrrrrrl", rows),
            "", *goal_table(["phase", "goal", "runs", "verdict"], goals,
                            "Goals (bench/verdict.py, 95% bootstrap interval):")]


def cpu_pairs(path, arms):
    """-> [(pair, its run of arms[0], of arms[1])] of the pairs in path that ran both arms, each run
    with "main" and "total": its main thread's and the whole process's CPU in % of one core."""
    runs = read_runs(path) if os.path.exists(path) else []
    out = []
    for p in sorted({int(r["pair"]) for r in runs}):
        by_arm = {r["arm"]: r for r in runs if int(r["pair"]) == p}
        if set(by_arm) != set(arms):
            continue
        for r in by_arm.values():
            r["main"], r["total"] = (100.0 * int(r[k]) / (int(r["wall_ms"]) * 1e6) for k in ("main_ns", "total_ns"))
        out.append((p, by_arm[arms[0]], by_arm[arms[1]]))
    return out


def cpu_cells(a, b):
    """b's CPU, a's and a − b, of the main thread then of the whole process."""
    return [cell for k in ("main", "total") for cell in (f"{b[k]:.4f}", f"{a[k]:.4f}", f"{a[k] - b[k]:+.4f}")]


def cpu_goals(pairs, what):
    """The goals that a − b of every pair, main thread and whole process, is at most CPU_GOAL."""
    return ["", *goal_table(["goal", "goal value", "verdict"], [
        [f"{name}: {what}, points of a core (median of the pairs)", f"<= {CPU_GOAL}",
         Verdict([a[k] - b[k] for _, a, b in pairs], median, CPU_GOAL, "<=", unit="pairs").text("{:+.4f}")]
        for k, name in (("main", "main thread"), ("total", "whole process"))])]


def quiet_part(work, m):
    """The lines of part 1: fragd's CPU with and without one request a second ([] when not run)."""
    quiet = os.path.join(work, "quiet")
    if not os.path.isdir(quiet):
        return []
    pairs = cpu_pairs(os.path.join(quiet, "pairs.txt"), ("with", "without"))
    lines = ["", "On a quiet host (nothing fragmented; fragd with the shipped configs/fragd.yaml, "
             f"{m['settle']} s after its first pageblock scan), fragd's CPU from /proc/PID/task/TID/schedstat "
             f"(ns on a CPU), in % of one core: {len(pairs)} pairs of {m['cpu_seconds']} s windows, one without a "
             "request and one with `fragctl preflight 2MB 1` once a second, their order alternating pair by pair.",
             "",
             *table(["pair", "requests", "main thread without", "with", "difference", "whole process without",
                     "with", "difference"], "rrrrrrrr", [[p, w["requests"], *cpu_cells(w, wo)] for p, w, wo in pairs])]
    if os.path.exists(os.path.join(quiet, "burst.env")):
        burst = read_runs(os.path.join(quiet, "burst.env"))[0]
        n = int(burst["requests"])
        main_us, total_us = (int(burst[k]) / n / 1000 for k in ("main_ns", "total_ns"))
        lines += ["", f"One request's own cost: {n} preflight requests back to back over the socket (one connection "
                  f"each; {burst['bad']} not ok) took {int(burst['wall_ms']) / 1000:.1f} s and "
                  f"{int(burst['main_ns']) / 1e6:.1f} ms of fragd's main thread ({int(burst['total_ns']) / 1e6:.1f} ms "
                  f"of the whole process): **{main_us:.1f} µs of the main thread per request** ({total_us:.1f} µs in "
                  f"all), so one a second is {total_us / 1e4:.4f}% of a core."]
    return lines + cpu_goals(pairs, "with − without one preflight a second")


def baseline_part(work, m):
    """The lines of part 3: this build against a fragd without preflight, no request."""
    path = os.path.join(work, "baseline", "pairs.txt")
    if not os.path.exists(path):
        return []
    pairs = cpu_pairs(path, ("this", "baseline"))
    return ["", f"Against a fragd without preflight, ensure and the labels ({m.get('baseline_version', '?')}, binary "
            f"sha256 {m.get('baseline_sha', '?')}, with its own configs/fragd.yaml), on a quiet host: {len(pairs)} "
            f"pairs of a fresh fragd of each, {m['settle']} s after its first pageblock scan, then "
            f"{m['cpu_seconds']} s without any request; CPU from schedstat, in % of one core, their order "
            "alternating pair by pair.", "",
            *table(["pair", "main thread, without the feature", "with it", "difference", "whole process, without",
                    "with", "difference"], "rrrrrrr", [[p, *cpu_cells(t, b)] for p, t, b in pairs]),
            *cpu_goals(pairs, "this build − the build without preflight, no request")]


def main(work, out_path):
    m = read_env(os.path.join(work, "meta.env"))
    lines = section_head("What preflight costs: latency under load, fragd's CPU", m)
    lines += [f"Produced by: `bash bench/preflight_latency.sh` ({m.get('minutes', '?')} min). "
              + measured_on(m, cpu_model=False) + f"; ab {m['ab_version']}.", ""]
    publish(out_path, "preflight-latency", lines + load_part(work, m) + quiet_part(work, m) + baseline_part(work, m))


if __name__ == "__main__":
    main(*positional(2))
