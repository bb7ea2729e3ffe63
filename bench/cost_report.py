# SPDX-License-Identifier: Apache-2.0
"""Writes the cost section of BENCHMARKS.md from bench/cost.sh's work directory.

usage: cost_report.py WORK OUTPUT
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from verdict import Verdict, median, spread  # noqa: E402

GOAL_QUIET, GOAL_BUSY, GOAL_SCAN_1TIB = 0.1, 0.2, 0.3  # % of one core
SIZES_GIB = (64, 256, 1024, 4096)


def gib_name(g):
    return f"{g // 1024} TiB" if g >= 1024 and g % 1024 == 0 else f"{g} GiB"


def thread_class(t, pid):
    if t["tid"] == pid:
        return "main"
    if t["comm"] == "fragd-scan":
        return "scan"
    if t["comm"].startswith("civetweb"):
        return "http"
    return "other"


def memory_changes(log):
    """-> the zones of each memory change that started a scan after the first (fragd at debug
    level logs them: "memory changed since the last (node 0 DMA32: ...)"), over the whole run;
    None without the log (runs before it was kept)."""
    if not os.path.exists(log):
        return None
    zones = []
    for line in open(log, errors="replace"):
        m = re.search(r"memory changed since the last \((node \d+ \w+|the zones changed)", line)
        if m:
            zones.append(m.group(1).replace("node ", ""))
    return zones


def changes_cell(zones):
    if zones is None:
        return "-"
    counts = {z: zones.count(z) for z in sorted(set(zones))}
    return f"{len(zones)}" + (" (" + ", ".join(f"{z} {n}" for z, n in counts.items()) + ")" if zones else "")


def damon_cell(env):
    """-> what DAMON's pageout schemes reclaimed over the run (bench/cost.sh damon_paged_out), or ""."""
    a, b = env.get("damon_paged_out_start", "-"), env.get("damon_paged_out_end", "-")
    return "" if "-" in (a, b) else f"; DAMON paged out {(int(b) - int(a)) / 2**20:.0f} MiB"


def wait_cell(env):
    if "quiet_wait_s" not in env:
        return "-"
    paged = env.get("quiet_damon_paged_out_mib", "-")
    return f"{env['quiet_wait_s']} ({env['quiet_free_pages_moved']}" + ("" if paged == "-" else f"; {paged} MiB") + ")"


def run_figures(d):
    """-> the figures of one run directory (see bench/cost.sh run_arm)."""
    env = benchlib.read_env(os.path.join(d, "run.env"))
    snaps = benchlib.read_jsonl(os.path.join(d, "snaps.jsonl"))
    a, b = snaps[0], snaps[-1]
    dt = b["mono"] - a["mono"]
    clk = a["clk_tck"]
    pid = min(t["tid"] for t in a["threads"])  # the main thread's id is the pid, the lowest
    ticks = {"main": 0, "scan": 0, "http": 0, "other": 0}
    before = {t["tid"]: t for t in a["threads"]}
    other_comms = set()
    for t in b["threads"]:
        c = thread_class(t, pid)
        ticks[c] += t["ticks"] - before.get(t["tid"], {"ticks": 0})["ticks"]
        if c == "other":
            other_comms.add(t["comm"])
    pct = {k: v / clk / dt * 100 for k, v in ticks.items()}
    pct["process"] = (b["proc_ticks"] - a["proc_ticks"]) / clk / dt * 100
    ha, hb = a["host_cpu"], b["host_cpu"]
    host_total = sum(hb) - sum(ha)
    host_idle = (hb[3] - ha[3]) + (hb[4] - ha[4])  # idle + iowait
    ma, mb = a["metrics"], b["metrics"]

    def delta(key):
        return mb[key] - ma[key] if key in ma and key in mb else None
    f = {
        "env": env, "seconds": dt, "ticks": b["proc_ticks"] - a["proc_ticks"], "clk": clk, "pct": pct,
        "thread_ticks": ticks, "other_comms": sorted(other_comms), "threads": len(b["threads"]),
        "host_busy": (host_total - host_idle) / host_total * 100 if host_total else 0.0,
        "rounds": delta('fragd_scans_total{result="ok"}'),
        "unchanged": delta('fragd_scans_total{result="unchanged"}'),
        "blocks_sample": delta('fragd_scan_pageblocks_read_total{how="sample"}'),
        "blocks_full": delta('fragd_scan_pageblocks_read_total{how="full"}'),
        "scan_cpu_metric": delta("fragd_scan_cpu_seconds_total"),
    }
    f["scan_pct"] = (f["scan_cpu_metric"] / dt * 100) if f["scan_cpu_metric"] is not None else pct["scan"]
    sc = [line.split() for line in open(os.path.join(d, "scrapes.txt")) if line.strip()]
    f["scrapes"] = len(sc)
    f["scrapes_ok"] = sum(1 for s in sc if s[0] == "200")
    f["changes"] = memory_changes(os.path.join(d, "fragd.log"))
    cyc = benchlib.read_jsonl(os.path.join(d, "churn.jsonl"))
    f["churn_cycles"] = len(cyc)
    f["churn_cycle_s"] = median([c["cycle_s"] for c in cyc]) if cyc else None
    return f


def mapmem(path):
    """-> ({(object, map): bytes}, {key: value}) of bpf_map_memory's output."""
    maps, facts = {}, {}
    for line in open(path):
        p = line.split()
        if len(p) == 3:
            maps[(p[0], p[1])] = int(p[2])
        elif len(p) == 2:
            facts[p[0]] = int(p[1])
    return maps, facts


def guest(path):
    """-> the facts, map lines, rounds and full scan of one guest's console lines."""
    g = {"facts": {}, "maps": {}, "mapfacts": {}, "rounds": [], "full": None}
    for line in open(path):
        p = line.split()
        if not p:
            continue
        if p[0] == "FRAGD-COST" and len(p) >= 3:
            g["facts"][p[1]] = " ".join(p[2:])
        elif p[0] == "FRAGD-MAPMEM" and len(p) == 4:
            g["maps"][(p[1], p[2])] = int(p[3])
        elif p[0] == "FRAGD-MAPMEM" and len(p) == 3:
            g["mapfacts"][p[1]] = int(p[2])
        elif p[0] == "FRAGD-ROUND" and len(p) == 5:
            g["rounds"].append((float(p[1]), int(p[2]), int(p[3]), float(p[4]) if p[4] != "nan" else None))
        elif p[0] == "FRAGD-FULL" and len(p) == 3 and p[1] and p[2]:
            g["full"] = (int(p[1]), int(p[2]))
    return g


def per_round(rounds):
    """-> [(blocks, cpu_s)] per round from the cumulative scrapes, the first round (which
    also measured what a block costs) left out."""
    out = []
    for (t0, r0, b0, c0), (t1, r1, b1, c1) in zip(rounds, rounds[1:]):
        if r1 > r0:
            out.append(((b1 - b0) / (r1 - r0), (c1 - c0) / (r1 - r0) if c0 is not None and c1 is not None else None))
    return out


def size_check(gs):
    """-> (memory ratio, blocks-per-round ratio, largest guest's GiB, full-scan ratio or None)
    between the smallest and the largest guest that saw sampled rounds; None with fewer than 2."""
    sized = [g for g in gs.values() if per_round(g["rounds"])]
    if len(sized) < 2:
        return None
    lo = min(sized, key=lambda g: int(g["facts"]["mem_total_kib"]))
    hi = max(sized, key=lambda g: int(g["facts"]["mem_total_kib"]))
    if lo is hi:
        return None
    ratio_mem = int(hi["facts"]["mem_total_kib"]) / int(lo["facts"]["mem_total_kib"])
    ratio_blk = median([b for b, _ in per_round(hi["rounds"])]) / median([b for b, _ in per_round(lo["rounds"])])
    full_ratio = (hi["full"][0] / lo["full"][0]) if hi["full"] and lo["full"] else None
    return ratio_mem, ratio_blk, int(hi["facts"]["mem_total_kib"]) / 2**20, full_ratio


def main():
    work, out = benchlib.positional(2)
    m = benchlib.read_env(os.path.join(work, "meta.env"))
    runs = int(m["runs"])
    figs = {arm: [run_figures(os.path.join(work, f"{arm}{r}")) for r in range(1, runs + 1)] for arm in ("quiet", "busy")}
    exported = all(f["scan_cpu_metric"] is not None for fs in figs.values() for f in fs)
    env = benchlib.quick_env(m)
    lines = benchlib.section_head("fragd's CPU on a quiet and a busy host; the pageblock scan by memory size", m)
    lines += [
        benchlib.measured_on(m) + f". Reproduce: `{env}bash bench/cost.sh` as root after the build (part of `make bench`; this run took "
        f"{m['minutes']} min, load average {m['load_start']} at start, {m['load_end']} at the end).",
        "",
        f"Two arms, interleaved (quiet, busy, quiet, busy, ...), {runs} run{'s' if runs != 1 else ''} each. A run: "
        "fragd with the shipped "
        "configs/fragd.yaml (`build/fragd --config configs/fragd.yaml --listen 127.0.0.1:PORT --socket PATH`) "
        f"starts, runs {m['settle']} s, then for {m['seconds']} s a curl loop scrapes /metrics every "
        f"{m['scrape']} s (as Prometheus would) and utime + stime of the process (/proc/PID/stat) and of each "
        "thread (/proc/PID/task/TID/stat) are read at the start and at the end. "
        + (f"A quiet run starts once the host is quiet by the kernel's count: /proc/vmstat nr_free_pages moved "
           f"by less than {m['quiet_pages']} pages (0.1% of memory) over {m['quiet_window']} s (waited for at most "
           f"{m['quiet_max']} s; after a busy run the free lists keep growing for minutes while pgfree barely moves)"
           + (", and DAMON's pageout schemes reclaimed less than as many pages over the same window "
              "(their sz_applied, where a platform runs such schemes: the pages they free make the scanner read "
              "the blocks again). " if m.get("quiet_damon") == "1" else ". ")
           if "quiet_pages" in m else "")
        + "Busy: from before fragd starts "
        f"until it stops, `bench/cost_churn.py` churns memory: every {m['period']} s it maps {m['anon_mib']} MiB "
        f"of anonymous memory, touches every page and unmaps it, then writes a file of {m['file_mib']} MiB, "
        "reads it back, drops it from the page cache (fdatasync, posix_fadvise DONTNEED) and deletes it. "
        "Threads: main (the thread whose id is the pid: collector tick, control socket, the families built "
        "at a scrape), the pageblock scanner (`fragd-scan`), HTTP (civetweb's threads), other (the rest). "
        "Share of one core = CPU seconds / wall seconds. The scanner's figures come from "
        + ("fragd's own `fragd_scan_cpu_seconds_total` and `fragd_scan_pageblocks_read_total`, read at the start "
           "and the end of each run." if exported else
           "the `fragd-scan` thread's /proc stat: **this fragd exports no fragd_scan_cpu_seconds_total**, so the "
           "scanner's rounds and blocks read are not known here."),
        "",
        "| arm | runs | fragd, % of one core: median (min–max) | main thread | scanner | HTTP | other threads | "
        "scan rounds per minute | pageblocks read per round | host CPU busy (all CPUs) | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    verdicts = {}
    for arm, goal in (("quiet", GOAL_QUIET), ("busy", GOAL_BUSY)):
        fs = figs[arm]
        proc = [f["pct"]["process"] for f in fs]
        rpm = [f["rounds"] / f["seconds"] * 60 for f in fs if f["rounds"] is not None]
        bpr = [f["blocks_sample"] / f["rounds"] for f in fs if f["rounds"] and f["blocks_sample"] is not None]
        v = Verdict(proc, median, goal, "<=", "runs")  # the runs of an arm are its bootstrap rows
        verdicts[arm] = v
        lines.append(
            f"| {arm} | {len(fs)} | **{spread(proc, '{:.3f}')}** | {spread([f['pct']['main'] for f in fs], '{:.3f}')} | "
            f"{spread([f['scan_pct'] for f in fs], '{:.3f}')} | {spread([f['pct']['http'] for f in fs], '{:.3f}')} | "
            f"{spread([f['pct']['other'] for f in fs], '{:.3f}')} | {spread(rpm, '{:.2f}')} | {spread(bpr, '{:.0f}')} | "
            f"{spread([f['host_busy'] for f in fs], '{:.1f}')}% | ≤ {goal}%: {v.bold()} |")
    lines += [
        "",
        "Goals (medians; met / not met only when the 95% bootstrap interval over the runs clears / "
        "misses the goal, else inconclusive): " + "; ".join(
            f"{arm} ≤ {v.goal}% of a core: {v.text('{:.3f}%')}" for arm, v in verdicts.items()) + ".",
        "",
        "<details><summary>each run</summary>",
        "",
        "| run | arm | seconds | CPU ticks (1/%s s) | %% of a core | main | scanner | HTTP | other | rounds ok | "
        "unchanged | memory changes (zones) | quiet wait s (free pages moved%s) | blocks (sample) | blocks (full) | scrapes ok | churn cycles (median s) | host busy | load at start → end |"
        % (figs["quiet"][0]["clk"], "; MiB DAMON paged out" if m.get("quiet_damon") == "1" else ""),
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    order = [(arm, r, figs[arm][r]) for r in range(runs) for arm in ("quiet", "busy")]
    for i, (arm, r, f) in enumerate(order):
        def n(x):
            return "-" if x is None else f"{x:.0f}"
        churn = f"{f['churn_cycles']} ({f['churn_cycle_s']:.1f})" if f["churn_cycles"] else "-"
        lines.append(
            f"| {i + 1} | {arm} {r + 1} | {f['seconds']:.0f} | {f['ticks']} | {f['pct']['process']:.3f} | "
            f"{f['pct']['main']:.3f} | {f['scan_pct']:.3f} | {f['pct']['http']:.3f} | {f['pct']['other']:.3f} | "
            f"{n(f['rounds'])} | {n(f['unchanged'])} | {changes_cell(f['changes'])}{damon_cell(f['env'])} | {wait_cell(f['env'])} | {n(f['blocks_sample'])} | {n(f['blocks_full'])} | "
            f"{f['scrapes_ok']}/{f['scrapes']} | {churn} | {f['host_busy']:.1f}% | "
            f"{f['env'].get('load_start', '?')} → {f['env'].get('load_end', '?')} |")
    comms = sorted({c for fs in figs.values() for f in fs for c in f["other_comms"]})
    exits = sorted({f["env"].get("fragd_exit", "?") for fs in figs.values() for f in fs})
    lines += ["", f"Other threads: {', '.join(comms) if comms else 'none'}. fragd's exit status after SIGTERM: "
              f"{', '.join(exits)} ({'every run' if exits == ['0'] else 'see the work directory'}).",
              "", "</details>", ""]

    # The full scan's cost, and the projection.
    scans = benchlib.read_jsonl(os.path.join(work, "full", "scans.jsonl"))
    pages = scans[0]["pages_read"]
    gib = pages * 4096 / 2**30
    clk = figs["quiet"][0]["clk"]
    cpu = [s["metric_cpu_s"] if "metric_cpu_s" in s else s["thread_ticks"] / clk for s in scans]
    wall = [s["duration_ns"] / 1e6 for s in scans]
    per_gib = median(cpu) / gib
    busy = figs["busy"]
    rate = [f["rounds"] / f["seconds"] for f in busy if f["rounds"] is not None]
    # Without fragd_scans_total, or without a round in the busy runs (runs shorter than the
    # interval), the shipped pageblocks.interval: one round a minute while memory changes.
    measured_rate = bool(rate) and median(rate) > 0
    rate_s = median(rate) if measured_rate else 1 / 60
    sampled = median([f["scan_pct"] for f in busy])
    sample_blocks = [f["blocks_sample"] for f in busy if f["blocks_sample"]]
    per_block_us = (median([f["scan_cpu_metric"] / f["blocks_sample"] for f in busy
                         if f["scan_cpu_metric"] and f["blocks_sample"]]) * 1e6) if exported and sample_blocks else None
    mm_here, mf_here = mapmem(os.path.join(work, "mapmem", "here.txt"))
    lines += [
        "### The pageblock scan by memory size",
        "",
        f"Full scans: {len(scans)} asked with `fragctl map --max-age 0` of a fragd with the shipped config; each "
        f"reads {pages} page frames ({gib:.1f} GiB: every pfn of every zone's span). Wall time (the answer's "
        f"duration_ns) {spread(wall, '{:.0f}')} ms; the scanner thread's CPU time "
        f"{spread([c * 1000 for c in cpu], '{:.0f}')} ms "
        f"({'fragd_scan_cpu_seconds_total' if all('metric_cpu_s' in s for s in scans) else 'the fragd-scan thread, /proc stat'}): "
        f"**{per_gib * 1000:.1f} ms of CPU per GiB**.",
        "",
        f"The old design read every page frame in each round, {rate_s * 60:.2f} rounds a minute under this churn (" + ("the busy arm's median" if measured_rate else
                                            ("no round in the busy runs" if rate else "fragd exports no fragd_scans_total")
                                            + ": the shipped `pageblocks.interval`, one a minute while memory changes, "
                                            "is assumed") + "). At that rate a "
        f"full scan per round costs (CPU per GiB × memory × rounds per second). The sampled design (shipped "
        f"`pageblocks.mode: sample`) reads as many blocks a round as `pageblocks.budget` (0.1% of a core) buys: "
        f"its scanner used {sampled:.3f}% of a core in the busy arm here (median)"
        + (f", {per_block_us:.0f} µs of CPU a block" if per_block_us else "")
        + "; what a round reads is set by the budget and the cost of a block, not by the memory size (the "
          "guests below). Map memory: what fragd's BPF maps take (`build/bpf_map_memory --ram G`: the objects "
          "loaded with the pollution ledger sized for G GiB of 4 KiB page frames by the loader's own sizing "
          f"function, the kernel's memlock; this machine's {mf_here.get('possible_cpus', '?')} possible CPUs).",
        "",
        "| memory | one full scan, CPU | old design: a full scan per round | sampled design | fragd's BPF maps |",
        "|---|---:|---:|---:|---:|",
        f"| {gib:.0f} GiB of page frames (here, measured) | {median(cpu):.2f} s | {rate_s * median(cpu) * 100:.3f}% | "
        f"{sampled:.3f}% (measured) | {mf_here['total'] / 2**20:.2f} MiB |",
    ]
    share_1t = None
    logs = sorted(glob.glob(os.path.join(work, "guests", "guest-*.log")))
    gs = {} if m.get("guests_failed") else {
        re.sub(r"^guest-|\.log$", "", os.path.basename(p)): guest(p) for p in logs}
    check = size_check(gs)
    # The sampled scanner's share is measured (busy runs), not projected: its runs are the rows.
    scan_v = Verdict([f["scan_pct"] for f in busy], median, GOAL_SCAN_1TIB, "<=", "busy runs")
    for g in SIZES_GIB:
        full_cpu = per_gib * g
        mm, mf = mapmem(os.path.join(work, "mapmem", f"ram{g}.txt"))
        old = rate_s * full_cpu * 100
        if g == 1024:
            share_1t = (old, sampled)
        lines.append(f"| {gib_name(g)} (projected) | {full_cpu:.1f} s | {old:.2f}% | {sampled:.3f}% | "
                     f"{mf['total'] / 2**20:.2f} MiB (ledger {mf['ledger_entries']} records) |")
    lines += [
        "",
        f"Goal: the scan's share at 1 TiB ≤ {GOAL_SCAN_1TIB}% of a core at the same churn: "
        f"{scan_v.text('{:.3f}%')} by the sampled design, a projection: measured on {gib:.0f} GiB, where a "
        f"sampled round reads as many blocks as at 1 TiB"
        + (f" (checked in the guests below: memory {check[0]:.0f}x, up to {check[2]:.0f} GiB, and a sampled round "
           f"read {check[1]:.2f}x the blocks)" if check else " (no guest of another size checked it in this run)")
        + f"; the old design's full scan per round would take {share_1t[0]:.1f}%.",
        "",
    ]

    # Guests.
    lines += ["### Guests: what grows with memory and CPUs", ""]
    if not gs:
        lines += [f"Not measured in this run: {m.get('guests_failed', 'no guest log')}.", ""]
    else:
        lines += [
            (f"Not booted again in this run (`BENCH_COST_GUESTS=kept`): the guests' console lines of the run of "
             f"{m['guests_kept']}, kept in bench/data/cost. " if m.get("guests_kept") else "")
            + f"`bench/cost_guest.sh` booted Debian 12's kernel {next(iter(gs.values()))['facts'].get('kernel', '?')} "
            f"under qemu ({m.get('guests_seconds', '?')} s for all) with fragd's shipped config, `pageblocks.max_age` "
            "set to its interval (a round every interval, memory changed or not). qemu runs without KVM here (TCG): "
            "times are not real, counts are. A round reads what the budget buys at what a block cost the "
            "guest's scanner; the rounds are counted once fragd's start pass has read every block (the steady "
            "state a host reaches minutes after fragd starts), and the first of them is left out.",
            "",
            "| guest | MemTotal | possible CPUs | pageblocks of the zones | start pass: s (TCG), rounds | rounds seen "
            "after it | pageblocks per round: median (min–max) | scanner CPU per round, ms (TCG) | full scan: page "
            "frames read | BPF maps |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, g in gs.items():
            zb = sum(int(v) for k, v in g["facts"].items() if k.startswith("zone_blocks_"))
            pr = per_round(g["rounds"])
            lines.append(
                f"| {name} | {int(g['facts'].get('mem_total_kib', 0)) / 2**20:.1f} GiB | "
                f"{g['mapfacts'].get('possible_cpus', '?')} | {zb} | "
                f"{g['facts'].get('start_pass_s', '-').replace(' rounds ', ', ')} | {len(pr)} | "
                f"{spread([b for b, _ in pr])} | {spread([None if c is None else c * 1000 for _, c in pr])} | "
                f"{g['full'][0] if g['full'] else '-'} | "
                f"{g['mapfacts']['total'] / 2**20:.2f} MiB (ledger {g['mapfacts'].get('ledger_entries', '?')}) |")
        if check:
            ratio_mem, ratio_blk, _, full_ratio = check
            lines += ["", f"Memory {ratio_mem:.1f}x: a sampled round read {ratio_blk:.2f}x the blocks"
                      + (f", a full scan {full_ratio:.1f}x the page frames." if full_ratio else ".")]
        cpus = sorted(gs.values(), key=lambda g: g["mapfacts"].get("possible_cpus", 0))
        if len(cpus) >= 2 and cpus[0]["mapfacts"].get("possible_cpus") != cpus[-1]["mapfacts"].get("possible_cpus"):
            a, b = cpus[0], cpus[-1]
            # Same memory size needed to read a per-CPU slope off the totals: compare the maps but the ledger.
            def no_ledger(g):
                return g["mapfacts"]["total"] - g["maps"].get(("pollution", "polluted_blocks"), 0)
            dc = b["mapfacts"]["possible_cpus"] - a["mapfacts"]["possible_cpus"]
            slope = (no_ledger(b) - no_ledger(a)) / dc
            lines += ["", f"Possible CPUs {a['mapfacts']['possible_cpus']} → {b['mapfacts']['possible_cpus']}: the "
                      f"maps but the ledger took {no_ledger(a)} → {no_ledger(b)} bytes, **{slope:.0f} bytes per "
                      "possible CPU** (the per-CPU arrays: statistics and histograms; the hash maps' per-CPU locks "
                      "and spare elements)."]
        lines.append("")
    benchlib.publish(out, "cost", lines)


if __name__ == "__main__":
    main()
