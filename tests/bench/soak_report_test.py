#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/soak_report.py on the kept soak run (bench/data/soak) with its fd samples and lists
rewritten: flat fds read as within the goal in one run; fds that grew after the warm-up, and the
files that came with them, read as beyond it, named. Needs no root:
python3 tests/bench/soak_report_test.py"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.path.join(ROOT, "bench", "data", "soak")
REPORT = os.path.join(ROOT, "bench", "soak_report.py")


class SoakFds(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(os.path.join(DATA, "samples.jsonl.gz")):
            self.fail(f"{DATA} holds no soak run: bench/soak.sh keeps one there")
        self.work = tempfile.mkdtemp(prefix="fragd-soak-report-")
        self.run_dir = os.path.join(self.work, "run")
        shutil.copytree(DATA, self.run_dir)
        with gzip.open(os.path.join(self.run_dir, "samples.jsonl.gz"), "rt") as f:
            self.samples = [json.loads(x) for x in f if x.strip()]
        os.remove(os.path.join(self.run_dir, "samples.jsonl.gz"))

    def tearDown(self):
        shutil.rmtree(self.work)

    def report(self, fds_of, lists):
        """The fd row of the report with each sample's fds = fds_of(index, count) and the fd lists given."""
        with open(os.path.join(self.run_dir, "samples.jsonl"), "w") as f:
            n = len(self.samples)
            for i, s in enumerate(self.samples):
                f.write(json.dumps(dict(s, fds=fds_of(i, n))) + "\n")
        for k, names in lists.items():
            with open(os.path.join(self.run_dir, f"fds-{k}.txt"), "w") as f:
                f.write("".join(x + "\n" for x in names))
        out = os.path.join(self.work, "out.md")
        with open(out, "w") as f:
            f.write("<!-- soak:begin -->\n<!-- soak:end -->\n")
        r = subprocess.run(["/usr/bin/python3", REPORT, "--work", self.run_dir, "--output", out,
                            "--plot", os.path.join(self.work, "soak.png")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            rows = [x for x in f.read().splitlines() if x.startswith("| open fds")]
        self.assertEqual(len(rows), 1, rows)
        return rows[0]

    def test_flat_fds_are_within_the_goal_in_one_run(self):
        base = ["/dev/null", "socket:[11]", "/proc/vmstat"]
        row = self.report(lambda i, n: 100, {"start": base, "warm": base, "end": base})
        self.assertIn("| 100 -> 100 ", row)
        self.assertIn("within it in this one run (a verdict needs 5 runs)", row)
        self.assertIn("opened after the warm-up and kept: none", row)

    def test_fds_that_grow_after_the_warm_up_are_beyond_it_and_named(self):
        base = ["/dev/null", "socket:[11]", "/proc/vmstat"]
        grown = base + ["socket:[12]", "/proc/x", "/proc/x"]
        # The last fifth of the samples (the last minute and more) holds 3 more.
        row = self.report(lambda i, n: 103 if i >= n * 4 // 5 else 100,
                          {"start": base, "warm": base, "end": grown})
        self.assertIn("| 100 -> 103 ", row)
        self.assertIn("**beyond it** in this one run", row)
        self.assertIn("opened after the warm-up and kept: 2 x `/proc/x`, `socket`", row)

    def test_files_opened_in_the_warm_up_are_told_apart(self):
        start = ["/dev/null"]
        warm = start + ["/proc/pagetypeinfo"]
        row = self.report(lambda i, n: 100, {"start": start, "warm": warm, "end": warm})
        self.assertIn("opened during the warm-up and kept: `/proc/pagetypeinfo`", row)
        self.assertIn("opened after the warm-up and kept: none", row)


if __name__ == "__main__":
    unittest.main(verbosity=2)
