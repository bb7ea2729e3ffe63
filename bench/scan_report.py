# SPDX-License-Identifier: Apache-2.0
"""Writes the scan section of BENCHMARKS.md from bench/scan.sh's work directory.

usage: scan_report.py WORK OUTPUT
"""
import json
import os

from benchlib import measured_on, positional, publish, read_env, section_head, table
from verdict import Verdict, median, quantile

CLASSES = ("free", "movable", "hybrid", "unmovable", "huge", "offline")


def read_ints(work, name):
    with open(os.path.join(work, name)) as f:
        return [int(x) for x in f.read().split()]


def scan_of(path):
    with open(path) as f:
        return json.load(f)["scan"]


def map_totals(path):
    """The blocks of each class, the huge pages free, by compaction and lost to pollution, and the
    pages compaction must migrate, of a `fragctl map --json` (all zones summed)."""
    zones = scan_of(path)["zones"]
    t = {k: sum(z["hugepages"][k] for z in zones) for k in ("free", "compaction", "polluted")}
    t["cost"] = sum(z["compaction_cost_pages"] for z in zones)
    t["blocks"] = ", ".join(f"{k} {sum(z['counts'].get(k, 0) for z in zones)}" for k in CLASSES)
    return t


def main():
    work, out = positional(2)
    m = read_env(os.path.join(work, "meta.env"))
    pages = scan_of(os.path.join(work, "idle1.json"))["pages_read"]
    lines = section_head("Pageblock scan: cost and the physical memory map", m)
    lines += [
        measured_on(m) + f". Reproduce: `bash bench/scan.sh` as root after the build (part of "
        f"`make bench`; this run took {m['minutes']} min, load average {m['load_start']} at start, "
        f"{m['load_end']} at the end).",
        "",
        f"Each row: fragd with `pageblocks: {{interval: 1h, max_age: 1h, threads: T}}`, {m['scans']} scans asked with "
        f"`fragctl map --max-age 0`, the scan's own `duration_ns` from each answer. A scan reads "
        f"{pages} page flags ({pages * 8 / 2**20:.0f} MiB of /proc/kpageflags: every pfn of every zone, "
        f"{pages * 4 / 2**20:.1f} GiB). Extra memory: fragd's VmHWM after those scans minus the VmHWM of "
        f"a fragd with `scan: false` after the same requests. Fragmented: `fragmenter --percent "
        f"{m['percent']}` (1 page in 4 kept of every 2 MiB it mapped).",
        "",
    ]
    rows, med = [], {}
    for name, state, threads in (("idle1", "as found (mostly free)", 1), ("idle2", "as found", 2),
                                 ("frag1", f"fragmented {m['percent']}%", 1),
                                 ("frag2", f"fragmented {m['percent']}%", 2)):
        d = [ns / 1e6 for ns in read_ints(work, name + ".durations")]  # ms
        w, wo = read_ints(work, name + ".hwm")  # VmHWM KiB with the scan, without it
        med[name] = quantile(d, 0.5)
        time_v = Verdict(d, median, 150, "<=", "scans")  # the scans are the rows
        mem_v = Verdict([(w - wo) / 1024], median, 10, "<=")  # one VmHWM difference: no interval, too few rows
        rows.append([state, threads, f"{med[name]:.0f} ms",
                     f"{time_v.lo:.0f}..{time_v.hi:.0f} ms" if time_v.n >= 2 else "-", f"{min(d):.0f} ms",
                     f"{max(d):.0f} ms", f"{(w - wo) / 1024:+.1f} MiB ({w / 1024:.1f} vs {wo / 1024:.1f})",
                     f"≤ 150 ms, ≤ 10 MiB: time {time_v.bold()}, memory {mem_v.bold()}"])
    lines += table(["machine state", "threads", "scan median", "95% CI of the median", "min", "max",
                    "extra memory (VmHWM)", "goal (met / not met when the interval clears / misses it, else "
                    "inconclusive)"], "llllllll", rows)
    lines += [
        "",
        f"Per page: {med['idle1'] * 1e6 / pages:.0f} ns (idle), {med['frag1'] * 1e6 / pages:.0f} ns (fragmented), "
        "almost all of it in the kernel's kpageflags_read (one stable_page_flags() and one put_user() per page frame): "
        f"`dd if=/proc/kpageflags of=/dev/null bs=512K` alone took {m['dd_ms']} ms. The 150 ms goal needs "
        f"about {150e6 / pages:.0f} ns per page for {pages * 4 / 2**20:.0f} GiB; on this VM the kernel's read alone "
        f"takes {float(m['dd_ms']) * 1e6 / pages:.0f} ns a page ({float(m['dd_ms']) / 150:.1f} times that), so one "
        "reading thread cannot meet it. fragd scans every `pageblocks.interval` (60 s) on its own thread at "
        "nice 10, so the collector tick is never held up by it.",
        "",
    ]
    if os.path.exists(os.path.join(work, "before.json")):
        b, a = (map_totals(os.path.join(work, f)) for f in ("before.json", "after.json"))
        lines += [
            "### The map before and after one compaction",
            "",
            f"`physmap frag --drop 8` ({m.get('physmap', '?')}: ready = whole pageblocks it owned, each with "
            "1 page in 8 freed), then `physmap pgtables` made page tables "
            f"({m.get('pgtables', '?')}) that outgrew the rest of free memory and landed in those holes, too few "
            "for the kernel to claim a block for them; then one write of 1 to /proc/sys/vm/compact_memory "
            f"({m.get('compact_ms', '?')} ms, {m.get('compact_migrated', '?')} pages migrated) with the page "
            "tables still held. `fragctl map --png` before and after:",
            "",
            f"- before: {b['blocks']}; huge pages free {b['free']}, +{b['compaction']} by compaction "
            f"(migrating at least {b['cost']} pages), {b['polluted']} lost to pollution",
            f"- after: {a['blocks']}; huge pages free {a['free']}, +{a['compaction']} by compaction, "
            f"{a['polluted']} lost to pollution",
            "",
            "![before](docs/pageblocks-before.png)",
            "",
            "![after](docs/pageblocks-after.png)",
            "",
        ]
    publish(out, "scan", lines)


if __name__ == "__main__":
    main()
