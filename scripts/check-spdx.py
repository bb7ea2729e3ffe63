#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file of fragd carries the SPDX line its place in the tree calls for.

fragd is Apache-2.0 (LICENSE), except the code that is loaded into the kernel or
shares its definitions with it: the BPF programs and their headers (bpf/, include/),
the benchmark's BPF programs (bench/*.bpf.c, bench/*.bt) and the replay harness that
compiles the programs' logic for user space (tests/replay/replay_programs.*). Those
are GPL-2.0-only OR BSD-2-Clause: the kernel sees "Dual BSD/GPL", and user space
uses them under BSD-2-Clause. The license texts are in LICENSES/.

  scripts/check-spdx.py [ROOT]         check: one line per file that is wrong, exit 1
  scripts/check-spdx.py --fix [ROOT]   write the right line into each file

The line must be among a file's first 3 lines (after a shebang). The files are those
git tracks; fixtures, corpora and documents are not source.
"""
import re
import subprocess
import sys

DUAL = "GPL-2.0-only OR BSD-2-Clause"
APACHE = "Apache-2.0"
SOURCE = re.compile(r"(\.(cc|h|c|sh|py|bt|cmake|in)|/CMakeLists\.txt|^CMakeLists\.txt|^Makefile)$")
NOT_SOURCE = re.compile(r"^(tests/fixtures/|tests/fuzz/corpus/|tests/fuzz/dict/)")
DUAL_FILES = re.compile(r"^(bpf/|include/|bench/[^/]*\.bpf\.c$|bench/[^/]*\.bt$|tests/replay/replay_programs\.)")
LINE = re.compile(r"SPDX-License-Identifier:\s*(.*?)\s*(\*/)?\s*$")
BPF_LICENSE = re.compile(r'SEC\("license"\)\s*=\s*"([^"]*)"')


def wanted(path):
    return DUAL if DUAL_FILES.match(path) else APACHE


def comment(path, lic):
    if path.endswith((".h.in", ".bt")):  # bpftrace reads "#" lines as preprocessor directives
        return f"// SPDX-License-Identifier: {lic}"
    if path.endswith((".sh", ".py", ".cmake", ".in", "CMakeLists.txt", "Makefile")):
        return f"# SPDX-License-Identifier: {lic}"
    if path.endswith(".c") or path.startswith(("bpf/", "include/")):
        return f"/* SPDX-License-Identifier: {lic} */"
    return f"// SPDX-License-Identifier: {lic}"


def main():
    args = [a for a in sys.argv[1:] if a != "--fix"]
    fix = "--fix" in sys.argv[1:]
    root = args[0] if args else "."
    files = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True, text=True).stdout.split()
    bad = 0
    for path in files:
        if not SOURCE.search(path) or NOT_SOURCE.match(path):
            continue
        full = f"{root}/{path}"
        with open(full, encoding="utf-8") as f:
            lines = f.read().split("\n")
        want = wanted(path)
        start = 1 if lines and lines[0].startswith("#!") else 0
        found = None
        for i in range(start, min(start + 3, len(lines))):
            m = LINE.search(lines[i])
            if m:
                found = (i, m.group(1).strip("() "))
                break
        # The BPF objects' license string must be what the kernel reads for the dual license.
        if want == DUAL and path.endswith(".c"):
            for m in BPF_LICENSE.finditer("\n".join(lines)):
                if m.group(1) != "Dual BSD/GPL":
                    print(f'{path}: SEC("license") is "{m.group(1)}", want "Dual BSD/GPL" ({DUAL})')
                    bad += 1
        if found and found[1] == want.strip("()"):
            continue
        if not fix:
            got = f"has '{found[1]}'" if found else "has no SPDX-License-Identifier line in its first 3 lines"
            print(f"{path}: {got}; want '{want}' (scripts/check-spdx.py --fix writes it)")
            bad += 1
            continue
        line = comment(path, want)
        if found:
            lines[found[0]] = line
        else:
            lines.insert(start, line)
        with open(full, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
    if bad:
        print(f"{bad} file(s) without the right SPDX line; the rules: scripts/check-spdx.py's header")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
