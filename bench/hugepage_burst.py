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

from benchlib import read_int, timed_write
from verdict import median

SYSCTL = "/proc/sys/vm/nr_hugepages"


def read_pool() -> int:
    return read_int(SYSCTL)


def write_pool(value: int) -> int:
    """Writes value, returns the nanoseconds spent in write(2)."""
    return timed_write(SYSCTL, value)[1]


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: hugepage_burst.py PAGES CYCLES", file=sys.stderr)
        return 2
    pages, cycles = int(sys.argv[1]), int(sys.argv[2])
    if pages <= 0 or cycles <= 0:
        print("hugepage_burst: PAGES and CYCLES must be > 0", file=sys.stderr)
        return 2
    start = read_pool()
    if start != 0:
        print(f"hugepage_burst: vm.nr_hugepages is {start}, not 0: refusing to touch a pool in use",
              file=sys.stderr)
        return 1
    total_ns = 0
    granted = 0
    short = 0
    min_reached = pages
    per_cycle_us = []
    try:
        for _ in range(cycles):
            ns = write_pool(pages)
            got = read_pool()
            write_pool(start)
            total_ns += ns
            granted += got
            per_cycle_us.append(ns / 1000)
            if got < pages:
                short += 1
            min_reached = min(min_reached, got)
    finally:
        if read_pool() != start:
            write_pool(start)
    per_cycle_us.sort()
    median_us = median(per_cycle_us)
    print(f"pages_per_s={pages / (median_us / 1e6):.0f} cycles={cycles} pages={pages} "
          f"granted={granted} short_cycles={short} min_reached={min_reached} "
          f"pages_per_s_total={granted / (total_ns / 1e9):.0f} total_ms={total_ns / 1e6:.3f} "
          f"median_cycle_us={median_us:.0f} min_cycle_us={per_cycle_us[0]:.0f} "
          f"max_cycle_us={per_cycle_us[-1]:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
