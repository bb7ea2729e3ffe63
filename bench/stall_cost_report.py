# SPDX-License-Identifier: Apache-2.0
"""What fragd's BPF programs cost per event (bench/stall_cost.sh): each figure the median of the
rounds with its range.

    python3 bench/stall_cost_report.py WORK OUT
"""
import json
import os
import sys

from benchlib import (measured_on, numbered_dirs, positional, prom_sum, publish, quick_env, read_env, read_prom,
                      section_head, table)
from verdict import median, spread

STALL_ARMS = (("shipped", "`attribution.stack_interval: 1s` (shipped)"),
              ("stack0", "`attribution.stack_interval: 0s` (a stack at every stall)"))


def read_json(path):
    with open(path) as f:
        return json.load(f)


def programs(d):
    """-> {program: (runs, ns)} of `fragctl cost --json` in d."""
    return {p["name"]: (p["runs"], p["run_ns"]) for p in read_json(os.path.join(d, "cost.json"))["programs"]}


def ns_per_run(runs_ns):
    runs, ns = runs_ns
    return ns / runs if runs else None


def stall_figures(d):
    """-> a stall arm's figures: compact_stall over the writes, each program's (runs, ns), and the
    time fragd counted in direct compaction per entry (order 9), in s."""
    s0, s1 = (read_prom(os.path.join(d, f"s{i}.prom")) for i in (0, 1))
    delta = lambda name: prom_sum(s1, name, phase="compaction") - prom_sum(s0, name, phase="compaction")  # noqa: E731
    entries = delta("fragd_direct_stall_entries_total")
    return {"compact_stall": int(read_env(os.path.join(d, "run.env"))["compact_stall"]), "programs": programs(d),
            "per_entry_s": delta("fragd_alloc_stall_phase_seconds_total") / entries if entries else None}


def per_entry_ms(arm):
    return spread([f["per_entry_s"] and f["per_entry_s"] * 1e3 for f in arm], "{:.2f} ms")


def main(work, out):
    m = read_env(os.path.join(work, "meta.env"))
    rounds = numbered_dirs(work, "round")
    if not rounds:
        sys.exit(f"no round in {work}")
    fault = [ns_per_run(programs(os.path.join(r, "fault"))["page_alloc_btf"]) for r in rounds]
    floor = [read_json(os.path.join(r, "floor", "floor.json")) for r in rounds]  # bpftool prog show
    floor = [f["run_time_ns"] / f["run_cnt"] for f in floor]
    stalls = {arm: [stall_figures(os.path.join(r, arm)) for r in rounds] for arm, _ in STALL_ARMS}
    ns = "{:.0f}".format
    lines = section_head("What the BPF programs cost per event", m)
    lines += [
        f"Produced by: `{quick_env(m)}bash bench/stall_cost.sh` ({len(rounds)} rounds, {m['minutes']} min). "
        + measured_on(m) + ". The kernel's own BPF run-time statistics: `fragctl cost --json` (BPF_ENABLE_STATS "
        "for its window), and for bench/floor.c's empty program `kernel.bpf_stats_enabled=1` and bpftool's "
        "run_time_ns / run_cnt. Each round runs its four arms in bench/lib.sh's arm_order: fragd with "
        "`bpf.allocations: exact`, then the empty program, while bench/pagefault.c faults order-0 pages on CPU 1; "
        f"fragd with the shipped config, and again with a kernel stack at every stall, while {m['stalls']} "
        "one-page hugetlb pool writes stall on memory fragmented 60% with no free 2 MiB block left "
        f"(`fragctl cost --seconds {m['cost_s']}`; vm.compaction_proactiveness 0)."
        + (f" Every arm's config also had `{m['yaml']}`." if m.get("yaml") else ""),
        "",
        "An order-0 page fault: one run of the program on kmem:mm_page_alloc. The statistics' own two clock "
        "reads around each run are in both figures; the difference is the program's own work.",
        "",
    ]
    lines += table(["program", "ns per run: median (min–max)"], "lr", [
        ["page_alloc_btf (fragd, `bpf.allocations: exact`)", spread(fault, ns)],
        ["floor_page_alloc (an empty program)", spread(floor, ns)],
        ["difference, round by round", spread([a - b for a, b in zip(fault, floor)], ns)]])
    shipped, stack0 = (stalls[arm] for arm, _ in STALL_ARMS)
    lines += ["", "A stall: fragd with the shipped config, then with `attribution.stack_interval: 0s` (a kernel stack "
              "at every stall). Stall events (the kernel's compact_stall over the writes): "
              f"{spread([f['compact_stall'] for f in shipped])} and {spread([f['compact_stall'] for f in stack0])}; "
              "time in direct compaction per entry (fragd's, order 9): "
              f"{per_entry_ms(shipped)} and {per_entry_ms(stack0)}. Each program "
              "that ran:", ""]
    names = sorted({p for f in shipped for p, (runs, _) in f["programs"].items() if runs},
                   key=lambda p: (-median([f["programs"][p][0] / f["compact_stall"] for f in shipped]), p))
    lines += table(["program", "runs per stall event (shipped)", "ns per run, shipped", "ns per run, a stack each stall"],
                   "lrrr", [[p, spread([f["programs"][p][0] / f["compact_stall"] for f in shipped], "{:.2f}"),
                             *(spread([ns_per_run(f["programs"][p]) for f in fs], ns) for fs in (shipped, stack0))]
                            for p in names])
    stack = [ns_per_run(b["programs"]["try_to_compact"]) - ns_per_run(a["programs"]["try_to_compact"])
             for a, b in zip(shipped, stack0)]
    per_entry = median([f["per_entry_s"] for f in shipped])
    per_stall = [sum(ns for p, (_, ns) in f["programs"].items() if p != "page_alloc_btf") / f["compact_stall"]
                 for f in shipped]
    lines += ["", "All the programs but page_alloc_btf (which runs for every allocation): "
              f"{spread([x / 1e3 for x in per_stall], '{:.1f} µs')} a stall event with the shipped config, "
              f"{median(per_stall) / 1e9 / per_entry * 100:.1f}% of the time in direct compaction."]
    lines += ["", f"A kernel stack at every stall (`bpf_get_stackid`) costs try_to_compact "
              f"{spread([s / 1e3 for s in stack], '{:.1f} µs')} more a run (round by round), "
              f"{median(stack) / 1e9 / per_entry * 100:.1f}% of a stall's {per_entry * 1e3:.2f} ms: hence the shipped "
              "sampling, one stack per kind of stall (task kind, gfp, order) a second."]
    publish(out, "stall_cost", lines)


if __name__ == "__main__":
    main(*positional(2))
