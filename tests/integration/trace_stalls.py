#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The kernel's own record of direct compaction and reclaim entries, read from a tracefs
instance (lib.sh trace_start) to hold fragd's counters to it exactly.

  trace_stalls.py window TRACE START END
      Between the trace markers START and END (lib.sh snap): prints "ENTRIES SKIPPED DEFERRED
      ALLOCS", ALLOCS being the pages the kernel handed out at kmem:mm_page_alloc (an instance
      filters it on the order it compares; a failed allocation, printed as pfn 0, is not one), and
      the mm_compaction_try_to_compact_pages events, those of them that returned
      COMPACT_SKIPPED, and the zones found deferred (mm_compaction_deferred: an earlier failure
      made the kernel skip compacting the zone for up to 64 attempts, compact_defer_shift).
      The kernel's compact_stall counts an entry only when try_to_compact_pages returns
      something else (mm/page_alloc.c, __alloc_pages_direct_compact), and it returns something
      else only when, in that call, a zone was deferred (mm_compaction_deferred), a zone's run
      began (mm_compaction_begin) or a zone could already allocate (COMPACT_SUCCESS, which
      calls compaction_defer_reset: mm_compaction_defer_reset); zones found unsuitable return
      COMPACT_SKIPPED with no such event. So an entry is SKIPPED when its task shows none of
      those three before its next entry, or before END.

  trace_stalls.py before TRACE START END
      Between the markers START and END: prints the pages the kernel handed out at
      kmem:mm_page_alloc before the first entry into direct compaction (all of them when there is
      none): the allocations a counter that a stall switches on cannot have seen.

  trace_stalls.py quiet TRACE START END
      Between the markers START and END: prints "ENTRIES SECONDS TASKS": the entries into direct
      compaction (mm_compaction_try_to_compact_pages, any task), the seconds from the last of
      them (from START when there is none) to END, and the tasks that made them ("comm:count,...",
      "-" for none). A test that waits for a time without stalls reads whether the host gave it one.
"""
import re
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[\d+\]\s+(?:\S+\s+)?([\d.]+):\s+(\S+):\s*(.*)$")
FAILED = re.compile(r"\bpfn=0x0\b")  # the kernel prints a failed allocation (pfn -1) as pfn 0


def between(path, start, end):
    """-> (time of START, time of END, [(comm, pid, time, event, fields)] between the markers
    START and END); exits naming the file when the two are not both there, in that order."""
    inside, t_start, out = False, None, []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            comm, pid, t, name, rest = m.group(1), int(m.group(2)), float(m.group(3)), m.group(4), m.group(5).strip()
            if name == "tracing_mark_write":
                if rest == start and not inside:
                    inside, t_start = True, t
                elif rest == end and inside:
                    return t_start, t, out
            elif inside:
                out.append((comm, pid, t, name, rest))
    sys.exit(f"{path}: markers {start!r} and {end!r} not both found in order")


def window(path, start, end):
    entries, skipped, deferred, allocs = 0, 0, 0, 0
    open_ = {}  # pid -> an entry still waiting for a sign that the kernel counted it
    for _, pid, _, name, rest in between(path, start, end)[2]:
        if name == "mm_page_alloc":
            allocs += not FAILED.search(rest)
        elif name == "mm_compaction_try_to_compact_pages":
            if open_.pop(pid, False):
                skipped += 1
            open_[pid] = True
            entries += 1
        elif name in ("mm_compaction_deferred", "mm_compaction_begin", "mm_compaction_defer_reset"):
            open_.pop(pid, None)
            deferred += name == "mm_compaction_deferred"
    skipped += sum(1 for v in open_.values() if v)
    print(entries, skipped, deferred, allocs)


def before(path, start, end):
    allocs = 0
    for _, _, _, name, rest in between(path, start, end)[2]:
        if name == "mm_compaction_try_to_compact_pages":
            break
        allocs += name == "mm_page_alloc" and not FAILED.search(rest)
    print(allocs)


def quiet(path, start, end):
    t_start, t_end, evs = between(path, start, end)
    entries = [(comm, t) for comm, _, t, name, _ in evs if name == "mm_compaction_try_to_compact_pages"]
    tasks = {}
    for comm, _ in entries:
        tasks[comm] = tasks.get(comm, 0) + 1
    who = ",".join(f"{c}:{n}" for c, n in sorted(tasks.items(), key=lambda x: -x[1])) or "-"
    print(len(entries), f"{t_end - (entries[-1][1] if entries else t_start):.1f}", who)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "window":
        window(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 5 and sys.argv[1] == "before":
        before(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 5 and sys.argv[1] == "quiet":
        quiet(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
