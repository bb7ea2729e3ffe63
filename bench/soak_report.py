#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The soak section of RELIABILITY.md and its picture, from a bench/soak.sh work directory.

usage: soak_report.py --work DIR --output FILE --plot PNG

Reads meta.env, samples.jsonl (bench/procmon.py every 5 s), events.jsonl
(bench/soak_churn.py), fragd.log, end.prom and end-status.json. Prints the section,
writes it between <!-- soak:begin --> and <!-- soak:end --> of FILE, and draws RSS,
open fds and CPU over time (with fragd's actions and the bursts) into PNG.
Exit status 0 whatever the goals: the section says which are met.
"""
import collections
import json
import os
import re
import sys

from benchlib import (CPU_KEYS, cpu_pct, knob_env, measured_on, publish, quick_env, read_env,
                      read_jsonl, read_prom, required_args, section_head, table)
from verdict import checked, median

WINDOW_S = 60.0  # the cpu_budget's window (fragd: compaction time per minute)
EPS_S = 0.01     # clock slack when comparing action times
NOT_RUN = ("dry_run", "refused", "abandoned")  # results of an action that did not compact
BPF_COMPACTION = 'fragd_compaction_duration_seconds_sum{trigger="fragd"}'
LOG_ACTION = re.compile(r"\baction (\d+) (compact|pool|proactiveness_raise|proactiveness_restore)\b.*\]: (\w+)")


def one_run(ok):
    """A growth goal seen in one soak run: no verdict (a verdict needs 5 runs), the side it fell on."""
    return ("within it" if ok else "**beyond it**") + " in this one run (a verdict needs 5 runs)"


def read_fd_list(path):
    """-> Counter of what fragd's fds named (bench/soak.sh's fd_list), an inode number dropped
    ("socket:[123]" -> "socket"), or None where the list was not taken."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return collections.Counter(re.sub(r":\[\d+\]$", "", x.strip()) for x in f if x.strip())


def fd_changes(lists):
    """'; opened after the start and kept: ...' from the start, warm-up and end lists."""
    def names(c):
        return ", ".join(f"{n} x `{k}`" if n > 1 else f"`{k}`" for k, n in sorted(c.items()))
    parts = []
    for a, b, label in (("start", "warm", "during the warm-up"), ("warm", "end", "after the warm-up")):
        if lists[a] is None or lists[b] is None:
            continue
        closed = lists[a] - lists[b]
        parts.append(f"opened {label} and kept: {names(lists[b] - lists[a]) or 'none'}"
                     + (f"; closed: {names(closed)}" if closed else ""))
    return "; " + "; ".join(parts) if parts else ""


def metric(s, key):
    return (s.get("metrics") or {}).get(key)


def tally(counted):
    """-> {key: sum of n} over (key, n); not a Counter, whose == ignores keys counted 0 times."""
    out = {}
    for k, n in counted:
        out[k] = out.get(k, 0) + n
    return out


def span(act, t0):
    """-> (start, end) of an action, in s since t0."""
    s = act["start_unix_ns"] / 1e9 - t0
    return s, s + act["duration_ns"] / 1e9


def gaps(spans):
    """-> from the end of each span to the start of the next."""
    return [b[0] - a[1] for a, b in zip(spans, spans[1:])]


def max_window_increase(series, width):
    """Largest increase of a cumulative series [(t, v)] over any span of at most width s."""
    best, j = 0.0, 0
    for i in range(len(series)):
        while series[i][0] - series[j][0] > width + EPS_S:
            j += 1
        best = max(best, series[i][1] - series[j][1])
    return best


def max_window_busy(intervals, width, step=0.1):
    """Largest time covered by intervals [(start, end)] within any window of width s."""
    if not intervals:
        return 0.0
    lo = min(s for s, _ in intervals) - width
    hi = max(e for _, e in intervals)
    best, t = 0.0, lo
    while t <= hi:
        busy = sum(max(0.0, min(e, t + width) - max(s, t)) for s, e in intervals)
        best = max(best, busy)
        t += step
    return best


def read_actions(w, samples):
    """-> fragd's actions by id, from the status in the samples and at the end (the last seen wins)."""
    by_id = {act["id"]: act for s in samples for act in s.get("actions") or []}
    try:
        with open(os.path.join(w, "end-status.json")) as f:
            by_id.update((act["id"], act) for act in json.load(f).get("actions") or [])
    except (FileNotFoundError, ValueError):
        pass
    return by_id


def read_bursts(events, dur):
    """-> [(start, end)] of the hugepage bursts, with 0.5 s of slack (a burst still up at the end
    of the run lasts past it)."""
    bursts, up = [], None
    for e in events:
        if e["event"] == "burst_up":
            up = e
        elif e["event"] == "burst_down" and up:
            bursts.append((up["t"] - up.get("seconds", 0) - 0.5, e["t"] + 0.5))
            up = None
    if up:
        bursts.append((up["t"] - up.get("seconds", 0) - 0.5, dur + 60))
    return bursts


def main():
    a = required_args(None, "--work", "--output", "--plot")
    w = a.work
    m = read_env(os.path.join(w, "meta.env"))
    clk, t0, end_unix = int(m.get("clk_tck", "100")), float(m["start_unix"]), float(m.get("end_unix") or 0)
    warm, min_interval, budget = float(m["warmup"]), float(m["min_interval"]), float(m["cpu_budget"])
    target = int(m["pool"])
    samples = [s for s in read_jsonl(os.path.join(w, "samples.jsonl")) if "cpu_ticks" in s]
    events = read_jsonl(os.path.join(w, "events.jsonl"))
    for x in samples + events:
        x["t"] = x["unix"] - t0
    dur = (end_unix or (samples[-1]["unix"] if samples else t0)) - t0
    run = [s for s in samples if s["t"] <= dur + 1]  # samples of the soak itself

    # --- memory and fds
    after_warm = [s for s in run if warm <= s["t"] < warm + 60]
    last_min = [s for s in run if s["t"] >= dur - 60]
    first_after_warm = after_warm[0] if after_warm else None
    rss_warm = median([s["rss_kib"] for s in after_warm], None)
    rss_end = median([s["rss_kib"] for s in last_min], None)
    growth = (rss_end - rss_warm) / rss_warm * 100 if rss_warm and rss_end else None
    # fds: a file fragd opens for a moment (kpageflags during a scan, a sysfs file during an action)
    # shows in the sample that catches it, so the floor of each minute is compared.
    # Files fragd opens once and keeps (a source's procfs or sysfs file, read again every tick) come
    # with the first use of what reads them, some of it first used during the warm-up: the minute
    # after the warm-up is compared with the last, as for RSS.
    fds_warm_min = min((s["fds"] for s in after_warm), default=None)
    fds_last_min = min((s["fds"] for s in last_min), default=None)
    fds_ok = fds_warm_min is not None and fds_last_min is not None and fds_last_min <= fds_warm_min
    fd_lists = {k: read_fd_list(os.path.join(w, f"fds-{k}.txt")) for k in ("start", "warm", "end")}

    # --- CPU
    def cpu_over(x, y):
        """fragd's CPU from sample x to y: CPU_KEYS and fragd-caused compaction in %, pageblock scans."""
        out = {k: cpu_pct(x, y, k, clk) for k in CPU_KEYS}
        comp = [metric(s, BPF_COMPACTION) for s in (x, y)]
        if None not in comp:
            out["compaction"] = (comp[1] - comp[0]) / (y["unix"] - x["unix"]) * 100
        scans = [metric(s, 'fragd_scans_total{result="ok"}') for s in (x, y)]
        if None not in scans:
            out["scans"] = scans[1] - scans[0]
        return out

    cpu_all = cpu_over(run[0], run[-1]) if len(run) >= 2 else {}
    cpu_warm = cpu_over(first_after_warm, run[-1]) if first_after_warm and first_after_warm is not run[-1] else {}
    scan_durs = [d for d in (metric(s, "fragd_scan_duration_seconds") for s in run) if d]

    # --- actions, three ways: fragd's status, its log, its counter
    by_id = read_actions(w, samples)
    actions = sorted(by_id.values(), key=lambda x: x["start_unix_ns"])
    log_path = os.path.join(w, "fragd.log")
    log_lines = open(log_path).read().splitlines() if os.path.exists(log_path) else []
    found = (LOG_ACTION.search(x) for x in log_lines)
    log_ids = {int(g[1]): (g[2], g[3]) for g in found if g}
    end_samples = read_prom(os.path.join(w, "end.prom"))
    end_prom = {name: v for name, lab, v in end_samples if not lab}  # the unlabelled ones
    counter = tally(((lab.get("action"), lab.get("result")), int(v))
                    for name, lab, v in end_samples if name == "fragd_actions_total")
    status_counts = tally(((x["action"], x["result"]), 1) for x in actions)
    missing_ids = [i for i in range(min(by_id), max(by_id) + 1) if i not in by_id] if by_id else []
    counts_agree = counter == status_counts == tally((k, 1) for k in log_ids.values())

    # min_interval: compact actions of a node, end of one to start of the next.
    compacting = [x for x in actions if x["result"] not in NOT_RUN
                  and (x["action"] == "compact" or (x["action"] == "pool" and x.get("compactions", 0) > 0))]
    by_node = {}
    for x in compacting:
        if x["action"] == "compact":
            by_node.setdefault(x["node"], []).append(span(x, t0))
    min_gap = min((g for spans in by_node.values() for g in gaps(spans)), default=None)
    all_comp = sorted(span(x, t0) for x in compacting)
    n_compact = sum(1 for x in actions if x["action"] == "compact")

    # cpu_budget: fragd-caused compaction time (BPF) in any 60 s; the action's wall time; fragd's own figure.
    series = [(s["t"], v) for s in samples if (v := metric(s, BPF_COMPACTION)) is not None]
    bpf_max = max_window_increase(series, WINDOW_S) if series else None
    wall_max = max_window_busy([span(x, t0) for x in compacting], WINDOW_S)
    used_max = max((u for s in samples if (u := metric(s, "fragd_compaction_budget_used_seconds")) is not None),
                   default=None)
    budget_ok = bpf_max is not None and bpf_max <= budget + EPS_S

    # Pool: fragd never grows it past its target; outside the bursts it is never above it.
    pools = [x for x in actions if x["action"] == "pool"]
    grown_past = [x for x in pools if x["pool_after"] > x["target"] and x["pool_after"] > x["pool_before"]]
    bursts = read_bursts(events, dur)
    outside = [s for s in run if "nr_hugepages" in s and not any(b0 <= s["t"] <= b1 for b0, b1 in bursts)]
    above = [s for s in outside if s["nr_hugepages"] > target]
    # Grown back after the first fill: the pool fell below its target. The bursts put back what
    # they found, so unless one found less than the target, someone else lowered it.
    regrown = [x for x in pools[1:] if x["pool_before"] < x["target"]]
    burst_low = [e for e in events if e["event"] == "burst_down" and e["before"] < target]

    # Workload.
    cycles = [e for e in events if e["event"] == "ready"]
    burst_ups = [e for e in events if e["event"] == "burst_up"]
    scores = [x for x in (metric(s, 'fragd_node_fragmentation_score_percent{node="0"}') for s in run)
              if x is not None]

    draw(a.plot, run, actions, t0, bursts, warm, clk, m)

    # --- section
    quick = m.get("quick") == "1"
    L = section_head("Soak", m)
    L += ["Promised: under continuous fragmentation churn and hugepage bursts in act mode, fragd's RSS grows "
          "by at most 5% and its open fds not at all, its compactions keep to `min_interval` and `cpu_budget`, "
          "its pool never passes its target, no collector tick is missed, and SIGTERM ends it with exit 0. "
          "Proven by `bench/soak.sh` (not in CI: it takes the machine for ~12 minutes); the goal column is "
          "each promise, and one run is a figure, not a verdict on growth (that needs 5 runs).", ""]
    defaults = {"SOAK_SECONDS": ("soak_seconds", "180" if quick else "600"),
                "SOAK_WARMUP": ("warmup", "60" if quick else "120"),
                "SOAK_PERCENT": ("percent", "50" if quick else "70"), "SOAK_HOLD": ("hold", "20"),
                "SOAK_BURST_PERIOD": ("burst_period", "30"), "SOAK_BURST_PAGES": ("burst_pages", "512"),
                "SOAK_BURST_HOLD": ("burst_hold", "5"), "SOAK_POOL": ("pool", "64"),
                "SOAK_MIN_INTERVAL": ("min_interval", "10"), "SOAK_CPU_BUDGET": ("cpu_budget", "4"),
                "SOAK_BACKOFF_MAX": ("backoff_max", "40")}
    cmd = quick_env(m) + knob_env(m, defaults) + "flock /tmp/fragd-heavy.lock bash bench/soak.sh"
    L += [f"`{cmd}` (~{(dur + 120) / 60:.0f} min). " + measured_on(m) + f"; load average "
          f"{m.get('loadavg_start', '?')} at the start, {m.get('loadavg_end', '?')} at the end.", "",
          f"fragd ran {dur:.0f} s in `mode: act` (tick {m.get('tick', '?')}, pageblock scan every "
          f"{m.get('scan_interval', '?')}, everything else from `configs/fragd.yaml`) with `compaction: {{method: "
          f"node, score: {{high: 40, low: 20}}, min_interval: {m['min_interval']}s, cpu_budget: {m['cpu_budget']}s, "
          f"backoff: {{max: {m.get('backoff_max', '?')}s}}}}` "
          f"(demand trigger at its defaults) and `hugepages: {{guard: 2GiB, pools: [{{size: 2MB, node: all, count: "
          f"{target}}}]}}`, vm.compaction_proactiveness 0 (only fragd compacts ahead). Workload "
          f"(`bench/soak_churn.py`): {len(cycles)} cycles of `fragmenter --percent {m['percent']}` (median "
          f"{median([c['kept_kib'] for c in cycles], 0) / 1024:.0f} MiB kept, 1 page in 4), each held "
          f"{m['hold']} s then freed; {len(burst_ups)} hugepage bursts (+{m['burst_pages']} pages every "
          f"{m['burst_period']} s, held {m['burst_hold']} s; median "
          f"{median([e['got'] - e['before'] for e in burst_ups], 0):.0f} granted). Node score "
          f"{min(scores, default=0):.0f}..{max(scores, default=0):.0f} over the run. `bench/procmon.py` sampled "
          f"fragd every {m['sample']} s ({len(run)} samples).", ""]
    L += table(["what", "measured", "goal"], "lll")
    if rss_warm and rss_end:
        L.append(f"| fragd RSS, median of the minute after the warm-up ({warm:.0f} s) vs of the last minute | "
                 f"{rss_warm / 1024:.1f} MiB -> {rss_end / 1024:.1f} MiB: {growth:+.1f}% (single samples "
                 f"{first_after_warm['rss_kib'] / 1024:.1f} -> {run[-1]['rss_kib'] / 1024:.1f} MiB; max "
                 f"{max(s['rss_kib'] for s in run) / 1024:.1f} MiB, VmHWM {run[-1]['hwm_kib'] / 1024:.1f} MiB) | "
                 f"growth <= 5%: {one_run(growth <= 5.0)} |")
    fds = [s["fds"] for s in run]
    L.append(f"| open fds, fewest in the minute after the warm-up vs in the last minute | {fds_warm_min} -> "
             f"{fds_last_min} (single samples: first {fds[0] if fds else None}, after the warm-up "
             f"{first_after_warm['fds'] if first_after_warm else None}, last {fds[-1] if fds else None}; "
             f"max {max(fds, default=None)}){fd_changes(fd_lists)} | no growth: {one_run(fds_ok)} |")
    for label, c in (("whole run", cpu_all), (f"after the warm-up ({warm:.0f} s)", cpu_warm)):
        if not c:
            continue
        comp = (f"; fragd-caused compaction, wall time by BPF (it runs in the action worker): {c['compaction']:.2f}% "
                f"of the time") if "compaction" in c else ""
        sc = f"; {c['scans']:.0f} pageblock scans" if "scans" in c else ""
        L.append(f"| fragd CPU, {label} | **{c['cpu_ticks']:.2f}%** of a core: scan thread {c['cpu_scan_ticks']:.2f}%, "
                 f"main thread (tick, control) {c['cpu_main_ticks']:.2f}%, other threads (action worker, HTTP) "
                 f"{c['cpu_other_ticks']:.2f}%{comp}{sc} | idle <= 0.5% (this is not idle) |")
    acts = ", ".join(f"{k[0]} {k[1]} {v}" for k, v in sorted(status_counts.items())) or "none"
    missing = f"; ids missing from status: {missing_ids[:10]}" if missing_ids else ""
    L.append(f"| actions fragd took | {len(actions)}: {acts}. Counted three ways: `fragd_actions_total` "
             f"{sum(counter.values())}, log lines {len(log_ids)}, `status` {len(actions)}{missing} "
             f"| the three agree: {checked(counts_agree and not missing_ids)} |")
    if log_lines and dur > 0:
        log_bytes = os.path.getsize(log_path)
        per_day = log_bytes / dur * 86400
        L.append(f"| fragd's log in act mode over this churn (stderr: what the journal or the container log keeps) | "
                 f"{log_bytes} bytes, {len(log_lines)} lines in {dur:.0f} s: {per_day / 2**20:.1f} MiB a day, "
                 f"{log_bytes / dur * 3600 / 1024:.0f} KiB an hour; at this rate the DaemonSet's 64Mi of ephemeral "
                 f"storage (configs/kubernetes/base/fragd-daemonset.yaml; the kubelet keeps 10Mi x 5 log files) "
                 f"would last {64 * 2**20 / per_day:.1f} days without rotation | (a figure, not a goal) |")
    if min_gap is not None:
        L.append(f"| closest two compactions of a node (end of one to start of the next) | {min_gap:.1f} s over "
                 f"{n_compact} compactions | >= min_interval {min_interval:.0f} s: "
                 f"{checked(min_gap >= min_interval - EPS_S)} |")
    else:
        L.append(f"| closest two compactions of a node | {n_compact} compaction(s): no pair | >= min_interval "
                 f"{min_interval:.0f} s: not tested |")
    if len(all_comp) >= 2 and len(all_comp) > n_compact:
        L.append(f"| closest two actions that compacted (pool actions compact too, on their own schedule) | "
                 f"{min(gaps(all_comp)):.1f} s | (pool actions are not bound by min_interval) |")
    if bpf_max is not None:
        L.append(f"| fragd-caused compaction time in any 60 s: BPF (`fragd_compaction_duration_seconds_sum"
                 f"{{trigger=\"fragd\"}}`, 5 s samples) / wall time of the actions that compacted / fragd's own "
                 f"`fragd_compaction_budget_used_seconds` max | {bpf_max:.2f} s / {wall_max:.2f} s / "
                 f"{used_max if used_max is not None else float('nan'):.2f} s | <= cpu_budget {budget:.0f} s: "
                 f"{checked(budget_ok)} |")
    L.append(f"| hugetlb pool: fragd's pool actions that grew it past its target; samples above the target outside "
             f"the bursts | {len(grown_past)} of {len(pools)}; {len(above)} of {len(outside)} (max outside the bursts "
             f"{max((s['nr_hugepages'] for s in outside), default=None)}) | never beyond {target}: "
             f"{checked(not grown_past and not above)} |")
    if regrown:
        who = ("" if burst_low else " by something outside this benchmark (each burst put back what it found, "
               "never less than the target in this run)")
        L.append(f"| pool found below its target after the first fill, regrown by fragd | {len(regrown)} time(s), "
                 f"from {', '.join(str(x['pool_before']) for x in regrown[:5])} at "
                 f"{', '.join(f'{span(x, t0)[0]:.0f}' for x in regrown[:5])} s: lowered{who} | |")
    late = end_prom.get("fragd_collector_tick_late_max_seconds")
    if late is not None:
        L.append(f"| collector tick: largest delay after its due time / ticks missed | {late * 1e3:.1f} ms / "
                 f"{end_prom.get('fragd_collector_ticks_missed_total'):.0f} | <= one tick, 0 |")
    L += [f"| fragd stopped by SIGTERM at the end: exit status; what it left (its pool stays; proactiveness "
          f"is the benchmark's 0) | {m.get('fragd_exit', '?')}; nr_hugepages {m.get('pool_after_fragd', '?')}, "
          f"proactiveness {m.get('proactiveness_after_fragd', '?')} | exit 0: {checked(m.get('fragd_exit') == '0')} |",
          ""]
    rel = os.path.relpath(os.path.abspath(a.plot), os.path.dirname(os.path.abspath(a.output)))
    L += [f"![fragd over the soak: RSS, open fds, CPU by thread, fragd's compactions and the bursts]({rel})", ""]
    if scan_durs and cpu_all:
        mostly = ("most of its CPU is the kernel's compaction it asked for, run in its action worker. "
                  if cpu_all["cpu_other_ticks"] > cpu_all["cpu_scan_ticks"] + cpu_all["cpu_main_ticks"] else "")
        L += [f"CPU: the goal for an idle fragd is 0.5% of a core. Here fragd was not idle: it acted on "
              f"continuous churn{'; ' + mostly if mostly else '. '}The pageblock "
              f"scan alone (its own thread, every {m.get('scan_interval', '?')}) took "
              f"{cpu_all['cpu_scan_ticks']:.2f}% of a core, above the idle budget by itself; the main thread "
              f"(tick, control socket) {cpu_all['cpu_main_ticks']:.2f}%. A scan took "
              f"{min(scan_durs):.2f}..{max(scan_durs):.2f} s of wall time (at nice 10, it waits for the churn).", ""]
    longest = max(compacting, key=lambda x: x["duration_ns"], default=None)
    if not budget_ok and longest and longest["duration_ns"] / 1e9 > budget:
        L += [f"cpu_budget: the longest compaction alone took {longest['duration_ns'] / 1e9:.2f} s (action "
              f"{longest['id']}, score {longest['score_before']} -> {longest['score_after']}, "
              f"{longest['pages_migrated']} pages migrated), more than the whole budget of {budget:.0f} s per "
              f"minute. fragd checks the budget before it starts a compaction, against the time the next one "
              f"is expected to take (the mean of the last four), and a node compaction, once its write has "
              f"begun, runs to its end in the kernel.", ""]
    warn = [x for x in log_lines if x.startswith(("<4>", "<3>", "<2>")) and "action " not in x]
    if warn:
        L += [f"fragd logged {len(warn)} warnings or errors other than action results; first: `{warn[0][:160]}`.", ""]
    publish(a.output, "soak", L)
    return 0


def draw(path, run, actions, t0, bursts, warm, clk, m):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s["t"] / 60 for s in run]
    fig, ax = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    ax[0].plot(t, [s["rss_kib"] / 1024 for s in run], color="tab:blue", label="VmRSS")
    ax[0].set_ylabel("RSS (MiB)")
    lo = min((s["rss_kib"] for s in run), default=0) / 1024
    ax[0].set_ylim(bottom=max(0, lo * 0.8))
    fds = [s["fds"] for s in run]
    ax[1].plot(t, fds, color="tab:green", drawstyle="steps-post")
    ax[1].set_ylabel("open fds")
    ax[1].yaxis.get_major_locator().set_params(integer=True)
    if fds:
        ax[1].set_ylim(min(fds) - 3, max(fds) + 3)
    steps = list(zip(run, run[1:]))
    mid = [(x["t"] + y["t"]) / 120 for x, y in steps]
    width = [(y["t"] - x["t"]) / 60 for x, y in steps]
    bottom = [0.0] * len(mid)
    for key, label, color in (("cpu_main_ticks", "main thread (tick, control)", "tab:blue"),
                              ("cpu_scan_ticks", "scan thread", "tab:orange"),
                              ("cpu_other_ticks", "other threads (actions, HTTP)", "tab:gray")):
        vals = [cpu_pct(x, y, key, clk) for x, y in steps]
        ax[2].bar(mid, vals, width=width, bottom=bottom, color=color, label=label, alpha=0.85, lw=0)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax[2].set_ylabel(f"CPU (% of a core, per {m.get('sample', '5')} s)")
    ax[2].set_xlabel("minutes since fragd started")
    ax[2].legend(loc="upper right", fontsize=8)
    for i, (b0, b1) in enumerate(bursts):
        for x in ax:
            x.axvspan(b0 / 60, b1 / 60, color="tab:cyan", alpha=0.15, lw=0,
                      label="hugepage burst" if i == 0 and x is ax[0] else None)
    shown = [x for x in actions if x["action"] in ("compact", "pool") and x["result"] not in NOT_RUN]
    for act in shown:
        s, e = span(act, t0)
        for x in ax:
            x.axvspan(s / 60, max(e, s + 1) / 60, color="tab:red" if act["action"] == "compact" else "tab:purple",
                      alpha=0.35, lw=0)
    if shown:
        ax[0].plot([], [], color="tab:red", alpha=0.5, lw=6, label="fragd compaction")
        ax[0].plot([], [], color="tab:purple", alpha=0.5, lw=6, label="fragd pool action")
    for x in ax:
        x.axvline(warm / 60, color="black", ls=":", lw=1)
        x.grid(alpha=0.3)
    ax[0].legend(loc="lower right", fontsize=8)
    ax[0].set_title(f"fragd soak: {m['soak_seconds']} s of fragmentation churn and hugepage bursts, act mode "
                    f"(dotted: end of the {m['warmup']} s warm-up)", fontsize=10)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=80)


if __name__ == "__main__":
    sys.exit(main())
