# SPDX-License-Identifier: Apache-2.0
"""Reading and formatting helpers of bench/act_report.py: /proc/vmstat and
/proc/buddyinfo snapshots, and the table cells (a median with its lowest and
highest value)."""
import os
import re
import statistics



def read_vmstat(path):
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                k, v = line.split()
                out[k] = int(v)
    return out


def free_2m_blocks(path):
    """-> free memory in whole 2 MiB blocks (order >= 9, all zones) of a /proc/buddyinfo copy, or None."""
    if not os.path.exists(path):
        return None
    total = 0
    with open(path) as f:
        for line in f:
            counts = line.split()[4:]  # "Node 0, zone Normal c0 c1 ... c10"
            total += sum(int(c) * 2 ** (order - 9) for order, c in enumerate(counts) if order >= 9)
    return total


# --- formatting ---------------------------------------------------------------------

def fmt_lat(ns):
    if ns is None:
        return "-"
    us = ns / 1e3
    if us < 10:
        return f"{us:.1f} µs"
    if us < 1000:
        return f"{us:.0f} µs"
    return f"{us / 1e3:.2f} ms"


def fmt_s(s):
    if s is None:
        return "-"
    if s < 0.01:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.3f} s"


def fmt_int(x):
    return "-" if x is None else f"{x:.0f}"


def fmt_pct(x):
    return "-" if x is None else f"{x * 100:.1f}%"


def values(xs):
    return [x for x in xs if x is not None]


def med(xs):
    xs = values(xs)
    return statistics.median(xs) if xs else None


def cell(xs, fmt):
    """'median (min–max)' of the measured xs, 'median' when they are all equal, '-' for none."""
    xs = values(xs)
    if not xs:
        return "-"
    m, lo, hi = statistics.median(xs), min(xs), max(xs)
    if len(xs) == 1 or fmt(lo) == fmt(hi):
        return fmt(m)
    parts = [NUM_UNIT.match(fmt(x)) for x in (m, lo, hi)]
    if all(parts) and len({p.group(2) for p in parts}) == 1:  # one unit: "2.7 µs (2.6–2.8)"
        return f"{fmt(m)} ({parts[1].group(1)}–{parts[2].group(1)})"
    return f"{fmt(m)} ({fmt(lo)}–{fmt(hi)})"


NUM_UNIT = re.compile(r"^(-?[\d.]+)(\s*[^\d.\s].*)?$")
