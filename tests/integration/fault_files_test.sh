#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Faults of the kernel files fragd reads and writes, injected in a scratch tree
# that fragd is pointed at with --path.procfs / --path.sysfs (the real /proc and
# /sys are never touched: fragd only writes the scratch copies). The tree holds
# copies of every file fragd reads, with a second NUMA node made up from the
# first and every zone fragmented (so that act mode compacts both nodes).
# While fragd runs in act mode:
#  A. vmstat becomes a directory (EISDIR), meminfo vanishes (ENOENT),
#     pagetypeinfo loses a column (format), pressure/memory (PSI) turns to
#     garbage (format), a hugepage pool file becomes a
#     directory; node 0's compact file refuses writes (EISDIR) from the start:
#     each is counted, logged exactly once, its reads back off (far fewer
#     failures than ticks); the refused compaction backs off (attempts at least
#     min_interval apart, bounded); everything comes back ("readable again",
#     "accepts writes again", the metrics).
#  B. buddyinfo turns to garbage: no snapshot, one line, backed off, back after.
#  C. node 1 goes offline (online list, its directory, its zones): logged
#     once, its metrics go, fragd does not act on it and refuses to; it comes back.
# Through all of it fragd keeps serving /metrics, and SIGTERM ends it with 0.
source "$(dirname "$0")/lib.sh"
require_root
heavy_lock

R="$WORK/root"
P="$R/proc"
S="$R/sys"
NODES="$S/devices/system/node"

# --- the scratch tree ---------------------------------------------------------
# Every zone fragmented: free blocks of orders 0-3 only (score 100), the kernel's
# column count kept. Node 1 is node 0 again.
fragmented_buddyinfo() {  # fragmented_buddyinfo NODES...
  local n
  for n in "$@"; do
    awk -v n="$n" '/^Node 0,/ {
      line = "Node " n ", zone " sprintf("%8s", $4)
      for (i = 5; i <= NF; i++) line = line sprintf(" %6d", (i - 5 < 4) ? 20000 - (i - 5) * 4000 : 0)
      print line }' /proc/buddyinfo
  done
}
# put FILE: replaces FILE with stdin at once (rename), so that fragd never reads half a file.
put() { cat >"$1.new" && mv -f "$1.new" "$1"; }
pagetypeinfo_two_nodes() {
  awk '{ print } /^Node +0,/ { l = $0; sub(/^Node +0,/, "Node    1,", l); print l }' /proc/pagetypeinfo
}
node_dir() {  # node_dir N
  local d="$NODES/node$1" size f
  mkdir -p "$d"
  sed "s/^Node 0 /Node $1 /" /sys/devices/system/node/node0/meminfo >"$d/meminfo"
  : >"$d/compact"
  for size in /sys/kernel/mm/hugepages/hugepages-*; do
    mkdir -p "$d/hugepages/${size##*/}"
    for f in nr_hugepages free_hugepages surplus_hugepages; do echo 0 >"$d/hugepages/${size##*/}/$f"; done
  done
}
node_files() {  # node_files "0" | "0-1": the node lists, buddyinfo, zoneinfo, pagetypeinfo
  local list=$1
  for f in online possible has_memory; do echo "$list" >"$NODES/$f"; done
  if [ "$list" = 0-1 ]; then
    fragmented_buddyinfo 0 1 | put "$P/buddyinfo"
    { cat /proc/zoneinfo; sed 's/^Node\( *\)0,/Node\11,/' /proc/zoneinfo; } | put "$P/zoneinfo"
    pagetypeinfo_two_nodes | put "$P/pagetypeinfo"
  else
    fragmented_buddyinfo 0 | put "$P/buddyinfo"
    put "$P/zoneinfo" </proc/zoneinfo
    put "$P/pagetypeinfo" </proc/pagetypeinfo
  fi
}
mkdir -p "$P/sys/vm" "$NODES" "$S/kernel/mm/hugepages"
cat /proc/vmstat >"$P/vmstat"
cat /proc/meminfo >"$P/meminfo"
cat /proc/iomem >"$P/iomem"
# PSI's memory totals: the host's, or a made-up pair where it has none (the scratch tree's own file).
psi_good() { cat /proc/pressure/memory 2>/dev/null || printf 'some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1\n'; }
mkdir -p "$P/pressure"
psi_good >"$P/pressure/memory"
ln -s /proc/kpageflags "$P/kpageflags"
: >"$P/sys/vm/compact_memory"
: >"$P/sys/vm/drop_caches"
echo 20 >"$P/sys/vm/compaction_proactiveness"
for size in /sys/kernel/mm/hugepages/hugepages-*; do
  mkdir -p "$S/kernel/mm/hugepages/${size##*/}"
  for f in nr_hugepages free_hugepages surplus_hugepages; do echo 0 >"$S/kernel/mm/hugepages/${size##*/}/$f"; done
done
node_dir 0
node_dir 1
node_files 0-1
# Node 0's compaction is refused from the start: its compact file is a directory.
rm "$NODES/node0/compact"; mkdir "$NODES/node0/compact"

MIN_INTERVAL_NS=2000000000
cat >"$WORK/fault.yaml" <<YAML
mode: act
tick_interval: 1s
pagetypeinfo_interval: 1s
pageblocks: {scan: true, interval: 10m}
compaction:
  method: node
  score: {high: 40, low: 20}
  reserve: {memory_percent: 0}
  demand: {enabled: false}
  min_interval: 2s
  backoff: {min_gain: 8, max: 10s}
YAML
"$BUILD/fragd" --check-config "$WORK/fault.yaml" --path.procfs "$P" --path.sysfs "$S" >/dev/null ||
  fail "the scratch tree does not pass --check-config"

FRAGD_CONFIG="$WORK/fault.yaml" start_fragd --path.procfs "$P" --path.sysfs "$S"
T0=$(date +%s%N)

# die: fail with the end of fragd's log.
die() { tail -30 "$FRAGD_LOG" | cut -c1-300 >&2; fail "$*"; }
alive() { kill -0 "$FRAGD_PID" 2>/dev/null || die "fragd died: $1"; }
count() { grep -cF -- "$1" "$FRAGD_LOG" || true; }
# Every check scrapes once and fails when the scrape does: an absent series must be absent from a real answer.
prom() { scrape >"$WORK/now.prom" || die "/metrics did not answer"; }
m() { prom; metric "$WORK/now.prom" "$@"; }
has_series() { prom; grep -qE "^$1\{[^}]*${2:-}" "$WORK/now.prom"; }
no_series() { prom; ! grep -qE "^$1\{[^}]*${2:-}" "$WORK/now.prom"; }
scored_two() { has_series fragd_node_fragmentation_score_percent 'node="1"'; }
wait_for 15 scored_two || die "fragd did not score the scratch tree's two nodes"
has_series fragd_memory_pressure_seconds_total 'stalled="some"' || die "no fragd_memory_pressure_seconds_total from $P/pressure/memory"
# The pageblock scanner reads zoneinfo from --path.procfs too: it sees node 1.
wait_for 20 has_series fragd_pageblock_class 'node="1"' ||
  die "the pageblock scan shows no node 1: it did not read $P/zoneinfo"
log "fragd runs on the scratch tree: two nodes scored, scanned"

# --- A: optional sources fail while a write is refused ------------------------
# vmstat is read when a scrape asks for the families, not at a tick: a scraper every second
# (a Prometheus at its fastest) asks as often as the ticks come, until part A ends.
( while :; do scrape >/dev/null 2>&1 || true; sleep 1; done ) &
SCRAPER=$!
PIDS+=("$SCRAPER")
sleep 2
rm "$P/vmstat"; mkdir "$P/vmstat"
rm "$P/meminfo"
awk '/^Node/ { NF = NF - 1 } { print }' /proc/pagetypeinfo | put "$P/pagetypeinfo"
printf 'psi is off today\n' | put "$P/pressure/memory"
POOL="$(ls -d "$NODES"/node0/hugepages/hugepages-2048kB)/nr_hugepages"
rm "$POOL"; mkdir "$POOL"
sleep 14  # reads fail at about 0, 1, 3 and 7 s; the next retry (15 s) finds them repaired
alive "after 14 s of vanished, unreadable and reformatted files"
scrape >"$WORK/a.prom" || die "no /metrics while files fail"
counts=""
for src in vmstat meminfo pagetypeinfo psi hugepages; do
  n=$(metric "$WORK/a.prom" fragd_collect_errors_total "source=\"$src\"")
  counts+=" $src=$n"
  # One tick a second for 14 s: 14 failed reads without a back-off; retries after 1, 2, 4 s make 4.
  [ "$n" -ge 3 ] && [ "$n" -le 6 ] || die "$src: $n failed reads in 14 s (want 3..6: counted, and backed off)"
done
for cause in "[EISDIR]; counted in fragd_collect_errors_total{source=\"vmstat\"}" \
  "[ENOENT]; counted in fragd_collect_errors_total{source=\"meminfo\"}" \
  "[format]; counted in fragd_collect_errors_total{source=\"pagetypeinfo\"}" \
  "$P/pressure/memory:1: expected" \
  "[format]; counted in fragd_collect_errors_total{source=\"psi\"}" \
  "[EISDIR]; counted in fragd_collect_errors_total{source=\"hugepages\"}"; do
  [ "$(count "$cause")" -eq 1 ] || { grep -F "counted in" "$FRAGD_LOG" >&2; die "want exactly one log line with: $cause"; }
done
no_series fragd_pageblocks || die "fragd_pageblocks still exported while pagetypeinfo does not parse"
no_series fragd_memory_pressure_seconds_total || die "fragd_memory_pressure_seconds_total still exported while pressure/memory does not parse"
no_series fragd_hugepages 'state="total"' || die "fragd_hugepages still exported while a pool file is a directory"

# The refused compaction: counted, logged once, backed off.
REFUSED_SERIES='file="/sys/devices/system/node/node<N>/compact",error="EISDIR"'
refused_before=$(metric <(scrape) fragd_kernel_write_errors_total "$REFUSED_SERIES")
[ "$(count "the kernel refused a write: open $NODES/node0/compact for writing: Is a directory (EISDIR)")" -eq 1 ] ||
  { grep -F "refused" "$FRAGD_LOG" >&2; die "the refused write is not logged exactly once"; }
FRAGCTL status --json >"$WORK/status.json"
refused_after=$(metric <(scrape) fragd_kernel_write_errors_total "$REFUSED_SERIES")
python3 - "$WORK/status.json" "$MIN_INTERVAL_NS" "$refused_before" "$refused_after" "$T0" <<'PY' || die "refused compactions not backed off (above)"
import json, sys
st = json.load(open(sys.argv[1]))
min_interval, before, after, t0 = (int(a) for a in sys.argv[2:6])
tries = sorted(a["start_unix_ns"] for a in st["actions"]
               if a["action"] == "compact" and a["node"] == 0 and a["result"] == "error")
span = (max(a["start_unix_ns"] for a in st["actions"]) - t0) / 1e9
print(f"  node 0: {len(tries)} refused compactions in {span:.0f} s, gaps",
      [round((b - a) / 1e9, 1) for a, b in zip(tries, tries[1:])], f"; {after} refused writes counted")
if len(tries) < 2: sys.exit("fewer than 2 attempts on node 0: nothing to compare")
if not before <= len(tries) <= after: sys.exit(f"{before}..{after} refused writes counted for {len(tries)} attempts")
if any(b - a < min_interval for a, b in zip(tries, tries[1:])): sys.exit("two attempts closer than min_interval")
# min_interval alone would allow one every 2 s; the back-off doubles the wait (4, 8, 10 s).
if len(tries) > span / 2 / 2 + 1: sys.exit(f"{len(tries)} attempts in {span:.0f} s: the back-off did not lengthen the waits")
ok1 = [a for a in st["actions"] if a["node"] == 1]
if not ok1: sys.exit("node 1 was never compacted: the refusal on node 0 stopped everything")
PY

# Everything back.
rmdir "$P/vmstat"; put "$P/vmstat" </proc/vmstat
put "$P/meminfo" </proc/meminfo
pagetypeinfo_two_nodes | put "$P/pagetypeinfo"
psi_good | put "$P/pressure/memory"
rmdir "$POOL"; echo 0 >"$POOL"
rmdir "$NODES/node0/compact"; : >"$NODES/node0/compact"
back() { [ "$(count "$1 ($2) readable again")" -eq 1 ]; }
for src in vmstat meminfo pagetypeinfo; do
  wait_for 40 back "$src" "$P/$src" || { tail -20 "$FRAGD_LOG" >&2; die "no '$src readable again' line"; }
done
wait_for 40 back psi "$P/pressure/memory" || die "no 'psi readable again' line"
wait_for 40 back hugepages "$NODES" || die "no 'hugepages readable again' line"
wait_for 30 grep -qF "$NODES/node0/compact accepts writes again" "$FRAGD_LOG" || die "no 'accepts writes again' line"
kill "$SCRAPER"
wait_for 5 has_series fragd_pageblocks 'node="1"' || die "fragd_pageblocks did not come back"
wait_for 5 has_series fragd_hugepages 'node="0"' || die "fragd_hugepages did not come back"
wait_for 5 has_series fragd_memory_pressure_seconds_total || die "fragd_memory_pressure_seconds_total did not come back"
log "A: files failed for 14 s: failed reads$counts, each logged once; refused writes backed off; all back"

# --- B: buddyinfo garbage: no snapshot -----------------------------------------
printf 'this is not\nthe kernel buddyinfo\n' | put "$P/buddyinfo"
sleep 12
alive "after 12 s of garbage in buddyinfo"
n=$(m fragd_collect_errors_total 'source="buddyinfo"')
[ "$n" -ge 2 ] && [ "$n" -le 6 ] || die "buddyinfo: $n failed reads in 12 s (want 2..6)"
[ "$(count '[format]; counted in fragd_collect_errors_total{source="buddyinfo"}')" -eq 1 ] || die "garbage buddyinfo not logged exactly once"
no_series fragd_node_fragmentation_score_percent || die "node scores still exported without a buddyinfo"
node_files 0-1
wait_for 40 back buddyinfo "$P/buddyinfo" || die "no 'buddyinfo readable again' line"
wait_for 5 scored_two || die "node scores did not come back"
log "B: garbage buddyinfo: $n failed reads in 12 s, one line, scores back"

# --- C: node 1 goes offline, then comes back ------------------------------------
node_files 0
rm -r "$NODES/node1"
wait_for 10 grep -q "node 1 went offline" "$FRAGD_LOG" || die "node 1 going offline was not logged"
lines_at_offline=$(wc -l <"$FRAGD_LOG")
sleep 8
alive "after node 1 went offline"
[ "$(count "node 1 went offline")" -eq 1 ] || die "node 1 going offline logged more than once"
no_series fragd_node_fragmentation_score_percent 'node="1"' || die "node 1's score still exported"
no_series fragd_hugepages 'node="1"' || die "node 1's pools still exported"
has_series fragd_node_fragmentation_score_percent 'node="0"' || die "node 0's score went too"
tail -n +"$((lines_at_offline + 1))" "$FRAGD_LOG" | grep -q "compact node 1 " && die "fragd acted on node 1 after it went offline"
FRAGCTL compact --node 1 2>"$WORK/offline.err" && die "fragctl compact --node 1 accepted for an offline node"
grep -q "does not exist" "$WORK/offline.err" || die "refusal does not say why: $(cat "$WORK/offline.err")"
node_dir 1
node_files 0-1
wait_for 10 grep -q "node 1 is online" "$FRAGD_LOG" || die "node 1 coming back was not logged"
wait_for 5 scored_two || die "node 1's score did not come back"
wait_for 15 bash -c "tail -n +$((lines_at_offline + 1)) '$FRAGD_LOG' | grep -q 'compact node 1 '" ||
  die "fragd did not act on node 1 again after it came back"
log "C: node 1 offline: logged once, metrics gone, not acted on, refused; back online and acted on"

scrape >/dev/null || die "no /metrics at the end"
stop_fragd
log "PASS in $((SECONDS - STARTED)) s"
