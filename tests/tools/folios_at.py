#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""folios_at.py PFN...: the large folios of the pageblock before each PFN (hex), with their
page flags from /proc/kpageflags (root). Given the migrate_pfn of a compaction run that ended
"contended" (compaction:mm_compaction_end), it names what the run could not move."""
import struct
import sys

FLAGS = {3: "UPTODATE", 4: "DIRTY", 5: "LRU", 8: "WRITEBACK", 11: "MMAP", 12: "ANON",
         14: "SWAPBACKED", 35: "PRIVATE"}
HEAD, TAIL = 15, 16


def folios(flags):
    """{(pages, flag names): count} for the compound folios that start in FLAGS."""
    seen, i = {}, 0
    while i < len(flags):
        n = 1
        if flags[i] >> HEAD & 1:
            while i + n < len(flags) and flags[i + n] >> TAIL & 1:
                n += 1
            key = (n, "|".join(v for b, v in FLAGS.items() if flags[i] >> b & 1))
            seen[key] = seen.get(key, 0) + 1
        i += n
    return seen


def main(pfns):
    with open("/proc/kpageflags", "rb") as f:
        for arg in pfns:
            start = (int(arg, 16) - 1) & ~511
            f.seek(start * 8)
            seen = folios(struct.unpack("512Q", f.read(4096)))
            text = "; ".join(f"{k} x {n} pages ({names})" for (n, names), k in sorted(seen.items()))
            print(f"pageblock 0x{start:x}: {text or 'no large folio'}")


if __name__ == "__main__":
    main(sys.argv[1:])
