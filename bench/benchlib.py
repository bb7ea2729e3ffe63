# SPDX-License-Identifier: Apache-2.0
"""What fragd's benchmark scripts share: their command lines, the key=value files and JSON
lines the drivers write, timed writes to kernel files, scrapes of /metrics (read with
python3-prometheus-client's parser), table cells, and the sections the reports write:
bench/results/NAME.md for BENCHMARKS.md (put together by bench/doc.py), or between
<!-- NAME:begin --> and <!-- NAME:end --> of any other file. The statistics and the verdicts
are bench/verdict.py's.
"""
import argparse
import glob
import gzip
import json
import os
import re
import shlex
import socket
import sys
import time


# --- command lines: the scripts whose options are all required (the shell scripts pass every one) ---

def required_args(description, *options):
    """-> the parsed command line. Each option is a name ("--work"), read as a string, or
    (name, type), e.g. ("--period", float); every one must be given."""
    ap = argparse.ArgumentParser(description=description)
    for opt in options:
        name, kind = (opt, None) if isinstance(opt, str) else opt
        ap.add_argument(name, type=kind, required=True)
    return ap.parse_args()


def positional(n):
    """-> the n arguments of a script's command line; exits with its docstring (its usage) when
    there are not n."""
    if len(sys.argv) != n + 1:
        sys.exit(sys.modules["__main__"].__doc__)
    return sys.argv[1:]


def read_env(path, missing_ok=False):
    """-> {key: value} of a file of key=value lines; {} for a missing file when missing_ok."""
    out = {}
    if missing_ok and not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line:
                k, v = line.split("=", 1)
                out[k] = v
    return out


def prom_samples(text):
    """-> [(name, {label: value}, value)] of a Prometheus text exposition, parsed by
    python3-prometheus-client; ValueError (from the parser) on text that is not one."""
    from prometheus_client.parser import text_string_to_metric_families
    return [(s.name, dict(s.labels), s.value) for f in text_string_to_metric_families(text) for s in f.samples]


def read_prom(path):
    """-> prom_samples of a scrape saved in a file; [] when the file is missing."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return prom_samples(f.read())


def prom_key(name, labels):
    """-> 'name{a="x",b="y"}' as fragd writes the sample (labels in their order), or 'name'."""
    if not labels:
        return name
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def prom_sum(samples, name, **want):
    """-> the sum of the samples NAME whose labels include WANT (0 when none)."""
    return sum(v for n, l, v in samples if n == name and all(l.get(k) == x for k, x in want.items()))


def prom_value(samples, name, **want):
    """-> the value of the first sample NAME whose labels include WANT, or None."""
    for n, l, v in samples:
        if n == name and all(l.get(k) == x for k, x in want.items()):
            return v
    return None


def read_vmstat(path="/proc/vmstat"):
    """-> {counter: value} of /proc/vmstat or a copy of it; {} for a missing file."""
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                k, v = line.split()
                out[k] = int(v)
    return out


def free_2m_blocks(path="/proc/buddyinfo"):
    """-> free memory in whole 2 MiB blocks (order >= 9, all zones; an order-10 block counts as 2) of
    /proc/buddyinfo or a copy of it, or None for a missing file."""
    if not os.path.exists(path):
        return None
    total = 0
    with open(path) as f:
        for line in f:
            counts = line.split()[4:]  # "Node 0, zone Normal c0 c1 ... c10"
            total += sum(int(c) * 2 ** (order - 9) for order, c in enumerate(counts) if order >= 9)
    return total


# The CPU time procmon.py samples: the process's, and its thread classes'.
CPU_KEYS = ("cpu_ticks", "cpu_main_ticks", "cpu_scan_ticks", "cpu_other_ticks")


def cpu_pct(a, b, key, clk):
    """% of one core that KEY (CPU_KEYS, clock ticks of clk a second) took between procmon.py's
    samples a and b; None when they are at the same time."""
    dt = b["unix"] - a["unix"]
    return (b[key] - a[key]) / clk / dt * 100 if dt > 0 else None


def proc_stat(path):
    """-> (comm, the fields after it) of a /proc/PID[/task/TID]/stat file: fields[0] is field 3
    (state) of proc(5), so utime and stime are fields[11] and [12], nice fields[16]."""
    with open(path) as f:
        s = f.read()
    return s[s.index("(") + 1:s.rindex(")")], s[s.rindex(")") + 2:].split()


def control_request(path, request):
    """-> the answer (bytes, one JSON line) to one request line on fragd's control socket at path;
    OSError when it cannot be asked, EOFError when it closes before answering."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(path)
        s.sendall(request)
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                raise EOFError("closed before the answer")
            buf += chunk
    return buf


# The lines of ab's (apache2-utils) summary: the scrapes of bench/load.sh and bench/preflight_latency.sh.
AB_SUMMARY = {"complete": r"Complete requests:\s+(\d+)", "failed": r"Failed requests:\s+(\d+)",
              "non2xx": r"Non-2xx responses:\s+(\d+)", "taken_s": r"Time taken for tests:\s+([\d.]+) seconds",
              "rps": r"Requests per second:\s+([\d.]+)"}


def ab_summary(text):
    """-> {AB_SUMMARY's key: float, None where ab's output text has no such line}, and failed_detail:
    its failed requests by kind ({connect, receive, length, exceptions}, None when it gives none)."""
    found = {k: re.search("^" + p, text, re.M) for k, p in AB_SUMMARY.items()}
    out = {k: float(m.group(1)) if m else None for k, m in found.items()}
    m = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", text)
    out["failed_detail"] = (dict(zip(("connect", "receive", "length", "exceptions"), map(int, m.groups())))
                            if m else None)
    return out


def read_columns(path):
    """-> the whitespace-separated words of each line of path ([] for a blank line)."""
    with open(path) as f:
        return [line.split() for line in f]


def read_int(path):
    with open(path) as f:
        return int(f.read())


def timed_write(path, value):
    """-> (start_ns, duration_ns) of one write(2) of value to path (CLOCK_MONOTONIC)."""
    fd = os.open(path, os.O_WRONLY)
    try:
        data = f"{value}\n".encode()
        t0 = time.monotonic_ns()
        os.write(fd, data)
        t1 = time.monotonic_ns()
    finally:
        os.close(fd)
    return t0, t1 - t0


def quick_env(m):
    """The environment prefix that reproduces the run described by meta m."""
    return "BENCH_QUICK=1 " if m.get("quick") == "1" else ""


def knob_env(m, defaults):
    """The environment prefix that sets the knobs of the run described by meta m that differ from
    their defaults: defaults is {KNOB: (meta key, default)}."""
    return "".join(f"{k}={shlex.quote(m[key])} " for k, (key, d) in defaults.items() if m.get(key, d) != d)


# How a run that recorded order=arm_order in its meta interleaved its arms (bench/lib.sh).
ARM_ORDER = ("the order of bench/lib.sh's arm_order (a balanced Latin square: each right after each other "
             "equally often over the rounds; two alternate)")


def section_head(title, m):
    """The first lines of a section: its title, and a warning on a smoke run."""
    lines = [f"## {title}", ""]
    if m.get("quick") == "1":
        lines += ["**Smoke run (BENCH_QUICK=1): too short to quote.**", ""]
    return lines


def measured_on(m, cpu_model=True):
    """'Measured DATE on MACHINE[; FRAGD (sha)][, BPFTRACE]' from the meta the scripts write (the
    CPU's model name left out with cpu_model=False; fragd where the run used it)."""
    return (f"Measured {m['date']} on Linux {m['kernel']}, " + (f"{m['cpu_model']}, " if cpu_model else "")
            + f"{m['ncpu']} vCPUs, "
            f"{int(m['mem_total_kib']) // 1024} MiB (VM)"
            + (f"; {m['fragd_version']} (binary sha256 {m['fragd_sha']})" if "fragd_version" in m else "")
            + (f", {m['bpftrace_version']}" if m.get("bpftrace_version") else ""))


def splice(path, name, section):
    """Puts section (markers included) between the NAME markers of path, keeping the rest."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if os.path.exists(path):
        with open(path) as f:
            doc = f.read()
    else:
        doc = "# Benchmarks\n"
    b = doc.find(begin)
    e = doc.find(end)
    if b != -1 and e != -1 and e > b:
        rest = doc[e + len(end):].lstrip("\n")
        doc = doc[:b] + section + ("\n" + rest if rest else "")
    else:
        doc = doc.rstrip("\n") + "\n\n" + section if doc.strip() else section
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(doc)
    os.replace(tmp, path)


def spliced(path, name):
    """-> the section splice put between the NAME markers of path (markers left out), or None."""
    with open(path) as f:
        doc = f.read()
    begin, end = f"<!-- {name}:begin -->\n", f"\n<!-- {name}:end -->"
    b, e = doc.find(begin), doc.find(end)
    return doc[b + len(begin):e + 1] if b != -1 and e >= b + len(begin) - 1 else None


def publish(path, name, lines):
    """Writes a report's section (trailing blank lines dropped) and prints it. For the
    repository's BENCHMARKS.md the section is bench/results/NAME.md and the document is written
    again from those files (bench/doc.py); any other path (a quick run's, BENCH_OUTPUT, or
    RELIABILITY.md) gets it between the NAME markers (splice)."""
    lines = list(lines)
    while lines and lines[-1] == "":
        lines.pop()
    text = "\n".join(lines) + "\n"
    import doc  # bench/doc.py, beside this file
    if os.path.abspath(path) == os.path.join(doc.ROOT, doc.DOC):
        with open(os.path.join(doc.ROOT, doc.RESULTS, name + ".md"), "w") as f:
            f.write(text)
        doc.main(["doc.py"])
    else:
        splice(path, name, f"<!-- {name}:begin -->\n{text}<!-- {name}:end -->\n")
    sys.stdout.write(text)


def read_jsonl(path):
    """The JSON lines of path, or of path.gz (bench/data/soak keeps its samples compressed); []
    when neither exists."""
    if os.path.exists(path):
        f = open(path)
    elif os.path.exists(path + ".gz"):
        f = gzip.open(path + ".gz", "rt")
    else:
        return []
    with f:
        return [json.loads(x) for x in f if x.strip()]


def read_runs(path):
    """The runs of a benchmark's result file: one dict per line of key=value words."""
    runs = []
    with open(path) as f:
        for line in f:
            kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
            if kv:
                runs.append(kv)
    return runs


def numbered_dirs(parent, prefix):
    """-> the paths of parent's PREFIX1, PREFIX2, ... (a round's or a pair's directory), in the order
    of their numbers."""
    paths = glob.glob(os.path.join(parent, glob.escape(prefix) + "[0-9]*"))
    return sorted(paths, key=lambda p: int(os.path.basename(p)[len(prefix):]))


# --- markdown tables ---------------------------------------------------------------

def row(cells):
    """One row of a markdown table: '| a | b |' ('| |' for an empty cell)."""
    return "|" + "|".join(f" {c} " if c != "" else " " for c in cells) + "|"


def table(head, align, rows=()):
    """A markdown table's lines: the head's cells, the rule (align: one letter a column, 'r' for a
    right-aligned one, any other for left) and the rows, each a list of cells."""
    assert len(head) == len(align), (head, align)
    return [row(head), "|" + "".join("---:|" if a == "r" else "---|" for a in align)] + [row(r) for r in rows]


def goal_table(head, rows, intro=None):
    """A table of goals and their verdicts, every column left-aligned, after its intro line and a
    blank one when there is an intro."""
    return ([intro, ""] if intro else []) + table(head, "l" * len(head), rows)


# --- table cells: a figure, or '-' for one not measured -----------------------------

def fmt_lat(ns):
    if ns is None:
        return "-"
    us = ns / 1e3
    if us < 10:
        return f"{us:.1f} µs"
    if us < 1000:
        return f"{us:.0f} µs"
    return f"{us / 1e3:.2f} ms"


def fmt_s(s):
    if s is None:
        return "-"
    if s < 0.01:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.3f} s"


def fmt_int(x):
    return "-" if x is None else f"{x:.0f}"


def fmt_pct(x):
    return "-" if x is None else f"{x * 100:.1f}%"
