# SPDX-License-Identifier: Apache-2.0
"""A benchmark's goal verdict with its uncertainty: a percentile bootstrap confidence
interval of the figure the goal is about, and a verdict read off the interval.

The rows resampled are the benchmark's independent units: a pair of interleaved runs
(traced and untraced of one round resampled together, so that what the round shares,
the machine's state then, stays in both), a round, or a run. The interval is the
2.5th..97.5th percentile of the figure over RESAMPLES resamples of the rows, drawn with
a fixed seed, so a report written twice from the same data says the same.

    met           the whole interval is on the goal's side
    not met       the whole interval is on the other side
    inconclusive  the interval holds the goal: this run cannot tell
    too few runs  fewer than MIN_ROWS rows: with 3, the percentile bootstrap's "95%" interval of
                  a median is the lowest and highest row and covers the median about 75% of the
                  time (50% with 2), so neither met nor not met is said
"""
import math
import random
import re

RESAMPLES = 10000
LEVEL = 0.95
SEED = 28  # fixed: the same data gives the same interval in every report

MET, NOT_MET, INCONCLUSIVE, TOO_FEW = "met", "not met", "inconclusive", "too few runs"
MIN_ROWS = 5  # rows a met or not-met verdict needs


def values(xs):
    """-> the measured xs: None (not measured) left out."""
    return [x for x in xs if x is not None]


def quantile(xs, q, empty=None):
    """Linear-interpolation quantile q (0..1) of the measured xs; empty if there are none."""
    xs = sorted(values(xs))
    if not xs:
        return empty
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    if pos == lo or xs[hi] == xs[lo]:  # also right for infinite figures
        return xs[lo]
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def median(xs, empty=math.nan):
    """The median of the measured xs (the mean of the middle two of an even count); empty if none."""
    xs = sorted(values(xs))
    n = len(xs)
    if n == 0:
        return empty
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


NUM_UNIT = re.compile(r"^(-?[\d.]+)(\s*[^\d.\s].*)?$")


def spread(xs, fmt="{:.0f}", range_when_equal=False):
    """'median (min–max)' of the measured xs, each printed by fmt (a format string or a function);
    '-' of none; the median alone of one value, or when min and max print the same (unless
    range_when_equal: the tables whose published runs show '0 (0–0)'). Of figures that print one
    unit the range leaves it out: '2.7 µs (2.6–2.8)'."""
    xs = values(xs)
    if not xs:
        return "-"
    f = fmt.format if isinstance(fmt, str) else fmt
    m, lo, hi = f(median(xs)), f(min(xs)), f(max(xs))
    if len(xs) == 1 or (lo == hi and not range_when_equal):
        return m
    parts = [NUM_UNIT.match(x) for x in (m, lo, hi)]
    if all(parts) and len({p.group(2) for p in parts}) == 1:
        return f"{m} ({parts[1].group(1)}–{parts[2].group(1)})"
    return f"{m} ({lo}–{hi})"


def ranged(xs, fmt="{:.0f}"):
    """spread keeping the range of equal values, '0 (0–0)': the cells of the reports whose published
    tables show it (apps, preflight, labels, preflight latency)."""
    return spread(xs, fmt, range_when_equal=True)


def bootstrap_ci(rows, stat, resamples=RESAMPLES, level=LEVEL, seed=SEED):
    """-> (lo, hi): the percentile bootstrap interval of stat(rows) at level, rows resampled
    with replacement as whole rows (a pair stays a pair). (nan, nan) without rows."""
    rows = list(rows)
    if not rows:
        return math.nan, math.nan
    rng = random.Random(seed)
    n = len(rows)
    vals = sorted(stat(rng.choices(rows, k=n)) for _ in range(resamples))
    a = (1 - level) / 2
    return quantile(vals, a), quantile(vals, 1 - a)


def judge(lo, hi, goal, want):
    """The verdict of an interval [lo, hi] against goal. want: '>=' or '>' (the figure must
    be at least / above goal) or '<=' or '<', or 'within' a goal (low, high): met when the
    interval is inside it, not met when it lies wholly outside."""
    if math.isnan(lo) or math.isnan(hi):
        return INCONCLUSIVE
    if want == "within":
        return MET if lo >= goal[0] and hi <= goal[1] else NOT_MET if hi < goal[0] or lo > goal[1] else INCONCLUSIVE
    if want == ">=":
        return MET if lo >= goal else NOT_MET if hi < goal else INCONCLUSIVE
    if want == ">":
        return MET if lo > goal else NOT_MET if hi <= goal else INCONCLUSIVE
    if want == "<=":
        return MET if hi <= goal else NOT_MET if lo > goal else INCONCLUSIVE
    if want == "<":
        return MET if hi < goal else NOT_MET if lo >= goal else INCONCLUSIVE
    raise ValueError(f"verdict.judge: want must be one of >=, >, <=, <, within, not {want!r}")


def point_holds(x, goal, want):
    if want == "within":
        return goal[0] <= x <= goal[1]
    return {">=": x >= goal, ">": x > goal, "<=": x <= goal, "<": x < goal}[want]


class Verdict:
    """The figure stat(rows), its interval and the verdict against goal.

    Below MIN_ROWS rows the verdict is 'too few runs' (`too_few`), and `side` tells on which
    side of the goal the point is; with one row there is no interval (`single`); with none,
    'inconclusive'."""

    def __init__(self, rows, stat, goal, want, unit="rows", resamples=RESAMPLES, seed=SEED):
        rows = list(rows)
        self.n, self.unit, self.goal, self.want = len(rows), unit, goal, want
        self.value = stat(rows) if rows else math.nan
        self.single = self.n == 1
        if self.n >= 2:
            self.lo, self.hi = bootstrap_ci(rows, stat, resamples=resamples, seed=seed)
            self.word = judge(self.lo, self.hi, goal, want)
        else:
            self.lo = self.hi = self.value
            self.word = (MET if point_holds(self.value, goal, want) else NOT_MET) if self.single else INCONCLUSIVE
        # What the point alone says, for a verdict with too few rows to say it.
        self.side = (MET if point_holds(self.value, goal, want) else NOT_MET) if self.n else INCONCLUSIVE
        self.too_few = 0 < self.n < MIN_ROWS  # MIN_ROWS read here: a test may relax it
        if self.too_few:
            self.word = TOO_FEW

    @property
    def met(self):
        return self.word == MET

    def bold(self):
        """The verdict word in bold (markdown); below MIN_ROWS with n and the point's side."""
        w = f"**{self.word}**"
        if self.single:
            return w + " (one measurement, no interval" + (f"; the point: {self.side})" if self.too_few else ")")
        if self.too_few:
            return w + f" ({self.n} {self.unit}, {MIN_ROWS} needed; the point: {self.side})"
        return w

    def interval(self, fmt="{:.4f}"):
        """'95% CI lo..hi, N rows' (or 'one measurement')."""
        if self.single:
            return "one measurement"
        if self.n == 0:
            return "no data"
        return f"95% CI {fmt.format(self.lo)}..{fmt.format(self.hi)}, {self.n} {self.unit}"

    def text(self, fmt="{:.4f}"):
        """'**met** (0.9951; 95% CI 0.97..1.01, 10 pairs)'."""
        if self.single or self.n == 0:
            return f"{self.bold()} ({fmt.format(self.value)})"
        return f"{self.bold()} ({fmt.format(self.value)}; {self.interval(fmt)})"


def median_ratio(pairs):
    """stat: the median of a/b over (a, b) pairs."""
    return median([a / b for a, b in pairs])


def median_difference(factor=1):
    """-> stat over (a, b) rows: median(a) - factor x median(b), whole rows (rounds) resampled."""
    return lambda rows: median([a for a, _ in rows]) - factor * median([b for _, b in rows])


def checked(ok):
    """A goal checked once, without an interval: 'met' or '**not met**'."""
    return "met" if ok else "**not met**"
