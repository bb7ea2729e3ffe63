#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""labels_report.py WORK FILE: the section of BENCHMARKS.md that bench/labels.sh measures (how
often fragd's NFD labels change while memory churns), from WORK/meta.env and each
WORK/roundN/polls.jsonl (bench/labels_poll.py); written between <!-- labels:begin --> and
<!-- labels:end --> of FILE and printed.
labels_report.py --changes POLLS: one line, the changes per label of one round.

Per label and round: the changes of the file's value between consecutive polls (the first
value fragd wrote is not a change), and the changes of the raw bucket, the value the label
would take at each poll without nfd.hold (fragd's bucketing of the raw values: GiB of 2 MiB
pages rounded down to a power of two, 1 GiB pages the same, the highest node score below 50
low, below 85 medium, else high). The goal, at most one change per label per 10 minutes,
gets a verdict with a 95% bootstrap interval of the median over the rounds (bench/verdict.py)."""
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import measured_on, positional, publish, read_env, read_jsonl, section_head, table  # noqa: E402
from verdict import Verdict, median, spread  # noqa: E402

# This report's cells keep the range of equal values: '0 (0–0)'.
ranged = functools.partial(spread, range_when_equal=True)

LABELS = ["fragd-hugepages-2Mi-gib", "fragd-hugepages-1Gi-count", "fragd-fragmentation"]


def pow2_floor(v):
    return 1 << (v.bit_length() - 1) if v > 0 else 0


def level(score):
    return "low" if score < 50 else "medium" if score < 85 else "high"


def bucket(label, raw):
    if label == LABELS[0]:
        return None if raw.get("2m") is None else str(pow2_floor(raw["2m"] // 512))
    if label == LABELS[1]:
        return None if raw.get("1g") is None else str(pow2_floor(raw["1g"]))
    return None if raw.get("score") is None else level(raw["score"])


def changes(values):
    """Changes between consecutive known values."""
    known = [v for v in values if v is not None]
    return sum(1 for a, b in zip(known, known[1:]) if a != b)


def round_figures(path):
    polls = read_jsonl(path)
    span = polls[-1]["t"] - polls[0]["t"] if len(polls) > 1 else 0
    out = {"polls": len(polls), "span_s": span, "missing": sum(1 for p in polls if p["labels"] is None)}
    for label in LABELS:
        shown = [(p["labels"] or {}).get(label) for p in polls]
        raw = [bucket(label, p["raw"]) for p in polls]
        out[label] = {"changes": changes(shown), "raw_changes": changes(raw),
                      "values": sorted({v for v in shown if v is not None}),
                      "raw_values": sorted({v for v in raw if v is not None})}
    raw2m = [p["raw"]["2m"] for p in polls if p["raw"].get("2m") is not None]
    out["raw_2m_gib"] = (min(raw2m) / 512, max(raw2m) / 512) if raw2m else None
    scores = [p["raw"]["score"] for p in polls if p["raw"].get("score") is not None]
    out["score"] = (min(scores), max(scores)) if scores else None
    return out


def one_line(path):
    f = round_figures(path)
    return (f"{f['polls']} polls over {f['span_s']:.0f} s; " +
            "; ".join(f"{label}: {f[label]['changes']} changes ({'/'.join(f[label]['values'])}), raw bucket "
                      f"{f[label]['raw_changes']} ({'/'.join(f[label]['raw_values'])})" for label in LABELS))


def per10(f, label, key):
    return f[label][key] * 600.0 / max(f["span_s"], 1)


ARMS = {"steady": "the churn alone",
        "edge": "the churn and a ballast that puts the 2 MiB label's bucket edge in the middle of its swing"}


def main(work, out_path):
    m = read_env(os.path.join(work, "meta.env"))
    arms = m.get("arms", "steady").split()
    rounds = {arm: [] for arm in arms}
    for arm in arms:
        for r in range(1, int(m["rounds"]) + 1):
            path = os.path.join(work, f"{arm}{r}", "polls.jsonl")
            if os.path.exists(path):
                f = round_figures(path)
                f.update(read_env(os.path.join(work, f"{arm}{r}", "arm.env"), missing_ok=True))
                f["round"] = r
                rounds[arm].append(f)
    lines = section_head("NFD labels while memory churns", m)
    env = "" if arms == ["steady", "edge"] else f"BENCH_LABELS_ARMS={' '.join(arms)} "
    lines += [f"Produced by: `{env}bash bench/labels.sh` ({m.get('minutes', '?')} min). "
              + measured_on(m, cpu_model=False) + ".", "",
              f"bench/cost_churn.py churns memory as bench/cost.sh's busy arm runs it ({m['churn']}) from "
              f"{m['settle']} s before the first round to the end. {m['rounds']} rounds of {m['seconds']} s per arm "
              f"({'; '.join(f'{a}: {ARMS[a]}' for a in arms)}), interleaved, each a fresh fragd with the shipped "
              f"configs/fragd.yaml and `nfd.features_file` set (`nfd.hold` {m['nfd_hold']}, as shipped); its "
              f"feature file read every {m['poll']} s from its first write, and with it the values the labels are "
              "bucketed from (free + makeable of `fragctl preflight 2MB 1` and `1GB 1`, the highest node score of "
              "`fragctl status`). Changes: the file's value differing from the poll before (fragd's first write is "
              "not one); raw bucket: the value the label would have taken at each poll without the hold. Medians "
              "over the rounds, range in brackets.", ""]
    goals = []
    for arm in arms:
        rs = rounds[arm]
        if not rs:
            continue
        lines += [f"{arm} ({ARMS[arm]}):", "",
                  *table(["label", "changes per 10 min", "values shown", "raw bucket changes per 10 min",
                          "raw bucket values"], "lrlrl")]
        for label in LABELS:
            ch = [per10(f, label, "changes") for f in rs]
            raw = [per10(f, label, "raw_changes") for f in rs]
            shown = sorted({v for f in rs for v in f[label]["values"]})
            raw_values = sorted({v for f in rs for v in f[label]["raw_values"]})
            lines.append(f"| `{label}` | {ranged(ch, '{:.1f}')} | {', '.join(shown)} | {ranged(raw, '{:.1f}')} | "
                         f"{', '.join(raw_values)} |")
            v = Verdict(ch, median, 1.0, "<=", unit="rounds")
            over = sum(1 for x in ch if x > 1.0)
            goals.append(f"| {arm} | `{label}` | at most 1 change per 10 minutes (median over the rounds) | "
                         f"{over} of {len(ch)} rounds above 1 | {v.text('{:.1f}')} |")
        lines.append("")
    lines += ["Goal (bench/verdict.py, 95% bootstrap interval over the rounds):", "",
              *table(["arm", "label", "goal", "rounds", "verdict"], "lllll")] + goals
    lines += ["", "Per round:", "",
              "| arm | round | polls | ballast, MiB (edge) | 2 MiB obtainable, GiB (lowest–highest) | highest node score "
              "| changes (2Mi, 1Gi, fragmentation) | raw bucket changes | file left after fragd stopped |",
              "|---|---:|---:|---:|---:|---:|---|---|---|"]
    for arm in arms:
        for f in rounds[arm]:
            g = f["raw_2m_gib"]
            sc = f["score"]
            ballast = f"{f['ballast_mib']} ({f['edge_gib']} GiB)" if "ballast_mib" in f else "-"
            lines.append(f"| {arm} | {f['round']} | {f['polls']} | {ballast} | {f'{g[0]:.1f}–{g[1]:.1f}' if g else '-'} | "
                         f"{f'{sc[0]}–{sc[1]}' if sc else '-'} | "
                         f"{', '.join(str(f[label]['changes']) for label in LABELS)} | "
                         f"{', '.join(str(f[label]['raw_changes']) for label in LABELS)} | "
                         f"{'yes' if f.get('left') == '1' else 'no'} |")
    publish(out_path, "labels", lines)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--changes":
        print(one_line(sys.argv[2]))
    else:
        main(*positional(2))
