# SPDX-License-Identifier: Apache-2.0
"""The goals of bench/act.sh for fragd's shipped policy in act mode, each verdict with a 95%
percentile bootstrap interval over the rounds (bench/verdict.py)."""
import math
from operator import attrgetter

from benchlib import fmt_int, fmt_pct, fmt_s
from verdict import Verdict, median, median_difference, spread, values

# Goals of the issue "act mode second step" for fragd's shipped policy in act mode.
GOAL_STALL_FRAC = 0.01       # <= 1% of the burst stalls
GOAL_MIGRATED_VS_K90 = 0.5   # pages migrated <= 0.5x kernel proactive 90's
GOAL_MIGRATED_VS_IDEAL = 1.6  # pages migrated <= 1.6x the ideal

migrated, share = attrgetter("migrated"), attrgetter("share")


def over(runs, fig, fmt=fmt_int):
    """'median (lowest–highest)' of the figure named fig (a Run attribute) over the runs."""
    return spread([getattr(r, fig) for r in runs], fmt)


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
    """The verdict cell of median(fig) (a Run attribute) over the runs (one per round) that measured it."""
    xs = values(getattr(r, fig) for r in runs)
    return verdict(Verdict(xs, median, goal, want, "rounds") if xs else None)


def by_round(a_runs, b_runs, fa, fb=None):
    """-> [(fa(a), fb(b))] of the rounds in which both runs measured their figure (fb: fa when not
    given): the rows of a comparison between two modes (interleaved: a round's runs share the
    machine's state)."""
    fb = fb or fa
    b = {r.round: fb(r) for r in b_runs}
    return [(fa(r), b[r.round]) for r in a_runs if fa(r) is not None and b.get(r.round) is not None]


def at_most(rows, factor):
    """The verdict cell of median(a) <= factor x median(b) over the rows (a, b)."""
    return verdict(Verdict(rows, median_difference(factor), 0, "<=", "rounds") if rows else None)


def scaled(name, xs, factor, note=""):
    """The reference cell 'NAME median (lowest–highest) (xFACTOR: FACTOR x median[NOTE])'."""
    x = median(xs, None)
    return f"{name} {spread(xs, fmt_int)} (x{factor:g}: {fmt_int(None if x is None else x * factor)}{note})"


def goals_for(sc, G, m):
    """-> rows (goal, fragd's figure, reference, verdict) for scenario sc, from the medians."""
    f = G.get((sc, "fragd"))
    if not f:
        return [("all goals", "fragd not run", "-", "n/a")]
    if sc == "pool":
        return pool_goals(f, G.get((sc, "hugeadm")))
    how = ("the burst task's direct compactions, tracefs" if all(r.kernel_stalls_how == "tracefs" for r in f)
           else "compact_stall over the burst")
    stall = (f"<= {GOAL_STALL_FRAC * 100:.0f}% of the burst stalled (the kernel's record: {how})",
             f"{over(f, 'kernel_stall_frac', fmt_pct)} ({over(f, 'kernel_stalls')}); "
             f"fragd counted {over(f, 'stall_frac', fmt_pct)}", "-", one(f, "kernel_stall_frac", GOAL_STALL_FRAC, "<="))
    if sc == "free":
        hug = G.get((sc, "hugeadm"))
        if not hug:
            return [("granted share >= hugeadm --hard's", over(f, "share", fmt_pct), "hugeadm not run", "n/a"), stall]
        pairs = by_round(f, hug, share)
        return [("granted share >= hugeadm --hard's", over(f, "share", fmt_pct),
                 f"hugeadm {over(hug, 'share', fmt_pct)}; fragd >= hugeadm in {sum(a >= b for a, b in pairs)} of "
                 f"{len(pairs)} rounds", at_most(by_round(hug, f, share), 1)), stall]
    # fixed, thp
    out = [("100% granted", over(f, "share", fmt_pct), "-", one(f, "share", 1, ">=")), stall]
    k90 = G.get((sc, "kernel90"))
    if k90:
        # Both once settled, too: fragd may go on compacting after the burst.
        unsettled = [f"{name} {n} of {len(rs)}" for name, rs in (("kernel 90", k90), ("fragd", f))
                     if (n := sum(1 for r in rs if r.settle and not r.settle.get("settled")))]
        note = f"; not settled within {m.get('settle_max')} s: {', '.join(unsettled)} runs" if unsettled else ""
        # fragd's runs without a settled figure count with the one at the burst
        settled = lambda r: r.migrated_settled if r.migrated_settled is not None else r.migrated  # noqa: E731
        for when, fa, fb, tail in (("at the burst", migrated, migrated, ""),
                                   ("both once compaction settled", settled, attrgetter("migrated_settled"), note)):
            out.append((f"pages migrated <= {GOAL_MIGRATED_VS_K90:g}x kernel 90's ({when})",
                        spread([fa(r) for r in f], fmt_int),
                        scaled("kernel 90", [fb(r) for r in k90], GOAL_MIGRATED_VS_K90, tail),
                        at_most(by_round(f, k90, fa, fb), GOAL_MIGRATED_VS_K90)))
    else:
        out.append((f"pages migrated <= {GOAL_MIGRATED_VS_K90:g}x kernel 90's", over(f, "migrated"),
                    "kernel 90 not run", "n/a"))
    out.append((f"pages migrated <= {GOAL_MIGRATED_VS_IDEAL:g}x the ideal", over(f, "migrated"),
                scaled("ideal", [r.ideal for r in f], GOAL_MIGRATED_VS_IDEAL),
                at_most(by_round(f, f, migrated, attrgetter("ideal")), GOAL_MIGRATED_VS_IDEAL)))
    return out


def pool_goals(f, hug):
    """Scenario pool: the target reached, in no more wall time and pages migrated than hugeadm --hard."""
    out = [("target reached", over(f, "share", fmt_pct), "-", one(f, "share", 1, ">="))]
    if not hug:
        return out + [("wall time and pages migrated <= hugeadm --hard's", "-", "hugeadm not run", "n/a")]
    made_pool = lambda r: r.share is not None and r.share >= 1  # noqa: E731
    out += [("wall time <= hugeadm --hard's", over(f, "wall_s", fmt_s), f"hugeadm {over(hug, 'wall_s', fmt_s)}",
             at_most(by_round(f, hug, lambda r: r.wall_s if made_pool(r) else math.inf, attrgetter("wall_s")), 1)),
            ("pages migrated <= hugeadm --hard's", over(f, "migrated"), f"hugeadm {over(hug, 'migrated')}",
             at_most(by_round(f, hug, migrated), 1))]

    # The same work: pages migrated per block made (the pool less the free blocks at "ready"),
    # in the rounds in which both made the whole pool. hugeadm often stops short of the target
    # and fragd goes on to it; a pool write shows its pages only when it returns, so there is
    # no count of what either migrated for part of the pool.
    def per_block(r):
        if not made_pool(r) or r.free_ready is None or r.migrated is None:
            return None
        made = r.granted - r.free_ready
        return r.migrated / made if made > 0 else None

    pairs = by_round(f, hug, per_block)
    if pairs:
        out.append(("pages migrated per block made, rounds both made the whole pool (not a goal: the same work)",
                    spread([a for a, _ in pairs], fmt_int),
                    f"hugeadm {spread([b for _, b in pairs], fmt_int)} ({len(pairs)} of {len(hug)} rounds)",
                    at_most(pairs, 1)))
    return out
