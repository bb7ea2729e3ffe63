#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""BENCHMARKS.md is what bench/doc.py writes from bench/results/, and doc.py puts the sections
together as it says: in its order, each one's <details> left in its file and linked, an index row
per section with its anchor (a repeated heading numbered as GitHub numbers it), its date and its
command. Needs no root: python3 tests/bench/doc_test.py."""
import os
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import doc  # noqa: E402


def tree(files):
    d = tempfile.mkdtemp()
    os.makedirs(os.path.join(d, doc.RESULTS))
    for name, text in files.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    return d


class Doc(unittest.TestCase):
    def test_the_tree_is_what_doc_writes(self):
        self.assertEqual(doc.check(ROOT), "")

    def test_sections_in_order_with_their_index(self):
        d = tree({
            "bench/results/zeta.md": "## Zeta\n\nProduced by: `bash bench/zeta.sh` (2026-01-02)\n",
            "bench/results/cost.md": ("## Cost\n\nMeasured 2026-01-01 on Linux. Reproduce: `BENCH_X='a b' bash bench/cost.sh`"
                                      "\n\n<details><summary>each run</summary>\n\nrun 1\n</details>\n\nafter\n"),
            "bench/results/act-thp.md": "## Cost\n\nsee `make bench-act`\n",
        })
        text = doc.render(d)
        lines = text.split("\n")
        # cost, then act-thp (ORDER), then zeta (not in ORDER)
        self.assertLess(text.index("Measured 2026-01-01"), text.index("see `make bench-act`"))
        self.assertLess(text.index("see `make bench-act`"), text.index("## Zeta"))
        self.assertNotIn("run 1", text)
        self.assertIn("Per-run details: [bench/results/cost.md](bench/results/cost.md).", text)
        self.assertIn("after", text)
        rows = [ln for ln in lines if ln.startswith("| [")]
        self.assertEqual(rows, [
            "| [Cost](#cost) | 2026-01-01 | `BENCH_X='a b' bash bench/cost.sh` |",
            "| [Cost](#cost-1) | - | `make bench-act` |",
            "| [Zeta](#zeta) | 2026-01-02 | `bash bench/zeta.sh` |",
        ])

    def test_check_names_a_hand_edit(self):
        d = tree({"bench/results/cost.md": "## Cost\n\n`bash bench/cost.sh`\n"})
        with open(os.path.join(d, "BENCHMARKS.md"), "w") as f:
            f.write(doc.render(d))
        self.assertEqual(doc.check(d), "")
        with open(os.path.join(d, "BENCHMARKS.md"), "a") as f:
            f.write("typed by hand\n")
        self.assertIn("typed by hand", doc.check(d))


if __name__ == "__main__":
    unittest.main()
