#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""folios_at.py PFN...: the large folios of the pageblock before each PFN (hex), with their
page flags from /proc/kpageflags and the memory cgroups they are charged to (/proc/kpagecgroup;
root). Given the migrate_pfn of a compaction run that ended
"contended" (compaction:mm_compaction_end), it names what the run could not move."""
import os
import struct
import sys

FLAGS = {0: "LOCKED", 2: "REFERENCED", 3: "UPTODATE", 4: "DIRTY", 5: "LRU", 6: "ACTIVE", 8: "WRITEBACK",
         9: "RECLAIM", 11: "MMAP", 12: "ANON", 14: "SWAPBACKED", 18: "UNEVICTABLE", 33: "MLOCKED",
         35: "PRIVATE", 36: "PRIVATE_2", 37: "OWNER_PRIVATE"}
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


def owners(start, flags):
    """-> the memory cgroups (by path) charged for the large folios of the block, or ''."""
    try:
        with open("/proc/kpagecgroup", "rb") as f:
            f.seek(start * 8)
            inos = struct.unpack("512Q", f.read(4096))
    except OSError:
        return ""
    want = {inos[i] for i in range(len(flags)) if flags[i] >> HEAD & 1 and inos[i]}
    paths = {}
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        ino = os.stat(root).st_ino
        if ino in want:
            paths[ino] = root[len("/sys/fs/cgroup"):] or "/"
    return ", ".join(sorted(paths.get(i, f"inode {i}") for i in want))


def main(pfns):
    with open("/proc/kpageflags", "rb") as f:
        for arg in pfns:
            start = (int(arg, 16) - 1) & ~511
            f.seek(start * 8)
            flags = struct.unpack("512Q", f.read(4096))
            seen = folios(flags)
            text = "; ".join(f"{k} x {n} pages ({names})" for (n, names), k in sorted(seen.items()))
            who = owners(start, flags) if seen else ""
            print(f"pageblock 0x{start:x}: {text or 'no large folio'}" + (f", charged to {who}" if who else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
