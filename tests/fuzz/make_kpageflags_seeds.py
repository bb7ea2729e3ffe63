#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed inputs of fuzz_kpageflags (see the header layout at the top
of fuzz_kpageflags.cc) into the directory given (default: corpus/fuzz_kpageflags
next to this script)."""
import os
import struct
import sys

LRU, SLAB, BUDDY, MMAP, ANON, SWAPBACKED = 1 << 5, 1 << 7, 1 << 10, 1 << 11, 1 << 12, 1 << 14
HEAD, TAIL, HUGE, NOPAGE, KSM, THP, OFFLINE, PGTABLE, RESERVED = (
    1 << 15, 1 << 16, 1 << 17, 1 << 20, 1 << 21, 1 << 22, 1 << 23, 1 << 26, 1 << 32)
ANONPAGE = LRU | ANON | MMAP | SWAPBACKED


def header(order, zones, ram=(), threads2=False, fail_pfn=None, partial=None, chunk=0, reserve=0):
    """order 1..6; zones/ram: up to 3 (start_pfn, length) pairs each."""
    flags = len(ram) | (4 if threads2 else 0) | (8 if fail_pfn is not None else 0) | (16 if partial else 0)
    h = bytes([order - 1, len(zones) - 1, flags, chunk])
    for i in range(3):
        s, n = zones[i] if i < len(zones) else (0, 0)
        h += struct.pack("<HH", s, n)
    for i in range(3):
        s, n = ram[i] if i < len(ram) else (0, 0)
        h += struct.pack("<HH", s, n)
    h += struct.pack("<H", fail_pfn or 0) + bytes([(partial or 1) - 1, reserve])
    assert len(h) == 32
    return h


def records(flags):
    return b"".join(struct.pack("<Q", f) for f in flags)


def block(bp, *pages):
    """A block of bp pages: the pages given, then untyped (0) ones."""
    out = list(pages) + [0] * (bp - len(pages))
    return out[:bp]


def seeds():
    bp = 8  # order 3
    each = []
    each += [BUDDY] * bp                                        # free
    each += [ANONPAGE] * 6 + [BUDDY] * 2                        # movable
    each += [ANONPAGE] * 5 + [SLAB] * 2 + [BUDDY]               # hybrid
    each += [SLAB, PGTABLE, RESERVED, ANONPAGE] + [BUDDY] * 4   # unmovable
    each += [HUGE | HEAD] + [HUGE | TAIL] * (bp - 1)            # hugetlb
    each += [THP | HEAD | ANONPAGE] + [THP | TAIL | ANONPAGE] * (bp - 1)  # THP covering the block
    each += [BUDDY] * 4 + [NOPAGE] + [BUDDY] * 3                # hole
    each += [0] * 6 + [BUDDY] * 2                               # untyped only
    each += [KSM | LRU] * 4 + [OFFLINE] + [0] * 3               # offline page
    yield "each_class", header(3, [(0, len(each))]) + records(each)

    # Order 2 (4 pages per block), reads of 8 blocks (32 pages): a kernel
    # compound page from pfn 28 to 35 crosses a read boundary, a THP from
    # pfn 37 to 44 crosses block boundaries, its head not at a block start.
    f = [BUDDY] * 64
    f[28] = HEAD
    for p in range(29, 36):
        f[p] = TAIL
    f[37] = THP | HEAD | ANONPAGE
    for p in range(38, 45):
        f[p] = THP | TAIL
    f[50] = SLAB | HEAD
    for p in range(51, 54):
        f[p] = TAIL
    yield "compound_across_reads", header(2, [(0, 64)], chunk=1) + records(f)

    # Order 4, a zone starting and ending mid-block, RAM with gaps, two threads.
    f = [ANONPAGE if p % 3 else BUDDY for p in range(160)]
    yield "holes_and_ram", header(4, [(1, 150)], ram=[(0, 40), (48, 60), (112, 200)], threads2=True) + records(f)

    # Three zones on two nodes (one overlapping), order 6; memory ends early.
    f = [BUDDY] * 64 + [ANONPAGE] * 64 + [SLAB] * 32 + [BUDDY] * 32
    yield "three_zones_short", header(6, [(0, 128), (128, 200), (64, 64)], reserve=16) + records(f)

    # Reads return at most 5 pages: the rest of each zone is offline.
    yield "partial_reads", header(1, [(0, 40)], partial=5) + records([ANONPAGE] * 40)

    # The read covering pfn 20 fails.
    yield "failing_read", header(3, [(0, 48)], fail_pfn=20) + records([BUDDY] * 48)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "fuzz_kpageflags")
    os.makedirs(out, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(data)


if __name__ == "__main__":
    main()
