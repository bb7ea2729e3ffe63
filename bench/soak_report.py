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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (CPU_KEYS, cpu_pct, knob_env, measured_on, publish, quick_env, read_env,  # noqa: E402
                      read_jsonl, read_prom, required_args, section_head, table)
from verdict import checked, median  # noqa: E402

WINDOW_S = 60.0  # the cpu_budget's window (fragd: compaction time per minute)
EPS_S = 0.01     # clock slack when comparing action times


def one_run(ok):
    """A growth goal seen in one soak run: no verdict (a verdict needs 5 runs), the side it fell on."""
    return "within it in this one run (a verdict needs 5 runs)" if ok else "**beyond it** in this one run (a verdict needs 5 runs)"


def read_fd_list(path):
    """-> Counter of what fragd's fds named (bench/soak.sh's fd_list), an inode number dropped
    ("socket:[123]" -> "socket"), or None where the list was not taken."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return collections.Counter(re.sub(r":\[\d+\]$", "", x.strip()) for x in f if x.strip())


def fd_changes(lists):
    """'; opened after the start and kept: ...' from the start, warm-up and end lists."""
    parts = []
    for a, b, label in (("start", "warm", "during the warm-up"), ("warm", "end", "after the warm-up")):
        if lists.get(a) is None or lists.get(b) is None:
            continue
        more = lists[b] - lists[a]
        fewer = lists[a] - lists[b]
        said = ", ".join(f"{n} x `{k}`" if n > 1 else f"`{k}`" for k, n in sorted(more.items())) or "none"
        if fewer:
            said += "; closed: " + ", ".join(f"{n} x `{k}`" if n > 1 else f"`{k}`" for k, n in sorted(fewer.items()))
        parts.append(f"opened {label} and kept: {said}")
    return "; " + "; ".join(parts) if parts else ""


def metric(s, key, default=None):
    return (s.get("metrics") or {}).get(key, default)


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


def main():
    a = required_args(None, "--work", "--output", "--plot")
    w = a.work
    m = read_env(os.path.join(w, "meta.env"))
    clk = int(m.get("clk_tck", "100"))
    t0 = float(m["start_unix"])
    t_end = float(m.get("end_unix") or 0) or None
    warm = float(m["warmup"])
    min_interval = float(m["min_interval"])
    budget = float(m["cpu_budget"])
    target = int(m["pool"])
    samples = [s for s in read_jsonl(os.path.join(w, "samples.jsonl")) if "cpu_ticks" in s]
    for s in samples:
        s["t"] = s["unix"] - t0
    events = read_jsonl(os.path.join(w, "events.jsonl"))
    for e in events:
        e["t"] = e["unix"] - t0
    if t_end is None:
        t_end = samples[-1]["unix"] if samples else t0
    dur = t_end - t0
    run = [s for s in samples if s["t"] <= dur + 1]  # samples of the soak itself

    # --- memory and fds
    after_warm = [s for s in run if warm <= s["t"] < warm + 60]
    last_min = [s for s in run if s["t"] >= dur - 60]
    rss_warm = median([s["rss_kib"] for s in after_warm], None)
    rss_end = median([s["rss_kib"] for s in last_min], None)
    growth = (rss_end - rss_warm) / rss_warm * 100 if rss_warm and rss_end else None
    rss_max = max((s["rss_kib"] for s in run), default=None)
    hwm = run[-1]["hwm_kib"] if run else None
    first_after_warm = after_warm[0] if after_warm else None
    # fds: a file fragd opens for a moment (kpageflags during a scan, a sysfs file during an action)
    # shows in the sample that catches it, so the floor of each minute is compared.
    fds_start = run[0]["fds"] if run else None
    fds_warm = first_after_warm["fds"] if first_after_warm else None
    fds_end = run[-1]["fds"] if run else None
    fds_max = max((s["fds"] for s in run), default=None)
    # Files fragd opens once and keeps (a source's procfs or sysfs file, read again every tick) come
    # with the first use of what reads them, some of it first used during the warm-up: the minute
    # after the warm-up is compared with the last, as for RSS.
    fds_warm_min = min((s["fds"] for s in after_warm), default=None)
    fds_last_min = min((s["fds"] for s in last_min), default=None)
    fds_ok = fds_warm_min is not None and fds_last_min is not None and fds_last_min <= fds_warm_min
    fd_lists = {k: read_fd_list(os.path.join(w, f"fds-{k}.txt")) for k in ("start", "warm", "end")}
    rss_ok = growth is not None and growth <= 5.0

    # --- CPU
    def cpu_over(a_, b_):
        out = {k: cpu_pct(a_, b_, k, clk) for k in CPU_KEYS}
        comp = [metric(x, 'fragd_compaction_duration_seconds_sum{trigger="fragd"}') for x in (a_, b_)]
        if None not in comp:
            out["compaction"] = (comp[1] - comp[0]) / (b_["unix"] - a_["unix"]) * 100
        scans = [metric(x, 'fragd_scans_total{result="ok"}') for x in (a_, b_)]
        if None not in scans:
            out["scans"] = scans[1] - scans[0]
        out["seconds"] = b_["unix"] - a_["unix"]
        return out

    cpu_all = cpu_over(run[0], run[-1]) if len(run) >= 2 else {}
    cpu_warm = cpu_over(first_after_warm, run[-1]) if first_after_warm and first_after_warm is not run[-1] else {}
    scan_durs = [metric(s, "fragd_scan_duration_seconds") for s in run if metric(s, "fragd_scan_duration_seconds")]

    # --- actions, three ways
    by_id = {}
    for s in samples:
        for act in s.get("actions") or []:
            by_id[act["id"]] = act
    try:
        for act in json.load(open(os.path.join(w, "end-status.json"))).get("actions") or []:
            by_id[act["id"]] = act
    except (FileNotFoundError, ValueError):
        pass
    actions = sorted(by_id.values(), key=lambda x: x["start_unix_ns"])
    log_ids = {}
    log_path = os.path.join(w, "fragd.log")
    log_lines = open(log_path).read().splitlines() if os.path.exists(log_path) else []
    for line in log_lines:
        mm = re.search(r"\baction (\d+) (compact|pool|proactiveness_raise|proactiveness_restore)\b.*\]: (\w+)", line)
        if mm:
            log_ids[int(mm.group(1))] = (mm.group(2), mm.group(3))
    counter = {}
    end_samples = read_prom(os.path.join(w, "end.prom"))
    # The unlabelled samples of the last scrape, by name.
    end_prom = {name: v for name, lab, v in end_samples if not lab}
    for name, lab, v in end_samples:
        if name == "fragd_actions_total":
            key = (lab.get("action"), lab.get("result"))
            counter[key] = counter.get(key, 0) + int(v)
    n_counter = sum(counter.values())
    status_counts, log_counts = {}, {}
    for act in actions:
        key = (act["action"], act["result"])
        status_counts[key] = status_counts.get(key, 0) + 1
    for kind, result in log_ids.values():
        log_counts[(kind, result)] = log_counts.get((kind, result), 0) + 1
    ids = sorted(by_id)
    missing_ids = [i for i in range(ids[0], ids[-1] + 1) if i not in by_id] if ids else []
    counts_agree = counter == status_counts == log_counts

    # min_interval: compact actions of a node, end of one to start of the next.
    def span(act):
        s_ = act["start_unix_ns"] / 1e9 - t0
        return s_, s_ + act["duration_ns"] / 1e9

    gaps_compact, gaps_any = {}, {}
    compacting = [x for x in actions if x["result"] not in ("dry_run", "refused", "abandoned")
                  and (x["action"] == "compact" or (x["action"] == "pool" and x.get("compactions", 0) > 0))]
    for node in sorted({x["node"] for x in actions if x["action"] == "compact"}):
        cs = [span(x) for x in actions if x["action"] == "compact" and x["node"] == node
              and x["result"] not in ("dry_run", "refused", "abandoned")]
        gaps_compact[node] = [b[0] - a_[1] for a_, b in zip(cs, cs[1:])]
    all_comp = sorted(span(x) for x in compacting)
    gaps_any = [b[0] - a_[1] for a_, b in zip(all_comp, all_comp[1:])]
    min_gap = min((g for gs in gaps_compact.values() for g in gs), default=None)
    interval_ok = min_gap is None or min_gap >= min_interval - EPS_S
    n_compact = sum(1 for x in actions if x["action"] == "compact")

    # cpu_budget: fragd-caused compaction time (BPF) in any 60 s; the action's wall time; fragd's own figure.
    series = [(s["t"], metric(s, 'fragd_compaction_duration_seconds_sum{trigger="fragd"}')) for s in samples]
    series = [(t, v) for t, v in series if v is not None]
    bpf_max = max_window_increase(series, WINDOW_S) if series else None
    wall_max = max_window_busy([span(x) for x in compacting], WINDOW_S)
    used = [metric(s, 'fragd_compaction_budget_used_seconds') for s in samples]
    used_max = max((u for u in used if u is not None), default=None)
    budget_ok = bpf_max is not None and bpf_max <= budget + EPS_S

    # Pool: fragd never grows it past its target; outside the bursts it is never above it.
    pools = [x for x in actions if x["action"] == "pool"]
    grown_past = [x for x in pools if x["pool_after"] > x["target"] and x["pool_after"] > x["pool_before"]]
    bursts = []
    up = None
    for e in events:
        if e["event"] == "burst_up":
            up = e
        elif e["event"] == "burst_down" and up:
            bursts.append((up["t"] - up.get("seconds", 0) - 0.5, e["t"] + 0.5, up))
            up = None
    if up:
        bursts.append((up["t"] - up.get("seconds", 0) - 0.5, dur + 60, up))
    outside = [s for s in run if "nr_hugepages" in s and not any(b0 <= s["t"] <= b1 for b0, b1, _ in bursts)]
    above = [s for s in outside if s["nr_hugepages"] > target]
    pool_max_outside = max((s["nr_hugepages"] for s in outside), default=None)
    pool_ok = not grown_past and not above
    # Grown back after the first fill: the pool fell below its target. The bursts put back what
    # they found, so unless one found less than the target, someone else lowered it.
    regrown = [x for x in pools[1:] if x["pool_before"] < x["target"]]
    burst_low = [e for e in events if e["event"] == "burst_down" and e["before"] < target]

    # Workload.
    cycles = [e for e in events if e["event"] == "ready"]
    burst_ups = [e for e in events if e["event"] == "burst_up"]
    got = [e["got"] - e["before"] for e in burst_ups]
    scores = [metric(s, 'fragd_node_fragmentation_score_percent{node="0"}') for s in run]
    scores = [x for x in scores if x is not None]

    late = end_prom.get("fragd_collector_tick_late_max_seconds")
    missed = end_prom.get("fragd_collector_ticks_missed_total")

    # --- picture
    draw(a.plot, run, actions, t0, bursts, warm, clk, m)

    # --- section
    quick = m.get("quick") == "1"
    L = section_head("Soak", m)
    L += ["Promised: under continuous fragmentation churn and hugepage bursts in act mode, fragd's RSS grows "
          "by at most 5% and its open fds not at all, its compactions keep to `min_interval` and `cpu_budget`, "
          "its pool never passes its target, no collector tick is missed, and SIGTERM ends it with exit 0. "
          "Proven by `bench/soak.sh` (not in CI: it takes the machine for ~12 minutes); the goal column is "
          "each promise, and one run is a figure, not a verdict on growth (that needs 5 runs).", ""]
    defaults = {"SOAK_SECONDS": ("soak_seconds", "180" if quick else "600"), "SOAK_WARMUP": ("warmup", "60" if quick else "120"),
                "SOAK_PERCENT": ("percent", "50" if quick else "70"), "SOAK_HOLD": ("hold", "20"),
                "SOAK_BURST_PERIOD": ("burst_period", "30"), "SOAK_BURST_PAGES": ("burst_pages", "512"),
                "SOAK_BURST_HOLD": ("burst_hold", "5"), "SOAK_POOL": ("pool", "64"),
                "SOAK_MIN_INTERVAL": ("min_interval", "10"), "SOAK_CPU_BUDGET": ("cpu_budget", "4"),
                "SOAK_BACKOFF_MAX": ("backoff_max", "40")}
    cmd = quick_env(m) + knob_env(m, defaults) + "flock /tmp/fragd-heavy.lock bash bench/soak.sh"
    L.append(f"`{cmd}` (~{(dur + 120) / 60:.0f} min). " + measured_on(m) + f"; load average "
             f"{m.get('loadavg_start', '?')} at the start, {m.get('loadavg_end', '?')} at the end.")
    L.append("")
    L.append(f"fragd ran {dur:.0f} s in `mode: act` (tick {m.get('tick', '?')}, pageblock scan every "
             f"{m.get('scan_interval', '?')}, everything else from `configs/fragd.yaml`) with `compaction: {{method: "
             f"node, score: {{high: 40, low: 20}}, min_interval: {m['min_interval']}s, cpu_budget: {m['cpu_budget']}s, "
             f"backoff: {{max: {m.get('backoff_max', '?')}s}}}}` "
             f"(demand trigger at its defaults) and `hugepages: {{guard: 2GiB, pools: [{{size: 2MB, node: all, count: "
             f"{target}}}]}}`, vm.compaction_proactiveness 0 (only fragd compacts ahead). Workload "
             f"(`bench/soak_churn.py`): {len(cycles)} cycles of `fragmenter --percent {m['percent']}` (median "
             f"{median([c['kept_kib'] for c in cycles], 0) / 1024:.0f} MiB kept, 1 page in 4), each held "
             f"{m['hold']} s then freed; {len(burst_ups)} hugepage bursts (+{m['burst_pages']} pages every "
             f"{m['burst_period']} s, held {m['burst_hold']} s; median {median(got, 0):.0f} granted). Node score "
             f"{min(scores, default=0):.0f}..{max(scores, default=0):.0f} over the run. `bench/procmon.py` sampled "
             f"fragd every {m['sample']} s ({len(run)} samples).")
    L.append("")
    L += table(["what", "measured", "goal"], "lll")
    if rss_warm and rss_end:
        L.append(f"| fragd RSS, median of the minute after the warm-up ({warm:.0f} s) vs of the last minute | "
                 f"{rss_warm / 1024:.1f} MiB -> {rss_end / 1024:.1f} MiB: {growth:+.1f}% (single samples "
                 f"{first_after_warm['rss_kib'] / 1024:.1f} -> {run[-1]['rss_kib'] / 1024:.1f} MiB; max "
                 f"{rss_max / 1024:.1f} MiB, VmHWM {hwm / 1024:.1f} MiB) | growth <= 5%: {one_run(rss_ok)} |")
    L.append(f"| open fds, fewest in the minute after the warm-up vs in the last minute | {fds_warm_min} -> "
             f"{fds_last_min} (single samples: first {fds_start}, after the warm-up {fds_warm}, last {fds_end}; "
             f"max {fds_max}){fd_changes(fd_lists)} | no growth: {one_run(fds_ok)} |")
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
    L.append(f"| actions fragd took | {len(actions)}: {acts}. Counted three ways: `fragd_actions_total` {n_counter}, "
             f"log lines {len(log_ids)}, `status` {len(actions)}{'; ids missing from status: ' + str(missing_ids[:10]) if missing_ids else ''} "
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
                 f"{n_compact} compactions | >= min_interval {min_interval:.0f} s: {checked(interval_ok)} |")
    else:
        L.append(f"| closest two compactions of a node | {n_compact} compaction(s): no pair | >= min_interval "
                 f"{min_interval:.0f} s: not tested |")
    if gaps_any and len(all_comp) > n_compact:
        L.append(f"| closest two actions that compacted (pool actions compact too, on their own schedule) | "
                 f"{min(gaps_any):.1f} s | (pool actions are not bound by min_interval) |")
    if bpf_max is not None:
        L.append(f"| fragd-caused compaction time in any 60 s: BPF (`fragd_compaction_duration_seconds_sum"
                 f"{{trigger=\"fragd\"}}`, 5 s samples) / wall time of the actions that compacted / fragd's own "
                 f"`fragd_compaction_budget_used_seconds` max | {bpf_max:.2f} s / {wall_max:.2f} s / "
                 f"{used_max if used_max is not None else float('nan'):.2f} s | <= cpu_budget {budget:.0f} s: "
                 f"{checked(budget_ok)} |")
    L.append(f"| hugetlb pool: fragd's pool actions that grew it past its target; samples above the target outside "
             f"the bursts | {len(grown_past)} of {len(pools)}; {len(above)} of {len(outside)} (max outside the bursts "
             f"{pool_max_outside}) | never beyond {target}: {checked(pool_ok)} |")
    if regrown:
        who = ("" if burst_low else " by something outside this benchmark (each burst put back what it found, "
               "never less than the target in this run)")
        L.append(f"| pool found below its target after the first fill, regrown by fragd | {len(regrown)} time(s), "
                 f"from {', '.join(str(x['pool_before']) for x in regrown[:5])} at "
                 f"{', '.join(f'{span(x)[0]:.0f}' for x in regrown[:5])} s: lowered{who} | |")
    if late is not None:
        L.append(f"| collector tick: largest delay after its due time / ticks missed | {late * 1e3:.1f} ms / "
                 f"{missed:.0f} | <= one tick, 0 |")
    L.append(f"| fragd stopped by SIGTERM at the end: exit status; what it left (its pool stays; proactiveness "
             f"is the benchmark's 0) | {m.get('fragd_exit', '?')}; nr_hugepages {m.get('pool_after_fragd', '?')}, "
             f"proactiveness {m.get('proactiveness_after_fragd', '?')} | exit 0: {checked(m.get('fragd_exit') == '0')} |")
    L.append("")
    rel = os.path.relpath(os.path.abspath(a.plot), os.path.dirname(os.path.abspath(a.output)))
    L.append(f"![fragd over the soak: RSS, open fds, CPU by thread, fragd's compactions and the bursts]({rel})")
    L.append("")
    if scan_durs and cpu_all:
        mostly = ("most of its CPU is the kernel's compaction it asked for, run in its action worker. "
                  if cpu_all["cpu_other_ticks"] > cpu_all["cpu_scan_ticks"] + cpu_all["cpu_main_ticks"] else "")
        L.append(f"CPU: the goal for an idle fragd is 0.5% of a core. Here fragd was not idle: it acted on "
                 f"continuous churn{'; ' + mostly if mostly else '. '}The pageblock "
                 f"scan alone (its own thread, every {m.get('scan_interval', '?')}) took "
                 f"{cpu_all['cpu_scan_ticks']:.2f}% of a core, above the idle budget by itself; the main thread "
                 f"(tick, control socket) {cpu_all['cpu_main_ticks']:.2f}%. A scan took "
                 f"{min(scan_durs):.2f}..{max(scan_durs):.2f} s of wall time (at nice 10, it waits for the churn).")
        L.append("")
    longest = max((x for x in compacting), key=lambda x: x["duration_ns"], default=None)
    if not budget_ok and longest and longest["duration_ns"] / 1e9 > budget:
        L.append(f"cpu_budget: the longest compaction alone took {longest['duration_ns'] / 1e9:.2f} s (action "
                 f"{longest['id']}, score {longest['score_before']} -> {longest['score_after']}, "
                 f"{longest['pages_migrated']} pages migrated), more than the whole budget of {budget:.0f} s per "
                 f"minute. fragd checks the budget before it starts a compaction, against the time the next one "
                 f"is expected to take (the mean of the last four), and a node compaction, once its write has "
                 f"begun, runs to its end in the kernel.")
        L.append("")
    warn = [x for x in log_lines if x.startswith(("<4>", "<3>", "<2>")) and "action " not in x]
    if warn:
        L.append(f"fragd logged {len(warn)} warnings or errors other than action results; first: `{warn[0][:160]}`.")
        L.append("")
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
    mid, width, main_, scan_, other_ = [], [], [], [], []
    for a_, b in zip(run, run[1:]):
        mid.append((a_["t"] + b["t"]) / 120)
        width.append((b["t"] - a_["t"]) / 60)
        main_.append(cpu_pct(a_, b, "cpu_main_ticks", clk))
        scan_.append(cpu_pct(a_, b, "cpu_scan_ticks", clk))
        other_.append(cpu_pct(a_, b, "cpu_other_ticks", clk))
    bottom = [0.0] * len(mid)
    for vals, label, color in ((main_, "main thread (tick, control)", "tab:blue"),
                               (scan_, "scan thread", "tab:orange"),
                               (other_, "other threads (actions, HTTP)", "tab:gray")):
        ax[2].bar(mid, vals, width=width, bottom=bottom, color=color, label=label, alpha=0.85, lw=0)
        bottom = [b_ + v for b_, v in zip(bottom, vals)]
    ax[2].set_ylabel(f"CPU (% of a core, per {m.get('sample', '5')} s)")
    ax[2].set_xlabel("minutes since fragd started")
    ax[2].legend(loc="upper right", fontsize=8)
    for i, (b0, b1, _) in enumerate(bursts):
        for x in ax:
            x.axvspan(b0 / 60, b1 / 60, color="tab:cyan", alpha=0.15, lw=0,
                      label="hugepage burst" if i == 0 and x is ax[0] else None)
    first = True
    for act in actions:
        if act["action"] not in ("compact", "pool") or act["result"] in ("dry_run", "refused", "abandoned"):
            continue
        s_ = act["start_unix_ns"] / 1e9 - t0
        e_ = s_ + act["duration_ns"] / 1e9
        color = "tab:red" if act["action"] == "compact" else "tab:purple"
        for x in ax:
            x.axvspan(s_ / 60, max(e_, s_ + 1) / 60, color=color, alpha=0.35, lw=0)
        if first:
            ax[0].plot([], [], color="tab:red", alpha=0.5, lw=6, label="fragd compaction")
            ax[0].plot([], [], color="tab:purple", alpha=0.5, lw=6, label="fragd pool action")
            first = False
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
