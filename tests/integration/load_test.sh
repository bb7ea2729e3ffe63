#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Concurrent clients against a live fragd, correctness only (the timing goals are
# bench/load.sh's): on fragmented memory, for LOAD_TEST_SECONDS (15) at once,
#  - 20 scrapers, each GET /metrics back to back on a new connection: every answer is
#    200, as long as its Content-Length, a valid Prometheus text exposition (every
#    sample typed, well formed, histograms cumulative with +Inf = _count) that carries
#    the families fragd always exports (build info, programs, tick, node score);
#  - 10 fragctl loops running status, hist and map --json in turn: every call exits 0
#    with sane output (a node score line; order lines of 4 KiB pages; a JSON map whose
#    zones agree with themselves);
# then fragd still answers, counted no failed collection, and exits 0 on SIGTERM.
source "$(dirname "$0")/lib.sh"
require_root
command -v promtool >/dev/null || skip_or_fail "promtool missing (Debian package prometheus)"
heavy_lock

SECS=${LOAD_TEST_SECONDS:-15}
fragment 50
# Every allocation counted (bpf.allocations: exact): the heaviest fragd, and hist has figures to show.
sed 's/^  allocations: adaptive$/  allocations: exact/' "$SRC/configs/fragd.yaml" >"$WORK/exact.yaml"
grep -q '^  allocations: exact$' "$WORK/exact.yaml" || fail "configs/fragd.yaml has no 'allocations: adaptive' line"
FRAGD_CONFIG="$WORK/exact.yaml" start_fragd
scanned() { metric <(scrape) fragd_scans_total 'result="ok"' | grep -qv '^0$'; }
wait_for 30 scanned || fail "fragd's first pageblock scan did not end in 30 s"
scrape >"$WORK/before.prom"
errors0=$(metric "$WORK/before.prom" fragd_collect_errors_total)

log "$SECS s of 20 scrapers and 10 fragctl loops"
python3 - "$PORT" "$BUILD/fragctl" "$SOCK" "$SECS" "$WORK" <<'PY' || fail "concurrent clients saw errors (above)"
import http.client, json, re, subprocess, sys, threading, time

port, fragctl, sock, secs, work = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
ALWAYS = ("fragd_build_info", "fragd_bpf_program_attached", "fragd_collector_tick_seconds",
          "fragd_node_fragmentation_score_percent")
lock = threading.Lock()
errors, counts, saved = [], {"scrape": 0, "status": 0, "hist": 0, "map": 0, "map_noted": 0}, []
deadline = time.monotonic() + secs


def problem(kind, what):
    with lock:
        errors.append(f"{kind}: {what}")


def check_exposition(body):
    """-> None or what is wrong with one scrape."""
    if not body.endswith("\n"):
        return "does not end with a newline"
    typed, seen = {}, set()
    buckets, counts_ = {}, {}  # histogram series (family, labels without le) -> bucket values / _count
    for n, line in enumerate(body.split("\n")[:-1], 1):
        if line.startswith("# TYPE "):
            p = line.split(" ")
            if len(p) != 4 or p[3] not in ("counter", "gauge", "histogram", "summary", "untyped"):
                return f"line {n}: bad TYPE line {line!r}"
            typed[p[2]] = p[3]
            continue
        if line.startswith("# HELP ") or line == "":
            continue
        m = SAMPLE.match(line)
        if not m:
            return f"line {n}: not a sample: {line[:100]!r}"
        name, labels = m.group(1), dict(LABEL.findall(m.group(2) or ""))
        try:
            value = float(m.group(3))
        except ValueError:
            return f"line {n}: value {m.group(3)!r} is not a number"
        fam = name if name in typed else re.sub(r"_(bucket|sum|count)$", "", name)
        if fam not in typed:
            return f"line {n}: {name} has no TYPE line before it"
        seen.add(fam)
        if typed[fam] != "histogram":
            continue
        le = labels.pop("le", None)
        key = (fam, tuple(sorted(labels.items())))
        if name.endswith("_bucket"):
            if le is None:
                return f"line {n}: histogram bucket without le"
            b = buckets.setdefault(key, [])
            if b and value < b[-1][1]:
                return f"line {n}: bucket le={le} = {value} below the previous bucket {b[-1]}"
            b.append((le, value))
        elif name.endswith("_count"):
            counts_[key] = value
    for key, b in buckets.items():
        if b[-1][0] != "+Inf" or counts_.get(key) != b[-1][1]:
            return f"histogram {key}: last bucket {b[-1]}, _count {counts_.get(key)}"
    missing = [f for f in ALWAYS if f not in seen]
    return f"families missing: {missing}" if missing else None


def scraper(i):
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", "/metrics")
            r = c.getresponse()
            raw = r.read()
            length = r.getheader("Content-Length")
            c.close()
        except Exception as e:
            problem("scrape", f"scraper {i}: {e!r}")
            continue
        with lock:
            counts["scrape"] += 1
            if len(saved) < 1 or counts["scrape"] % 500 == 0:
                saved.append(raw)
        if r.status != 200:
            problem("scrape", f"scraper {i}: HTTP {r.status}")
        elif length is not None and int(length) != len(raw):
            problem("scrape", f"scraper {i}: Content-Length {length}, got {len(raw)} bytes")
        else:
            why = check_exposition(raw.decode())
            if why:
                problem("scrape", f"scraper {i}: {why}")


def check_fragctl(cmd, out, started):
    if cmd == "status":
        if not re.search(r"^node \d+: score \d+", out, re.M) or "programs attached:" not in out:
            return "no 'node N: score S' line or no program list"
    elif cmd == "hist":
        orders = re.findall(r"^order (\d+) \((\d+) KiB\): fast \d+  stalled \d+  failed \d+", out, re.M)
        if not orders or any(int(kib) != 4 << int(k) or not 1 <= int(k) <= 10 for k, kib in orders):
            return f"order lines {orders[:3]}"
    else:
        d = json.loads(out)
        zones = (d.get("scan") or {}).get("zones") or []
        if d.get("ok") is not True or not zones:
            return f"no scan: {str(d)[:120]}"
        for z in zones:
            n = len(z["classes"])
            # A sampled zone's counts are estimates (each at most the blocks) and its map may hold
            # '?' (not read yet); a zone read whole counts its classes exactly.
            sampled = "sample" in z
            counts_ok = (all(v <= n for v in z["counts"].values()) and z["sample"]["blocks"] <= n) if sampled \
                else sum(z["counts"].values()) == n
            if not n or len(z["used"]) != n or not counts_ok or set(z["classes"]) - set(".mxUH-?" if sampled else ".mxUH-"):
                return f"zone {z['zone']} disagrees with itself: {n} classes, {len(z['used'])} used, {z['counts']}"
            if any(not 0 <= u <= 1 << d["scan"]["pageblock_order"] for u in z["used"]):
                return f"zone {z['zone']}: pages in use out of 0..{1 << d['scan']['pageblock_order']}"
        # At most 5 s old (fragctl map's --max-age) when fragd read the request, plus the scan's
        # time, unless fragd says why not: the full scans asked for are held to
        # pageblocks.full_scan_budget across all clients, and past it the answer is the latest map.
        old = d["scan"]["time_ns"] / 1e9 < started - 5.5 - d["scan"]["duration_ns"] / 1e9
        if old and "full_scan_budget" not in (d.get("note") or ""):
            return f"scan began {started - d['scan']['time_ns'] / 1e9:.1f} s before the request, and no note says why"
        if old:
            with lock:
                counts["map_noted"] += 1
    return None


def fragctl_loop(i):
    cmds = [["status"], ["hist"], ["map", "--json"]]
    k = i
    while time.monotonic() < deadline:
        cmd = cmds[k % 3]
        k += 1
        started = time.time()
        p = subprocess.run([fragctl, "--socket", sock, *cmd], capture_output=True, text=True, timeout=60)
        with lock:
            counts[cmd[0]] += 1
        if p.returncode != 0:
            problem(cmd[0], f"client {i}: exit {p.returncode}: {p.stderr.strip()[:200]}")
            continue
        try:
            why = check_fragctl(cmd[0], p.stdout, started)
        except (ValueError, KeyError, TypeError) as e:
            why = f"unexpected output: {e!r}"
        if why:
            problem(cmd[0], f"client {i}: {why}")


threads = [threading.Thread(target=scraper, args=(i,)) for i in range(20)]
threads += [threading.Thread(target=fragctl_loop, args=(i,)) for i in range(10)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for n, body in enumerate(saved):
    with open(f"{work}/load-{n}.prom", "wb") as f:
        f.write(body)
print(f"[load_test] {counts['scrape']} scrapes, fragctl: {counts['status']} status, {counts['hist']} hist, "
      f"{counts['map']} map --json ({counts['map_noted']} answered from the latest map past the full-scan "
      f"budget, with the note); {len(errors)} errors")
for e in errors[:10]:
    print(f"[load_test]   {e}", file=sys.stderr)
ok = not errors and counts["scrape"] >= 20 and min(counts["status"], counts["hist"], counts["map"]) >= 10
if not errors and not ok:
    print(f"[load_test]   too few calls to tell anything: {counts}", file=sys.stderr)
sys.exit(0 if ok else 1)
PY

for f in "$WORK"/load-*.prom; do
  promtool check metrics <"$f" >"$WORK/promtool.out" 2>&1 ||
    { cat "$WORK/promtool.out" >&2; fail "promtool check metrics rejected a scrape taken under load ($(basename "$f"))"; }
done
kill -0 "$FRAGD_PID" 2>/dev/null || { cat "$FRAGD_LOG" >&2; fail "fragd died under load"; }
scrape >"$WORK/after.prom" || fail "fragd does not answer /metrics after the load"
"$BUILD/fragctl" --socket "$SOCK" status >/dev/null || fail "fragctl status fails after the load"
errors1=$(metric "$WORK/after.prom" fragd_collect_errors_total)
[ "$errors1" -eq "$errors0" ] || fail "fragd_collect_errors_total rose from $errors0 to $errors1 under load"
stop_fragd
log "PASS"
