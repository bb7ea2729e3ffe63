#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The load section of RELIABILITY.md from a bench/load.sh work directory.

usage: load_report.py --work DIR --output FILE

Reads meta.env (the run) and, per phase directory (main, and control when it ran):
phase.env, ab.out and ab.csv (ab's summary and its percentiles), clients.tsv
(bench/load_clients.py), monitor.jsonl (bench/procmon.py), before.prom and
after.prom (scrapes around the load) and fragd.notes (fragd's log lines other than
info). Prints the section and writes it between <!-- load:begin --> and
<!-- load:end --> of FILE. Exit status 0 whatever the goals: the section says
which are met.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (CPU_KEYS, cpu_pct, knob_env, measured_on, prom_value, publish, quick_env, read_env,  # noqa: E402
                      read_jsonl, read_prom, required_args, section_head, table)
from verdict import checked, quantile  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def parse_ab(path):
    out = {}
    pats = {
        "complete": r"^Complete requests:\s+(\d+)",
        "failed": r"^Failed requests:\s+(\d+)",
        "non2xx": r"^Non-2xx responses:\s+(\d+)",
        "taken_s": r"^Time taken for tests:\s+([\d.]+) seconds",
        "rps": r"^Requests per second:\s+([\d.]+)",
    }
    text = open(path).read() if os.path.exists(path) else ""
    for k, p in pats.items():
        m = re.search(p, text, re.M)
        out[k] = float(m.group(1)) if m else None
    m = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", text)
    out["failed_detail"] = dict(zip(("connect", "receive", "length", "exceptions"), map(int, m.groups()))) if m else None
    return out


def parse_ab_csv(path):
    """-> {percent: ms} from ab -e (0..100; 100 is the slowest request)."""
    pct = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                p = line.strip().split(",")
                if len(p) == 2 and p[0].isdigit():
                    pct[int(p[0])] = float(p[1])
    return pct


def ms(v):
    if v is None:
        return "?"
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def phase(d, run):
    """Everything measured in one phase directory d; run: the run's meta."""
    m = read_env(os.path.join(d, "phase.env"))
    r = {"m": m, "tick_s": int(m["tick_ns"]) / 1e9 if m.get("tick_ns") else 1.0}
    ab = parse_ab(os.path.join(d, "ab.out"))
    r["pct"] = parse_ab_csv(os.path.join(d, "ab.csv"))
    r["ab"] = ab
    r["ab_ran"] = ab["complete"] is not None
    r["complete"] = int(ab["complete"] or 0)
    r["failed"] = int(ab["failed"] or 0)
    r["non2xx"] = int(ab["non2xx"] or 0)
    r["hit_max"] = r["complete"] >= int(m.get("ab_max_requests", "0") or 0) > 0

    rows = []
    cl = os.path.join(d, "clients.tsv")
    if os.path.exists(cl):
        with open(cl) as f:
            for line in f:
                c, cmd, start, dur, rc, verdict = line.rstrip("\n").split("\t", 5)
                rows.append((int(c), cmd, float(start), float(dur), int(rc), verdict))
    r["rows"] = rows
    r["bad"] = [x for x in rows if x[5] != "ok"]
    r["by_cmd"] = {}
    for x in rows:
        r["by_cmd"].setdefault(x[1], []).append(x)

    samples = read_jsonl(os.path.join(d, "monitor.jsonl"))
    t0 = float(m.get("load_start_unix", "0") or 0)
    t1 = float(m.get("load_end_unix", "0") or 0)
    win = [s for s in samples if t0 <= s["unix"] <= t1 and "cpu_ticks" in s]
    r["cpu"] = {k: cpu_pct(win[0], win[-1], k, CLK_TCK) for k in CPU_KEYS} if len(win) >= 2 else {}
    r["rss"] = [s["rss_kib"] for s in win]
    r["fds_max"] = max((s["fds"] for s in win), default=None)
    r["mon_scrapes"] = [s for s in win if "scrape_ok" in s]
    r["mon_bad"] = [s for s in r["mon_scrapes"] if not s["scrape_ok"]]

    before, after = os.path.join(d, "before.prom"), os.path.join(d, "after.prom")
    before, after = read_prom(before), read_prom(after)
    r["late0"] = prom_value(before, "fragd_collector_tick_late_max_seconds")
    r["late1"] = prom_value(after, "fragd_collector_tick_late_max_seconds")
    miss0 = prom_value(before, "fragd_collector_ticks_missed_total")
    miss1 = prom_value(after, "fragd_collector_ticks_missed_total")
    r["missed"] = miss1 - miss0 if miss0 is not None and miss1 is not None else None
    s0 = prom_value(before, "fragd_scans_total", result="ok")
    s1 = prom_value(after, "fragd_scans_total", result="ok")
    r["scans"] = s1 - s0 if s0 is not None and s1 is not None else None
    r["scan_dur"] = prom_value(after, "fragd_scan_duration_seconds")
    r["tick_dur"] = prom_value(after, "fragd_collector_tick_seconds")
    r["have_late"] = r["late0"] is not None and r["late1"] is not None
    # When the lateness reached its final maximum, in seconds since the load began.
    r["late_rise"] = None
    if r["have_late"] and r["late1"] > r["late0"]:
        for s in samples:
            v = (s.get("metrics") or {}).get("fragd_collector_tick_late_max_seconds")
            if v is not None and v >= r["late1"]:
                r["late_rise"] = s["unix"] - t0
                break
    notes = os.path.join(d, "fragd.notes")
    r["notes"] = [x.rstrip("\n") for x in open(notes) if x.strip()] if os.path.exists(notes) else []

    r["errors_ok"] = (r["ab_ran"] and r["failed"] + r["non2xx"] == 0 and not r["bad"] and bool(rows)
                      and not r["mon_bad"] and bool(r["mon_scrapes"]))
    r["p99_ok"] = r["pct"].get(99) is not None and r["pct"][99] <= 100
    r["tick_ok"] = r["have_late"] and r["missed"] is not None and r["late1"] <= r["tick_s"] and r["missed"] == 0
    return r


def lat(rows):
    d = [x[3] * 1e3 for x in rows]
    return quantile(d, 0.5), quantile(d, 0.99), max(d, default=None)


def table(L, r, secs):
    pct, ab = r["pct"], r["ab"]
    if r["ab_ran"]:
        fd = ab["failed_detail"] or {}
        detail = ", ".join(f"{k} {v}" for k, v in fd.items() if v)
        L.append(f"| scrapes (ab) | {r['complete']} in {ab['taken_s']:.1f} s ({ab['rps']:.0f}/s), {r['failed']} failed"
                 f"{' (' + detail + ')' if detail else ''}, {r['non2xx']} not 200"
                 f"{'; ab reached its -n limit before the time limit' if r['hit_max'] else ''} | no error: "
                 f"{checked(r['failed'] + r['non2xx'] == 0)} |")
    else:
        L.append(f"| scrapes (ab) | ab printed no summary (exit {r['m'].get('ab_exit', '?')}) | no error: **not met** |")
    L.append(f"| scrape latency p50 / p90 / p99 / max (ab, connect to last byte) | {ms(pct.get(50))} / "
             f"{ms(pct.get(90))} / {ms(pct.get(99))} / {ms(pct.get(100))} ms | p99 <= 100 ms: {checked(r['p99_ok'])} |")
    L.append(f"| scrapes by the sampler, checked as expositions | {len(r['mon_scrapes'])}, {len(r['mon_bad'])} invalid "
             f"or failed | no error: {checked(not r['mon_bad'] and bool(r['mon_scrapes']))} |")
    rows, bad = r["rows"], r["bad"]
    L.append(f"| fragctl calls | {len(rows)} ({len(rows) / secs:.1f}/s), {len(bad)} errors (non-zero exit or "
             f"unexpected output) | no error: {checked(not bad and bool(rows))} |")
    p50, p99, mx = lat(rows)
    per = []
    for c in ("status", "hist", "map --json"):
        if r["by_cmd"].get(c):
            c50, c99, _ = lat(r["by_cmd"][c])
            per.append(f"`{c}` ({len(r['by_cmd'][c])}) {ms(c50)} / {ms(c99)} ms")
    L.append(f"| fragctl latency p50 / p99 (process start to exit) | all {ms(p50)} / {ms(p99)} ms (max {ms(mx)}); "
             + "; ".join(per) + " | |")
    tick_s = r["tick_s"]
    if r["have_late"]:
        when = ""
        if r["late_rise"] is not None:
            when = (f", reached {r['late_rise']:.0f} s into the load" if r["late_rise"] >= 0
                    else ", reached before the load began")
        L.append(f"| collector tick: largest delay after its due time (`fragd_collector_tick_late_max_seconds`, "
                 f"since fragd started) | before the load {r['late0'] * 1e3:.1f} ms, after {r['late1'] * 1e3:.1f} ms"
                 f"{when} | <= one tick ({tick_s * 1e3:.0f} ms): {checked(r['late1'] <= tick_s)} |")
    else:
        L.append("| collector tick lateness | this fragd does not export `fragd_collector_tick_late_max_seconds` "
                 "| **not measured** |")
    if r["missed"] is not None:
        L.append(f"| ticks missed during the load (`fragd_collector_ticks_missed_total`) | {r['missed']:.0f} | 0: "
                 f"{checked(r['missed'] == 0)} |")
    c = r["cpu"]
    if c:
        L.append(f"| fragd CPU during the load | {c['cpu_ticks']:.1f}% of a core: main thread (tick, control socket) "
                 f"{c['cpu_main_ticks']:.1f}%, scan thread {c['cpu_scan_ticks']:.1f}%, others (HTTP workers, action "
                 f"worker) {c['cpu_other_ticks']:.1f}% | |")
    if r["rss"]:
        L.append(f"| fragd RSS during the load | {r['rss'][0] / 1024:.1f} MiB at the start, {max(r['rss']) / 1024:.1f} "
                 f"MiB max, {r['rss'][-1] / 1024:.1f} MiB at the end; VmHWM "
                 f"{int(r['m'].get('hwm_kib', '0') or 0) / 1024:.1f} MiB; at most {r['fds_max']} fds | |")
    if r["scans"] is not None:
        L.append(f"| pageblock scans during the load | {r['scans']:.0f} (the last took {r['scan_dur']:.2f} s); the "
                 f"last tick took {r['tick_dur'] * 1e3:.1f} ms | |")


def main():
    a = required_args(None, "--work", "--output")
    run = read_env(os.path.join(a.work, "meta.env"))
    secs = float(run["seconds"])
    main_ = phase(os.path.join(a.work, "main"), run)
    ctl_dir = os.path.join(a.work, "control")
    ctl = phase(ctl_dir, run) if os.path.exists(os.path.join(ctl_dir, "phase.env")) else None
    mm = main_["m"]
    mix_list = mm.get("fragctl_mix", "status,hist,map").split(",")

    quick = run.get("quick") == "1"
    defaults = {"LOAD_SECONDS": ("seconds", "10" if quick else "60"), "LOAD_SCRAPERS": ("scrapers", "50"),
                "LOAD_CLIENTS": ("clients", "20"), "LOAD_PERCENT": ("percent", "30" if quick else "90")}
    env = knob_env(run, defaults)
    if mm.get("fragctl_mix", "status,hist,map") != "status,hist,map":
        env += f"LOAD_FRAGCTL_MIX={mm['fragctl_mix']} "
    if run.get("control") == "0" and "map" in mix_list:
        env += "LOAD_CONTROL=0 "
    cmd = quick_env(run) + env + "flock /tmp/fragd-heavy.lock bash bench/load.sh"
    mix = ", ".join(f"`{'map --json' if c == 'map' else c}`" for c in mix_list)
    tick_s = main_["tick_s"]

    L = section_head("Load", run)
    L += ["Promised: under concurrent scrapes and fragctl clients, every scrape and call is answered without "
          "error, the scrape p99 stays within 100 ms, and the collector tick is never late by more than one tick "
          "nor missed: a `fragctl map` that needs a fresh scan waits for the scanner thread, never holds the main "
          "loop. Proven by `bench/load.sh` (not in CI: it loads the machine for ~5 minutes); the goal column is "
          "each promise.", ""]
    minutes = 2 if quick else 5 if ctl else 3
    L.append(f"`{cmd}` (~{minutes} min). " + measured_on(run) + f", ab {run.get('ab_version', '?')}; load average "
             f"{mm.get('loadavg_start', '?')} before the load, {mm.get('loadavg_end', '?')} after it.")
    L.append("")
    kept = int(run.get("fragmenter_kept_kib", "0") or 0) // 1024
    L.append(f"fragd runs `configs/fragd.yaml` (tick {tick_s:g} s, pageblock scan every "
             f"{run.get('scan_interval') or '?'}) as root with all {mm.get('fragd_programs', '?')} BPF programs "
             f"attached, on memory fragmented first (`fragmenter --percent {run['percent']}`: {kept} MiB kept, 1 page "
             f"in 4; node score {mm.get('node_score', '?')}; vm.compaction_proactiveness 0 during the run), so a scrape "
             f"is {int(mm.get('scrape_bytes', '0') or 0) // 1024} KiB and a `map --json` "
             f"{int(mm.get('map_bytes', '0') or 0) // 1024} KiB. For {secs:g} s at once, on loopback: "
             f"`{mm.get('ab_cmd', 'ab')}` ({run['scrapers']} concurrent scrapers, a new connection per scrape), "
             f"{run['clients']} fragctl loops (`bench/load_clients.py`: {mix} in turn, each call one process, its exit "
             f"status and output checked), and one more scrape a second checked as a Prometheus exposition "
             f"(`bench/procmon.py`, which also samples fragd's CPU time and RSS). The clients share the machine's "
             f"{run['ncpu']} vCPUs with fragd.")
    L.append("")
    L += table(["what", "measured", "goal"], "lll")
    table(L, main_, secs)
    L.append("")
    L.append(f"Goals: no error: {checked(main_['errors_ok'])}; scrape p99 <= 100 ms: {checked(main_['p99_ok'])}; the "
             f"collector tick never late by more than one tick: {checked(main_['tick_ok'])}.")
    L.append("")
    if ctl:
        cm = ctl["m"]
        c50, c99, _ = lat(ctl["rows"])
        late = f"{ctl['late1'] * 1e3:.1f} ms" if ctl["have_late"] else "?"
        L.append(f"**Control**: the same load on a fresh fragd, the same fragmented memory, with the fragctl loops "
                 f"running only `status` and `hist`: tick late at most {late}, "
                 f"{ctl['missed'] if ctl['missed'] is not None else float('nan'):.0f} ticks missed, "
                 f"{ctl['scans'] if ctl['scans'] is not None else float('nan'):.0f} pageblock "
                 f"scan{'' if ctl['scans'] == 1 else 's'} during the load (the periodic one, on its own thread); "
                 f"{len(ctl['rows'])} fragctl calls ({len(ctl['bad'])} errors), p50 / p99 {ms(c50)} / {ms(c99)} ms; "
                 f"{ctl['complete']} scrapes ({ctl['failed'] + ctl['non2xx']} errors), p99 {ms(ctl['pct'].get(99))} ms. "
                 f"Load average {cm.get('loadavg_start', '?')} before, {cm.get('loadavg_end', '?')} after.")
        L.append("")
    if "map" in mix_list and main_["scans"]:
        L.append(f"`fragctl map` asks for a scan at most 5 s old. The control socket is served on fragd's main loop, "
                 f"the collector's thread, but the scan is not: fragd hands it to the scanner thread (nice 10) and "
                 f"answers the `map` client when it ends, so ticks and the other clients go on meanwhile. "
                 f"{main_['scans']:.0f} scans ran during the load, the last of {main_['scan_dur']:.2f} s (slow: at "
                 f"nice 10 beside the load), against {main_['tick_dur'] * 1e3:.1f} ms for a tick; that wait is the "
                 f"`map --json` p99 above.")
        L.append("")
    for name, r in (("", main_), ("control: ", ctl)):
        if not r:
            continue
        if r["notes"]:
            L.append(f"{name}fragd logged {len(r['notes'])} lines above info level, the first: `{r['notes'][0][:160]}`.")
            L.append("")
        if r["bad"]:
            L.append(f"{name}first fragctl errors: " + "; ".join(
                f"`{x[1]}` at {x[2]:.1f} s: {x[5][:120]}" for x in r["bad"][:3]) + ".")
            L.append("")
        if r["mon_bad"]:
            L.append(f"{name}first invalid sampler scrape: {str(r['mon_bad'][0].get('scrape_error', '?'))[:200]}.")
            L.append("")
    publish(a.output, "load", L)
    return 0


if __name__ == "__main__":
    sys.exit(main())
