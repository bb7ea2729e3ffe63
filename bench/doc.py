#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""BENCHMARKS.md, written from the benchmarks' kept sections.

A benchmark run for BENCHMARKS.md (not BENCH_QUICK, not BENCH_OUTPUT) has its report write its
section into bench/results/NAME.md (benchlib.publish): what the last run of that benchmark and
selection measured, nothing older. This script puts those files together: an index (each
section, the date it was measured, the command that produced it), then the sections in ORDER
(a file not in ORDER comes after them, by name), each one's per-run details (its <details>
blocks) left in its file and linked instead. bench/data/<name>/ keeps the raw data a report
reads, for the benchmarks that keep it.

usage: python3 bench/doc.py            writes BENCHMARKS.md
       python3 bench/doc.py --check    exit 1, naming the first difference, when BENCHMARKS.md is
                                       not what it would write (a unit test runs it)
"""
import difflib
import glob
import os
import re
import shlex
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RESULTS = os.path.join("bench", "results")
DOC = "BENCHMARKS.md"
# The sections' order: a name, or a prefix ending in "-" that orders every file it starts
# (sorted among themselves).
ORDER = ["overhead", "stall_cost", "scan", "cost", "act-fixed", "act-free", "act", "act-thp", "act-pool", "act-",
         "apps-", "backing", "preflight", "preflight-latency", "labels", "defrag_guard", "defrag_atomic",
         "defrag_storm"]
MEASURED = re.compile(r"\b(?:Measured|measured) (\d{4}-\d\d-\d\d)|\((?:[^()]*?, )?(\d{4}-\d\d-\d\d)[,)]")
CODE = re.compile(r"`([^`]+)`")
ASSIGN = re.compile(r"^[A-Z_][A-Z0-9_]*=")  # a setting, its value unquoted by shlex
# A command, in README and BENCHMARKS.md: a code span whose first word (after VAR=value settings)
# is one of these, or a path under one of these folders (tests/bench/measured_commands.py checks
# the documents with the same words).
COMMAND_WORDS = {"make", "bash", "sh", "python3", "curl", "perf", "dd", "bpftool", "sysctl", "taskset", "grep",
                 "fragctl", "ctest"}
PATH_PREFIXES = ("bench/", "tests/", "scripts/", "build/")
HEAD = [
    "# Benchmarks",
    "",
    "What fragd costs and what it achieves, as last measured. Each section is what its benchmark's last",
    f"run wrote (`make bench` runs them all; `bash bench/NAME.sh` one), kept in {RESULTS}/; this file is",
    "put together from those by `python3 bench/doc.py`, which a unit test runs with `--check`. Raw",
    "data, where a benchmark keeps it, is in bench/data/<name>/. Verdicts: met / not met only when the",
    "95% bootstrap interval clears / misses the goal, else inconclusive; fewer than 5 runs give none.",
    "",
    "## Sections",
    "",
    "| section | measured | command |",
    "|---|---|---|",
]


def anchors(lines):
    """-> {line index: GitHub's anchor} of the heading lines outside code blocks, a repeated
    heading's anchor numbered as GitHub numbers it (tests/contract/doc_links_test.py checks the
    links)."""
    out, seen, code = {}, {}, False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            code = not code
        if code or not re.match(r"^#{1,6} ", line):
            continue
        slug = re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out[i] = slug if n == 0 else f"{slug}-{n}"
    return out


def rank(name):
    if name in ORDER:
        return (ORDER.index(name), name)
    for i, key in enumerate(ORDER):
        if key.endswith("-") and name.startswith(key):
            return (i, name)
    return (len(ORDER), name)


def sections(root=ROOT):
    """-> [(name, text)] of bench/results/*.md in the document's order."""
    out = []
    for p in glob.glob(os.path.join(root, RESULTS, "*.md")):
        with open(p) as f:
            out.append((os.path.basename(p)[:-3], f.read().strip("\n")))
    return sorted(out, key=lambda s: rank(s[0]))


def command_words(span):
    """-> a code span's words after its VAR=value settings (VAR="a b" is one setting; an
    unbalanced quote splits at blanks)."""
    try:
        words = shlex.split(span)
    except ValueError:
        words = span.split()
    while words and ASSIGN.match(words[0]):
        words = words[1:]
    return words


def runs_something(span):
    """Whether a code span is a command (COMMAND_WORDS, PATH_PREFIXES)."""
    words = command_words(span)
    return bool(words) and (words[0] in COMMAND_WORDS or words[0].startswith(PATH_PREFIXES))


def command(text):
    """The command that produced a section: the first after "Produced by:" or "Reproduce...:",
    else the first that names a bench/ script, else the first at all."""
    for m in re.finditer(r"(?:Produced by|Reproduce[^:`]*):", text):
        spans = [c for c in CODE.findall(text[m.end():]) if runs_something(c)]
        if spans:
            return " ".join(spans[0].split())
    spans = [c for c in CODE.findall(text) if runs_something(c)]
    pick = next((c for c in spans if "bench/" in c), spans[0] if spans else "")
    return " ".join(pick.split())


def measured(text):
    m = MEASURED.search(text)
    return (m.group(1) or m.group(2)) if m else ""


def without_details(name, text):
    """The section with each <details> block replaced by a link to the file that keeps it."""
    out, skip, said = [], False, False
    for line in text.split("\n"):
        if line.startswith("<details>"):
            skip = True
            if not said:
                out.append(f"Per-run details: [{RESULTS}/{name}.md]({RESULTS}/{name}.md).")
                said = True
            continue
        if skip:
            skip = not line.startswith("</details>")
            continue
        out.append(line)
    return "\n".join(out)


def render(root=ROOT):
    """-> BENCHMARKS.md's text: HEAD, the index (a row per section: its first heading, linked;
    the date it was measured; its command), then the sections."""
    secs = sections(root)
    body, starts = [], []
    for name, text in secs:
        starts.append(len(body))
        body += without_details(name, text).split("\n") + [""]
    first = len(HEAD) + len(secs) + 1  # the index's rows and the blank line after them
    lines = HEAD + [""] * (len(secs) + 1) + body
    ids = anchors(lines)
    rows = []
    for (name, text), start in zip(secs, starts):
        at = min((i for i in ids if i >= first + start), default=None)
        title, link = (lines[at].lstrip("#").strip(), ids[at]) if at is not None else (name, "")
        cmd = command(text)
        rows.append(f"| [{title}](#{link}) | {measured(text) or '-'} | " + (f"`{cmd}`" if cmd else "-") + " |")
    lines[len(HEAD):first] = rows + [""]
    return "\n".join(lines)


def check(root=ROOT):
    """-> "" when root's BENCHMARKS.md is what render(root) writes, else the first lines of the
    difference."""
    with open(os.path.join(root, DOC)) as f:
        have = f.read()
    want = render(root)
    if have == want:
        return ""
    diff = difflib.unified_diff(have.split("\n"), want.split("\n"), DOC, "python3 bench/doc.py", n=1, lineterm="")
    return (f"{DOC} is not what bench/doc.py writes from {RESULTS}/ (run `python3 bench/doc.py`):\n"
            + "\n".join(list(diff)[:20]) + "\n")


def main(argv):
    if argv[1:] == ["--check"]:
        problem = check()
        sys.stderr.write(problem)
        return 1 if problem else 0
    if argv[1:]:
        sys.stderr.write(__doc__)
        return 2
    path = os.path.join(ROOT, DOC)
    with open(path + ".tmp", "w") as f:
        f.write(render())
    os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
