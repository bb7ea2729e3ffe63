#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/architecture-status.py counts what it says on a tree made to hold each case once: a
kernel/ file including a concern's header and one including only mechanism, a concern reading
Shared's fields (and its config, which does not count), ExportFrame named twice, a concern with a
unit test and one without, a Concern declared outside its folder, a stall's route with
two hops missing and a file off it carrying the histogram, a function of 101 lines and one of 100, a table of 150 (not counted), a
file of 601 lines, bench/'s files split by the benchmark that names them, and a README with two
Measured rows. Then the real tree: the script runs and prints every measure. No root.
"""
import os
import subprocess
import sys
import tempfile

SRC = os.environ.get("FRAGD_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
SCRIPT = os.path.join(SRC, "scripts/architecture-status.py")


def write(root, path, text):
    p = os.path.join(root, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)


def table(root):
    out = subprocess.run([sys.executable, SCRIPT, "--root", root, "--list"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"architecture-status.py failed: {out.stderr}")
    rows = {}
    for line in out.stdout.splitlines():
        cols = [c.strip() for c in line.strip("|").split("|")]
        if len(cols) == 4 and cols[0] not in ("measure", "---"):
            rows[cols[0]] = cols[1]
    return rows, out.stdout


def body(n):  # a function of n lines, first and last included
    return "void f%d() {\n%s}\n" % (n, "  g();\n" * (n - 2))


def table_body(n):  # a function of n lines, all but 4 of them one initializer
    return "const std::vector<int>& t%d() {\n  static const std::vector<int> v = {\n%s  };\n  return v;\n}\n" % (
        n, "      1,\n" * (n - 5))


def main():
    bad = []
    with tempfile.TemporaryDirectory() as root:
        write(root, "daemon/kernel/a.h", '#include "stalls.h"\n#include "base/result.h"\n')
        write(root, "daemon/kernel/b.cc", '#include "kernel/a.h"\n')
        write(root, "daemon/concerns/memory/concern.h", "class MemoryConcern final : public Concern {};\n"
              "class ActConcern : public Concern {};\n")
        write(root, "daemon/fragd/stray.h", "class StrayConcern : public Concern {};\n")
        # The stall's route: two of its four hops where it says, a third file carrying StallHists.
        write(root, "bpf/stalls.bpf.c", "struct { } stall_hist SEC(\".maps\");\n")
        write(root, "daemon/concerns/stalls/maps.cc", "Result<StallHists> read_stall_hists() {}\n")
        write(root, "daemon/concerns/programs/reader.h", "struct BpfSnapshot { StallHists stall; };\n")
        write(root, "daemon/concerns/memory/concern.cc", "void t() { use(sh_.last_mem); use(sh.bpf); use(sh_.cfg); }\n")
        write(root, "daemon/fragd/exporter.h", "struct ExportFrame {};\nvoid m(ExportFrame& f);\n")
        write(root, "daemon/concerns/act/long.cc", body(101) + body(100) + table_body(150))
        write(root, "bench/x.sh", "echo\n" * 601)
        # bench/ by benchmark: a's driver names its report, which imports a helper; both drivers
        # name common.py; the library names tool.c; orphan.py is named by none (9 lines more).
        write(root, "Makefile", "bench:\n\tbash bench/a.sh\n\tX=1 bash bench/b.sh\n# bash bench/x.sh\n")
        write(root, "bench/a.sh", "python3 bench/a_report.py\npython3 bench/common.py\n")
        write(root, "bench/b.sh", "python3 bench/common.py\n")
        write(root, "bench/a_report.py", "from helper import h\n")
        for n in ("helper.py", "common.py", "orphan.py", "tool.c"):
            write(root, "bench/" + n, "x\n")
        write(root, "bench/lib.sh", "cc bench/tool.c\n")
        write(root, "tests/unit/fragd/memory_test.cc", "TEST(MemoryConcern, Ticks) {}\n")
        write(root, "README.md", "# x\n## Measured\n\n| what | now |\n|---|---|\n| a | 1 |\n| b | 2 |\n\n## Next\n")
        write(root, "BENCHMARKS.md", "x\n")
        write(root, "RELIABILITY.md", "x\n")
        rows, text = table(root)
        want = {
            "kernel/ includes of a concern's header": "1",
            "concerns' reads of Shared's fields (not cfg or warn)": "2",
            "uses of ExportFrame": "2",
            "concerns without a unit test": "1",
            "concerns declared outside their folder": "1",
            "a stall's files / folders from the BPF program to /metrics": "4 / 2 (3 wrong)",
            "functions over 100 lines (declarative tables allowed)": "1",
            "source files over 600 lines": "1",
            "bench/ lines (scripts, reports, C)": "610",
            "README Measured rows": "2",
        }
        for k, v in want.items():
            if rows.get(k) != v:
                bad.append(f"made tree: {k}: {rows.get(k)!r}, want {v!r}")
        for item in ("daemon/concerns/act/long.cc:1: f101 (101 lines)", "ActConcern (daemon/concerns/memory/concern.h)",
                     "StrayConcern (daemon/fragd/stray.h)",
                     "daemon/concerns/programs/reader.h names StallHists but is not on the route",
                     "daemon/concerns/stalls/metrics.cc does not hold 'fragd_alloc_stall_seconds'",
                     "daemon/kernel/a.h:1: stalls.h",
                     "    4  a: a.sh 2, a_report.py 1, helper.py 1", "    1  b: b.sh 1",
                     "    1  named by two benchmarks or more: common.py 1",
                     "    2  the library every benchmark uses, and what it alone names: lib.sh 1, tool.c 1",
                     "  602  named by no benchmark: x.sh 601, orphan.py 1"):
            if item not in text:
                bad.append(f"made tree: --list does not name {item!r}")
    rows, _ = table(SRC)
    if len(rows) != 13:
        bad.append(f"the tree: {len(rows)} measures printed, want 13")
    for b in bad:
        print(b, file=sys.stderr)
    print("[architecture_status] " + ("FAIL" if bad else "PASS"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
