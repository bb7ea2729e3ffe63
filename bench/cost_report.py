# SPDX-License-Identifier: Apache-2.0
"""Writes the cost section of BENCHMARKS.md from bench/cost.sh's work directory.

usage: cost_report.py WORK OUTPUT
"""
import collections
import glob
import os
import re

import benchlib
from benchlib import fmt_int, row, table
from verdict import Verdict, median, spread

GOAL_QUIET, GOAL_BUSY, GOAL_SCAN_1TIB = 0.1, 0.2, 0.3  # % of one core
SIZES_GIB = (64, 256, 1024, 4096)
# run_figures' keys for what fragd's own counters moved over a run.
METRICS = (("rounds", 'fragd_scans_total{result="ok"}'), ("unchanged", 'fragd_scans_total{result="unchanged"}'),
           ("blocks_sample", 'fragd_scan_pageblocks_read_total{how="sample"}'),
           ("blocks_full", 'fragd_scan_pageblocks_read_total{how="full"}'),
           ("scan_cpu_metric", "fragd_scan_cpu_seconds_total"))


def gib_name(g):
    return f"{g // 1024} TiB" if g >= 1024 and g % 1024 == 0 else f"{g} GiB"


def thread_class(t, pid):
    if t["tid"] == pid:
        return "main"
    return "scan" if t["comm"] == "fragd-scan" else "http" if t["comm"].startswith("civetweb") else "other"


def memory_changes(log):
    """-> the zones of each memory change that started a scan after the first (fragd at debug
    level logs them: "memory changed since the last (node 0 DMA32: ...)"), over the whole run;
    None without the log (runs before it was kept)."""
    if not os.path.exists(log):
        return None
    with open(log, errors="replace") as f:
        found = (re.search(r"memory changed since the last \((node \d+ \w+|the zones changed)", line) for line in f)
        return [m.group(1).replace("node ", "") for m in found if m]


def changes_cell(zones):
    if zones is None:
        return "-"
    counts = ", ".join(f"{z} {n}" for z, n in sorted(collections.Counter(zones).items()))
    return f"{len(zones)}" + (f" ({counts})" if zones else "")


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
    dt, clk = b["mono"] - a["mono"], a["clk_tck"]
    share = lambda ticks: ticks / clk / dt * 100  # % of one core  # noqa: E731
    pid = min(t["tid"] for t in a["threads"])  # the main thread's id is the pid, the lowest
    before = {t["tid"]: t["ticks"] for t in a["threads"]}
    ticks = dict.fromkeys(("main", "scan", "http", "other"), 0)
    for t in b["threads"]:
        ticks[thread_class(t, pid)] += t["ticks"] - before.get(t["tid"], 0)
    pct = {k: share(v) for k, v in ticks.items()}
    pct["process"] = share(b["proc_ticks"] - a["proc_ticks"])
    ha, hb = a["host_cpu"], b["host_cpu"]
    host_total = sum(hb) - sum(ha)
    host_idle = (hb[3] - ha[3]) + (hb[4] - ha[4])  # idle + iowait
    ma, mb = a["metrics"], b["metrics"]
    f = {
        "env": env, "seconds": dt, "ticks": b["proc_ticks"] - a["proc_ticks"], "clk": clk, "pct": pct,
        "other_comms": sorted({t["comm"] for t in b["threads"] if thread_class(t, pid) == "other"}),
        "host_busy": (host_total - host_idle) / host_total * 100 if host_total else 0.0,
        **{k: mb[key] - ma[key] if key in ma and key in mb else None for k, key in METRICS},
    }
    f["scan_pct"] = f["scan_cpu_metric"] / dt * 100 if f["scan_cpu_metric"] is not None else pct["scan"]
    sc = [w for w in benchlib.read_columns(os.path.join(d, "scrapes.txt")) if w]
    f.update(scrapes=len(sc), scrapes_ok=sum(1 for s in sc if s[0] == "200"),
             changes=memory_changes(os.path.join(d, "fragd.log")))
    cyc = benchlib.read_jsonl(os.path.join(d, "churn.jsonl"))
    f.update(churn_cycles=len(cyc), churn_cycle_s=median([c["cycle_s"] for c in cyc]) if cyc else None)
    return f


def shares(f):
    """-> a run's % of one core: fragd's process, its main thread, scanner, HTTP and other threads."""
    return f["pct"]["process"], f["pct"]["main"], f["scan_pct"], f["pct"]["http"], f["pct"]["other"]


def mapmem_line(p, maps, facts):
    """Puts one line of bpf_map_memory's output (its words) in maps {(object, map): bytes} or facts {key: value}."""
    if len(p) == 3:
        maps[(p[0], p[1])] = int(p[2])
    elif len(p) == 2:
        facts[p[0]] = int(p[1])


def map_memory(path):
    """-> ({(object, map): bytes}, {key: value}) of bpf_map_memory's output."""
    maps, facts = {}, {}
    with open(path) as f:
        for line in f:
            mapmem_line(line.split(), maps, facts)
    return maps, facts


def read_mapmem(work):
    """-> {"here" or G: map_memory} of cost.sh's mapmem/here.txt and mapmem/ramG.txt."""
    return {"here" if name == "here" else int(name[3:]): map_memory(p)
            for p in glob.glob(os.path.join(work, "mapmem", "*.txt"))
            for name in [os.path.basename(p)[:-4]]}


def guest(path):
    """-> the facts, map lines, rounds and full scan of one guest's console lines."""
    g = {"facts": {}, "maps": {}, "mapfacts": {}, "rounds": [], "full": None}
    with open(path) as f:
        for p in (line.split() for line in f):
            if not p:
                continue
            if p[0] == "FRAGD-COST" and len(p) >= 3:
                g["facts"][p[1]] = " ".join(p[2:])
            elif p[0] == "FRAGD-MAPMEM":
                mapmem_line(p[1:], g["maps"], g["mapfacts"])
            elif p[0] == "FRAGD-ROUND" and len(p) == 5:
                g["rounds"].append((float(p[1]), int(p[2]), int(p[3]), float(p[4]) if p[4] != "nan" else None))
            elif p[0] == "FRAGD-FULL" and len(p) == 3:
                g["full"] = (int(p[1]), int(p[2]))
    return g


def per_round(rounds):
    """-> [(blocks, cpu_s)] per round from the cumulative scrapes, the first round (which
    also measured what a block costs) left out."""
    return [((b1 - b0) / (r1 - r0), (c1 - c0) / (r1 - r0) if c0 is not None and c1 is not None else None)
            for (_, r0, b0, c0), (_, r1, b1, c1) in zip(rounds, rounds[1:]) if r1 > r0]


def size_check(gs):
    """-> (memory ratio, blocks-per-round ratio, largest guest's GiB, full-scan ratio or None)
    between the smallest and the largest guest that saw sampled rounds; None with fewer than 2."""
    kib = lambda g: int(g["facts"]["mem_total_kib"])  # noqa: E731
    blocks = lambda g: median([b for b, _ in per_round(g["rounds"])])  # noqa: E731
    sized = [g for g in gs.values() if per_round(g["rounds"])]
    if len(sized) < 2:
        return None
    lo, hi = min(sized, key=kib), max(sized, key=kib)
    if lo is hi:
        return None
    return (kib(hi) / kib(lo), blocks(hi) / blocks(lo), kib(hi) / 2**20,
            hi["full"][0] / lo["full"][0] if hi["full"] and lo["full"] else None)


def runs_part(m, figs, exported):
    """The arms' table, the goals and each run's row."""
    runs = int(m["runs"])
    damon = m.get("quiet_damon") == "1"
    lines = [
        benchlib.measured_on(m) + f". Reproduce: `{benchlib.quick_env(m)}bash bench/cost.sh` as root after the build "
        f"(part of `make bench`; this run took {m['minutes']} min, load average {m['load_start']} at start, "
        f"{m['load_end']} at the end).",
        "",
        f"Two arms, interleaved (quiet, busy, quiet, busy, ...), {runs} run{'s' if runs != 1 else ''} each. A run: "
        "fragd with the shipped configs/fragd.yaml (`build/fragd --config configs/fragd.yaml --listen "
        f"127.0.0.1:PORT --socket PATH`) starts, runs {m['settle']} s, then for {m['seconds']} s a curl loop scrapes "
        f"/metrics every {m['scrape']} s (as Prometheus would) and utime + stime of the process (/proc/PID/stat) and "
        "of each thread (/proc/PID/task/TID/stat) are read at the start and at the end. "
        + (f"A quiet run starts once the host is quiet by the kernel's count: /proc/vmstat nr_free_pages moved by "
           f"less than {m['quiet_pages']} pages (0.1% of memory) over {m['quiet_window']} s (waited for at most "
           f"{m['quiet_max']} s; after a busy run the free lists keep growing for minutes while pgfree barely moves)"
           + (", and DAMON's pageout schemes reclaimed less than as many pages over the same window (their "
              "sz_applied, where a platform runs such schemes: the pages they free make the scanner read the blocks "
              "again). " if damon else ". ") if "quiet_pages" in m else "")
        + f"Busy: from before fragd starts until it stops, `bench/cost_churn.py` churns memory: every {m['period']} s "
        f"it maps {m['anon_mib']} MiB of anonymous memory, touches every page and unmaps it, then writes a file of "
        f"{m['file_mib']} MiB, reads it back, drops it from the page cache (fdatasync, posix_fadvise DONTNEED) and "
        "deletes it. Threads: main (the thread whose id is the pid: collector tick, control socket, the families "
        "built at a scrape), the pageblock scanner (`fragd-scan`), HTTP (civetweb's threads), other (the rest). "
        "Share of one core = CPU seconds / wall seconds. The scanner's figures come from "
        + ("fragd's own `fragd_scan_cpu_seconds_total` and `fragd_scan_pageblocks_read_total`, read at the start "
           "and the end of each run." if exported else
           "the `fragd-scan` thread's /proc stat: **this fragd exports no fragd_scan_cpu_seconds_total**, so the "
           "scanner's rounds and blocks read are not known here."),
        "",
    ]
    lines += table(["arm", "runs", "fragd, % of one core: median (min–max)", "main thread", "scanner", "HTTP",
                    "other threads", "scan rounds per minute", "pageblocks read per round", "host CPU busy (all CPUs)",
                    "goal"], "lrrrrrrrrrl")
    verdicts = {}
    for arm, goal in (("quiet", GOAL_QUIET), ("busy", GOAL_BUSY)):
        fs = figs[arm]
        proc, *threads = zip(*map(shares, fs))
        rpm = [f["rounds"] / f["seconds"] * 60 for f in fs if f["rounds"] is not None]
        bpr = [f["blocks_sample"] / f["rounds"] for f in fs if f["rounds"] and f["blocks_sample"] is not None]
        v = verdicts[arm] = Verdict(proc, median, goal, "<=", "runs")  # the runs of an arm are its bootstrap rows
        lines.append(row([arm, len(fs), f"**{spread(proc, '{:.3f}')}**", *(spread(x, "{:.3f}") for x in threads),
                          spread(rpm, "{:.2f}"), spread(bpr), spread([f["host_busy"] for f in fs], "{:.1f}") + "%",
                          f"≤ {goal}%: {v.bold()}"]))
    lines += [
        "",
        "Goals (medians; met / not met only when the 95% bootstrap interval over the runs clears / "
        "misses the goal, else inconclusive): " + "; ".join(
            f"{arm} ≤ {v.goal}% of a core: {v.text('{:.3f}%')}" for arm, v in verdicts.items()) + ".",
        "",
        "<details><summary>each run</summary>",
        "",
    ]
    lines += table(["run", "arm", "seconds", f"CPU ticks (1/{figs['quiet'][0]['clk']} s)", "% of a core", "main",
                    "scanner", "HTTP", "other", "rounds ok", "unchanged", "memory changes (zones)",
                    "quiet wait s (free pages moved" + ("; MiB DAMON paged out" if damon else "") + ")",
                    "blocks (sample)", "blocks (full)", "scrapes ok", "churn cycles (median s)", "host busy",
                    "load at start → end"], "rlrrrrrrrrrlrrrrrrl")
    for i, (arm, r) in enumerate((arm, r) for r in range(runs) for arm in ("quiet", "busy")):
        f, env = figs[arm][r], figs[arm][r]["env"]
        lines.append(row([
            i + 1, f"{arm} {r + 1}", f"{f['seconds']:.0f}", f["ticks"], *(f"{x:.3f}" for x in shares(f)),
            fmt_int(f["rounds"]), fmt_int(f["unchanged"]), changes_cell(f["changes"]) + damon_cell(env), wait_cell(env),
            fmt_int(f["blocks_sample"]), fmt_int(f["blocks_full"]), f"{f['scrapes_ok']}/{f['scrapes']}",
            f"{f['churn_cycles']} ({f['churn_cycle_s']:.1f})" if f["churn_cycles"] else "-", f"{f['host_busy']:.1f}%",
            f"{env.get('load_start', '?')} → {env.get('load_end', '?')}"]))
    comms = sorted({c for fs in figs.values() for f in fs for c in f["other_comms"]})
    exits = sorted({f["env"].get("fragd_exit", "?") for fs in figs.values() for f in fs})
    return lines + ["", f"Other threads: {', '.join(comms) if comms else 'none'}. fragd's exit status after SIGTERM: "
                    f"{', '.join(exits)} ({'every run' if exits == ['0'] else 'see the work directory'}).",
                    "", "</details>", ""]


def scan_part(m, work, figs, exported, mapmem):
    """The full scan's cost and its projection by memory size; -> (lines, the guests, their size_check)."""
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
    how_fast = ("the busy arm's median" if measured_rate else
                ("no round in the busy runs" if rate else "fragd exports no fragd_scans_total")
                + ": the shipped `pageblocks.interval`, one a minute while memory changes, is assumed")
    sampled = median([f["scan_pct"] for f in busy])
    per_block = [f["scan_cpu_metric"] / f["blocks_sample"] for f in busy if f["scan_cpu_metric"] and f["blocks_sample"]]
    per_block_us = median(per_block) * 1e6 if exported and any(f["blocks_sample"] for f in busy) else None
    here = mapmem["here"][1]
    cpu_from = ("fragd_scan_cpu_seconds_total" if all("metric_cpu_s" in s for s in scans)
                else "the fragd-scan thread, /proc stat")
    lines = [
        "### The pageblock scan by memory size",
        "",
        f"Full scans: {len(scans)} asked with `fragctl map --max-age 0` of a fragd with the shipped config; each "
        f"reads {pages} page frames ({gib:.1f} GiB: every pfn of every zone's span). Wall time (the answer's "
        f"duration_ns) {spread(wall, '{:.0f}')} ms; the scanner thread's CPU time {spread([c * 1000 for c in cpu])} ms "
        f"({cpu_from}): **{per_gib * 1000:.1f} ms of CPU per GiB**.",
        "",
        f"The old design read every page frame in each round, {rate_s * 60:.2f} rounds a minute under this churn "
        f"({how_fast}). At that rate a full scan per round costs (CPU per GiB × memory × rounds per second). The "
        "sampled design (shipped `pageblocks.mode: sample`) reads as many blocks a round as `pageblocks.budget` (0.1% "
        f"of a core) buys: its scanner used {sampled:.3f}% of a core in the busy arm here (median)"
        + (f", {per_block_us:.0f} µs of CPU a block" if per_block_us else "")
        + "; what a round reads is set by the budget and the cost of a block, not by the memory size (the guests "
          "below). Map memory: what fragd's BPF maps take (`build/bpf_map_memory --ram G`: the objects loaded with "
          "the pollution ledger sized for G GiB of 4 KiB page frames by the loader's own sizing function, the "
          f"kernel's memlock; this machine's {here.get('possible_cpus', '?')} possible CPUs).",
        "",
    ]
    lines += table(["memory", "one full scan, CPU", "old design: a full scan per round", "sampled design",
                    "fragd's BPF maps"], "lrrrr")
    lines.append(f"| {gib:.0f} GiB of page frames (here, measured) | {median(cpu):.2f} s | "
                 f"{rate_s * median(cpu) * 100:.3f}% | {sampled:.3f}% (measured) | {here['total'] / 2**20:.2f} MiB |")
    logs = sorted(glob.glob(os.path.join(work, "guests", "guest-*.log")))
    gs = {} if m.get("guests_failed") else {
        re.sub(r"^guest-|\.log$", "", os.path.basename(p)): guest(p) for p in logs}
    check = size_check(gs)
    # The sampled scanner's share is measured (busy runs), not projected: its runs are the rows.
    scan_v = Verdict([f["scan_pct"] for f in busy], median, GOAL_SCAN_1TIB, "<=", "busy runs")
    old = {g: rate_s * (per_gib * g) * 100 for g in SIZES_GIB}  # a full scan per round, % of a core
    for g in SIZES_GIB:
        mf = mapmem[g][1]
        lines.append(f"| {gib_name(g)} (projected) | {per_gib * g:.1f} s | {old[g]:.2f}% | {sampled:.3f}% | "
                     f"{mf['total'] / 2**20:.2f} MiB (ledger {mf['ledger_entries']} records) |")
    lines += [
        "",
        f"Goal: the scan's share at 1 TiB ≤ {GOAL_SCAN_1TIB}% of a core at the same churn: "
        f"{scan_v.text('{:.3f}%')} by the sampled design, a projection: measured on {gib:.0f} GiB, where a "
        f"sampled round reads as many blocks as at 1 TiB"
        + (f" (checked in the guests below: memory {check[0]:.0f}x, up to {check[2]:.0f} GiB, and a sampled round "
           f"read {check[1]:.2f}x the blocks)" if check else " (no guest of another size checked it in this run)")
        + f"; the old design's full scan per round would take {old[1024]:.1f}%.",
        "",
    ]
    return lines, gs, check


def guests_part(m, gs, check):
    lines = ["### Guests: what grows with memory and CPUs", ""]
    if not gs:
        return lines + [f"Not measured in this run: {m.get('guests_failed', 'no guest log')}.", ""]
    lines += [
        (f"Not booted again in this run (`BENCH_COST_GUESTS=kept`): the guests' console lines of the run of "
         f"{m['guests_kept']}, kept in bench/data/cost. " if m.get("guests_kept") else "")
        + f"`bench/cost_guest.sh` booted Debian 12's kernel {next(iter(gs.values()))['facts'].get('kernel', '?')} "
        f"under qemu ({m.get('guests_seconds', '?')} s for all) with fragd's shipped config, `pageblocks.max_age` "
        "set to its interval (a round every interval, memory changed or not). qemu runs without KVM here (TCG): "
        "times are not real, counts are. A round reads what the budget buys at what a block cost the guest's "
        "scanner; the rounds are counted once fragd's start pass has read every block (the steady state a host "
        "reaches minutes after fragd starts), and the first of them is left out.",
        "",
    ]
    lines += table(["guest", "MemTotal", "possible CPUs", "pageblocks of the zones", "start pass: s (TCG), rounds",
                    "rounds seen after it", "pageblocks per round: median (min–max)",
                    "scanner CPU per round, ms (TCG)", "full scan: page frames read", "BPF maps"], "lrrrrrrrrr")
    for name, g in gs.items():
        facts, mf, pr = g["facts"], g["mapfacts"], per_round(g["rounds"])
        # Not benchlib.row: a guest's name may be empty.
        lines.append("| " + " | ".join(map(str, [
            name, f"{int(facts.get('mem_total_kib', 0)) / 2**20:.1f} GiB", mf.get("possible_cpus", "?"),
            sum(int(v) for k, v in facts.items() if k.startswith("zone_blocks_")),
            facts.get("start_pass_s", "-").replace(" rounds ", ", "), len(pr), spread([b for b, _ in pr]),
            spread([None if c is None else c * 1000 for _, c in pr]), g["full"][0] if g["full"] else "-",
            f"{mf['total'] / 2**20:.2f} MiB (ledger {mf.get('ledger_entries', '?')})"])) + " |")
    if check:
        ratio_mem, ratio_blk, _, full_ratio = check
        lines += ["", f"Memory {ratio_mem:.1f}x: a sampled round read {ratio_blk:.2f}x the blocks"
                  + (f", a full scan {full_ratio:.1f}x the page frames." if full_ratio else ".")]
    pair = cpu_pair(gs)
    if pair:
        (a, na), (b, nb) = ((g["mapfacts"], no_ledger(g)) for g in pair)
        lines += ["", f"Possible CPUs {a['possible_cpus']} → {b['possible_cpus']}: the maps but the ledger took "
                  f"{na} → {nb} bytes, **{cpu_slope(pair):.0f} bytes per possible CPU** (the per-CPU arrays: "
                  "statistics and histograms; the hash maps' per-CPU locks and spare elements)."]
    return lines + [""]


LEDGER = ("pollution", "polluted_blocks")


def no_ledger(g):
    return g["mapfacts"]["total"] - g["maps"].get(LEDGER, 0)


def cpu_pair(gs):
    """-> (a guest with fewer CPUs, the guest with the most), the first of the same ledger size
    where one has it (so that each map's bytes differ by the CPUs alone), or None."""
    most = max(gs.values(), key=lambda g: g["mapfacts"].get("possible_cpus", 0), default=None)
    fewer = sorted((g for g in gs.values() if most and g["mapfacts"].get("possible_cpus", 0) <
                    most["mapfacts"]["possible_cpus"]),
                   key=lambda g: g["mapfacts"].get("ledger_entries") != most["mapfacts"].get("ledger_entries"))
    return (fewer[0], most) if fewer else None


def cpu_slope(pair):
    """Bytes per possible CPU of the maps but the ledger (the guests' memory sizes may differ)."""
    (a, b) = pair
    return (no_ledger(b) - no_ledger(a)) / (b["mapfacts"]["possible_cpus"] - a["mapfacts"]["possible_cpus"])


def grows_with(name, ram, cpus):
    """-> what a map's bytes grow with: memory when --ram's smallest and largest sizes differ,
    possible CPUs when the guests of one ledger size but not one CPU count do."""
    what = [w for w, pair in (("memory", ram), ("possible CPUs", cpus)) if pair and pair[0].get(name) != pair[1].get(name)]
    return ", ".join(what) or "fixed"


def maps_part(mapmem, gs):
    """Each map's bytes here, what it grows with, and the bound that follows."""
    maps, facts = mapmem["here"]
    rams = sorted((g, mm) for g, mm in mapmem.items() if g != "here")
    ram = (rams[0][1][0], rams[-1][1][0]) if len(rams) >= 2 else None
    pair = cpu_pair(gs)
    same_ledger = pair and pair[0]["mapfacts"].get("ledger_entries") == pair[1]["mapfacts"].get("ledger_entries")
    cpus = (pair[0]["maps"], pair[1]["maps"]) if same_ledger else None
    lines = [
        "### What fragd's BPF maps take",
        "",
        "`build/bpf_map_memory` loads fragd's BPF objects as fragd does and prints what the kernel counts for each "
        "map (the `memlock:` of its fdinfo, what `bpftool map show` prints; since Linux 6.4 what the map type "
        f"allocated): here {facts['total']:,} bytes in all ({facts['total'] / 2**20:.2f} MiB), of which the pollution "
        f"ledger, one record per 2 MiB pageblock of the physical address range, {maps[LEDGER]:,} "
        f"({facts['ledger_entries']} records). `attribution.top_cgroups` and `top_callsites` choose which cgroups "
        "and call sites get series of their own and size no map; `bpf.track_pollution: false` leaves the ledger one "
        "record.",
        "",
    ]
    if ram and pair:
        g_hi, (m_hi, f_hi) = rams[-1]
        slope, base = cpu_slope(pair), facts["total"] - maps[LEDGER]
        mid = max((r for r in rams if r[1][1]["ledger_entries"] < f_hi["ledger_entries"]), default=rams[0])
        per_record = mid[1][0][LEDGER] / mid[1][1]["ledger_entries"]
        lines += [
            f"The bound, from these figures (the slope per CPU from the guests above): bytes = {base:,} + {slope:,.0f} x (possible CPUs - 2) + the ledger, "
            f"{per_record:.0f} bytes a record (`--ram {mid[0]}`) for min(pageblocks of the physical address range, "
            f"{f_hi['ledger_entries']:,}) records, at most {m_hi[LEDGER]:,} bytes (`--ram {g_hi}`). So whatever "
            f"the memory: at most {(base + m_hi[LEDGER]) / 2**20:.1f} MiB + {slope / 1024:.1f} KiB per possible CPU "
            f"beyond 2. Past {f_hi['ledger_entries']:,} records the ledger stops growing; fallbacks into blocks "
            "beyond its records are counted (`fragd_pollution_untracked_total{reason=\"map_full\"}`), not recorded.",
            "",
        ]
    lines += ["<details><summary>each map</summary>", "",
              f"Grows with: memory where `--ram {rams[0][0]}` and `--ram {rams[-1][0]}` differ, possible CPUs where "
              "the guests of one ledger size with the fewest and the most CPUs do." if ram and cpus else
              "Grows with: not known without the `--ram` sizes and the guests.", ""]
    lines += table(["object", "map", "bytes here", "grows with"], "llrl")
    for (obj, name), n in maps.items():
        lines.append(row([obj, f"`{name}`", f"{n:,}", grows_with((obj, name), ram, cpus)]))
    return lines + ["", "</details>", ""]


def main():
    work, out = benchlib.positional(2)
    m = benchlib.read_env(os.path.join(work, "meta.env"))
    figs = {arm: [run_figures(os.path.join(work, f"{arm}{r}")) for r in range(1, int(m["runs"]) + 1)]
            for arm in ("quiet", "busy")}
    exported = all(f["scan_cpu_metric"] is not None for fs in figs.values() for f in fs)
    lines = benchlib.section_head("fragd's CPU on a quiet and a busy host; the pageblock scan by memory size", m)
    lines += runs_part(m, figs, exported)
    mapmem = read_mapmem(work)
    scan_lines, gs, check = scan_part(m, work, figs, exported, mapmem)
    benchlib.publish(out, "cost", lines + scan_lines + guests_part(m, gs, check) + maps_part(mapmem, gs))


if __name__ == "__main__":
    main()
