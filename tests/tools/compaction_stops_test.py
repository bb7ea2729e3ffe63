#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compaction_stops.py's reading of a tracefs record: sync runs counted by status, async ones
left out, and each contended run's stop looked up where its migration scanner was.
Needs no root: python3 tests/tools/compaction_stops_test.py."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compaction_stops import after, cause, stops  # noqa: E402

RECORD = """\
 fragd-write-1 [001] ..... 10.0: mm_compaction_end: zone_start=0x1 migrate_pfn=0xe00 free_pfn=0xe00 zone_end=0x1000, mode=sync status=complete
 fragd-write-1 [001] ..... 10.1: mm_compaction_end: zone_start=0x100000 migrate_pfn=0x102040 free_pfn=0x63fe00 zone_end=0x640000, mode=sync status=contended
 kcompactd0-40 [000] ..... 10.2: mm_compaction_end: zone_start=0x100000 migrate_pfn=0x200000 free_pfn=0x300000 zone_end=0x640000, mode=async status=contended
 fragd-write-2 [000] ..... 11.0: mm_compaction_end: zone_start=0x1000 migrate_pfn=0x92400 free_pfn=0x92554 zone_end=0x100000, mode=sync status=complete
 bash-9 [000] ..... 11.5: tracing_mark_write: sync-123
"""


class CompactionStops(unittest.TestCase):
    def test_sync_runs_by_status_and_where_contended_ones_stopped(self):
        looked = []
        out = stops(RECORD.splitlines(), look=lambda pfn: looked.append(pfn) or f"pageblock 0x{(pfn - 1) & ~511:x}")
        self.assertEqual(out, ["zone runs: 2 complete, 1 contended", "contended at pageblock 0x102000"])
        self.assertEqual(looked, [0x102040])  # the async run is not fragd's node compaction

    def test_cause_of_the_contended_runs_after_a_mark(self):
        head, tail = 1 << 15, 1 << 16
        def block(*flags):  # a pageblock whose first folio is 4 pages with FLAGS
            words = [head | sum(1 << b for b in flags)] + [tail] * 3
            return tuple(words + [0] * (512 - len(words)))
        page_cache = block(3, 4, 5, 35)  # UPTODATE|DIRTY|LRU|PRIVATE: a dirty ext4 folio
        anon = block(3, 5, 12, 14)  # UPTODATE|LRU|ANON|SWAPBACKED
        lines = RECORD.splitlines()
        self.assertEqual(cause(lines, flags_at=lambda pfn: page_cache), "page-cache")
        self.assertEqual(cause(lines, flags_at=lambda pfn: anon), "other")
        self.assertEqual(cause(lines, flags_at=lambda pfn: tuple([0] * 512)), "other")  # no large folio
        # After the mark at the end, no run: nothing contended.
        self.assertEqual(cause(list(after(lines, "sync-123")), flags_at=None), "none")
        self.assertEqual(len(list(after(lines, None))), len(lines))

    def test_no_run(self):
        self.assertEqual(stops(["bash-9 [000] 1.0: tracing_mark_write: x"], look=None), ["zone runs: none"])


if __name__ == "__main__":
    sys.exit(unittest.main())
