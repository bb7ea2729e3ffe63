#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns the raw results of bench/act.sh into the act section of BENCHMARKS.md.

    act_report.py --work DIR --output FILE
    act_report.py --work DIR --name      prints the section's name (what bench/act.sh keeps the data as)

Reads DIR/meta.env, DIR/runs.tsv and each run's directory (fragd /metrics,
/proc/vmstat and /proc/buddyinfo snapshots s0..s4, the burst's JSON or thpfault
output, bpftrace's per-allocation latencies, the settle watch, fragd's log).
Every (scenario, mode) ran once per round; each cell is the median over the
rounds with the lowest and highest value. Writes the section between
<!-- act:begin --> and <!-- act:end --> of FILE (created if missing, the rest
kept) and prints it on stdout. Every goal verdict is computed here from the
measured medians.
"""
import argparse
import json
import os
import re
import sys

from act_goals import GOAL_MIGRATED_VS_IDEAL, GOAL_MIGRATED_VS_K90, GOAL_STALL_FRAC, goals_for, over
from benchlib import (ARM_ORDER, fmt_int, fmt_lat, fmt_pct, fmt_s, free_2m_blocks, knob_env, measured_on, prom_sum,
                      publish, quick_env, read_env, read_prom, read_vmstat, row, section_head, table)
from verdict import median, quantile, spread

MODE_NAMES = {"ondemand": "on demand (proactiveness 0)", "kernel20": "kernel proactive 20",
              "kernel90": "kernel proactive 90", "manual": "one manual compaction", "hugeadm": "hugeadm --hard",
              "fragd": "fragd act (shipped policy)", "defrag": "vm.defrag_mode=1 (proactiveness 20)",
              "defrag_fragd": "vm.defrag_mode=1 + fragd act"}
MODES = list(MODE_NAMES)
SCENARIOS = ["fixed", "free", "thp", "pool"]
SNAPS = ("s0", "s1", "s2", "s3", "s4")
WINDOWS = (("s0", "s1"), ("s1", "s2"), ("s2", "s3"))  # fragmenting, wait, burst

# The task that makes each burst's allocations (by scenario "thp", else by mode): its comm.
BURST_TASK = {"thp": "thpfault", "hugeadm": "hugeadm"}

# --- one run --------------------------------------------------------------------------

class Run:
    """One run: its directory's files (bench/act.sh's run_one) and the figures read off them."""

    def __init__(self, rnd, pos, scenario, mode, d, m):
        self.round, self.pos, self.scenario, self.mode, self.dir = rnd, pos, scenario, mode, d
        self.env = read_env(self.path("run.env"), missing_ok=True)
        self.snap = {s: read_prom(self.path(f"{s}.prom")) for s in SNAPS}
        self.vm = {s: read_vmstat(self.path(f"{s}.vmstat")) for s in SNAPS}
        with open(self.path("times")) as f:
            self.times = {k: int(v) for k, v in map(str.split, f)}
        self.burst, self.compact, self.settle = (self._read(n, json.load)
                                                 for n in ("burst.json", "compact.json", "settle.json"))
        self.thp = self._read("thp.out", lambda f: {k: int(v) for k, v in (t.split("=") for t in f.read().split())})
        self.lat, self.lat_failed, self.bt_writes = self._latencies()
        self._compute(m)

    def path(self, name):
        return os.path.join(self.dir, name)

    def _read(self, name, parse, **kw):
        """-> parse(the run's file name, open), or None when it is missing."""
        if not os.path.exists(self.path(name)):
            return None
        with open(self.path(name), **kw) as f:
            return parse(f)

    def _latencies(self):
        """-> (latencies in ns in order, failed attempts, write calls) or ([], 0, 0): thpfault's, else
        bpftrace's (bench/act_alloc.bt)."""
        thp = self._read("thp.lat", lambda f: [int(x) for x in f if x.strip()])
        if thp is not None:
            return thp, 0, 0
        lat, failed, writes = {}, set(), 0
        for line in self._read("bt.out", list) or []:
            if mt := re.match(r"^@lat\[(\d+)\]: (\d+)", line):
                lat[int(mt.group(1))] = int(mt.group(2))
            elif mt := re.match(r"^@failed\[(\d+)\]: 1", line):
                failed.add(int(mt.group(1)))
            elif mt := re.match(r"^@writes: (\d+)", line):
                writes = int(mt.group(1))
        return [lat[i] for i in sorted(lat)], len(failed), writes

    def d_prom(self, a, b, name, **want):
        return prom_sum(self.snap[b], name, **want) - prom_sum(self.snap[a], name, **want)

    def d_prom_by(self, a, b, name, *keys):
        """-> {(label values of keys): change of name from snapshot a to b}, the non-zero ones."""
        out = {}
        for n, l, v in self.snap[b]:
            if n == name and (d := v - sum(v0 for n0, l0, v0 in self.snap[a] if n0 == n and l0 == l)):
                key = tuple(l.get(k, "?") for k in keys)
                out[key] = out.get(key, 0) + d
        return out

    def d_vm(self, a, b, key):
        if not self.vm[a] or not self.vm[b]:
            return None
        return self.vm[b].get(key, 0) - self.vm[a].get(key, 0)

    def direct_entries(self):
        """-> {task: entries into direct compaction over the burst} (act_trace.sh's direct_entries)."""
        out = {}
        for part in self.env.get("direct_entries", "").split(";"):
            task, _, n = part.strip().rpartition(" ")
            if task and n.isdigit():
                out[task] = out.get(task, 0) + int(n)
        return out

    def _burst_vm(self, key):
        """The change of a /proc/vmstat counter over the burst alone (read by act_burst.py, or by the
        shell around thpfault), or None."""
        b = self.burst or {}
        if "vmstat_before" in b and "vmstat_after" in b:
            return b["vmstat_after"].get(key, 0) - b["vmstat_before"].get(key, 0)
        b0, b1 = read_vmstat(self.path("b0.vmstat")), read_vmstat(self.path("b1.vmstat"))
        return b1.get(key, 0) - b0.get(key, 0) if b0 and b1 else None

    def _compute(self, m):
        counts = self.thp or self.burst or {}  # thpfault's, or act_burst.py's
        self.requested, self.granted = counts.get("requested"), counts.get("granted")
        self.wall_s = counts["wall_ns"] / 1e9 if "wall_ns" in counts else None
        self.share = self.granted / self.requested if self.requested and self.granted is not None else None
        self.compact_s = self.compact["wall_ns"] / 1e9 if self.compact else None
        self.have_metrics = all(self.snap[s] for s in ("s0", "s2", "s3"))
        # Stalls as fragd counts them: from its last tick before the burst to its first after (s2 -> s3).
        # Order 9 as fragd labels it: alone where metrics.orders lists 10, or in the shipped
        # config's group "9-10" (no scenario here allocates order 10).
        o9 = "9" if any(n == "fragd_alloc_total" and l.get("order") == "9" for n, l, _ in self.snap["s3"]) else "9-10"
        self.stalled9, self.failed9 = (self.d_prom("s2", "s3", "fragd_alloc_total", order=o9, outcome=o)
                                       for o in ("stalled", "failed"))
        self.attempts9 = self.d_prom("s2", "s3", "fragd_alloc_total", order=o9)
        # Share of the burst: of the order-9 attempts fragd saw, or of the pages granted when it
        # saw fewer (its adaptive counting may switch on during the burst).
        denom = max(self.attempts9, self.granted or 0)
        self.stall_frac = self.stalled9 / denom if self.have_metrics and denom > 0 else None
        self.compact_stall = self._burst_vm("compact_stall")
        # Stalls as the kernel records them: the burst's own task's entries into direct compaction
        # (tracefs, act_trace.sh), per page requested; compact_stall over the burst (any task,
        # skipped zones left out) where the run has no trace.
        traced = "direct_entries" in self.env
        self.kernel_stalls_how = "tracefs" if traced else "compact_stall"
        task = BURST_TASK.get("thp" if self.scenario == "thp" else self.mode, "act_burst")
        self.kernel_stalls = self.direct_entries().get(task, 0) if traced else self.compact_stall
        self.kernel_stall_frac = (self.kernel_stalls / self.requested
                                  if self.kernel_stalls is not None and self.requested else None)
        self.migrated_burst = self._burst_vm("pgmigrate_success")
        # Costs: from just before fragmenting (s0) to the end of the burst (s3), and to s4
        # when the run waited for the kernel's compaction to settle.
        self.migrated = self.d_vm("s0", "s3", "pgmigrate_success")
        self.migrated_settled = self.d_vm("s0", "s4", "pgmigrate_success") if self.settle else None
        self.migrated_split = [self.d_vm(a, b, "pgmigrate_success") for a, b in WINDOWS]
        dur = "fragd_compaction_duration_seconds_sum"
        self.comp_s = self.d_prom("s0", "s3", dur) if self.have_metrics else None
        self.comp_split = [self.d_prom(a, b, dur) for a, b in WINDOWS]
        triggers = sorted({l.get("trigger") for n, l, _ in self.snap["s3"] if n == dur})
        self.comp_by_trigger = {t: self.d_prom("s0", "s3", dur, trigger=t) for t in triggers}
        self.migr_by_trigger = {t: self.d_prom("s0", "s3", "fragd_compaction_pages_migrated_total", trigger=t)
                                for t in triggers}
        self.runs_by_status = self.d_prom_by("s0", "s3", "fragd_compaction_runs_total", "trigger", "status")
        self.actions = self.d_prom_by("s0", "s3", "fragd_actions_total", "action", "result")
        self.free_ready = free_2m_blocks(self.path("s1.buddyinfo"))
        self.free_burst = free_2m_blocks(self.path("s2.buddyinfo"))
        # The ideal: each missing free 2 MiB block made by moving the pages the fragmenter
        # kept in one block (512 / keep), nothing else.
        want = self.requested if self.scenario in ("fixed", "thp", "pool") else None
        self.ideal = (max(0, want - self.free_ready) * (512 // int(m.get("keep", 4)))
                      if want is not None and self.free_ready is not None else None)
        self.p50, self.p90, self.p99 = (quantile(self.lat, q) for q in (0.5, 0.9, 0.99))
        self.wait_s = (self.times["burst"] - self.times["ready"]) / 1e6 if "burst" in self.times else None
        self.fragd_log_notes = []  # its warning and error lines
        self.pool_steps = []  # (writes, node compactions) of each pool action fragd logged
        for line in self._read("fragd.log", list, errors="replace") or []:
            if re.match(r"^<[0-4]>", line):
                self.fragd_log_notes.append(line.rstrip("\n"))
            if mt := re.match(r"^<\d>action \d+ pool .* (\d+) writes, (\d+) compactions", line):
                self.pool_steps.append((int(mt.group(1)), int(mt.group(2))))


def load(work, m):
    runs = []
    with open(os.path.join(work, "runs.tsv")) as f:
        for line in f:
            rnd, pos, sc, mode, d = line.rstrip("\n").split("\t")
            # runs.tsv names each run's directory where the run wrote it; a kept copy
            # (bench/data/act/NAME) holds the same directories beside runs.tsv.
            runs.append(Run(int(rnd), int(pos), sc, mode, os.path.join(work, os.path.basename(d)), m))
    return runs


def group(runs):
    """-> {(scenario, mode): [runs in round order]}."""
    out = {}
    for r in sorted(runs, key=lambda r: r.round):
        out.setdefault((r.scenario, r.mode), []).append(r)
    return out


# --- tables ---------------------------------------------------------------------------

def scenario_title(sc, m):
    p = m["pages"]
    return {
        "fixed": f"(a) one write of {p} to /proc/sys/vm/nr_hugepages",
        "free": "(b) one write of MemFree / 2 MiB to /proc/sys/vm/nr_hugepages (as many as free memory allows)",
        "thp": f"(c) THP faults: {p} MADV_HUGEPAGE 2 MiB regions faulted one at a time",
        "pool": f"(d) pool preallocation to {p} x 2 MiB right after fragmentation",
    }[sc]


def granted_cell(rs):
    req = median((r.requested for r in rs), None)
    if req is None:
        return "-"
    approx = "" if len({r.requested for r in rs}) == 1 else "~"
    return f"{over(rs, 'granted')} / {approx}{req:.0f}: {over(rs, 'share', fmt_pct)}"


def wall_cell(rs):
    if any(r.compact_s is not None for r in rs):
        return f"{over(rs, 'compact_s', fmt_s)} compaction + {over(rs, 'wall_s', fmt_s)}"
    return over(rs, "wall_s", fmt_s)


def scenario_table(sc, G, m):
    rows = [(mo, G[(sc, mo)]) for mo in MODES if (sc, mo) in G]
    settle = any(r.settle for _, rs in rows for r in rs)
    head = ["mode", "runs", "free 2 MiB blocks at ready / at burst", "granted", "stalled (fragd, order 9)",
            "compact_stall (burst)", "per allocation p50", "p90", "p99", "pages migrated"]
    head += ["pages migrated, settled"] * settle + ["compaction time", "wall"]
    L = [f"### {scenario_title(sc, m)}", "", *table(head, "l" + "r" * (len(head) - 1))]
    for mo, rs in rows:
        stalled = (f"{over(rs, 'stalled9')}: {over(rs, 'stall_frac', fmt_pct)}" if all(r.have_metrics for r in rs)
                   else "no metrics")
        cells = [MODE_NAMES[mo], str(len(rs)), f"{over(rs, 'free_ready')} / {over(rs, 'free_burst')}",
                 granted_cell(rs), stalled, over(rs, "compact_stall"),
                 *(over(rs, q, fmt_lat) for q in ("p50", "p90", "p99")), over(rs, "migrated")]
        if settle:
            cells.append(over(rs, "migrated_settled") if any(r.settle for r in rs) else "-")
        L.append(row(cells + [over(rs, "comp_s", fmt_s), wall_cell(rs)]))
    L.append("")
    skipped = m.get("skipped", "").split()
    if skipped and sc != "pool":
        L += [f"Not run: {', '.join(MODE_NAMES[s] for s in skipped if s in MODE_NAMES)}: /proc/sys/vm/defrag_mode "
              f"does not exist on this kernel.", ""]
    L += [f"Commands (after `fragmenter --percent {m['percent']}` printed \"ready\"):", ""]
    for mo, rs in rows:
        when = "at once" if sc == "pool" else f"{spread([r.wait_s for r in rs], lambda s: f'{s:.1f} s')} after ready"
        L.append(f"- {MODE_NAMES[mo]}: `{rs[0].env.get('prep_cmd', '?')}`, then {when}: "
                 f"`{rs[0].env.get('burst_cmd', '?')}`")
    return L + [""]


def goals_table(G, m, scenarios):
    L = ["### Goals for fragd's shipped policy in act mode", "",
         "From the medians above; the figures in parentheses are the lowest and highest run.", "",
         *table(["scenario", "goal", "fragd act", "reference", ""], "llrrl")]
    for sc in scenarios:
        L += [row([scenario_title(sc, m).split(" ")[0], *g]) for g in goals_for(sc, G, m)]
    L.append("")
    return L


def by_labels(changes):
    """'a/b N, ...' of Run.d_prom_by's {(a, b): N}."""
    return ", ".join(f"{a}/{b} {v:.0f}" for (a, b), v in sorted(changes.items()))


def details(runs):
    L = ["<details><summary>per-run details (order, windows, compaction by trigger, fragd's actions, logs)</summary>",
         "", "```"]
    key = {(sc, mo): (SCENARIOS.index(sc), MODES.index(mo)) for sc in SCENARIOS for mo in MODES}
    for r in sorted(runs, key=lambda r: (key[(r.scenario, r.mode)], r.round)):
        e = r.env
        mib = lambda k: int(e.get(k, 0)) // 1024  # noqa: E731
        att = int(e.get("fragment_attempts", 1))
        earlier = ", ".join(f"{int(e[f'attempt{i}_kept_kib']) // 1024}" for i in range(1, att))
        L.append(f"[{r.scenario}/{r.mode} round {r.round + 1}, #{r.pos + 1} of its round] fragmenter kept "
                 f"{mib('ready_kib')} MiB" + (f" (attempt {att}; earlier ones kept {earlier} MiB)" if att > 1 else "")
                 + (" WEAK: below 90% of the expected size every time" if e.get("weak_fragmentation") else "")
                 + f"; free 2 MiB blocks at ready {fmt_int(r.free_ready)}, at burst {fmt_int(r.free_burst)}"
                 + (f", ideal {r.ideal}" if r.ideal is not None else "")
                 + f"; at the burst MemFree {mib('mem_free_kib_burst')} MiB, MemAvailable "
                 f"{mib('mem_available_kib_burst')} MiB; wait {'-' if r.wait_s is None else f'{r.wait_s:.1f} s'}"
                 + (f" (+{e['pool_wait_s']} s for an empty pool)" if e.get("pool_wait_s", "0") != "0" else "")
                 + f"; load {e.get('loadavg', '?')}; config {e.get('fragd_config', '?')}; defrag_mode "
                 f"{e.get('defrag_mode') or '-'}")
        L.append(f"    order-9 in burst (fragd): {r.attempts9:.0f} attempts, {r.stalled9:.0f} stalled, "
                 f"{r.failed9:.0f} failed; compact_stall {fmt_int(r.compact_stall)}, pgmigrate_success "
                 f"{fmt_int(r.migrated_burst)} in the burst alone; latencies recorded {len(r.lat)}"
                 + (f" ({r.lat_failed} failed, {r.bt_writes} write calls)" if r.bt_writes else ""))
        L.append("    compaction time fragmenting / wait / burst: " + " / ".join(f"{x:.3f}" for x in r.comp_split)
                 + " s; by trigger: " + ", ".join(f"{t} {v:.3f}" for t, v in r.comp_by_trigger.items() if v))
        L.append("    pgmigrate_success fragmenting / wait / burst: " + " / ".join(map(fmt_int, r.migrated_split))
                 + "; fragd's migrated by trigger: "
                 + ", ".join(f"{t} {v:.0f}" for t, v in r.migr_by_trigger.items() if v))
        if r.settle:
            s = r.settle
            L.append(f"    after the burst: {'settled' if s['settled'] else 'NOT settled'} ({s['reason']}) after "
                     f"{s['waited_s']:.1f} s, last migration {s['last_growth_s']:.1f} s in, "
                     f"{s['pgmigrate_end'] - s['pgmigrate_start']} pages more; node scores "
                     + ", ".join(f"{n}: {v:.0f}" for n, v in sorted(s.get("scores", {}).items()))
                     + f" (threshold {s['high']:.0f})")
        if "deferred_checks" in e:
            L.append(f"    the kernel's deferral in the burst: {e['deferred_checks']} zone checks deferred"
                     + (f" (the last: {e['deferred_last']})" if e.get("deferred_last") else "")
                     + f", {e.get('defers', '?')} deferrals begun, {e.get('defer_resets', '?')} resets"
                     + (f"; compaction runs ended (mode/status): {e['compaction_ends']}" if e.get("compaction_ends")
                        else "")
                     + (f"; {e['trace_lost']} trace events LOST" if e.get("trace_lost", "0") != "0" else ""))
        if "pagecache_kib" in e:
            L.append(f"    page cache (Cached) before fragmenting: {mib('pagecache_kib')} MiB")
        if "undefer_writes" in e:
            u = e["undefer_writes"]
            L.append("    before the run: order-9 deferral "
                     + (f"ended at pool write {u}" if u.isdigit() else f"NOT ended ({u} pool writes made a page)")
                     + f" ({e.get('undefer_ms', '?')} ms; node_unreclaimable "
                     f"{e.get('undefer_node_unreclaimable', '?')})")
        if e.get("compaction_scan") or "kswapd_wakes" in e:
            L.append("    compaction scanners in the burst: " + (e.get("compaction_scan") or "no compaction run")
                     + f"; kswapd woke {e.get('kswapd_wakes', '?')} times, slept {e.get('kswapd_sleeps', '?')}"
                     + (f"; node_unreclaimable {e['node_unreclaimable']} at the burst" if "node_unreclaimable" in e
                        else ""))
        if r.runs_by_status:
            L.append("    compaction runs (trigger/status): " + by_labels(r.runs_by_status))
        if r.actions:
            L.append("    fragd actions: " + by_labels(r.actions)
                     + "".join(f"; a pool action's pool writes {w}, node compactions {c}" for w, c in r.pool_steps))
        if r.burst and "exit_status" in r.burst:
            L.append(f"    command exit status {r.burst['exit_status']}, its own wall "
                     f"{r.burst['cmd_wall_ns'] / 1e9:.3f} s, pool max {r.burst.get('max_pool')}"
                     + (f", stderr: {r.burst['stderr'].strip()[:160]!r}" if r.burst.get("stderr", "").strip()
                        else ""))
        L.append(f"    fragd exit status {e.get('fragd_exit', '?')}; vm.compaction_proactiveness after it "
                 f"{e.get('proactiveness_after_fragd', '?')}; pool after it "
                 f"{e.get('pool_after_fragd', '?')}; warn/error log lines {len(r.fragd_log_notes)}"
                 + (f", first: {r.fragd_log_notes[0][:200]}" if r.fragd_log_notes else ""))
    L += ["```", "</details>"]
    return L


def method(m):
    env = quick_env(m) + knob_env(m, {"BENCH_ACT_SCENARIOS": ("scenarios", " ".join(SCENARIOS)),
                                      "BENCH_ACT_MODES": ("modes", " ".join(MODES)),
                                      "BENCH_ACT_REPEATS": ("repeats", "1" if m.get("quick") == "1" else "3"),
                                      "BENCH_ACT_PAGECACHE": ("pagecache_mib", "0"),
                                      "BENCH_ACT_UNDEFER": ("undefer", "0")})
    P, W, R = m["percent"], m["wait"], int(m["repeats"])
    per_block = 512 // int(m.get("keep", 4))
    dfm = m.get("defrag_mode_orig", "absent")
    defrag_mode = "no vm.defrag_mode (this kernel has none)" if dfm == "absent" else f"vm.defrag_mode {dfm}"
    undefer = ("Before each run, before fragd starts, memory is fragmented the same way once more and the kernel's "
               "order-9 direct compaction deferral ended there (`BENCH_ACT_UNDEFER=1`: the hugetlb pool grown one "
               "page past the free 2 MiB blocks, emptied after each write, until compact_success rises, at most 200 "
               "writes; tests/tools/fragmenter.sh undefer_order9); then that fragmenter is stopped. "
               if m.get("undefer") == "1" else "")
    pagecache = (f"Before each run's fragmentation, {m['pagecache_mib']} MiB of clean page cache is made (a file on "
                 "/var/tmp written with dd and fsync, removed after the run; `BENCH_ACT_PAGECACHE`): the "
                 "fragmenter's memory then comes partly from reclaim that frees something, so kswapd does not give "
                 "up on the node. "
                 if m.get("pagecache_mib", "0") != "0" else "")
    order = (ARM_ORDER if m.get("order") == "arm_order" else
             f"an order rotated by r x n / {R} places and reversed in odd rounds (two modes alternate)")
    rounds = (f"Rounds: round r runs every mode of every scenario once, the modes in {order}, so that no mode always "
              "follows the same one: the kernel keeps compaction state from one run to the next (compaction deferred "
              "after failures, cached scanner positions, pageblock skip hints), and the rows that compact on demand "
              "vary a lot from run to run. Each cell is the median of the runs, with the lowest and highest in "
              "parentheses when they differ; the per-run details say which run came where."
              if R > 1 else
              "One round: each cell is one run, too few to read much into (the kernel keeps compaction state from "
              "one run to the next, and the rows that compact on demand vary a lot from run to run). The full "
              "benchmark runs 3 rounds and reports medians.")
    return [
        f"{measured_on(m)}, hugeadm (libhugetlbfs-bin {m['hugeadm_version']}); THP enabled {m['thp_enabled']}, "
        f"defrag {m['thp_defrag']}; on the host vm.compaction_proactiveness {m['proactiveness_orig']} and "
        f"{defrag_mode}. Reproduce: `{env}make bench-act` (or `{env}bash bench/act.sh` as root after the build; "
        f"`make bench` runs it with the other benchmarks). This run took {int(m['runtime_s']) / 60:.1f} min, load "
        f"average {m['loadavg_start']} at start, {m['loadavg_end']} at the end.",
        "",
        f"Every row after the same fragmentation, {'once' if R == 1 else f'{R} times'}. Each run: vm.defrag_mode is "
        "set (1 for the two defrag_mode rows, 0 for all others) and vm.compaction_proactiveness to 0; fragd starts "
        "(observe mode; for the fragd rows act mode, the shipped configs/fragd.yaml with only `mode: observe` "
        f"changed to `mode: act`); then `fragmenter --percent {P}` (tests/tools/fragmenter.c) maps {P}% of "
        "MemAvailable in 4 KiB pages, touches them and frees 3 of every 4 pages in each 2 MiB chunk; when it prints "
        "\"ready\" the mode's preparation runs (a proactiveness value: 20 or 90 for the kernel rows, 20, the "
        f"kernel's default, for the defrag_mode rows; or one manual compaction), and the burst starts {W} s after "
        "\"ready\" (at once for the pool scenario), from an empty pool (a fragd in act mode may hold a temporary "
        "pool of its own for a while: the burst waits until it is given back; the details show any wait). "
        "vm.defrag_mode is on from before fragmenting, as the kernel's documentation (admin-guide/sysctl/vm.rst) "
        "advises enabling it right after boot; fragd in act mode, too, runs from before fragmenting. Other processes "
        "on this machine come and go: a fragmentation starts only when MemAvailable is at least 90% of its value at "
        f"the start of the benchmark ({int(m.get('mem_available_kib_ref', 0)) // 1024} MiB), and is redone (at most "
        f"twice) when the fragmenter kept less than 90% of the expected {P}% / 4 of that. {P}% of MemAvailable was "
        "touched once before the first run (the guest's memory is initialised at first use). "
        f"{undefer}{pagecache}After each run the fragmenter and fragd are stopped, the pool emptied, and the host's "
        "proactiveness and defrag_mode put back; each run holds /tmp/fragd-heavy.lock.",
        "",
        rounds,
        "",
        "Columns. free 2 MiB blocks: free memory in whole 2 MiB blocks (orders >= 9, all zones, from "
        "/proc/buddyinfo) at \"ready\" and at the end of the wait (2 s before the burst; at \"ready\" for the pool "
        "scenario): the first is the fragmentation each run starts from, the second what the preparation left for "
        "the burst. granted: pages in the pool after the write (read back), or for THP the mapping's AnonHugePages / "
        "2 MiB. stalled (fragd): the delta of `fragd_alloc_total{order=\"9-10\",outcome=\"stalled\"}` (the shipped "
        "metrics.orders' group; `order=\"9\"` where it lists 10) from fragd's last collector tick before the burst "
        "to its first after it, with its share of the order-9 allocations of the burst (the attempts fragd counted, "
        "or the pages granted when it counted fewer); fragd keeps the stalls of its own writes (a temporary pool it "
        "grows to compact) out of that counter. compact_stall (burst): the /proc/vmstat delta read by the bursting "
        "process right before and right after its timed part (by the shell around thpfault), so it counts the burst "
        "alone, but every direct compaction in that time, fragd's own included. The stall goals count with the "
        "kernel's record: the entries of the burst's own task (thpfault, act_burst.py or hugeadm) into direct "
        "compaction, from the tracefs instance over the burst (compaction:mm_compaction_try_to_compact_pages, one "
        "per allocation that entered it; bench/act_trace.sh), per page requested; compact_stall (burst) where a run "
        "has no trace. Per allocation, hugetlb: bench/act_alloc.bt (bpftrace) takes the order-9 kmem:mm_page_alloc "
        "events of the writing task (act_burst.py, or hugeadm) and times each from the previous one, the first of "
        "each write(2) from the write's start: each allocation's latency plus a few µs of pool work; failed attempts "
        "count too; each run's quantiles, then their median. THP: bench/thpfault.c times each first touch of a 2 MiB "
        "region from user space: fault, allocation, zeroing, and on this VM the host's own fault on memory it took "
        "back, so these are noisy (DESIGN.md, machine caveats) while counts are not. pages migrated: /proc/vmstat "
        "pgmigrate_success from just before fragmenting to the end of the burst, so that work done while waiting, "
        "and fragd's while memory was being fragmented, counts. pages migrated, settled (rows that leave proactive "
        "compaction on or fragd acting): from the same start until compaction settled after the burst, the "
        "fragmenter still holding its memory: pgmigrate_success watched every 0.5 s until it did not grow for 3 s "
        f"(with fragd acting: {m.get('settle_quiet_fragd', '?')} s, the policy's compaction.min_interval + 5 s, so "
        "that fragd's next action would have come) with every node's fragmentation score at or below the kernel's "
        "proactive threshold for the proactiveness in force (min(max(100 - proactiveness, 5) + 10, 100); none at 0), "
        "or did not grow for 40 s (longer than the kernel's longest proactive back-off, 64 x 500 ms), at most "
        f"{m.get('settle_max')} s. compaction time: the sum over all triggers of fragd's "
        "`fragd_compaction_duration_seconds_sum` (time inside zone compaction runs: direct, kcompactd, proactive, "
        "manual writes, fragd's writes), over the same window as pages migrated. wall: the burst (the write(2), the "
        "hugeadm or fragctl process until the pool stopped growing, or all THP faults); for the manual row, the "
        "compaction write's own time first.",
        "",
        f"Goals: (a) and (c): 100% granted, <= {GOAL_STALL_FRAC * 100:.0f}% stalled, pages migrated <= "
        f"{GOAL_MIGRATED_VS_K90:g}x kernel 90's in the same benchmark (at the burst, and both once compaction "
        f"settled) and <= {GOAL_MIGRATED_VS_IDEAL:g}x the ideal, where ideal = max(0, {m['pages']} - free 2 MiB "
        f"blocks at \"ready\") x {per_block} ({per_block} = the pages the fragmenter keeps in one 2 MiB block: "
        "moving them frees the block), the median over fragd's runs; (b): a granted share at least hugeadm --hard's, "
        f"<= {GOAL_STALL_FRAC * 100:.0f}% stalled; (d): wall time and pages migrated at most hugeadm --hard's. Each "
        "verdict compares medians, with a 95% percentile bootstrap interval over the rounds (bench/verdict.py; a "
        "comparison of two modes resamples whole rounds, both modes' runs of a round together; the interval shown is "
        "of median(fragd) - factor x median(reference), or of the median itself): met / not met only when the "
        "interval clears / misses the goal, else inconclusive.",
        "",
    ]


def section_name(scenarios, m):
    """bench/results/NAME.md of a run: "act" for every scenario, else "act-" and its scenarios,
    "-pagecache" or "-undefer" for those settings: a later run of the same replaces it."""
    name = "act" if scenarios == SCENARIOS else "act-" + "+".join(scenarios)
    if m.get("pagecache_mib", "0") != "0":
        name += "-pagecache"
    if m.get("undefer") == "1":
        name += "-undefer"
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--output", help="the file the section goes to")
    ap.add_argument("--name", action="store_true", help="print the section's name (bench/results/NAME.md) only")
    args = ap.parse_args()
    if not args.output and not args.name:
        ap.error("--output FILE or --name")
    m = read_env(os.path.join(args.work, "meta.env"), missing_ok=True)
    with open(os.path.join(args.work, "runs.tsv")) as f:  # rnd, pos, scenario, mode, directory
        ran = {line.split("\t")[2] for line in f}
    scenarios = [sc for sc in SCENARIOS if sc in ran]
    if args.name:
        print(section_name(scenarios, m))
        return 0
    runs = load(args.work, m)
    G = group(runs)
    title = "Acting on fragmentation: fragd vs the kernel, vm.defrag_mode, a manual compaction and hugeadm"
    if scenarios != SCENARIOS:
        others = [MODE_NAMES[mo] for mo in MODES if mo != "fragd" and mo in {x for _, x in G}]
        title = (f"Acting on fragmentation, {', '.join(scenario_title(sc, m).split(' ')[0] for sc in scenarios)}: "
                 f"fragd against {', '.join(others)}")
    # The settings that name a section apart (section_name) name its title apart too.
    if m.get("pagecache_mib", "0") != "0":
        title += f", with {m['pagecache_mib']} MiB of page cache"
    if m.get("undefer") == "1":
        title += ", compaction undeferred before each run"
    L = section_head(title, m) + method(m)
    for sc in scenarios:
        L += scenario_table(sc, G, m)
    publish(args.output, section_name(scenarios, m), L + goals_table(G, m, scenarios) + details(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
