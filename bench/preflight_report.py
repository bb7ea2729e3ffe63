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

from benchlib import (ARM_ORDER, goal_table, measured_on, positional, publish, read_env, read_runs,
                      section_head, table)
from verdict import Verdict, median, quantile, ranged

FRAGMENTATIONS = ("holes", "mixed", "polluted")
VERDICT = {"0": "ready", "3": "makeable", "4": "no"}


def ratio(r):
    return (int(r["free"]) + int(r["makeable"])) / max(int(r["reached"]), 1)


def share_goal(frag, what, rows, right):
    """The goal that every round's verdict is right: the share of rounds where right(r), >= 1."""
    ok = [right(r) for r in rows]
    v = Verdict([float(x) for x in ok], lambda xs: sum(xs) / len(xs), 1.0, ">=", unit="rounds")
    return [frag, what, f"{sum(ok)} of {len(ok)}", v.text("{:.2f}")]


def verdicts(rows, key):
    """'1 makeable, 4 no': the verdicts at a count, by name."""
    names = [VERDICT[r[key]] for r in rows]
    return ", ".join(f"{names.count(v)} {v}" for v in ("ready", "makeable", "no") if names.count(v))


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
    summary, goals = [], []
    for frag in FRAGMENTATIONS:
        rows = [r for r in runs if r["frag"] == frag]
        if not rows:
            continue
        n = {k: [int(r[k]) for r in rows] for k in ("free", "makeable", "lo", "hi", "reached", "rule_asked",
                                                     "rule_bad", "migrated_compact", "compact_ms", "migrated_pool")}
        asked, bad = sum(n["rule_asked"]), sum(n["rule_bad"])
        summary.append([
            frag, len(rows), ranged(n["free"]), ranged(n["makeable"]),
            f"{quantile(n['lo'], 0.5):.0f}–{quantile(n['hi'], 0.5):.0f}", ranged(n["reached"]),
            ranged([ratio(r) for r in rows], "{:.3f}"),
            f"{sum(int(r['lo']) <= int(r['reached']) <= int(r['hi']) for r in rows)} of {len(rows)}",
            verdicts(rows, "verdict_at_reached"), verdicts(rows, "verdict_at_1.2x"),
            f"{asked - bad} of {asked} as the rule says", f"{ranged(n['migrated_compact'])}, {ranged(n['compact_ms'])}",
            f"{ranged(n['migrated_pool'])}, {ranged([int(r['cached_drop_kib']) / 1024 for r in rows])}"])
        goals += [[frag, "free + makeable within 10% of reached (median ratio)", f"{len(rows)} rounds",
                   Verdict([ratio(r) for r in rows], median, (0.9, 1.1), "within", unit="rounds").text("{:.3f}")],
                  share_goal(frag, "not `no` at COUNT = reached (share of rounds)", rows,
                             lambda r: r["verdict_at_reached"] in ("0", "3")),
                  share_goal(frag, "`no` at COUNT = 1.2 x reached (share of rounds)", rows,
                             lambda r: r["verdict_at_1.2x"] == "4")]
    lines += table(["fragmentation", "runs", "free", "makeable", "interval", "reached", "ratio",
                    "reached in the interval", "verdict at reached", "at 1.2 x reached", "rule",
                    "compaction: pages migrated, ms", "pool write: pages migrated, page cache dropped MiB"],
                   "lrrrrrrrllrrr", summary)
    lines += ["", *goal_table(["fragmentation", "goal", "runs", "verdict"], goals,
                              "Goals (bench/verdict.py, 95% bootstrap interval over the rounds):")]
    lines += ["", "Per run (free, makeable, interval; the free 2 MiB blocks the node compactions alone left, then "
              "reached; the sampled scan's age at the answer):", "",
              *table(["fragmentation", "round", "free", "makeable", "interval", "after the compaction", "reached",
                      "ratio", "age, s", "PageTables, MiB", "Slab, MiB"], "lrrrrrrrrrr",
                     [[r["frag"], r["round"], r["free"], r["makeable"], f"{r['lo']}–{r['hi']}",
                       r.get("free_blocks_after_compact", "-"), r["reached"], f"{ratio(r):.3f}", r["age_s"],
                       int(r["pagetables_kib"]) // 1024, int(r["slab_kib"]) // 1024] for r in runs])]
    publish(out_path, "preflight", lines)


if __name__ == "__main__":
    main(*positional(3))
