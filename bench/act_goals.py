# SPDX-License-Identifier: Apache-2.0
"""The goals of bench/act.sh for fragd's shipped policy in act mode, each verdict with a 95%
percentile bootstrap interval over the rounds (bench/verdict.py)."""
import math

from benchlib import fmt_int, fmt_pct, fmt_s
from verdict import Verdict, median, median_difference, spread, values

# Goals of the issue "act mode second step" for fragd's shipped policy in act mode.
GOAL_STALL_FRAC = 0.01       # <= 1% of the burst stalls
GOAL_MIGRATED_VS_K90 = 0.5   # pages migrated <= 0.5x kernel proactive 90's
GOAL_MIGRATED_VS_IDEAL = 1.6  # pages migrated <= 1.6x the ideal

# --- goals ----------------------------------------------------------------------------

def verdict(v):
    """The cell of a Verdict (None: a figure is missing): met / not met only when the 95%
    bootstrap interval over the rounds clears / misses the goal, else inconclusive."""
    if v is None or v.n == 0:
        return "n/a"
    if v.single or v.lo == v.hi:
        return v.bold()
    fmt = "{:.0f}" if max(abs(v.lo), abs(v.hi)) >= 1000 else "{:.3g}"  # pages, or shares and seconds
    return f"{v.bold()} ({v.interval(fmt)})"


def one(runs, fig, goal, want):
    """Verdict on median(fig) over the runs (one per round) that measured it."""
    xs = values(fig(r) for r in runs)
    return Verdict(xs, median, goal, want, "rounds") if xs else None


def by_round(a_runs, b_runs, fa, fb):
    """-> [(fa(a), fb(b))] of the rounds in which both runs measured their figure: the rows
    of a comparison between two modes (interleaved: a round's runs share the machine's state)."""
    b = {r.round: fb(r) for r in b_runs}
    return [(fa(r), b[r.round]) for r in a_runs if fa(r) is not None and b.get(r.round) is not None]


def at_most(rows, factor):
    """Verdict: median(a) <= factor x median(b) over the rows (a, b); None without rows."""
    if not rows:
        return None
    return Verdict(rows, median_difference(factor), 0, "<=",
                   "rounds")


def goals_for(sc, G, m):
    """-> rows (goal, fragd's figure, reference, verdict) for scenario sc, from the medians."""
    f = G.get((sc, "fragd"))
    if not f:
        return [("all goals", "fragd not run", "-", "n/a")]
    k90 = G.get((sc, "kernel90"))
    hug = G.get((sc, "hugeadm"))
    out = []
    how = "the kernel's record: the burst task's direct compactions, tracefs" \
        if all(r.kernel_stalls_how == "tracefs" for r in f) else "the kernel's record: compact_stall over the burst"
    stall_row = (f"<= {GOAL_STALL_FRAC * 100:.0f}% of the burst stalled ({how})",
                 f"{spread([r.kernel_stall_frac for r in f], fmt_pct)} ({spread([r.kernel_stalls for r in f], fmt_int)}); "
                 f"fragd counted {spread([r.stall_frac for r in f], fmt_pct)}", "-",
                 verdict(one(f, lambda r: r.kernel_stall_frac, GOAL_STALL_FRAC, "<=")))
    if sc == "pool":
        out.append(("target reached", spread([r.share for r in f], fmt_pct), "-",
                    verdict(one(f, lambda r: r.share, 1, ">="))))
        if hug:
            out.append(("wall time <= hugeadm --hard's", spread([r.wall_s for r in f], fmt_s),
                        f"hugeadm {spread([r.wall_s for r in hug], fmt_s)}",
                        verdict(at_most(by_round(f, hug, lambda r: r.wall_s if r.share is not None and r.share >= 1
                                                 else math.inf, lambda r: r.wall_s), 1))))
            out.append(("pages migrated <= hugeadm --hard's", spread([r.migrated for r in f], fmt_int),
                        f"hugeadm {spread([r.migrated for r in hug], fmt_int)}",
                        verdict(at_most(by_round(f, hug, lambda r: r.migrated, lambda r: r.migrated), 1))))
            # The same work: pages migrated per block made (the pool less the free blocks at "ready"),
            # in the rounds in which both made the whole pool. hugeadm often stops short of the target
            # and fragd goes on to it; a pool write shows its pages only when it returns, so there is
            # no count of what either migrated for part of the pool.
            def per_block(r):
                if r.share is None or r.share < 1 or r.free_ready is None or r.migrated is None:
                    return None
                made = r.granted - r.free_ready
                return r.migrated / made if made > 0 else None
            pairs = by_round(f, hug, per_block, per_block)
            if pairs:
                out.append(("pages migrated per block made, rounds both made the whole pool (not a goal: the "
                            "same work)", spread([a for a, _ in pairs], fmt_int),
                            f"hugeadm {spread([b for _, b in pairs], fmt_int)} ({len(pairs)} of {len(hug)} rounds)",
                            verdict(at_most(pairs, 1))))
        else:
            out.append(("wall time and pages migrated <= hugeadm --hard's", "-", "hugeadm not run", "n/a"))
        return out
    if sc == "free":
        if hug:
            hug_share = {r.round: r.share for r in hug}
            wins = sum(1 for r in f if r.share is not None and hug_share.get(r.round) is not None
                       and r.share >= hug_share[r.round])
            paired = sum(1 for r in f if r.share is not None and hug_share.get(r.round) is not None)
            out.append(("granted share >= hugeadm --hard's", spread([r.share for r in f], fmt_pct),
                        f"hugeadm {spread([r.share for r in hug], fmt_pct)}; fragd >= hugeadm in {wins} of "
                        f"{paired} rounds",
                        verdict(at_most(by_round(hug, f, lambda r: r.share, lambda r: r.share), 1))))
        else:
            out.append(("granted share >= hugeadm --hard's", spread([r.share for r in f], fmt_pct),
                        "hugeadm not run", "n/a"))
        out.append(stall_row)
        return out
    # fixed, thp
    out.append(("100% granted", spread([r.share for r in f], fmt_pct), "-",
                verdict(one(f, lambda r: r.share, 1, ">="))))
    out.append(stall_row)
    if k90:
        k = median((r.migrated for r in k90), None)
        out.append((f"pages migrated <= {GOAL_MIGRATED_VS_K90:g}x kernel 90's (at the burst)",
                    spread([r.migrated for r in f], fmt_int),
                    f"kernel 90 {spread([r.migrated for r in k90], fmt_int)} "
                    f"(x{GOAL_MIGRATED_VS_K90:g}: {fmt_int(None if k is None else k * GOAL_MIGRATED_VS_K90)})",
                    verdict(at_most(by_round(f, k90, lambda r: r.migrated, lambda r: r.migrated),
                                    GOAL_MIGRATED_VS_K90))))
        # Both once settled: fragd, too, may go on compacting after the burst.
        ks = median((r.migrated_settled for r in k90), None)
        fset = [r.migrated_settled if r.migrated_settled is not None else r.migrated for r in f]
        unsettled = [f"{name} {sum(1 for r in rs if r.settle and not r.settle.get('settled'))} of {len(rs)}"
                     for name, rs in (("kernel 90", k90), ("fragd", f))
                     if any(r.settle and not r.settle.get("settled") for r in rs)]
        note = (f"; not settled within {m.get('settle_max')} s: " + ", ".join(unsettled) + " runs"
                if unsettled else "")
        out.append((f"pages migrated <= {GOAL_MIGRATED_VS_K90:g}x kernel 90's (both once compaction settled)",
                    spread(fset, fmt_int),
                    f"kernel 90 {spread([r.migrated_settled for r in k90], fmt_int)} "
                    f"(x{GOAL_MIGRATED_VS_K90:g}: {fmt_int(None if ks is None else ks * GOAL_MIGRATED_VS_K90)}{note})",
                    verdict(at_most(by_round(f, k90, lambda r: r.migrated_settled if r.migrated_settled is not None
                                             else r.migrated, lambda r: r.migrated_settled),
                                    GOAL_MIGRATED_VS_K90))))
    else:
        out.append((f"pages migrated <= {GOAL_MIGRATED_VS_K90:g}x kernel 90's", spread([r.migrated for r in f], fmt_int),
                    "kernel 90 not run", "n/a"))
    ideal = median((r.ideal for r in f), None)
    out.append((f"pages migrated <= {GOAL_MIGRATED_VS_IDEAL:g}x the ideal", spread([r.migrated for r in f], fmt_int),
                f"ideal {spread([r.ideal for r in f], fmt_int)} (x{GOAL_MIGRATED_VS_IDEAL:g}: "
                f"{fmt_int(None if ideal is None else ideal * GOAL_MIGRATED_VS_IDEAL)})",
                verdict(at_most(by_round(f, f, lambda r: r.migrated, lambda r: r.ideal), GOAL_MIGRATED_VS_IDEAL))))
    return out
