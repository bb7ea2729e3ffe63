#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""apps_report.py RUNS META FILE: the section of BENCHMARKS.md that bench/apps.sh measures (real
workloads started on fragmented memory), from its runs (one line of key=value per run) and its
meta file; written as bench/results/apps-SELECTION.md for BENCHMARKS.md (the meta's selection:
workloads, fragmentations and modes), else between the markers of FILE, and printed.
Every figure is a median over the rounds with its range. Each goal of the issue that a table can
answer gets a verdict with a 95% bootstrap interval over the rounds (bench/verdict.py: a comparison
of two modes resamples whole rounds, both modes' runs of each round together); none is drawn from
fewer than three runs of each mode compared."""
import shlex

from benchlib import ARM_ORDER, goal_table, measured_on, positional, publish, read_env, read_runs, table
from verdict import Verdict, median, median_difference, quantile, ranged

MODES = ["kernel20", "kernel90", "defrag", "hugeadm", "fragd", "fragd_told", "fragd_ensure"]


def interleaving(m, runs):
    """How the run ordered its modes: arm_order, or (before it) rotated each round and reversed in
    even ones, which for two modes gives the same order every round."""
    if m.get("order") == "arm_order":
        return f"in {ARM_ORDER}."
    modes = list(dict.fromkeys(r["mode"] for r in runs))
    if len(modes) == 2:
        return (f"in the same order every round ({modes[0]} first): the rotation by round and the reversal of "
                "even rounds cancel for two modes.")
    return "rotated each round and reversed in even ones."


def mode_table(rows, columns):
    """One row per mode that ran: its runs and a cell per column (heading, function of the runs)."""
    by_mode = [[r for r in rows if r["mode"] == mode] for mode in MODES]
    return table(["mode", "runs"] + [c[0] for c in columns], "l" * (2 + len(columns)),
                 [[mine[0]["mode"], len(mine)] + [c[1](mine) for c in columns] for mine in by_mode if mine])


def col(key):
    return lambda rs: ranged([float(r[key]) for r in rs if key in r])


def started(rs):
    return f"{sum(int(r['started']) for r in rs)} of {len(rs)}"


def stall_entries(r):
    """The direct compactions of other processes than fragd's writers over the workload's own
    window, as the kernel records them: the tracefs instance's entries into direct compaction
    (kernel_host_stall_workload: mm_compaction_try_to_compact_pages of every task but fragd's
    writers, COMPACT_SKIPPED returns included), else compact_stall over that window (fragd's own
    direct compactions included), else over the run. fragd's own count
    (fragd_host_stall_workload) is compared with it in the report, never used for a goal."""
    for k in ("kernel_host_stall_workload", "compact_stall_workload", "compact_stall"):
        if k in r:
            return int(r[k])
    return 0


def stall_shares(rs):
    """Direct compactions per THP fault allocated, percent, per run (stall_entries)."""
    return [100.0 * stall_entries(r) / max(int(r.get("thp_fault_alloc_workload", r["thp_fault_alloc"])), 1)
            for r in rs]


def split_cell(rs):
    """The window's direct compactions, the kernel's split (host + own) against fragd's, per run."""
    out = []
    for r in rs:
        if "kernel_host_stall_workload" not in r:
            continue
        k = f"{r['kernel_host_stall_workload']} + {r['kernel_own_stall_workload']}"
        f = (f"{r['fragd_host_stall_workload']} + {r['fragd_own_stall_workload']}"
             if "fragd_host_stall_workload" in r else "-")
        lost = r.get("kernel_stall_lost", "0")
        out.append(f"{k} / {f}" + (f" (lost {lost})" if lost != "0" else ""))
    return "; ".join(out) if out else "-"


def every_run(mode, goal, ok, n):
    """A goal every run must meet, met by ok of n runs."""
    return [mode, goal, f"{ok} of {n}", "**met**" if ok == n else "**not met**"]


def goals(rows, workload):
    """The issue's goals for fragd's two policies on one workload's runs."""
    out = []
    ran = [m for m in MODES if any(r["mode"] == m for r in rows)]

    def versus(mode, other, key, goal, fmt, want="<="):
        """The goal median(mode) - median(other) `want` 0 over the rounds both ran, when there are 3."""
        a, b = ({r["round"]: float(r[key]) for r in rows if r["mode"] == m and key in r} for m in (mode, other))
        rounds = sorted(set(a) & set(b))
        if len(rounds) >= 3:
            v = Verdict([(a[k], b[k]) for k in rounds], median_difference(), 0, want, unit="rounds")
            out.append([mode, f"{goal}{mode} − {other}", "", v.text(fmt)])

    def versus_best(mode, others, key, pick, goal, fmt, want):
        """versus the best of others (pick of their medians)."""
        medians = {m: quantile([float(r[key]) for r in rows if r["mode"] == m], 0.5) for m in others}
        if medians:
            best = pick(medians, key=medians.get)
            versus(mode, best, key, goal.format(best=best), fmt, want)

    for mode in ("fragd", "fragd_told", "fragd_ensure"):
        mine = [r for r in rows if r["mode"] == mode]
        if len(mine) < 3:
            continue
        # fragd's policies are held to the modes without fragd; a launch by `fragctl ensure` to
        # every other mode, fragd's policies included.
        others = [m for m in ran if m != mode and (mode == "fragd_ensure" or not m.startswith("fragd"))]
        if workload in ("vm", "hugetlb"):
            out.append(every_run(mode, "starts in every run", sum(r["started"] == "1" for r in mine), len(mine)))
            if mode == "fragd_ensure":
                out.append(every_run(mode, "`fragctl ensure` made the pages (exit 0)",
                                     sum(r.get("ensure_rc") == "0" for r in mine), len(mine)))
                out.append(every_run(mode, "pool back at its target (0) after the hold, within 30 s of its end",
                                     sum(r.get("pool_after_hold") == "0" for r in mine), len(mine)))
            versus_best(mode, others, "time_ms", min, "time to RAM allocated <= the best other mode's ({best}), ms: ",
                        "{:.0f}", "<=")
            if "hugeadm" in others:
                versus(mode, "hugeadm", "pgmigrate_success", "pages migrated <= hugeadm's: ", "{:.0f}")
        elif workload == "jvm":
            shares = stall_shares(mine)
            out.append([mode, "<= 1% of its THP faults stalled (median share, %)",
                        f"{sum(x > 1.0 for x in shares)} of {len(shares)} runs above 1%",
                        Verdict(shares, median, 1.0, "<=", unit="runs").text("{:.2f}")])
            versus_best(mode, others, "huge_pct", max,
                        "heap mapped huge >= the best other mode's ({best}), points: ", "{:.1f}", ">=")
    if not out:
        return []
    return goal_table(["policy", "goal", "runs", "verdict"], out, "Goals (bench/verdict.py, 95% bootstrap interval; "
                      "a difference of medians resamples whole rounds):") + [""]


def main(runs_path, meta_path, out_path):
    runs = read_runs(runs_path)
    m = read_env(meta_path)
    # A later run of the same selection replaces its section; a run from before the meta named it
    # is named by its runs' workloads, fragmentations and modes in the order they first ran.
    sel = m.get("selection") or "-".join("+".join(dict.fromkeys(r.get(k, "holes") for r in runs))
                                         for k in ("workload", "frag", "mode"))
    workloads, frags, modes = (part.split("+") for part in sel.split("-", 2))
    rounds = max((int(r.get("round", 1)) for r in runs), default=0)  # rounds count from 1
    cmd = (f"BENCH_APPS_WORKLOADS={shlex.quote(' '.join(workloads))} "
           f"BENCH_APPS_FRAGMENTATIONS={shlex.quote(' '.join(frags))} "
           f"BENCH_APPS_MODES={shlex.quote(' '.join(modes))} BENCH_APPS_REPEATS={rounds} bash bench/apps.sh")
    lines = [f"## Real workloads on fragmented memory: {', '.join(workloads)} on {' and '.join(frags)}, "
             f"{', '.join(modes)}", "",
             f"Produced by: `{cmd}`. " + measured_on(m, cpu_model=False)
             + f"; {m['java_version']}; {m['qemu_version']}.",
             "",
             f"Memory fragmented by `fragmenter --percent {m['percent']}` (movable holes), and in the "
             f"mixed fragmentation then filled in part with page cache, slab and page tables "
             f"({m.get('mixed', 'not run')}: MiB of a clean file's cache, empty files on a tmpfs, "
             f"page-table pages); the "
             f"mode's settings at its \"ready\", the workload {m['wait_s']} s later. Counters from "
             "/proc/vmstat between \"ready\" and the end of the run: pages migrated "
             "(pgmigrate_success) and direct compaction stalls (compact_stall, any process: fragd's own "
             "writer's included); the JVM's stalls per THP fault over the workload's own window, as the "
             "kernel recorded them: a tracefs instance over that window counts each task's entries into "
             "direct compaction (compaction:mm_compaction_try_to_compact_pages), those of every task but "
             "fragd's writers (compact_stall over the window where a run has no trace); beside them, "
             "fragd's own count of the same window (fragd_direct_stall_entries_total, "
             "fragd_own_direct_stall_entries_total) against the kernel's split, host + own. "
             "Handed to the host: free memory the guest reported to its host (virtio free page "
             "reporting, /sys/module/page_reporting/parameters/reported_kib where the kernel has it) "
             "from \"ready\" to the workload's start; the workload's first touch of such memory "
             "faults on the host. "
             "fragd_ensure: fragd with the shipped policy in act mode, the launch made as a libvirt hook "
             "makes it (`fragctl ensure 2MB N --within 120s --hold "
             f"{m.get('ensure_hold_s', '60')}s --for bench:WORKLOAD`, then the "
             "workload); its time runs from the ensure's start to the RAM allocated, and its pool is read "
             "again when the hold has ended (back at the target, 0, and how long after the hold's end). "
             "Medians over the rounds, range in brackets; modes interleaved, " + interleaving(m, runs),
             ""]
    vm_cols = [("started", started), ("time to RAM allocated, ms", col("time_ms")),
               ("pool growth, ms", col("pool_ms")), ("pages migrated", col("pgmigrate_success")),
               ("compact stalls", col("compact_stall")),
               ("handed to the host before the workload, MiB", col("reported_wait_mib"))]
    if any("pool_after_hold" in r for r in runs):  # fragd_ensure's lease
        vm_cols += [("pool after the hold", col("pool_after_hold")),
                    ("back, ms after the hold's end", col("pool_back_ms"))]
    workloads = [
            ("vm", "A VM whose RAM is 2 MiB hugetlbfs pages (qemu -mem-path -mem-prealloc)", vm_cols),
            ("hugetlb", "A DPDK-style process: MAP_HUGETLB|MAP_POPULATE memory from the pool", vm_cols),
            ("jvm", "A JVM with a THP heap (-XX:+UseTransparentHugePages -XX:+AlwaysPreTouch)",
             [("started", started), ("time to start, ms", col("time_ms")),
              ("AnonHugePages / heap, %", col("huge_pct")), ("THP faults", col("thp_fault_alloc")),
              ("THP fallbacks", col("thp_fault_fallback")),
              ("stalls per THP fault, %", lambda rs: ranged(stall_shares(rs), "{:.1f}")),
              ("stalls: kernel host + own / fragd host + own", split_cell),
              ("pages migrated", col("pgmigrate_success"))])]
    for frag, heading in [("holes", "Movable holes only"),
                          ("mixed", "Holes, then page cache, slab and page tables in them (mixed)")]:
        mine = [r for r in runs if r.get("frag", "holes") == frag]
        if not mine:
            continue
        lines += [f"### {heading}", ""]
        for w, title, cols in workloads:
            rows = [r for r in mine if r["workload"] == w]
            if rows:
                lines += [f"#### {title}", "", *mode_table(rows, cols), "", *goals(rows, w)]
    publish(out_path, "apps-" + sel, lines)


if __name__ == "__main__":
    main(*positional(3))
