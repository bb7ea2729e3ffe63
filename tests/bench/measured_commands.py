#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every figure in README's "## Measured", and every section in BENCHMARKS.md's index ("## Sections",
written by bench/doc.py), names the command that produced it.

The convention:
- A table carries its command either on a line right above it (the last non-blank line
  before its header starts with "Produced by:" and names a command), or in a column headed
  "command" that names a command in every row.
- A paragraph or list that states a figure (a number with a unit: 12 ms, 0.3%, 4.8 MiB,
  3000 pages, 0.47x ...) names a command in it.
- A command is a span in backticks whose first word (after VAR=value settings) is one of
  bench/doc.py's COMMAND_WORDS or a path under bench/, tests/, scripts/ or build/. The scripts it names
  (bench/..., tests/..., scripts/...) must exist, and `make T` must name a Makefile target.

usage: measured_commands.py [FILE] -> the problems (of both files when none is given), one a line (exit 1), or nothing (exit 0).
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from doc import CODE, command_words, runs_something  # noqa: E402  the one reading of a command
SECTION = "## Measured"
# The files that hold figures, and the title of the section that holds them in each.
SECTIONS = {"README.md": SECTION, "BENCHMARKS.md": "## Sections"}
FIGURE = re.compile(r"(?<![\w.])[-+−]?\d[\d,.]*\s?(?:%|x\b|ns\b|µs\b|us\b|ms\b|s\b|min\b|MiB\b|GiB\b|KiB\b|TiB\b|"
                    r"bytes\b|pages?\b|blocks?\b|huge pages\b|faults?\b|runs?\b|rounds?\b|pairs?\b|scans?\b)")


def section(text, title=SECTION):
    """-> [(line number, line)] of the section title .. the next '## ' heading."""
    lines = text.split("\n")
    try:
        start = lines.index(title)
    except ValueError:
        return None
    out = []
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("## "):
            break
        out.append((i + 1, lines[i]))
    return out


def make_targets(root):
    targets = set()
    with open(os.path.join(root, "Makefile")) as f:
        for line in f:
            m = re.match(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", line)
            if m:
                targets.add(m.group(1))
    return targets


def command_problem(span, root, targets):
    """-> None when span is a command whose scripts exist, else why it is not one."""
    words = command_words(span)
    if not words:
        return "no command"
    if not runs_something(span):
        return "not a command"
    first = words[0]
    for w in words:
        w = w.strip("'\"(),;")
        if w.startswith(("bench/", "tests/", "scripts/")) and not os.path.exists(os.path.join(root, w)):
            return f"names {w}, which does not exist"
    if first == "make":
        for t in words[1:]:
            if t.startswith("-") or "=" in t:
                continue
            if t not in targets:
                return f"make target {t} does not exist"
    return None


def commands_in(text, root, targets):
    """-> (commands found, problems of the code spans that start like a script path but fail)."""
    good, bad = [], []
    for span in CODE.findall(text):
        p = command_problem(span, root, targets)
        if p is None:
            good.append(span)
        elif p not in ("not a command", "no command"):
            bad.append(f"`{span}`: {p}")
    return good, bad


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def check(text, root=ROOT, title=SECTION):
    """-> the problems of text's section TITLE, each 'README:LINE: what'."""
    sec = section(text, title)
    if sec is None:
        return [f"README: no '{title}' section"]
    targets = make_targets(root)
    problems = []
    blocks, cur = [], []
    for n, line in sec + [(0, "")]:
        if line.strip() == "" or (cur and line.startswith("|") != cur[-1][1].startswith("|")):
            if cur:
                blocks.append(cur)
            cur = [(n, line)] if line.strip() else []
        else:
            cur.append((n, line))
    prev = None
    for block in blocks:
        first_n = block[0][0]
        text_ = "\n".join(l for _, l in block)
        good, bad = commands_in(text_, root, targets)
        problems += [f"README:{first_n}: {b}" for b in bad]
        if block[0][1].startswith("|"):
            header = [c.lower() for c in cells(block[0][1])]
            above = prev[-1][1] if prev else ""
            if above.startswith("Produced by:"):
                if not commands_in(above, root, targets)[0]:
                    problems.append(f"README:{prev[-1][0]}: 'Produced by:' names no command in backticks")
            elif "command" in header:
                col = header.index("command")
                for n, row in block[2:]:
                    c = cells(row)
                    if col >= len(c) or not commands_in(c[col], root, targets)[0]:
                        problems.append(f"README:{n}: table row has no command in its 'command' column: "
                                        f"{row[:80]}")
            else:
                problems.append(f"README:{first_n}: table without its command: put a 'Produced by: `CMD`' line "
                                f"right above it, or a 'command' column")
        elif not block[0][1].startswith("Produced by:") and FIGURE.search(text_) and not good:
            problems.append(f"README:{first_n}: a figure ({FIGURE.search(text_).group(0).strip()}) with no "
                            f"command in backticks in its paragraph: {block[0][1][:80]}")
        prev = block
    return problems


def main():
    names = [sys.argv[1]] if len(sys.argv) > 1 else [os.path.join(ROOT, n) for n in SECTIONS]
    bad = 0
    for path in names:
        with open(path) as f:
            problems = check(f.read(), title=SECTIONS.get(os.path.basename(path), SECTION))
        for p in problems:
            print(p.replace("README:", f"{path}:", 1))
        bad |= bool(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
