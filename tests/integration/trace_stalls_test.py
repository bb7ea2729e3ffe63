#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""trace_stalls.py's reading of a tracefs record, on records written the way the kernel
prints them (counts_test compares fragd's direct-compaction entries with it)."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def line(pid, name, rest, comm="python3"):
    return f"         {comm}-{pid}    [001] ..... 70775.513290: {name}: {rest}\n"


ENTRY = ("mm_compaction_try_to_compact_pages", "order=9 gfp_mask=GFP_HIGHUSER_MOVABLE priority=2")
DEFERRED = ("mm_compaction_deferred", "node=0 zone=Normal order=9 order_failed=9 consider=3 limit=64")
BEGIN = ("mm_compaction_begin", "zone_start=0x1 migrate_pfn=0x1 free_pfn=0x1000 zone_end=0x1000, mode=sync")
RESET = ("mm_compaction_defer_reset", "node=0 zone=Normal order=9 order_failed=10 consider=0 limit=1")
ALLOC = ("mm_page_alloc", "page=000000007c2e3f1a pfn=0x1a4600 order=9 migratetype=1 "
         "gfp_flags=GFP_NOFS|__GFP_HIGHMEM|__GFP_MOVABLE|__GFP_COMP")
FAILED = ("mm_page_alloc", "page=0000000000000000 pfn=0x0 order=9 migratetype=1 "
          "gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_RETRY_MAYFAIL")


def run(command, text, start, end):
    """-> trace_stalls.py COMMAND's output words on a record holding TEXT."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("# tracer: nop\n" + text)
    try:
        r = subprocess.run([sys.executable, os.path.join(HERE, "trace_stalls.py"), command, f.name, start, end],
                           capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if r.returncode:
        raise RuntimeError(r.stderr)
    return r.stdout.split()


def window(events, start="a", end="b"):
    text = "".join(line(pid, "tracing_mark_write", ev, comm="bash") if ev in ("a", "b", "x") else line(pid, *ev)
                   for pid, ev in events)
    return tuple(map(int, run("window", text, start, end)))


class Window(unittest.TestCase):
    def test_counted_skipped_and_deferred(self):
        got = window([(1, ENTRY), (7, "a"),
                      (1, ENTRY), (1, DEFERRED),  # counted: a zone was deferred
                      (2, ENTRY), (2, BEGIN),     # counted: a zone's run began
                      (1, ENTRY),                 # skipped: the task's next entry came first
                      (1, ENTRY), (1, RESET),     # counted: a zone could allocate
                      (3, ENTRY),                 # skipped: nothing before the end marker
                      (7, "b"), (3, DEFERRED), (4, ENTRY)])
        self.assertEqual(got, (5, 2, 1, 0))

    def test_allocations_granted(self):
        # An allocation that fails is traced with pfn -1, printed as 0: not a page handed out.
        got = window([(1, ALLOC), (7, "a"), (1, ALLOC), (2, FAILED), (3, ALLOC), (7, "b"), (1, ALLOC)])
        self.assertEqual(got, (0, 0, 0, 2))

    def test_only_inside_the_markers(self):
        self.assertEqual(window([(1, ENTRY), (1, DEFERRED), (7, "a"), (7, "x"), (7, "b"), (1, ENTRY)]), (0, 0, 0, 0))

    def test_markers_missing(self):
        with self.assertRaises(RuntimeError):
            window([(7, "b"), (1, ENTRY), (7, "a")])


class Before(unittest.TestCase):
    """The pages handed out before a window's first direct compaction: those a counter the first
    stall switches on cannot have seen."""

    @staticmethod
    def before(events):
        text = "".join(line(pid, "tracing_mark_write", ev, comm="bash") if ev in ("a", "b") else line(pid, *ev)
                       for pid, ev in events)
        return int(run("before", text, "a", "b")[0])

    def test_up_to_the_first_entry(self):
        # Granted ones only (a failure is printed as pfn 0), and none after the first entry.
        self.assertEqual(self.before([(1, ALLOC), (7, "a"), (1, ALLOC), (2, FAILED), (1, ALLOC),
                                      (1, ENTRY), (1, ALLOC), (2, ALLOC), (7, "b"), (1, ALLOC)]), 2)

    def test_no_entry(self):
        self.assertEqual(self.before([(7, "a"), (1, ALLOC), (2, ALLOC), (7, "b")]), 2)


class Quiet(unittest.TestCase):
    """The time a host gave without a stall: from the last direct compaction to the end marker."""

    @staticmethod
    def quiet(rows, start="a", end="b"):
        return run("quiet", "".join(f"  {comm}-{pid}    [001] ..... {t:.6f}: {name}: {rest}\n"
                                    for comm, pid, t, name, rest in rows), start, end)

    def test_the_last_stall_and_who_made_them(self):
        got = self.quiet([("python3", 1, 90.0, *ENTRY),          # before the start marker: not counted
                          ("bash", 7, 100.0, "tracing_mark_write", "a"),
                          ("cc1plus", 20, 101.5, *ENTRY), ("cc1plus", 21, 104.0, *ENTRY),
                          ("kcompactd0", 30, 104.5, *BEGIN),     # not an entry into direct compaction
                          ("ld", 22, 106.0, *ENTRY),
                          ("bash", 7, 115.25, "tracing_mark_write", "b"),
                          ("ld", 22, 116.0, *ENTRY)])            # after the end marker
        self.assertEqual(got, ["3", "9.2", "cc1plus:2,ld:1"])

    def test_no_stall_counts_from_the_start_marker(self):
        got = self.quiet([("bash", 7, 100.0, "tracing_mark_write", "a"),
                          ("bash", 7, 130.0, "tracing_mark_write", "b")])
        self.assertEqual(got, ["0", "30.0", "-"])


if __name__ == "__main__":
    unittest.main()
