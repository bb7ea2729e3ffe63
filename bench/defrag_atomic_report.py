# SPDX-License-Identifier: Apache-2.0
"""vm.defrag_mode's atomic failure mode and the guard on it (bench/defrag_atomic.sh): one row per
round from the guest's serial lines, then what the rounds show, with 95% bootstrap intervals
(bench/verdict.py).

    python3 bench/defrag_atomic_report.py WORK OUT
"""
import os
import sys

from benchlib import measured_on, positional, publish, read_env, row, section_head, table
from verdict import Verdict, median, median_ratio

# The guard's window: how far before its write the failure rate is taken.
BEFORE_S = 10
# The figures of bench/defrag_atomic_rounds.sh's FRAGD-PHASE and FRAGD-STORM lines, after <round> <dm>.
PHASE_KEYS = ("ok", "enomem", "memfree_kib", "free_blocks_pages", "kcompactd_wakes", "pgscan_kswapd", "psi_some_us",
              "psi_full_us")
STORM_KEYS = ("ok", "enomem", "cached_before_kib", "cached_after_kib", "pgscan_kswapd", "pgsteal_kswapd",
              "pgscan_direct", "kcompactd_wakes", "psi_some_us", "psi_full_us")


def parse(path):
    """-> (the rounds with both phases and a guard phase, FRAGD-INFO facts, FRAGD-STORM lines' words)
    of one log; nothing for a missing one."""
    phases, ticks, guards, info, storms = {}, {}, {}, {}, []
    if not os.path.exists(path):
        return [], info, storms
    with open(path) as f:
        for w in (line.split() for line in f):
            if not w:
                continue
            if w[0] == "FRAGD-PHASE":
                phases[(int(w[1]), int(w[2]))] = dict(zip(PHASE_KEYS, map(int, w[3:11])))
            elif w[0] == "FRAGD-STORM":
                storms.append(w)
            elif w[0] == "FRAGD-TICK":
                ticks.setdefault(int(w[1]), []).append(tuple(int(x) for x in w[2:6]))
            elif w[0] == "FRAGD-GUARD":
                guards[int(w[1])] = dict(zip(("fragd_failures", "dm_after", "off_actions", "rc"), map(int, w[2:6])))
                guards[int(w[1])]["consumers"] = w[6] if len(w) > 6 else "-"
            elif w[0] == "FRAGD-INFO" and w[1] == "round-start":
                info.setdefault("unmovable_blocks", []).append(int(dict(zip(w[2::2], w[3::2]))["unmovable_blocks"]))
            elif w[0] == "FRAGD-INFO":
                info[w[1]] = " ".join(w[2:])
    rows = [{"r": r, "p0": phases[(r, 0)], "p1": phases[(r, 1)], "g": guard_round(sorted(ticks.get(r, []))),
             "guard": guards[r]}
            for r in sorted({r for r, _ in phases} & set(guards)) if (r, 0) in phases and (r, 1) in phases]
    return rows, info, storms


def guard_round(ticks):
    """Seconds to the write, failures a second over the BEFORE_S s before it and after it."""
    at = {t: (ok, en, dm) for t, ok, en, dm in ticks}
    write = next((t for t, _, _, dm in ticks if dm == 0), None)
    out = {"write_s": write, "enomem": ticks[-1][2] if ticks else 0}
    if write is None:
        return out
    first_fail = next((t for t, _, en, _ in ticks if en > 0), write)
    out["act_s"] = write - first_fail
    t0 = max(write - BEFORE_S, first_fail - 1, 1)
    if t0 in at and write > t0:
        out["before"] = (at[write][1] - at[t0][1]) / (write - t0)
    # After: from the second after the write (a failure of the write's own second may be before it).
    t1, t_end = write + 1, ticks[-1][0]
    if t1 in at and t_end > t1:
        out["after"] = (at[t_end][1] - at[t1][1]) / (t_end - t1)
    return out


def rounds_table(rows):
    lines = table(["round", "defrag_mode 0: inserted / failed", "defrag_mode 1: inserted / failed",
                   "MemFree at the end, mode 1", "kcompactd wake-ups, 0 / 1", "kswapd scans, 0 / 1",
                   "guard: seconds from the first failure to its write", "failures/s before / after",
                   "fragd_alloc_failures_by_consumer_total{can_sleep=\"false\"} at the end",
                   "defrag_mode after fragd stopped"], "rrrrrrrrlr")
    for x in rows:
        p0, p1, g = x["p0"], x["p1"], x["g"]
        both = lambda k: f"{p0[k]} / {p1[k]}"  # noqa: E731
        lines.append(row([
            x["r"], f"{p0['ok']} / {p0['enomem']}", f"{p1['ok']} / {p1['enomem']}",
            f"{p1['memfree_kib'] / 1024:.0f} MiB", both("kcompactd_wakes"), both("pgscan_kswapd"),
            g["act_s"] if g["write_s"] is not None else "none",
            f"{g['before']:.1f} / {g['after']:.1f}" if "before" in g and "after" in g else "-",
            x["guard"]["consumers"], x["guard"]["dm_after"]]))
    return lines


def findings(rows, limit):
    n = len(rows)
    fail1 = Verdict([x["p1"]["enomem"] for x in rows], median, 0, ">", "rounds")
    fail0 = Verdict([x["p0"]["enomem"] for x in rows], median, 0, "<=", "rounds")
    failed = [sum(1 for x in rows if x[p]["enomem"] > 0) for p in ("p0", "p1")]
    med = lambda dm, k: median([x[f"p{dm}"][k] for x in rows])  # noqa: E731
    lines = [
        f"- Rounds with failed inserts: {failed[1]} of {n} with defrag_mode 1, {failed[0]} of {n} with 0.",
        f"- With defrag_mode 1, failed inserts per round: median {fail1.text('{:.0f}')} (goal of the reproduction: "
        f"more than 0), with a median {median([x['p1']['memfree_kib'] / 1024 for x in rows]):.0f} MiB free at the "
        f"end; with defrag_mode 0, the same demand on the same memory: {fail0.text('{:.0f}')} (goal: 0).",
        f"- Around the failures, the kernel's own work (medians over {n} rounds, defrag_mode 1 against 0): "
        f"kcompactd woke {med(1, 'kcompactd_wakes'):.0f} against {med(0, 'kcompactd_wakes'):.0f} times, kswapd "
        f"scanned {med(1, 'pgscan_kswapd'):.0f} against {med(0, 'pgscan_kswapd'):.0f} pages (nothing here is "
        f"reclaimable), memory pressure (PSI some) {med(1, 'psi_some_us') / 1000:.0f} against "
        f"{med(0, 'psi_some_us') / 1000:.0f} ms over the demand.",
    ]
    acted = [x for x in rows if x["g"]["write_s"] is not None and x["guard"]["off_actions"] >= 1]
    failing = [x for x in rows if x["g"]["enomem"] > 0]
    if failing:
        speed = Verdict([x["g"]["act_s"] for x in acted], median, 20, "<=", "rounds")
        ratio = Verdict([(x["g"]["after"], x["g"]["before"]) for x in acted if x["g"].get("before")], median_ratio,
                        0.1, "<=", "rounds")
        quiet = [x for x in rows if x["g"]["enomem"] == 0]
        left = ", ".join(str(x["g"]["enomem"]) for x in failing if x not in acted)
        lines.append(
            f"- Guard: it wrote 0 in {sum(1 for x in acted if x in failing)} of the {len(failing)} rounds whose guard "
            "phase had failures"
            + (f" (those it left: {left} failed inserts in the whole phase, under the limit of {limit} a second over "
               "10 s)" if left else "")
            + (f" and in {sum(1 for x in acted if x in quiet)} of the {len(quiet)} without" if quiet else "")
            + f"; median {speed.text('{:.0f}')} s after the first failure (goal: within two windows, 20 s); the failure rate "
            f"after the write over the rate in the {BEFORE_S} s before it, median {ratio.text('{:.3f}')} (goal: at "
            "most 0.1).")
    else:
        lines.append(f"- Guard: no failure to act on; it wrote 0 in {len(acted)} of {n} rounds (goal: none).")
    back = sum(1 for x in rows if x["guard"]["dm_after"] == 1 and x["guard"]["rc"] == 0)
    return lines + [f"- defrag_mode 1 again after fragd stopped (its exit puts back what it changed): {back} of {n} "
                    "rounds."]


def storm_section(storms, seconds):
    rounds = sorted({r for r, _ in storms if (r, 0) in storms and (r, 1) in storms})
    pairs = [(storms[(r, 0)], storms[(r, 1)]) for r in rounds]
    lines = table(["round", "defrag_mode 0: failed / page cache kept", "defrag_mode 1: failed / page cache kept",
                   "kswapd reclaimed (pgsteal_kswapd), 0 / 1", "kswapd scanned, 0 / 1", "direct reclaim scanned, 0 / 1",
                   "PSI some ms, 0 / 1", "PSI full ms, 0 / 1"], "rrrrrrrr")
    kept = lambda x: f"{x['enomem']} / {x['cached_after_kib'] / max(x['cached_before_kib'], 1):.0%}"  # noqa: E731
    for r, (a, b) in zip(rounds, pairs):
        lines.append(row([r, kept(a), kept(b),
                          *(f"{a[k]} / {b[k]}" for k in ("pgsteal_kswapd", "pgscan_kswapd", "pgscan_direct")),
                          *(f"{a[k] / 1000:.0f} / {b[k] / 1000:.0f}" for k in ("psi_some_us", "psi_full_us"))]))
    steal = Verdict([b["pgsteal_kswapd"] - a["pgsteal_kswapd"] for a, b in pairs], median, 0, ">", "rounds")
    full = Verdict([(b["psi_full_us"] - a["psi_full_us"]) / 1000 for a, b in pairs], median, 0, ">", "rounds")
    # A storm by the measure of FragdReclaimStormUnderDefragMode: every runnable task stalled on
    # memory 5% of the demand's time or more (PSI full) with defrag_mode 1.
    share = Verdict([b["psi_full_us"] / 1e6 / seconds * 100 for _, b in pairs], median, 5, ">=", "rounds")
    lines += [
        "",
        f"- Pages kswapd reclaimed with defrag_mode 1 minus with 0, per round: median {steal.text('{:.0f}')} "
        "(the goal of the reproduction: more than 0, reclaim that defrag_mode causes while memory is free); "
        f"PSI full with 1 minus with 0: median {full.text('{:.1f}')} ms (more than 0: tasks stalled on it).",
        f"- PSI full with defrag_mode 1 as a share of the demand's {seconds:.0f} s: median {share.text('{:.3f}')} % "
        "(a storm by the alert FragdReclaimStormUnderDefragMode's measure: 5% or more).",
    ]
    if not share.met and not steal.met:
        both = sum(1 for a, b in pairs if a["pgsteal_kswapd"] > 0 and b["pgsteal_kswapd"] > 0)
        failed = [sum(1 for p in pairs if p[dm]["enomem"] > 0) for dm in (0, 1)]
        lines.append(
            f"- Reading: no reclaim storm reproduced. kswapd reclaimed page cache with both settings in {both} of "
            f"{len(rounds)} rounds, defrag_mode 1 did not reclaim more by an interval that excludes 0, and the "
            "stalls it added stayed below the alert's level. Inserts failed in "
            f"{failed[1]} of {len(rounds)} rounds with defrag_mode 1 and {failed[0]} with 0: the first failure mode, "
            "with page cache beside it.")
    return lines


def main(work, out):
    m = read_env(os.path.join(work, "meta.env"))
    host, hinfo, storm_lines = parse(os.path.join(work, "host.log"))
    guest, ginfo, _ = parse(os.path.join(work, "guest.log"))
    storms = {}  # {(round, dm): figures}, read after both logs' rounds (a bad line reported as it always was)
    for w in storm_lines:
        storms[(int(w[1]), int(w[2]))] = dict(zip(STORM_KEYS, map(int, w[3:13])))
    if not host and not guest and not storms:
        sys.exit(f"no complete round in {work}")
    lines = section_head("vm.defrag_mode: allocations that cannot sleep fail while memory is free", m)
    lines += [
        "Produced by: `bash bench/defrag_atomic.sh` (5 rounds on this host, then 5 in a qemu guest). Memory is "
        "splintered by pages compaction may not move and reclaim cannot free (`fragmenter --keep 16 --mlock 1` "
        "with `vm.compact_unevictable_allowed` 0, as between pinned pages), leaving a little in whole free blocks. "
        "`nowait_demand` then asks for unmovable order-2 blocks with GFP_NOWAIT (a BPF hash map without "
        "preallocation: its elements are refilled from irq_work and cannot sleep); each insert that fails with "
        f"ENOMEM is a failure in the kernel's own record. Each round runs the demand for {m['seconds']} s with "
        f"`vm.defrag_mode` 0 and with 1 (the order alternating), then with 1 for {m['guard_seconds']} s under fragd "
        "in act mode with only `compaction.defrag_guard` on (`atomic_failures_per_second: "
        f"{m['limit']}`, window 10 s). The kernel's vmstat gives kcompactd's wake-ups and kswapd's scans.",
        "",
        measured_on(m) + ".",
    ]
    if host:
        lines += ["", f"### This host: Linux {hinfo.get('kernel', '?')}", "",
                  f"{m['host_rate']} inserts a second, about {m['host_free_mib']} MiB left in whole free blocks.", ""]
        lines += rounds_table(host) + [""] + findings(host, m["limit"])
    if guest:
        lines += ["", f"### Guest: Debian's {ginfo.get('kernel', '?')} (2 GiB, TCG: counts are real, timings are not)",
                  "", f"{m['guest_rate']} inserts a second, about {m['guest_free_mib']} MiB left in whole free blocks "
                  "(128 MiB more in the guard phase, where fragd runs in the guest's 2 GiB too)."
                  + (f" These rounds: {m['guest_date']}, fragd binary sha256 {m['guest_sha']}." if m.get("guest_date")
                     else ""),
                  ""]
        lines += rounds_table(guest) + [""] + findings(guest, m["limit"])
    grew = hinfo.get("unmovable_blocks") if host else None
    lines += [
        "",
        "Why rounds differ: a phase with defrag_mode 0 (and a guard phase after its write) takes blocks of the "
        "splintered memory for its unmovable demand and leaves them unmovable-typed when it ends; the movable fill "
        "before each phase gives back only part of them, and a later phase's demand finds room there before it "
        "fails" + (f" (the host's unmovable pageblocks, counted at each phase's start, went from {grew[0]} to as "
                   f"many as {max(grew)} across the rounds)" if grew else "")
        + ". The failures of a round start once that room and the whole free blocks are used up.",
        "",
        "What it shows: under defrag_mode a non-sleeping allocation may not take a piece of another "
        "migratetype's block and may not reclaim or compact to make a whole one, so it fails while memory is "
        "free in holes. Kernels with the allocator fix (mm/page_alloc: \"fix defrag_mode for non-reclaimable "
        "allocations\", May 2026) let such an allocation fall back when it may wake kswapd; a kernel without it "
        "fails as the host above did, and there the guard stops the failures by turning defrag_mode off.",
    ]
    if host or guest:
        publish(out, "defrag_atomic", lines)
    if storms:
        st = section_head("vm.defrag_mode: reclaim it causes while memory is free", m)
        st += [
            "Produced by: `BENCH_ATOMIC_WHERE=host BENCH_ATOMIC_PHASES=storm bash bench/defrag_atomic.sh` (5 rounds "
            f"on this host, Linux {hinfo.get('kernel', '?')}). As in \"vm.defrag_mode: allocations that cannot "
            f"sleep fail while memory is free\", but before each demand {m.get('cache_mib', '?')} MiB of a file "
            "on disk is read into the page cache (clean, reclaimable), and no fragd runs: the same splintering and "
            f"GFP_NOWAIT demand ({m['host_rate']} a second for {m['seconds']} s) with `vm.defrag_mode` 0 and 1 "
            "alternating. The kernel's vmstat (pgsteal_kswapd, pgscan_kswapd, pgscan_direct), Cached and PSI over "
            "the demand.",
            "",
            measured_on(m) + ".",
            "",
        ]
        st += storm_section(storms, float(m['seconds']))
        publish(out, "defrag_storm", st)


if __name__ == "__main__":
    main(*positional(2))
