#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compaction_stops.py [--oneline] TRACE: how the sync compaction runs of a tracefs record
(compaction:mm_compaction_end lines) ended, and, for each run that ended "contended", the large
folios of the pageblock where its migration scanner stopped, with their page flags
(/proc/kpageflags) and the memory cgroups they are charged to (/proc/kpagecgroup; root): what the
run could not move. A line each, or one line joined by "; " with --oneline.

compaction_stops.py --cause [--since MARK] TRACE prints one word for the runs after the
tracing_mark_write MARK: "page-cache" when at least one ended contended and every contended run
stopped at a pageblock holding page-cache folios (large, not anonymous): a folio of a file that
a writer outside the test dirtied or held; "none" when no run ended contended; "other" else."""
import os
import re
import struct
import sys

END = re.compile(r"mm_compaction_end:.*migrate_pfn=(0x[0-9a-f]+).*mode=sync status=([a-z_]+)")

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


def block_flags(pfn):
    """-> the start of the pageblock before PFN and its 512 pages' /proc/kpageflags words."""
    start = (pfn - 1) & ~511
    with open("/proc/kpageflags", "rb") as f:
        f.seek(start * 8)
        return start, struct.unpack("512Q", f.read(4096))


def folios_at(pfn):
    """-> 'pageblock 0x..: N x P pages (FLAGS); ...' for the pageblock before PFN."""
    start, flags = block_flags(pfn)
    seen = folios(flags)
    text = "; ".join(f"{k} x {n} pages ({names})" for (n, names), k in sorted(seen.items()))
    who = owners(start, flags) if seen else ""
    return f"pageblock 0x{start:x}: {text or 'no large folio'}" + (f", charged to {who}" if who else "")


def after(lines, mark):
    """-> the lines after the tracing_mark_write MARK (all of them when MARK is None)."""
    seen = mark is None
    for line in lines:
        if seen:
            yield line
        elif line.rstrip().endswith(f"tracing_mark_write: {mark}"):
            seen = True


def cause(lines, flags_at=lambda pfn: block_flags(pfn)[1]):
    """-> 'page-cache', 'none' or 'other' (see the module's doc) for the runs in LINES."""
    contended = [int(m.group(1), 16) for m in map(END.search, lines) if m and m.group(2) == "contended"]
    if not contended:
        return "none"
    def page_cache(flags):
        return any("ANON" not in names.split("|") for _, names in folios(flags))
    return "page-cache" if all(page_cache(flags_at(pfn)) for pfn in contended) else "other"


def stops(lines, look=folios_at):
    """-> ['zone runs: 2 complete, 1 contended', 'contended at pageblock ...', ...]."""
    counts, contended = {}, []
    for line in lines:
        m = END.search(line)
        if m:
            counts[m.group(2)] = counts.get(m.group(2), 0) + 1
            if m.group(2) == "contended":
                contended.append(int(m.group(1), 16))
    out = ["zone runs: " + (", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none")]
    return out + [f"contended at {look(pfn)}" for pfn in contended]


def main(args):
    if args[:1] == ["--cause"]:
        mark = args[2] if args[1:2] == ["--since"] else None
        with open(args[-1]) as f:
            print(cause(list(after(f, mark))))
        return
    oneline = args[:1] == ["--oneline"]
    with open(args[-1]) as f:
        out = stops(f)
    print("; ".join(out) if oneline else "\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
