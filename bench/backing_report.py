# SPDX-License-Identifier: Apache-2.0
"""Where a VM's start time goes (bench/backing.sh): each case's medians over the rounds with their
range.

    python3 bench/backing_report.py WORK OUT
"""
import os

from benchlib import measured_on, positional, publish, quick_env, read_env, read_runs, section_head, table
from verdict import spread

CASES = ("held", "fresh", "idle")


def main(work, out):
    m = read_env(os.path.join(work, "meta.env"))
    runs = read_runs(os.path.join(work, "runs.txt"))
    rounds = int(m["rounds"])
    lines = section_head("Where a VM's time goes: the host takes back free memory", m)
    lines += [
        f"Produced by: `{quick_env(m)}bash bench/backing.sh` ({rounds} rounds, cases in bench/lib.sh's arm_order, "
        f"{m['minutes']} min; no fragmentation and no fragd). " + measured_on(m) + ". qemu -mem-prealloc allocates a "
        f"{m['guest_mib']} MiB guest from a pool of {int(m['guest_mib']) // 2} x 2 MiB whose pages had just been "
        "touched by a guest and were then kept in the pool (held), freed and taken back at once (fresh), or freed "
        f"for {m['idle_s']} s before the pool grew again (idle). Reported: the free memory this VM handed back to "
        "its host meanwhile (virtio free page reporting's count).",
        "",
    ]
    lines += table(["pool's pages before the guest", "runs", "qemu to RAM allocated, ms",
                    "reported to the host meanwhile, MiB"], "lrrr",
                   [[c, len(mine), *(spread([int(r[k]) for r in mine], range_when_equal=True)
                                     for k in ("ms", "reported_mib"))]
                    for c in CASES for mine in [[r for r in runs if r["case"] == c]]])
    lines += [
        "",
        "Free 2 MiB blocks that stay free for a few seconds are reported to this VM's host, which discards them; "
        "the first touch of each then faults on the host. So on such a guest, blocks fragd makes ahead of a "
        "workload it was not told of are handed back before the workload comes, and the time they would save is "
        "spent in host faults; told (the pool named in `hugepages.pools`, its pages held, not free), it keeps "
        "them. Bare metal and guests without reporting do not pay this (docs/configuration.md, \"Pool targets\").",
    ]
    publish(out, "backing", lines)


if __name__ == "__main__":
    main(*positional(2))
