#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compaction_stops.py's reading of a tracefs record: sync runs counted by status, async ones
left out, and each contended run's stop looked up where its migration scanner was.
Needs no root: python3 tests/tools/compaction_stops_test.py."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compaction_stops import stops  # noqa: E402

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

    def test_no_run(self):
        self.assertEqual(stops(["bash-9 [000] 1.0: tracing_mark_write: x"], look=None), ["zone runs: none"])


if __name__ == "__main__":
    sys.exit(unittest.main())
