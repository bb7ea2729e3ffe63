#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The documents hold together: every relative link and image in README.md, BENCHMARKS.md, RELIABILITY.md,
CHANGELOG.md and docs/*.md names a file that exists and, with #anchor, a heading of that file
(GitHub's anchors); and every metric family README.md, docs/metrics.md, docs/configuration.md,
docs/runbooks.md and docs/fragctl.md name is in the metrics contract (tests/contract/metrics.txt).
The key tables of docs/configuration.md are the unit test Keys.DocTablesAreTheDeclarations.
Needs no root: python3 tests/contract/doc_links_test.py."""
import functools
import glob
import os
import re
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import doc  # noqa: E402  bench/doc.py
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")  # links and images
# A family named in a code span: `fragd_x`, `fragd_x{labels}` (not a pattern such as `fragd_cma_*`).
FAMILY = re.compile(r"`(fragd_[a-z0-9_]*[a-z0-9])(?:\{[^`]*\})?`")
SUFFIXES = ("_bucket", "_sum", "_count")


def docs(root=ROOT):
    names = ["README.md", "BENCHMARKS.md", "RELIABILITY.md", "CHANGELOG.md"]
    names += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    return names


def anchors(text):
    """-> the anchors GitHub gives the headings of a markdown text (outside code blocks): those
    bench/doc.py gives BENCHMARKS.md's index."""
    return set(doc.anchors(text.split("\n")).values())


@functools.lru_cache(maxsize=None)
def file_anchors(path):
    with open(path) as f:
        return anchors(f.read())


def link_problems(name, text, root=ROOT):
    """-> 'NAME:LINE: what' for each relative link of text (the file NAME) that leads nowhere."""
    problems, code, own = [], False, anchors(text)
    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            code = not code
        if code:
            continue
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue  # https:, mailto:: not checked here (no network)
            path, _, anchor = target.partition("#")
            if not path:
                if anchor not in own:
                    problems.append(f"{name}:{n}: link to {target}: no heading here with that anchor")
                continue
            full = os.path.normpath(os.path.join(root, os.path.dirname(name), path))
            if not os.path.exists(full):
                problems.append(f"{name}:{n}: link to {target}: {os.path.relpath(full, root)} does not exist")
                continue
            if anchor and full.endswith(".md") and anchor not in file_anchors(full):
                problems.append(f"{name}:{n}: link to {target}: {os.path.relpath(full, root)} has no heading "
                                f"with anchor #{anchor}")
    return problems


def contract(root=ROOT):
    with open(os.path.join(root, "tests", "contract", "metrics.txt")) as f:
        return {line.split()[0] for line in f if line.strip() and not line.startswith("#")}


def family_problems(name, text, families):
    problems = []
    for n, line in enumerate(text.split("\n"), 1):
        for fam in FAMILY.findall(line):
            base = fam
            for s in SUFFIXES:
                if fam.endswith(s) and fam[: -len(s)] in families:
                    base = fam[: -len(s)]
            if base not in families:
                problems.append(f"{name}:{n}: {fam} is not a family of tests/contract/metrics.txt")
    return problems


class DocLinks(unittest.TestCase):
    def test_every_link_leads_somewhere(self):
        problems = []
        for name in docs():
            with open(os.path.join(ROOT, name)) as f:
                problems += link_problems(name, f.read())
        self.assertEqual(problems, [])

    def test_the_families_named_exist(self):
        families, problems = contract(), []
        for name in ["README.md", "docs/metrics.md", "docs/configuration.md", "docs/runbooks.md",
                     "docs/fragctl.md"]:
            with open(os.path.join(ROOT, name)) as f:
                problems += family_problems(name, f.read(), families)
        self.assertEqual(problems, [])

    def test_a_broken_link_is_found(self):
        text = "# T\n\n## A heading, with `code`\n\n[ok](#a-heading-with-code) [here](README.md#quick-start)\n" \
               "[gone](docs/none.md) [no anchor](README.md#no-such-heading) [self](#missing)\n"
        problems = link_problems("x.md", text)
        self.assertEqual(len(problems), 3, problems)
        self.assertIn("docs/none.md does not exist", problems[0])
        self.assertIn("#no-such-heading", problems[1])
        self.assertIn("no heading here", problems[2])

    def test_anchors_follow_github(self):
        self.assertEqual(anchors("## What counting every allocation costs: `bpf.allocations`\n## A\n## A\n"),
                         {"what-counting-every-allocation-costs-bpfallocations", "a", "a-1"})

    def test_an_unknown_family_is_found(self):
        text = "`fragd_alloc_total` and `fragd_alloc_stall_seconds_bucket{le=\"1\"}`, `fragd_cma_*`, but " \
               "`fragd_no_such_total{node}`\n"
        problems = family_problems("x.md", text, {"fragd_alloc_total", "fragd_alloc_stall_seconds"})
        self.assertEqual(problems, ["x.md:1: fragd_no_such_total is not a family of tests/contract/metrics.txt"])


if __name__ == "__main__":
    sys.exit(unittest.main())
