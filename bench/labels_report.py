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
import os
import sys

from benchlib import (goal_table, measured_on, positional, publish, read_env, read_jsonl,
                      section_head, table)
from verdict import Verdict, median, ranged

LABELS = ["fragd-hugepages-2Mi-gib", "fragd-hugepages-1Gi-count", "fragd-fragmentation"]
ARMS = {"steady": "the churn alone",
        "edge": "the churn and a ballast that puts the 2 MiB label's bucket edge in the middle of its swing"}


def pow2_floor(v):
    return 1 << (v.bit_length() - 1) if v > 0 else 0


def bucket(label, raw):
    """The value label would take from the raw values of one poll (None when fragd gave none)."""
    if label == LABELS[0]:
        return None if raw.get("2m") is None else str(pow2_floor(raw["2m"] // 512))
    if label == LABELS[1]:
        return None if raw.get("1g") is None else str(pow2_floor(raw["1g"]))
    score = raw.get("score")
    return None if score is None else "low" if score < 50 else "medium" if score < 85 else "high"


def changes(values):
    """Changes between consecutive known values."""
    known = [v for v in values if v is not None]
    return sum(1 for a, b in zip(known, known[1:]) if a != b)


def round_figures(path):
    polls = read_jsonl(path)
    out = {"polls": len(polls), "span_s": polls[-1]["t"] - polls[0]["t"] if len(polls) > 1 else 0}
    for label in LABELS:
        shown = [(p["labels"] or {}).get(label) for p in polls]
        raw = [bucket(label, p["raw"]) for p in polls]
        out[label] = {"changes": changes(shown), "raw_changes": changes(raw),
                      "values": sorted({v for v in shown if v is not None}),
                      "raw_values": sorted({v for v in raw if v is not None})}
    # The lowest–highest raw value: 2 MiB pages obtainable in GiB, the highest node score.
    for key, cell in (("2m", lambda x: f"{x / 512:.1f}"), ("score", str)):
        xs = [p["raw"][key] for p in polls if p["raw"].get(key) is not None]
        out[key] = f"{cell(min(xs))}–{cell(max(xs))}" if xs else "-"
    return out


def one_line(path):
    f = round_figures(path)
    return (f"{f['polls']} polls over {f['span_s']:.0f} s; " +
            "; ".join(f"{label}: {f[label]['changes']} changes ({'/'.join(f[label]['values'])}), raw bucket "
                      f"{f[label]['raw_changes']} ({'/'.join(f[label]['raw_values'])})" for label in LABELS))


def per10(rounds, label, key):
    """key's count of label in each round, per 10 minutes."""
    return [f[label][key] * 600.0 / max(f["span_s"], 1) for f in rounds]


def main(work, out_path):
    m = read_env(os.path.join(work, "meta.env"))
    arms = m.get("arms", "steady").split()
    rounds = {arm: [] for arm in arms}  # each round that ran: its figures, its arm.env and its number
    for arm in arms:
        for r in range(1, int(m["rounds"]) + 1):
            d = os.path.join(work, f"{arm}{r}")
            if os.path.exists(os.path.join(d, "polls.jsonl")):
                rounds[arm].append({**round_figures(os.path.join(d, "polls.jsonl")),
                                    **read_env(os.path.join(d, "arm.env"), missing_ok=True), "round": r})
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
            ch = per10(rs, label, "changes")
            shown, raw_values = (", ".join(sorted({v for f in rs for v in f[label][k]}))
                                 for k in ("values", "raw_values"))
            # not benchlib.row: an empty list of values leaves its cell with two spaces
            lines.append(f"| `{label}` | {ranged(ch, '{:.1f}')} | {shown} | "
                         f"{ranged(per10(rs, label, 'raw_changes'), '{:.1f}')} | {raw_values} |")
            goals.append([arm, f"`{label}`", "at most 1 change per 10 minutes (median over the rounds)",
                          f"{sum(x > 1.0 for x in ch)} of {len(ch)} rounds above 1",
                          Verdict(ch, median, 1.0, "<=", unit="rounds").text("{:.1f}")])
        lines.append("")
    lines += goal_table(["arm", "label", "goal", "rounds", "verdict"], goals,
                        "Goal (bench/verdict.py, 95% bootstrap interval over the rounds):")
    lines += ["", "Per round:", "",
              *table(["arm", "round", "polls", "ballast, MiB (edge)", "2 MiB obtainable, GiB (lowest–highest)",
                      "highest node score", "changes (2Mi, 1Gi, fragmentation)", "raw bucket changes",
                      "file left after fragd stopped"], "lrrrrrlll",
                     [[arm, f["round"], f["polls"],
                       f"{f['ballast_mib']} ({f['edge_gib']} GiB)" if "ballast_mib" in f else "-",
                       f["2m"], f["score"],
                       ", ".join(str(f[label]["changes"]) for label in LABELS),
                       ", ".join(str(f[label]["raw_changes"]) for label in LABELS),
                       "yes" if f.get("left") == "1" else "no"] for arm in arms for f in rounds[arm]])]
    publish(out_path, "labels", lines)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--changes":
        print(one_line(sys.argv[2]))
    else:
        main(*positional(2))
