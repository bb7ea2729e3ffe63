#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where the tree stands against the shape docs/architecture.md sets: each measure counted on the
tree as it is now, beside its goal, printed as a Markdown table (so no status table is typed into
a document by hand and none can drift).

    python3 scripts/architecture-status.py [--root DIR] [--list]

--list also prints what each count is made of (the files, functions or reads). Functions are
found with universal-ctags (Debian package universal-ctags), which gives each one's first and last
line. Exits 0 whatever the counts: it reports, the goals are the team's to meet.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

CONCERN_HEADERS = ("stalls.h", "compaction.h", "pollution.h")
# Shared's fields the concerns may read: the running config and the warnings (every other one
# would be one concern's state read by another).
SHARED_OWN = ("cfg", "warn")
SOURCE_EXT = (".c", ".cc", ".h", ".py", ".sh")


def lines(path):
    with open(path, errors="replace") as f:
        return sum(1 for _ in f)


def files(root, pattern):
    return sorted(glob.glob(os.path.join(root, pattern), recursive=True))


def kernel_concern_includes(root):
    hits = []
    for p in files(root, "daemon/kernel/*"):
        for n, line in enumerate(open(p, errors="replace"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m and (m.group(1) in CONCERN_HEADERS or m.group(1).startswith("concerns/")):
                hits.append(f"{os.path.relpath(p, root)}:{n}: {m.group(1)}")
    return hits


def shared_reads(root):
    pat = re.compile(r"\bsh_?\.(\w+)\b")
    hits = []
    for p in files(root, "daemon/concerns/*/concern.cc") + files(root, "daemon/concerns/*/concern.h"):
        for n, line in enumerate(open(p, errors="replace"), 1):
            for m in pat.finditer(line):
                if m.group(1) not in SHARED_OWN:
                    hits.append(f"{os.path.relpath(p, root)}:{n}: {m.group(0)}")
    return hits


def word_uses(root, word):
    hits = []
    for p in files(root, "daemon/**/*.cc") + files(root, "daemon/**/*.h"):
        for n, line in enumerate(open(p, errors="replace"), 1):
            if re.search(r"\b%s\b" % word, line):
                hits.append(f"{os.path.relpath(p, root)}:{n}")
    return hits


def is_table(path, first, last):
    """A declarative table: one brace initializer (a line ending in "= {" to the "};" that closes
    it) makes 90% or more of the function's lines."""
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()[first - 1:last]
    for i, line in enumerate(lines):
        if re.search(r"=\s*\{\s*$", line):
            depth = 0
            for j in range(i, len(lines)):
                depth += lines[j].count("{") - lines[j].count("}")
                if depth <= 0:
                    return (j - i + 1) >= 0.9 * len(lines)
    return False


def long_functions(root, limit=100):
    srcs = files(root, "daemon/**/*.cc") + files(root, "daemon/**/*.h") + files(root, "bpf/*.c") + files(root, "bpf/*.h")
    try:
        out = subprocess.run(["ctags", "--output-format=u-ctags", "--fields=+ne", "--kinds-C++=f", "--kinds-C=f",
                              "-o", "-", "-L", "-"], input="\n".join(srcs), capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"architecture-status: universal-ctags failed ({e}): install the Debian package universal-ctags")
    found = []
    for row in out.splitlines():
        if row.startswith("!_"):
            continue
        cols = row.split("\t")
        name, path = cols[0], cols[1]
        fields = dict(c.split(":", 1) for c in cols[3:] if ":" in c)
        if "line" not in fields or "end" not in fields:
            continue
        n = int(fields["end"]) - int(fields["line"]) + 1
        if n > limit and not is_table(path, int(fields["line"]), int(fields["end"])):
            scope = next((fields[k] for k in ("class", "struct", "namespace") if k in fields), "")
            scope = scope.replace("fragd::", "").replace("fragd", "")
            found.append((n, f"{os.path.relpath(path, root)}:{fields['line']}: "
                          f"{scope + '::' if scope else ''}{name} ({n} lines)"))
    return [s for _, s in sorted(found, reverse=True)]


def long_files(root, limit=600):
    out = []
    for p in files(root, "**/*"):
        rel = os.path.relpath(p, root)
        if rel.startswith(("build", ".git")) or not os.path.isfile(p) or not p.endswith(SOURCE_EXT):
            continue
        n = lines(p)
        if n > limit:
            out.append(f"{rel} ({n} lines)")
    return out


def concerns_without_tests(root):
    """-> the Concern classes no gtest suite is named after (TEST(ClassName, ...))."""
    missing = []
    tests = " ".join(open(p, errors="replace").read()
                     for p in files(root, "tests/unit/**/*_test.cc") + files(root, "daemon/concerns/**/*_test.cc"))
    for p in files(root, "daemon/concerns/*/concern.h"):
        for cls in re.findall(r"class (\w+Concern)\b[^;{]*:\s*public Concern", open(p).read()):
            if not re.search(r"\bTEST(?:_F)?\(\s*%s\s*," % cls, tests):
                missing.append(f"{cls} ({os.path.relpath(p, root)})")
    return missing


def faces_outside_folders(root):
    """-> the Concern classes declared anywhere but their concern's folder (concerns/<c>/concern.h)."""
    out = []
    for p in files(root, "daemon/**/*.h"):
        rel = os.path.relpath(p, root)
        if re.fullmatch(r"daemon/concerns/[^/]+/concern\.h", rel):
            continue
        for cls in re.findall(r"class (\w+)\b[^;{]*:\s*public Concern\b", open(p, errors="replace").read()):
            out.append(f"{cls} ({rel})")
    return out


# A stall's way from the BPF program to /metrics: each file the histogram's values are written,
# read, kept or turned into a family in, with what it does there, which must be in that file
# (so a hop moved elsewhere fails the count rather than drifting). The map's descriptor is set up
# at start (object.cc, programs.cc): it is not a hop of the values. Nor is the exposition, shared
# by every family.
STALL_ROUTE = (
    ("bpf/stalls.bpf.c", "stall_hist"),                             # the program adds to the map
    ("daemon/concerns/stalls/maps.cc", "read_stall_hists"),         # the map read into StallHists
    ("daemon/concerns/stalls/concern.cc", "bpf_.read(bpf_.maps"),   # the tick's read, kept
    ("daemon/concerns/stalls/metrics.cc", "fragd_alloc_stall_seconds"),  # the family
)


def stall_route(root):
    """-> (the route's files, its folders, what is wrong with it)."""
    wrong = []
    for path, marker in STALL_ROUTE:
        p = os.path.join(root, path)
        if not os.path.isfile(p) or marker not in open(p, errors="replace").read():
            wrong.append(f"{path} does not hold {marker!r}: fix STALL_ROUTE in scripts/architecture-status.py")
    # No other file of daemon/ may name the histogram's type: it would be a hop the route misses.
    for p in files(root, "daemon/**/*.cc") + files(root, "daemon/**/*.h"):
        rel = os.path.relpath(p, root)
        if rel.endswith("_test.cc") or rel.startswith("daemon/concerns/stalls/"):
            continue
        if re.search(r"\bStallHists\b", open(p, errors="replace").read()):
            wrong.append(f"{rel} names StallHists but is not on the route")
    folders = sorted({os.path.dirname(p) for p, _ in STALL_ROUTE})
    return [p for p, _ in STALL_ROUTE], folders, wrong


def code_lines(root, pattern):
    return sum(lines(p) for p in files(root, pattern) if os.path.isfile(p))


BENCH_PATTERNS = ("bench/*.sh", "bench/*.py", "bench/*.c")
BENCH_LIBRARY = ("lib.sh", "benchlib.py", "verdict.py", "doc.py")  # what every benchmark uses


def bench_by_benchmark(root):
    """-> bench/'s lines by what they serve, for --list: each benchmark the Makefile runs
    (`bash bench/NAME.sh` in a recipe) with the files of bench/ that it alone names (its driver,
    then every file a file of it names, transitively), the files two benchmarks or more name, the
    library every one uses, and what no benchmark names. Most lines first: the lines that would go
    with a benchmark."""
    code = {os.path.basename(p): p for pat in BENCH_PATTERNS for p in files(root, pat) if os.path.isfile(p)}
    text = {n: open(p, errors="replace").read() for n, p in code.items()}
    mk = os.path.join(root, "Makefile")
    recipes = [l for l in open(mk, errors="replace") if l.startswith("\t")] if os.path.isfile(mk) else []
    drivers = sorted({d + ".sh" for l in recipes for d in re.findall(r"\bbash bench/(\w+)\.sh\b", l)} & set(code))

    def names(n):  # a file named by its name, or a Python module imported by its own
        stem = re.escape(n[:-3])
        return r"(?<![\w.])" + re.escape(n) + r"\b" + (rf"|^\s*(from|import)\s+{stem}\b" if n.endswith(".py") else "")

    def reach(start):
        seen, todo = set(start), list(start)
        while todo:
            t = text[todo.pop()]
            for n in code:
                if n not in seen and n not in drivers and n not in BENCH_LIBRARY and re.search(names(n), t, re.M):
                    seen.add(n)
                    todo.append(n)
        return seen

    named_by = {}
    for d in drivers:
        for n in reach([d]):
            named_by.setdefault(n, []).append(d[:-3])

    def group(label, members):
        size = {n: len(text[n].splitlines()) for n in members}
        listed = ", ".join(f"{n} {size[n]}" for n in sorted(members, key=lambda n: (-size[n], n)))
        return sum(size.values()), f"{label}: {listed}"

    groups = [group(b[:-3], [n for n, by in named_by.items() if by == [b[:-3]]]) for b in drivers]
    groups.sort(key=lambda g: (-g[0], g[1]))
    shared = [n for n, by in named_by.items() if len(by) > 1]
    groups.append(group("named by two benchmarks or more", shared))
    library = [n for n in reach([n for n in BENCH_LIBRARY if n in code]) if n in BENCH_LIBRARY or n not in named_by]
    groups.append(group("the library every benchmark uses, and what it alone names", library))
    groups.append(group("named by no benchmark", [n for n in code if n not in named_by and n not in library]))
    return [f"{total:5d}  {text}" for total, text in groups if total]


def measured_rows(root):
    text = open(os.path.join(root, "README.md")).read()
    m = re.search(r"^## Measured\n(.*?)^## ", text, re.M | re.S)
    if not m:
        return 0
    return sum(1 for l in m.group(1).splitlines() if l.startswith("| ") and not l.startswith("| what"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--list", action="store_true", help="also print what each count is made of")
    a = ap.parse_args()
    root = os.path.abspath(a.root)

    kinc = kernel_concern_includes(root)
    shared = shared_reads(root)
    frame = word_uses(root, "ExportFrame")
    untested = concerns_without_tests(root)
    outside = faces_outside_folders(root)
    route, route_dirs, route_wrong = stall_route(root)
    funcs = long_functions(root)
    big = long_files(root)
    bench = sum(code_lines(root, p) for p in BENCH_PATTERNS)
    rows = [
        ("kernel/ includes of a concern's header", len(kinc), "0", "kernel/ holds only mechanism", kinc),
        ("concerns' reads of Shared's fields (not cfg or warn)", len(shared), "0", "data passed as arguments", shared),
        ("uses of ExportFrame", len(frame), "0", "each concern emits its own families", frame),
        ("concerns without a unit test", len(untested), "0", "every concern tested without root", untested),
        ("concerns declared outside their folder", len(outside), "0", "one folder per concern", outside),
        ("a stall's files / folders from the BPF program to /metrics", f"{len(route)} / {len(route_dirs)}"
         + (f" ({len(route_wrong)} wrong)" if route_wrong else ""), "≤ 4 / ≤ 2", "one folder per concern",
         route + route_wrong),
        ("functions over 100 lines (declarative tables allowed)", len(funcs), "0", "", funcs),
        ("source files over 600 lines", len(big), "0", "", big),
        ("bench/ lines (scripts, reports, C)", bench, "≤ 5000", "bench/ as one tool", bench_by_benchmark(root)),
        ("README.md lines", lines(os.path.join(root, "README.md")), "≤ 300", "", []),
        ("README Measured rows", measured_rows(root), "≤ 12", "one line each", []),
        ("BENCHMARKS.md lines", lines(os.path.join(root, "BENCHMARKS.md")), "≤ 800", "", []),
        ("RELIABILITY.md lines", lines(os.path.join(root, "RELIABILITY.md")), "≤ 500", "", []),
    ]
    print("| measure | now | goal | why |")
    print("|---|---|---|---|")
    for what, now, goal, why, _ in rows:
        print(f"| {what} | {now} | {goal} | {why} |")
    if a.list:
        for what, _, _, _, items in rows:
            if items:
                print(f"\n{what}:")
                for i in items:
                    print(f"  {i}")


if __name__ == "__main__":
    main()
