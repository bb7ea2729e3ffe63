#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns the raw results of bench/run.sh into the markdown section of BENCHMARKS.md.

Writes the section between <!-- overhead:begin --> and <!-- overhead:end --> of
--output (created if missing; everything outside the markers is kept) and
prints the section on stdout.
"""
import collections
import sys

from benchlib import (knob_env, measured_on, publish, quick_env, read_columns, read_env, required_args,
                      section_head, table)
from verdict import Verdict, median, median_ratio, quantile

GOAL_RATIO = 0.99
GOAL_RSS_MIB = 30
GOAL_BUILD_RATIO = 0.995
GOAL_SCRAPE_MS = 20
NAN = float("nan")


def read_results(path):
    """-> {bench: {round: {arm: (value, flagged, info, pos)}}}"""
    out = {}
    with open(path) as f:
        for line in f:
            bench, rnd, pos, arm, value, flag, info = line.rstrip("\n").split("\t", 6)
            out.setdefault(bench, {}).setdefault(int(rnd), {})[arm] = (
                float(value), flag == "1", info, int(pos))
    return out


def fmt_rate(x):
    if x >= 1e6:
        return f"{x / 1e6:.3f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


# (arm, its untraced partner, name) in the order of the table.
ARMS = (
    ("D", "U1", "fragd, shipped config (bpf.allocations: adaptive)"),
    ("E", "U2", "fragd, bpf.allocations: exact"),
    ("O", "U5", "fragd, bpf.allocations: off"),
    ("L", "U3", "floor: empty tp_btf program on kmem:mm_page_alloc"),
    ("B", "U4", "bpftrace (fragd-equivalent.bt)"),
)
UNTRACED = ("U1", "U2", "U3", "U4", "U5")
NOISE = ("U2", "U1", "untraced (U2/U1 = noise floor)")  # the untraced pair, as an arm of ARMS


def pairs(rounds, traced, base):
    """-> [(round, traced, untraced)] of the rounds that ran both arms, each arm's (value, flagged, info, pos)."""
    return [(r, a[traced], a[base]) for r, a in sorted(rounds.items()) if traced in a and base in a]


def arm_pairs(rounds, traced, base):
    """-> [(traced, untraced)] throughputs of the rounds that ran both."""
    return [(t[0], b[0]) for _, t, b in pairs(rounds, traced, base)]


def round_rows(rounds, arms):
    """-> per round that ran all of arms, the tuple of their throughputs (a bootstrap row)."""
    return [tuple(a[k][0] for k in arms) for _, a in sorted(rounds.items()) if all(k in a for k in arms)]


def ratio_difference(rows):
    """stat over rounds of (X, its untraced, Y, its untraced): median ratio of X minus median ratio of Y."""
    return median([x / u for x, u, _, _ in rows]) - median([y / u for _, _, y, u in rows])


def overhead_goals(rounds):
    """-> the three goal verdicts of one workload: shipped config >= GOAL_RATIO, exact within
    1 point of the floor, shipped config ahead of bpftrace; each over the rounds' pairs."""
    return (Verdict(arm_pairs(rounds, "D", "U1"), median_ratio, GOAL_RATIO, ">=", "pairs"),
            Verdict(round_rows(rounds, ("E", "U2", "L", "U3")), ratio_difference, -0.01, ">=", "rounds"),
            Verdict(round_rows(rounds, ("D", "U1", "B", "U4")), ratio_difference, 0, ">", "rounds"))


def overhead_section(title, unit, rounds, goal_text, what, per_op):
    """-> (lines, {arm: median ratio vs its untraced partner, U2 for the noise floor}) of one workload."""
    lines = [f"| arm | pairs | median {unit} | median ratio vs untraced | 95% CI of the median ratio | "
             f"min ratio | max ratio | median extra ns per {per_op} |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    med, flagged = {}, set()
    for traced, base, name in (NOISE,) + ARMS:
        ps = pairs(rounds, traced, base)
        if not ps:
            continue
        ratios = [t[0] / b[0] for _, t, b in ps]
        med[traced] = median(ratios)
        flagged |= {r for r, t, b in ps if t[1] or b[1]}
        # The noise floor's median throughput is that of all the untraced arms.
        values = [a[k][0] for a in rounds.values() for k in (UNTRACED if traced == "U2" else (traced,)) if k in a]
        v = Verdict(arm_pairs(rounds, traced, base), median_ratio, 1, ">=", "pairs")
        ci = f"{v.lo:.4f}..{v.hi:.4f}" if v.n >= 2 else "-"
        extra_ns = median([(1 / t[0] - 1 / b[0]) * 1e9 for _, t, b in ps])  # per operation: throughputs are ops/s
        lines.append(f"| {name} | {len(ps)} | {fmt_rate(median(values))} | {med[traced]:.4f} | {ci} | "
                     f"{min(ratios):.4f} | {max(ratios):.4f} | {extra_ns:.0f} |")
    noise = [t / b for t, b in arm_pairs(rounds, "U2", "U1")]
    spread = median([abs(x - 1) for x in noise]) if noise else NAN
    d, e, b = overhead_goals(rounds)
    lines += ["", f"Noise floor (untraced vs untraced, same pairing): median ratio {median(noise):.4f}, "
              f"IQR {quantile(noise, 0.25, NAN):.4f}..{quantile(noise, 0.75, NAN):.4f}, "
              f"median |ratio - 1| = {spread * 100:.2f}%.",
              f"Goals ({goal_text}; met / not met only when the 95% bootstrap interval over the rounds clears / "
              f"misses the goal, else inconclusive): shipped config >= {GOAL_RATIO}: {d.text()}; "
              f"exact within 1 point of the floor (median ratio of exact minus the floor's >= -0.01): "
              f"{e.text()}; fragd (shipped config) ahead of bpftrace (difference of median ratios > 0): {b.text()}."]
    if flagged:
        lines.append(f"Caution: in round(s) {', '.join(map(str, sorted(flagged)))} another process (not this "
                     f"benchmark) had BPF programs on these tracepoints during some runs (marked * below); "
                     f"its cost is in both arms of a pair when it stayed for the pair.")
    cols = UNTRACED + tuple(arm for arm, _, _ in ARMS)
    ratio_cols = [(arm, base) for arm, base, _ in ARMS + (NOISE,)]
    lines += ["", f"<details><summary>raw per-pair numbers ({what})</summary>", "", "```",
              "round order      " + " ".join(f"{c:<8}" for c in cols) + " "
              + " ".join(f"{t + '/' + b:<7}" for t, b in ratio_cols)]
    for r, a in sorted(rounds.items()):
        order = "".join(k[1] if k.startswith("U") else k for k in sorted(a, key=lambda k: a[k][3]))
        vals = " ".join(f"{a[k][0]:<8.0f}" if k in a else f"{'-':<8}" for k in cols)
        rat = " ".join(f"{a[t][0] / a[b][0]:<7.4f}" if t in a and b in a else f"{'-':<7}" for t, b in ratio_cols)
        star = "*" if any(v[1] for v in a.values()) else " "
        lines.append(f"{r:>4}{star} {order:<11} {vals} {rat}")
    lines += ["```", "order: D, E, O = fragd adaptive / exact / off, L = floor, B = bpftrace, 1..5 = untraced "
              "U1..U5, in the order they ran.", "</details>"]
    return lines, med


def main():
    args = required_args(None, "--results", "--meta", "--seen", "--builds", "--scrapes", "--fragd-notes",
                         "--output")
    m = read_env(args.meta)
    res = read_results(args.results)
    seen, switched = {}, {}  # per traced arm, per slot: the tracer's count of order-9 allocations; fragd's switch
    for arm, _, n, sw in read_columns(args.seen):
        seen.setdefault(arm, []).append(int(n))
        switched.setdefault(arm, []).append(int(sw))
    builds = {}  # {round: {arm: seconds}}
    for arm, rnd, secs in read_columns(args.builds):
        if arm in ("U", "D"):
            builds.setdefault(int(rnd), {})[arm] = float(secs)
    with open(args.fragd_notes) as f:
        notes = [line.rstrip("\n") for line in f if line.strip()]
    scrapes = read_columns(args.scrapes)  # "seconds bytes", or "fail 0"
    times = [float(t) * 1000 for t, _ in scrapes if t != "fail"]
    sizes = [int(size) for t, size in scrapes if t != "fail"]
    fails = len(scrapes) - len(times)

    cpu = m["cpu"]
    pf_cmd = f"taskset -c {cpu} ./pagefault -m {m['pf_mib']} -t {m['pf_seconds']} -w 2"
    hp_cmd = f"taskset -c {cpu} python3 bench/hugepage_burst.py {m['hp_pages']} {m['hp_cycles']}"
    env = quick_env(m) + knob_env(m, {"BENCH_PAIRS": ("pairs", "2" if m.get("quick") == "1" else "10")})

    L = section_head("Tracing overhead and footprint", m)
    L += [
        measured_on(m) + f". Reproduce everything: `{env}make bench` (= `{env}bash bench/run.sh`, as root, "
        f"after the build; this run took {int(m['runtime_s']) / 60:.1f} min).",
        "",
        f"Method: {m['pairs']} rounds; each round runs ten slots: D (fragd with the shipped "
        f"configs/fragd.yaml, bpf.allocations: adaptive: `build/fragd --config configs/fragd.yaml --listen "
        f"127.0.0.1:PORT --socket PATH`, started before the slot once its start-up pageblock scan has ended, "
        f"SIGTERM after), E (the same with "
        f"`allocations: exact`), O (`allocations: off`), L (the floor of any per-page hook: `bench/floor.c` "
        f"holding an empty tp_btf program on kmem:mm_page_alloc), B (`bpftrace bench/fragd-equivalent.bt`, "
        f"measured only once `bpftool perf list` shows all its {m['bt_tracepoints']} tracepoints attached) and "
        f"U1..U5 (nothing attached), in the order D U1 E U2 L U3 B U4 O U5 on even rounds and reversed on odd "
        f"ones. A slot is one page-fault run, then one hugepage burst. Pairs are adjacent and alternate their "
        f"order: D/U1, E/U2, L/U3, B/U4, O/U5, noise floor U2/U1. Ratio = traced / untraced throughput (1 = "
        f"free, < 1 = slower); extra ns = 1/traced - 1/untraced per operation; the medians are over the "
        f"per-pair figures. The workloads are pinned to CPU {cpu}; the tracers are not.",
        "",
        f"Conditions: load average {m['loadavg_start']} at start, {m['loadavg_end']} at the end; "
        f"vm.compaction_proactiveness={m['proactiveness']}; THP {m['thp_enabled']}; "
        f"spectre_v2: {m.get('spectre_v2', '?')}. "
        f"Other processes on the benchmarked tracepoints at start: {m['foreign_start'] or 'none'}; at the end: "
        f"{m['foreign_end'] or 'none'}"
        + ("" if m.get("have_bpftool") == "1" else " (bpftool missing: not checked)")
        + f". Processes over 1 GiB RSS at the end: {m['other_heavy'] or 'none'}.",
        "",
    ]

    # Page faults
    L += ["### Page faults (order-0 allocation path)", "",
          f"`bench/pagefault.c` (`gcc -O2`), per run: `{pf_cmd}`: one {m['pf_mib']} MiB anonymous region "
          f"(MADV_NOHUGEPAGE), 2 warm-up rounds, then for {m['pf_seconds']} s: write one byte per 4 KiB page, "
          f"MADV_DONTNEED, repeat. One region, one CPU: freed pages go back to that CPU's per-CPU lists and "
          f"are reused, so the guest does not fault on memory the host took back. Throughput = page faults/s "
          f"(getrusage minflt checked equal to pages touched). Every fault allocates one order-0 page: "
          f"kmem:mm_page_alloc fires once per fault; fragd's tp_btf program returns at once (order < 1), "
          f"bpftrace's classic tracepoint builds the trace record first and then filters.", ""]
    L += overhead_section("pf", "faults/s", res["pf"], "order-0 page faults", "page faults/s", "fault")[0] + [""]

    # Hugepages
    hp = res["hp"]
    short = collections.Counter()  # per arm, the untraced ones together as "U"
    for a in hp.values():
        for arm, v in a.items():
            short[arm[0]] += sum(int(tok.split("=")[1]) for tok in v[2].split() if tok.startswith("short_cycles="))
    L += ["### Hugepage burst (order-9 allocations)", "",
          f"Per run: `{hp_cmd}`: {m['hp_cycles']} times, write {m['hp_pages']} to /proc/sys/vm/nr_hugepages "
          f"(only that write(2) is timed), read the pool size back, write 0 (untimed). "
          f"Throughput of a run = {m['hp_pages']} / median time of one growing write (robust to a cycle "
          f"in which the writer was preempted; hugepage_burst.py prints the summed-time figure too). "
          f"Every page is one order-9 kmem:mm_page_alloc, normally on the fast path (unfragmented memory: "
          f"no compaction, no stall).", ""]
    L += overhead_section("hp", "pages/s", hp, "2 MiB hugetlb pool growth", "2 MiB pages/s", "page")[0]
    short_txt = ", ".join(f"{k}: {v}" for k, v in sorted(short.items()) if v) or "none"
    seen_txt = ", ".join(f"{name} {min(seen[arm])}..{max(seen[arm])}"
                         for arm, name in (("E", "fragd exact"), ("B", "bpftrace")) if arm in seen)
    sw = switched.get("D", [])
    L += ["", f"Pool reached {m['hp_pages']} in every cycle except: {short_txt} (short cycles per arm, of "
              f"{int(m['hp_cycles']) * len(hp)} per arm). Order-9 allocations the tracer itself counted per traced "
              f"slot (expected >= {int(m['hp_pages']) * int(m['hp_cycles'])}): {seen_txt}. With the shipped config "
              f"(adaptive), fragd "
              f"switched allocation counting on in {sum(1 for x in sw if x)} of {len(sw)} slots "
              f"(a burst on unfragmented memory does not stall, so counting stays off and the burst costs "
              f"what the slow-path programs cost: nothing on its path).", ""]

    # Realistic workload
    bp = [(r, v["D"], v["U"]) for r, v in sorted(builds.items()) if "D" in v and "U" in v]
    if bp:
        br = [u / d for _, d, u in bp]  # throughput ratio = untraced time / traced time
        L += ["### A realistic workload: a clean build", "",
              f"A clean build of fragd's own core libraries and BPF objects (`cmake -S . -B DIR && cmake --build DIR "
              f"--target {m.get('core_targets', 'fragd_core')} -j {m['ncpu']}`, wall time of the build "
              f"step), {len(bp)} interleaved pairs, untraced and with fragd (shipped config), alternating which runs "
              f"first; one discarded warm-up build.", "",
              *table(["pair", "untraced s", "fragd s", "ratio (untraced / fragd)"], "rrrr",
                     [(r, f"{u:.2f}", f"{d:.2f}", f"{u / d:.4f}") for r, d, u in bp])]
        bv = Verdict([(u, d) for _, d, u in bp], median_ratio, GOAL_BUILD_RATIO, ">=", "pairs")
        L += ["", f"Median ratio {median(br):.4f} (min {min(br):.4f}, max {max(br):.4f}); goal >= {GOAL_BUILD_RATIO}: "
                  f"{bv.text()}.", ""]

    # Footprint
    rss = int(m["rss_kib"]) / 1024
    p99 = quantile(times, 0.99, NAN)

    def ok(v):
        return v.bold() + ("" if v.single or v.n == 0 else f" (95% CI {v.lo:.2f}..{v.hi:.2f} ms, {v.n} scrapes)")
    # The scrapes are the rows of the scrape figures; RSS is one measurement.
    rss_v = Verdict([rss], median, GOAL_RSS_MIB, "<=")
    med_v = Verdict(times, median, GOAL_SCRAPE_MS, "<=", "scrapes")
    p99_v = Verdict(times, lambda xs: quantile(xs, 0.99), GOAL_SCRAPE_MS, "<=", "scrapes")
    L += ["### fragd footprint (observe mode, default config, tick 1 s)", "",
          *table(["measure", "value", "goal", ""], "lrrl", [
              (f"RSS after {m['rss_wait']} s of ticking (VmRSS)", f"{rss:.1f} MiB", f"<= {GOAL_RSS_MIB} MiB",
               ok(rss_v)),
              (f"/metrics scrape time, median of {len(times)}", f"{median(times):.2f} ms", f"<= {GOAL_SCRAPE_MS} ms",
               ok(med_v)),
              ("/metrics scrape time, p99", f"{p99:.2f} ms", f"<= {GOAL_SCRAPE_MS} ms", ok(p99_v)),
              ("/metrics size of one scrape", f"{median(sizes) if sizes else 0:.0f} bytes", "", "")]),
          "",
          f"Commands: fragd started alone (`build/fragd --config configs/fragd.yaml --listen 127.0.0.1:PORT "
          f"--socket PATH`); after {m.get('rss_wait', '30')} s `grep VmRSS /proc/PID/status`; then "
          f"`curl -s -o /dev/null -w '%{{time_total}} %{{size_download}}' http://127.0.0.1:PORT/metrics` "
          f"{len(times) + fails} times in a row (loopback, curl's own connect included"
          + (f"; {fails} failed" if fails else "") + "). "
          f"fragd's own fragd_collector_tick_seconds (last tick) read before the scrapes: "
          f"{float(m.get('tick_seconds') or 'nan') * 1e3:.2f} ms. "
          f"Reading /proc/pagetypeinfo (which fragd does once per pagetypeinfo_interval, 60 s by default) took "
          f"{m['pagetypeinfo_ms']} ms here at the time (median of 5 reads). "
          f"RSS later: {int(m['rss_kib_after_scrapes']) / 1024:.1f} MiB after the scrapes (VmHWM "
          f"{int(m['hwm_kib_after_scrapes']) / 1024:.1f} MiB); {m['threads']} threads. fragd's CPU on a quiet and a "
          f"busy host: the cost section (`bash bench/cost.sh`).",
          ""]

    # fragd behaviour
    L += [f"fragd was started {m['fragd_starts']} times ({m['fragd_programs']} BPF programs attached each time); "
          f"exits with a status other than 0: {m['fragd_bad_exits']}. "
          + (f"Non-info lines in its log: {len(notes)}, first: `{notes[0][:200]}`." if notes
             else "Its log has info lines only.")]
    if m.get("bpftrace_rlimit_msg"):
        L += ["", "bpftrace prints `couldn't set RLIMIT_MEMLOCK` at start on this machine (the limit cannot be "
                  "raised here); harmless: the kernel charges BPF memory to the cgroup, and all its probes attach."]
    publish(args.output, "overhead", L)
    return 0


if __name__ == "__main__":
    sys.exit(main())
