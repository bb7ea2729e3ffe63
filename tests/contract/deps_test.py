#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Every command the shell scripts of tests/, bench/ and scripts/ run comes from a package
scripts/install-deps.sh installs, so that `make test` on a fresh Debian (minbase) checks what it
checks here instead of skipping. No root.

The scripts are parsed by shfmt (--to-json: the syntax tree, heredoc bodies left as text): a
command is the first word of a simple command when it is a literal, looked through the wrappers
that run their arguments (timeout, env, exec, xargs, wait_for N, ...), plus the names given to
`command -v` and to bench/lib.sh's require_tools, and the items of a `for` loop whose body asks
`command -v` its variable. Builtins, keywords and functions the scripts define are not commands;
a word with a variable or a relative path is the project's own (a built tool, a test helper).
Each command is then looked up in the system's PATH and its file in dpkg's database (dpkg -S):
the package must be one install-deps.sh lists, one of their dependencies, or of priority
required (on every Debian, minbase included). A command found nowhere fails too.

Besides the shell scripts: the Python programs of tests/, bench/ and scripts/ (a call of
subprocess.run, Popen, call, check_call or check_output whose first argument is a list starting
with a string, or a string when shell=True: its first word), and the Makefile's recipes (each
recipe parsed by shfmt after make's own expansions, $(VAR) and $$, are rewritten to shell ones).
"""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SRC = Path(os.environ.get("FRAGD_SOURCE_DIR", Path(__file__).resolve().parents[2]))
# Scripts that run elsewhere: their commands are the guest's or the image's, not this host's.
ELSEWHERE = {
    "tests/kernels/guest.sh": "the /init of the test kernels' busybox guests",
    "tests/kernels/guest_setup.sh": "sourced by the busybox guests' /init",
    "bench/cost_guest_init.sh": "the /init of bench/cost_guest.sh's busybox guests",
    "tests/service/guest-check.sh": "runs inside the service test's Debian guest",
}
# Commands not from a Debian package, with what installs them.
PROVIDED = {
    "go": "scripts/install-deps.sh fetches the pinned Go toolchain (GO_TOOLCHAIN) into FRAGD_TOOLS",
}
# Commands install-deps.sh itself runs before their package may be installed here: the package
# must be in its list.
BOOTSTRAP = {"/usr/bin/go": "golang-go"}
# Wrappers: how many words after the wrapper's name (options aside) come before the command it runs.
WRAPPERS = {"timeout": 1, "nice": 0, "nohup": 0, "setsid": 0, "env": 0, "sudo": 0, "exec": 0,
            "xargs": 0, "stdbuf": 0, "taskset": 1, "flock": 1, "wait_for": 1, "in_cgroup": 1,
            "chrt": 1, "ionice": 0, "unshare": 0, "nsenter": 0, "time": 0}
# Their options that take a value as the next word.
OPTARGS = {"-s", "--signal", "-k", "--kill-after", "-n", "-u", "-w", "-E", "-I", "-P", "-d", "-L", "-C"}
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


def fail(msg):
    print(f"[deps_test] FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def literal(word):
    """The word's text if it has no expansion, else None."""
    out = ""
    for p in word.get("Parts", []):
        t = p.get("Type")
        if t == "Lit":
            out += p.get("Value", "")
        elif t == "SglQuoted":
            out += p.get("Value", "")
        elif t == "DblQuoted" and all(q.get("Type") == "Lit" for q in p.get("Parts", [])):
            out += "".join(q.get("Value", "") for q in p.get("Parts", []))
        else:
            return None
    return out


def param_name(word):
    """"$t" or $t: the variable's name, else None."""
    parts = word.get("Parts", [])
    if len(parts) == 1 and parts[0].get("Type") == "DblQuoted":
        parts = parts[0].get("Parts", [])
    if len(parts) == 1 and parts[0].get("Type") == "ParamExp":
        return parts[0]["Param"]["Value"]
    return None


def walk(node, visit):
    if isinstance(node, dict):
        visit(node)
        for v in node.values():
            walk(v, visit)
    elif isinstance(node, list):
        for v in node:
            walk(v, visit)


def commands_of(tree):
    """(functions defined, {command: first line}) of one script's syntax tree."""
    funcs, cmds = set(), {}

    def add(name, node):
        if name and "/" not in name and re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
            cmds.setdefault(name, node["Pos"]["Line"])
        elif name and name.startswith("/"):
            cmds.setdefault(name, node["Pos"]["Line"])

    def call(node):
        args = [literal(a) for a in node.get("Args", [])]
        i = 0
        while i < len(args):
            name = args[i]
            if name is None:
                return
            if name == "command" and i + 1 < len(args) and args[i + 1] in ("-v", "-V"):
                for a, w in zip(args[i + 2:], node["Args"][i + 2:]):
                    add(a, w)
                return
            if name == "require_tools":
                for a, w in zip(args[i + 2:], node["Args"][i + 2:]):
                    add(a, w)
                return
            if name in ("command", "builtin"):
                i += 1
                continue
            add(name, node["Args"][i])
            if name not in WRAPPERS:
                return
            i += 1
            while i < len(args) and args[i] is not None and (args[i].startswith("-") or "=" in args[i]):
                i += 2 if args[i] in OPTARGS else 1
            i += WRAPPERS[name]

    def visit(node):
        t = node.get("Type")
        if t == "FuncDecl":
            funcs.add(node["Name"]["Value"])
        elif t == "CallExpr":
            call(node)
        elif t == "ForClause" and node.get("Loop", {}).get("Type") == "WordIter":
            var = node["Loop"]["Name"]["Value"]
            asked = []

            def probe(n):
                if n.get("Type") == "CallExpr":
                    a = n.get("Args", [])
                    if len(a) >= 3 and literal(a[0]) == "command" and literal(a[1]) == "-v" and param_name(a[2]) == var:
                        asked.append(True)
            walk(node.get("Do", []), probe)
            if asked:
                for w in node["Loop"].get("Items", []):
                    add(literal(w), w)

    walk(tree, visit)
    return funcs, cmds


SUBPROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output"}


def python_commands(path):
    """{command: line} of the subprocess calls in one Python file."""
    cmds = {}
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name not in SUBPROCESS_CALLS:
            continue
        if isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name) and f.value.id == "subprocess"):
            continue
        a = node.args[0]
        first = None
        if isinstance(a, (ast.List, ast.Tuple)) and a.elts and isinstance(a.elts[0], ast.Constant) and \
                isinstance(a.elts[0].value, str):
            first = a.elts[0].value
        elif isinstance(a, ast.Constant) and isinstance(a.value, str) and any(
                k.arg == "shell" and isinstance(k.value, ast.Constant) and k.value.value for k in node.keywords):
            first = a.value.split()[0] if a.value.split() else None
        if first and ("/" not in first or first.startswith("/")) and re.fullmatch(r"[A-Za-z0-9_./+-]+", first):
            cmds.setdefault(first, node.lineno)
    return cmds


def makefile_recipes(path):
    """[(first line, recipe text)] of a Makefile, make's expansions rewritten for the shell:
    $(VAR) and ${VAR} become $VAR, $$ becomes $, continued lines are joined."""
    out, lines = [], path.read_text().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("\t"):
            start, text = i + 1, lines[i][1:]
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1] + " " + lines[i].lstrip("\t")
            text = text.lstrip("@-+ ")
            text = re.sub(r"\$[({]([A-Za-z0-9_]+)[)}]", r"$\1", text)
            text = re.sub(r"\$\((?:shell|wildcard|if|or|and|foreach|call|patsubst|subst|strip|dir|notdir)[^)]*\)",
                          "$MAKEFN", text)
            out.append((start, text.replace("$$", "$")))
        i += 1
    return out


def builtins():
    out = subprocess.run(["bash", "-c", "compgen -b; compgen -k"], capture_output=True, text=True, check=True)
    return set(out.stdout.split()) | {"[[", "]]", "{", "}", "!"}


def package_of(path):
    """The Debian package that ships `path` (its real file, or its /bin <-> /usr/bin twin), else None."""
    cands = [path, os.path.realpath(path)]
    for c in list(cands):
        for a, b in (("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/"), ("/bin/", "/usr/bin/"), ("/sbin/", "/usr/sbin/")):
            if c.startswith(a):
                cands.append(b + c[len(a):])
    for c in cands:
        r = subprocess.run(["dpkg", "-S", c], capture_output=True, text=True)
        if r.returncode == 0:
            line = r.stdout.splitlines()[0]
            if line.startswith("diversion by"):
                continue
            return line.split(":")[0].split(",")[0].strip()
    return None


def closure(packages):
    """The packages and what they depend on (Depends, Pre-Depends), as apt installs them: the first
    of alternatives, the first provider of a virtual package."""
    r = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                        "--no-breaks", "--no-replaces", "--no-enhances", *packages],
                       capture_output=True, text=True)
    graph, pkg, alt, virtual = {}, None, False, None
    for line in r.stdout.splitlines():
        m = re.match(r"^ ( |\|)(?:Depends|PreDepends): (<)?([^>\s]+)", line)
        if not line.startswith(" "):
            pkg, alt, virtual = line.strip(), False, None
            graph.setdefault(pkg, [])
        elif m:
            virtual = None
            if not alt:
                if m.group(2):
                    virtual = m.group(3).split(":")[0]
                else:
                    graph[pkg].append(m.group(3).split(":")[0])
            alt = m.group(1) == "|"
        elif virtual and line.startswith("    "):
            graph[pkg].append(line.strip().split(":")[0])  # the first provider
            virtual = None
    seen, todo = set(), list(packages)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(graph.get(p, []))
    return seen


def priority(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Priority}", pkg], capture_output=True, text=True)
    return r.stdout.strip()


def main():
    if not shutil.which("shfmt"):
        fail("no shfmt to parse the scripts with: bash scripts/install-deps.sh installs it (Debian: shfmt)")
    listed = subprocess.run(["bash", str(SRC / "scripts/install-deps.sh"), "--list"], capture_output=True, text=True)
    if listed.returncode != 0:
        fail(f"scripts/install-deps.sh --list failed: {listed.stderr.strip()}")
    packages = set(listed.stdout.split())
    scripts = sorted(p for d in ("tests", "bench", "scripts") for p in (SRC / d).rglob("*.sh"))
    funcs, used = set(), {}
    for s in scripts:
        rel = str(s.relative_to(SRC))
        if rel in ELSEWHERE:
            continue
        r = subprocess.run(["shfmt", "--to-json", "-ln", "bash"], stdin=open(s), capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"{rel}: shfmt cannot parse it: {r.stderr.strip()}")
        f, c = commands_of(json.loads(r.stdout))
        funcs |= f
        for name, line in c.items():
            used.setdefault(name, f"{rel}:{line}")
    pythons = sorted(p for d in ("tests", "bench", "scripts") for p in (SRC / d).rglob("*.py"))
    for py in pythons:
        rel = str(py.relative_to(SRC))
        try:
            c = python_commands(py)
        except SyntaxError as e:
            fail(f"{rel}: does not parse as Python: {e}")
        for name, line in c.items():
            used.setdefault(name, f"{rel}:{line}")
    recipes = makefile_recipes(SRC / "Makefile")
    for line, text in recipes:
        r = subprocess.run(["shfmt", "--to-json", "-ln", "bash"], input=text, capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"Makefile:{line}: shfmt cannot parse the recipe line ({text!r}): {r.stderr.strip()}")
        f, c = commands_of(json.loads(r.stdout))
        funcs |= f
        for name in c:
            used.setdefault(name, f"Makefile:{line}")
    skip = builtins() | funcs
    deps = closure(sorted(packages))
    bad, rows = [], []
    for name, where in sorted(used.items()):
        if name in skip:
            continue
        if name in PROVIDED:
            rows.append((name, "-", PROVIDED[name]))
            continue
        if name in BOOTSTRAP:
            if BOOTSTRAP[name] not in packages:
                bad.append(f"{name} ({where}): add {BOOTSTRAP[name]} to scripts/install-deps.sh's list")
            else:
                rows.append((name, BOOTSTRAP[name], "listed"))
            continue
        path = name if name.startswith("/") else shutil.which(name, path=SYSTEM_PATH)
        if not path or not os.path.exists(path):
            bad.append(f"{name} ({where}): not installed here; add the Debian package that ships it to "
                       "scripts/install-deps.sh")
            continue
        pkg = package_of(path)
        if pkg is None:
            bad.append(f"{name} ({where}): {path} belongs to no Debian package; install it from one in "
                       "scripts/install-deps.sh")
            continue
        if pkg in packages:
            how = "listed"
        elif priority(pkg) == "required":
            how = "priority required"
        elif pkg in deps:
            how = "a dependency of a listed package"
        else:
            bad.append(f"{name} ({where}): package {pkg} ({path}) is not installed by scripts/install-deps.sh; "
                       f"add {pkg} to its list")
            continue
        rows.append((name, pkg, how))
    for name, pkg, how in rows:
        print(f"[deps_test] {name:24} {pkg:28} {how}")
    for b in bad:
        print(f"[deps_test] FAIL: {b}", file=sys.stderr)
    if bad:
        sys.exit(1)
    print(f"[deps_test] {len(rows)} commands of {len(scripts)} shell scripts, {len(pythons)} Python programs and "
          f"{len(recipes)} Makefile recipe lines, each from a package install-deps.sh installs")


if __name__ == "__main__":
    main()
