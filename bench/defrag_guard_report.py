# SPDX-License-Identifier: Apache-2.0
"""The defrag_mode guard's run (bench/defrag_guard.sh): one row per round, then what the rounds
show, with 95% bootstrap intervals over the rounds (bench/verdict.py).

    python3 bench/defrag_guard_report.py WORK OUT
"""
import os
import sys

from benchlib import measured_on, numbered_dirs, positional, publish, read_env, section_head, table
from verdict import Verdict, median, median_ratio


def main(work, out):
    m = read_env(os.path.join(work, "meta.env"))
    rounds = [{k: float(v) for k, v in read_env(os.path.join(d, "round.env")).items()}
              for d in numbered_dirs(work, "round")]
    if not rounds:
        sys.exit(f"no round in {work}")
    lines = section_head("The vm.defrag_mode guard", m)
    lines += [
        "Produced by: `bash bench/defrag_guard.sh` (5 rounds; `compaction.defrag_guard` with window "
        f"{m['window_s']} s, hold {m['hold_s']} s, `pressure_full_percent: {m['limit_pct']}`; every other "
        "trigger off). Each round sets `vm.defrag_mode` to 1, starts fragd in act mode, leaves the host "
        f"alone for {m['healthy_s']} s, then makes a storm: two readers thrash a file's page cache in a "
        "memory cgroup of 32 MiB, so every runnable task waits on memory. The kernel's own record: "
        "/proc/sys/vm/defrag_mode and PSI full of /proc/pressure/memory, as a share of the time over the "
        "window before the guard's write, then of the storm over the hold (defrag_mode 0) and over the "
        f"{int(m['window_s']) - 2} s after the put-back (defrag_mode 1 again; the guard judges only a whole window "
        "after it).",
        "",
        measured_on(m) + ".",
        "",
    ]
    back = [r["restored"] == 1 and r["on_defrag_mode"] == 1 for r in rounds]
    lines += table(["round", "guard actions, healthy", "seconds to act", "PSI full, window before the write",
                    "back to 1 after the hold", "storm's PSI full, defrag_mode 0 (hold)",
                    "storm's PSI full, defrag_mode 1 (after)"], "rrrrlrr",
                   [[i, f"{r['healthy_actions']:.0f}", f"{r['act_s']:.0f}", f"{r['full_before_pct']:.2f}%",
                     "yes" if ok else "no", f"{r['full_hold_pct']:.2f}%", f"{r['full_on_pct']:.2f}%"]
                    for i, (r, ok) in enumerate(zip(rounds, back), 1)])
    n = len(rounds)
    acted = sum(r["off_actions"] >= 1 for r in rounds)
    quiet = sum(r["healthy_actions"] == 0 and r["healthy_defrag_mode"] == 1 for r in rounds)
    speed = Verdict([r["act_s"] for r in rounds], median, float(m["window_s"]) * 2, "<=", "rounds")
    before = Verdict([r["full_before_pct"] for r in rounds], median, float(m["limit_pct"]), ">", "rounds")
    pairs = [(r["full_hold_pct"], r["full_on_pct"]) for r in rounds if r["full_on_pct"] > 0]
    ratio = Verdict(pairs, median_ratio, 1.0, "<", "rounds")
    lines += [
        "",
        f"- Healthy host: no guard action and defrag_mode left at 1 in {quiet} of {n} rounds.",
        f"- Storm: the guard wrote 0 in {acted} of {n} rounds; median seconds from the storm's start to the "
        f"write {speed.text('{:.1f}')} against two windows ({2 * float(m['window_s']):.0f} s); the kernel's PSI "
        f"full over the window before it, median {before.text('{:.2f}')} against the limit of {m['limit_pct']}%.",
        f"- defrag_mode back to 1 after the hold in {sum(back)} of {n} rounds.",
        f"- The storm's PSI full with defrag_mode 0 (the hold) over the same storm's with defrag_mode 1 (after "
        f"the put-back), median {ratio.text('{:.2f}')} against 1 (below 1: turning defrag_mode off lowered the "
        "pressure). This storm is the cgroup's limit, not defrag_mode's: "
        "a ratio near 1 says the guard acted on pressure defrag_mode did not cause, which the guard cannot "
        "tell apart (docs/configuration.md \"The defrag_mode guard\"). A load whose pressure defrag_mode "
        "makes was not reproduced here.",
    ]
    publish(out, "defrag_guard", lines)


if __name__ == "__main__":
    main(*positional(2))
