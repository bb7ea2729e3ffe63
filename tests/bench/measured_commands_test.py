#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""README's "## Measured" and BENCHMARKS.md's "## Sections" name the command behind each figure (tests/bench/measured_commands.py
holds the convention), and the check finds a row, a table or a paragraph without one.
Needs no root: python3 tests/bench/measured_commands_test.py."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measured_commands import ROOT, SECTIONS, check  # noqa: E402

GOOD = """# fragd

## Measured

Produced by: `bash bench/run.sh`

| what | measured |
|---|---|
| order-0 page faults | 0.995 |

| what | measured | command |
|---|---|---|
| RSS after 30 s | 11.0 MiB | `bash bench/run.sh` |
| quiet host | 0.217% | `make bench` |

A full scan takes 27 ms per GiB (`bash bench/scan.sh`).

## Next
A figure outside the section: 12 ms.
"""


class MeasuredCommands(unittest.TestCase):
    def test_each_file_complies(self):
        for name, title in SECTIONS.items():
            with open(os.path.join(ROOT, name)) as f:
                self.assertEqual(check(f.read(), title=title), [], name)

    def test_constructed_section_complies(self):
        self.assertEqual(check(GOOD), [])

    def test_row_without_its_command(self):
        bad = GOOD.replace("| quiet host | 0.217% | `make bench` |", "| quiet host | 0.217% | |")
        problems = check(bad)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("table row has no command", problems[0])
        self.assertIn("quiet host", problems[0])

    def test_table_without_its_command(self):
        problems = check(GOOD.replace("Produced by: `bash bench/run.sh`", "The overhead:"))
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("table without its command", problems[0])

    def test_paragraph_figure_without_command(self):
        problems = check(GOOD.replace(" (`bash bench/scan.sh`)", ""))
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("a figure (27 ms)", problems[0])

    def test_command_that_names_no_script_here(self):
        problems = check(GOOD.replace("`bash bench/scan.sh`", "`bash bench/no_such.sh`"))
        self.assertTrue(any("bench/no_such.sh, which does not exist" in p for p in problems), problems)
        problems = check(GOOD.replace("`make bench`", "`make no-such-target`"))
        self.assertTrue(any("make target no-such-target does not exist" in p for p in problems), problems)

    def test_settings_with_quoted_values_before_the_command(self):
        ok = GOOD.replace("`bash bench/scan.sh`", '`BENCH_MODES="a b" X=1 bash bench/scan.sh`')
        self.assertEqual(check(ok), [])
        bad = GOOD.replace("`bash bench/scan.sh`", '`BENCH_MODES="a b" bash bench/no_such.sh`')
        self.assertTrue(any("bench/no_such.sh, which does not exist" in p for p in check(bad)), check(bad))
        self.assertIn("a figure (27 ms)", " ".join(check(GOOD.replace("`bash bench/scan.sh`", '`BENCH_MODES="a b"`'))))


if __name__ == "__main__":
    unittest.main()
