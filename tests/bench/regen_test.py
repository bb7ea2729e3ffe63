#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every section whose raw data bench/data/ keeps is what its report writes from that data
today: a report changed without its section written again, or a change to a report that alters
a kept figure, fails here. Needs no root: python3 tests/bench/regen_test.py [NAME...]."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA = os.path.join(ROOT, "bench", "data")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import benchlib  # noqa: E402


def report(script, *args):
    return [sys.executable, os.path.join(ROOT, "bench", script), *args]


def cases(out):
    """-> [(name, command, the file it writes between its NAME markers, the kept file it must
    match, whether that is a document holding the section between the same markers)]."""
    o = lambda name: os.path.join(out, name + ".md")  # noqa: E731
    res = lambda name: os.path.join(ROOT, "bench", "results", name + ".md")  # noqa: E731
    d = lambda *p: os.path.join(DATA, *p)  # noqa: E731
    ov = ["--results", d("overhead", "results.tsv"), "--meta", d("overhead", "meta.env"), "--seen",
          d("overhead", "seen.tsv"), "--builds", d("overhead", "builds.tsv"), "--scrapes",
          d("overhead", "scrapes.txt"), "--fragd-notes", d("overhead", "fragd.notes")]
    atomic = {}  # bench/defrag_atomic.sh's kept runs, one directory each, as the report reads them
    for phases in ("modes-guard", "storm"):
        atomic[phases] = os.path.join(out, phases)
        os.makedirs(atomic[phases])
        shutil.copy(d("defrag_atomic", f"meta-{phases}.env"), os.path.join(atomic[phases], "meta.env"))
        for where in ("host", "guest"):
            if os.path.exists(d("defrag_atomic", f"{where}-{phases}.log")):
                shutil.copy(d("defrag_atomic", f"{where}-{phases}.log"), os.path.join(atomic[phases], f"{where}.log"))
    got = [
        ("overhead", report("report.py", *ov, "--output", o("overhead"))),
        ("cost", report("cost_report.py", d("cost"), o("cost"))),
        ("reaction", report("reaction.py", "report", "--work", d("reaction"), "--output", o("reaction"))),
        ("defrag_atomic", report("defrag_atomic_report.py", atomic["modes-guard"], o("defrag_atomic"))),
        ("defrag_storm", report("defrag_atomic_report.py", atomic["storm"], o("defrag_storm"))),
        ("scan", report("scan_report.py", d("scan"), o("scan"))),
        ("defrag_guard", report("defrag_guard_report.py", d("defrag_guard"), o("defrag_guard"))),
        ("preflight", report("preflight_report.py", d("preflight", "runs.txt"), d("preflight", "meta.env"),
                             o("preflight"))),
        ("preflight-latency", report("preflight_latency_report.py", d("preflight_latency"), o("preflight-latency"))),
        ("labels", report("labels_report.py", d("labels"), o("labels"))),
        ("stall_cost", report("stall_cost_report.py", d("stall_cost"), o("stall_cost"))),
        ("backing", report("backing_report.py", d("backing"), o("backing"))),
    ]
    for name in sorted(os.listdir(d("act"))):  # bench/act.sh keeps each section's runs as act/NAME
        got.append((name, report("act_report.py", "--work", d("act", name), "--output", o(name))))
    for sel in sorted(os.listdir(d("apps"))):
        got.append((f"apps-{sel}", report("apps_report.py", d("apps", sel, "runs.txt"), d("apps", sel, "meta.env"),
                                          o(f"apps-{sel}"))))
    out_cases = [(name, cmd, o(name), res(name), False) for name, cmd in got]
    rel = os.path.join(out, "RELIABILITY.md")
    os.makedirs(os.path.join(out, "docs"))
    out_cases.append(("soak", report("soak_report.py", "--work", d("soak"), "--output", rel, "--plot",
                                     os.path.join(out, "docs", "soak.png")),
                      rel, os.path.join(ROOT, "RELIABILITY.md"), True))
    out_cases.append(("load", report("load_report.py", "--work", d("load"), "--output", rel),
                      rel, os.path.join(ROOT, "RELIABILITY.md"), True))
    return out_cases


# Sections bench/results/ holds without their raw data, each with why: a figure typed by hand
# has no place in BENCHMARKS.md, so a new section is kept with its data or named here.
NOT_KEPT = {}


class Regen(unittest.TestCase):
    def test_every_section_is_kept_with_its_data(self):
        out = tempfile.mkdtemp(prefix="fragd-regen-")
        try:
            kept = {name for name, _, _, want, in_doc in cases(out) if not in_doc}
        finally:
            shutil.rmtree(out)
        results = {f[:-3] for f in os.listdir(os.path.join(ROOT, "bench", "results")) if f.endswith(".md")}
        self.assertEqual(sorted(results - kept - set(NOT_KEPT)), [], "sections of bench/results/ without their raw "
                         "data in bench/data/ and a case in cases(): keep the run's data (bench/lib.sh keep_raw) or "
                         "name the section in NOT_KEPT with why")
        self.assertEqual(sorted(set(NOT_KEPT) - (results - kept)), [], "NOT_KEPT names a section that is kept now "
                         "or gone: drop it from NOT_KEPT")

    def test_each_kept_section_is_what_its_report_writes(self):
        out = tempfile.mkdtemp(prefix="fragd-regen-")
        try:
            only = set(sys.argv[1:])
            checked = 0
            for name, cmd, written, want, in_doc in cases(out):
                if only and name not in only:
                    continue
                checked += 1
                with self.subTest(section=name):
                    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
                    self.assertEqual(r.returncode, 0, f"{' '.join(cmd)}: {r.stderr[-800:]}")
                    got = benchlib.spliced(written, name)
                    if in_doc:
                        expected = benchlib.spliced(want, name)
                    else:
                        with open(want) as f:
                            expected = f.read()
                    self.assertIsNotNone(got, f"{written}: no section between markers")
                    self.assertEqual(got, expected, f"{name}: the report no longer writes {want} from bench/data "
                                     f"(run `{' '.join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd)}` "
                                     "and diff its section with the kept one)")
            self.assertGreater(checked, 0, f"no section named {sorted(only)}")
        finally:
            shutil.rmtree(out)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
