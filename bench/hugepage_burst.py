#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Hugepage burst for bench/run.sh: time the kernel side of growing the hugetlb pool.

    hugepage_burst.py PAGES CYCLES

Each cycle writes PAGES to /proc/sys/vm/nr_hugepages (only that write(2) is
timed), reads the pool size back (a write returns success with a short pool),
then writes the starting value back (untimed). Prints one line of key=value
pairs; pages_per_s = PAGES / median time of one growing write (the median
keeps a cycle in which the writer was preempted or interrupted from weighing
on the run); pages_per_s_total = pages granted / summed write time. The pool
is always put back to where it was, even on error.
"""
import sys

from benchlib import positional, read_int, timed_write
from verdict import median

SYSCTL = "/proc/sys/vm/nr_hugepages"


def main():
    pages, cycles = map(int, positional(2))
    if pages <= 0 or cycles <= 0:
        sys.exit("hugepage_burst: PAGES and CYCLES must be > 0")
    start = read_int(SYSCTL)
    if start != 0:
        sys.exit(f"hugepage_burst: vm.nr_hugepages is {start}, not 0: refusing to touch a pool in use")
    ns, got = [], []  # per cycle: the growing write's time, the pool it left
    try:
        for _ in range(cycles):
            ns.append(timed_write(SYSCTL, pages)[1])
            got.append(read_int(SYSCTL))
            timed_write(SYSCTL, start)
    finally:
        if read_int(SYSCTL) != start:
            timed_write(SYSCTL, start)
    us = sorted(n / 1000 for n in ns)
    median_us, total_ns, granted = median(us), sum(ns), sum(got)
    print(f"pages_per_s={pages / (median_us / 1e6):.0f} cycles={cycles} pages={pages} "
          f"granted={granted} short_cycles={sum(g < pages for g in got)} min_reached={min([pages] + got)} "
          f"pages_per_s_total={granted / (total_ns / 1e9):.0f} total_ms={total_ns / 1e6:.3f} "
          f"median_cycle_us={median_us:.0f} min_cycle_us={us[0]:.0f} max_cycle_us={us[-1]:.0f}")


if __name__ == "__main__":
    main()
