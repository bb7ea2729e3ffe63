#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""preflight_report.py RUNS META FILE: the section of BENCHMARKS.md that bench/preflight.sh
measures (what `fragctl preflight` said a host could supply in 2 MiB pages, against what one
compaction and a pool write then reached), from its runs (one line of key=value per run) and its
meta file; written between <!-- preflight:begin --> and <!-- preflight:end --> of FILE and printed.

Per fragmentation: medians over the rounds with their range, and two goals with a 95% bootstrap
interval over the rounds (bench/verdict.py): free + makeable within 10% of what was reached (the
median ratio's interval inside 0.9..1.1: met; wholly outside: not met), and the verdict right at
COUNT = reached (ready or makeable) and at 1.2 x reached (no)."""
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import ARM_ORDER, measured_on, positional, publish, read_env, read_runs, section_head, table  # noqa: E402
from verdict import Verdict, median, quantile, spread  # noqa: E402

# This report's cells keep the range of equal values: '0 (0–0)'.
ranged = functools.partial(spread, range_when_equal=True)

FRAGMENTATIONS = [
    ("holes", "movable holes (`fragmenter --percent P`)"),
    ("mixed", "holes, then page cache, slab and page tables (bench/apps.sh's mixed)"),
    ("polluted", "holes, then page tables beyond the whole free pageblocks (unmovable pollution)"),
]
VERDICT = {"0": "ready", "3": "makeable", "4": "no"}


def ratio(r):
    return (int(r["free"]) + int(r["makeable"])) / max(int(r["reached"]), 1)


def within_cell(rows):
    """The verdict on the median ratio: met when its interval is inside 0.9..1.1."""
    return Verdict([ratio(r) for r in rows], median, (0.9, 1.1), "within", unit="rounds").text("{:.3f}")


def right_at_reached(r):
    return r["verdict_at_reached"] in ("0", "3")


def right_at_more(r):
    return r["verdict_at_1.2x"] == "4"


def share_verdict(rows, pred, what):
    xs = [(1.0 if pred(r) else 0.0,) for r in rows]
    v = Verdict(xs, lambda rs: sum(x for (x,) in rs) / len(rs), 1.0, ">=", unit="rounds")
    n = sum(1 for (x,) in xs if x)
    return f"| {what} | {n} of {len(xs)} | {v.text('{:.2f}')} |"


def main(runs_path, meta_path, out_path):
    runs = read_runs(runs_path)
    m = read_env(meta_path)
    lines = section_head("Preflight against what one compaction and a pool write reach", m)
    lines += [f"Produced by: `bash bench/preflight.sh` ({m.get('minutes', '?')} min). "
              + measured_on(m, cpu_model=False) + ".", "",
              f"Each run: memory fragmented (`fragmenter --percent {m['percent']}`, then the fragmentation's "
              f"fill), fragd in observe mode with the shipped configs/fragd.yaml (pageblocks.mode "
              f"{m.get('pageblocks_mode') or 'sample'}: the sampled picture users get), {m['settle_s']} s after "
              "`fragctl status --json` first showed a pageblock scan `fragctl preflight 2MB 1 --json` (free: pool "
              "pages and free 2 MiB blocks above the zones' reserves; makeable: what one compaction could add; "
              "the interval: 95% bounds of free + makeable), and the verdict at a grid of counts; then fragd "
              "stopped, every node compacted (`echo 1 > /sys/devices/system/node/nodeN/compact`) and "
              f"`echo {m['pool_write']} > /proc/sys/vm/nr_hugepages` (MemTotal in 2 MiB pages): reached is "
              "what it read back. Ratio = (free + makeable) / reached. The verdicts at COUNT = reached and "
              "1.2 x reached are those preflight's answers before the compaction give (its rule: ready up to "
              "free, makeable up to free + makeable, no above; checked against every count asked: rule "
              "column). Mixed: " + m.get("mixed", "") + " (MiB of clean page cache, empty files on a tmpfs, "
              f"page-table pages); polluted: page-table pages for every free page in whole free pageblocks "
              f"plus {m.get('polluted_extra_pgtables', '?')} more, which fall into the holes. Medians over the "
              "rounds, range in brackets; fragmentations interleaved in " + ARM_ORDER + ".", ""]
    lines += ["| fragmentation | runs | free | makeable | interval | reached | ratio | reached in the interval "
              "| verdict at reached | at 1.2 x reached | rule | compaction: pages migrated, ms | pool write: "
              "pages migrated, page cache dropped MiB |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|"]
    goals = []
    for frag, title in FRAGMENTATIONS:
        rows = [r for r in runs if r["frag"] == frag]
        if not rows:
            continue
        inside = sum(1 for r in rows if int(r["lo"]) <= int(r["reached"]) <= int(r["hi"]))
        at = {}
        for key in ("verdict_at_reached", "verdict_at_1.2x"):
            names = [VERDICT[r[key]] for r in rows]
            at[key] = ", ".join(f"{names.count(v)} {v}" for v in ("ready", "makeable", "no") if names.count(v))
        rule_bad = sum(int(r["rule_bad"]) for r in rows)
        rule_asked = sum(int(r["rule_asked"]) for r in rows)
        lines.append(
            f"| {frag} | {len(rows)} | {ranged([int(r['free']) for r in rows])} | "
            f"{ranged([int(r['makeable']) for r in rows])} | "
            f"{quantile([int(r['lo']) for r in rows], 0.5):.0f}–{quantile([int(r['hi']) for r in rows], 0.5):.0f} | "
            f"{ranged([int(r['reached']) for r in rows])} | {ranged([ratio(r) for r in rows], '{:.3f}')} | "
            f"{inside} of {len(rows)} | {at['verdict_at_reached']} | {at['verdict_at_1.2x']} | "
            f"{rule_asked - rule_bad} of {rule_asked} as the rule says | "
            f"{ranged([int(r['migrated_compact']) for r in rows])}, {ranged([int(r['compact_ms']) for r in rows])} | "
            f"{ranged([int(r['migrated_pool']) for r in rows])}, "
            f"{ranged([int(r['cached_drop_kib']) / 1024 for r in rows])} |")
        goals.append(f"| {frag} | free + makeable within 10% of reached (median ratio) | {len(rows)} rounds | "
                     f"{within_cell(rows)} |")
        goals.append(share_verdict(rows, right_at_reached, f"{frag} | not `no` at COUNT = reached (share of rounds)"))
        goals.append(share_verdict(rows, right_at_more, f"{frag} | `no` at COUNT = 1.2 x reached (share of rounds)"))
    lines += ["", "Goals (bench/verdict.py, 95% bootstrap interval over the rounds):", "",
              *table(["fragmentation", "goal", "runs", "verdict"], "llll")] + goals
    lines += ["", "Per run (free, makeable, interval, reached; the sampled scan's age at the answer):", "",
              *table(["fragmentation", "round", "free", "makeable", "interval", "reached", "ratio", "age, s",
                      "PageTables, MiB", "Slab, MiB"], "lrrrrrrrrr")]
    for r in runs:
        lines.append(f"| {r['frag']} | {r['round']} | {r['free']} | {r['makeable']} | {r['lo']}–{r['hi']} | "
                     f"{r['reached']} | {ratio(r):.3f} | {r['age_s']} | {int(r['pagetables_kib']) // 1024} | "
                     f"{int(r['slab_kib']) // 1024} |")
    publish(out_path, "preflight", lines)


if __name__ == "__main__":
    main(*positional(3))
