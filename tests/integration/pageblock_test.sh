#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The pageblock scanner and pollution tracking, in this order:
#  0. bad input: with /proc/kpageflags unreadable (a mode-000 file bound over
#     it in a private mount namespace, fragd without CAP_DAC_OVERRIDE) the
#     scan is off with one warning, fragd_pageblock_class is absent, fragctl
#     map says why, and the rest works;
#  4a. (before anything is polluted, memory splintered by the fragmenter) a
#     sampled round's estimate of huge pages obtainable within 10% of a full
#     scan's, the full scan's inside its 95% interval in two rounds of three;
#  4. (before anything is polluted) with memory splintered by the fragmenter
#     (its kept pages spread over every block), the estimate of huge pages
#     obtainable (free now + by compaction) must be within 10% of what one
#     compaction followed by a pool write gives. The estimate is of what
#     compaction could do: on physmap's layouts below the kernel's
#     compaction ends early, so they are not the ones to compare with;
#  4b. the estimate of 1 GiB pages (wholly free ranges + those contiguous-range
#     migration could free; `fragctl preflight 1GB`'s free + makeable, from a
#     fresh full scan) within 10% (or 1) of what a 1 GiB pool write gets;
#  1. physmap fragments memory, freeing 1 page in 8 of every pageblock it
#     owned whole (it reads its own /proc/self/pagemap); the scanner must
#     classify those blocks movable, with at least the kept pages in use;
#  2. physmap makes page-table pages (unmovable) until they land in those
#     blocks' holes: the scanner must see hybrid blocks there, the BPF
#     pollution ledger must name physmap for them, and the two must agree;
#     when the page tables are freed, the next scan finds those blocks clean
#     and fragd releases them from the ledger (no program watches page frees);
#  3. fragctl map draws the map as a PNG.
source "$(dirname "$0")/lib.sh"
require_root
[ -r /proc/kpageflags ] || skip_or_fail "/proc/kpageflags is not readable (kernel without CONFIG_PROC_PAGE_MONITOR?)"
heavy_lock

quiet_memory 0   # kcompactd must not move physmap's pages while the test looks at them
# A comparison that could not be made on this host is named here; the test ends with
# skip_or_fail over them (a skip outside CI, a failure under CI=true).
NOT_COMPARED=()

# map_json FILE: a fresh scan, through fragctl.
map_json() { FRAGCTL map --max-age 0 --json >"$1" || fail "fragctl map --json failed"; }
# map_estimate FILE: the 2 MiB pages a map --json FILE says are obtainable: free + compaction, all zones.
map_estimate() {
  python3 -c '
import json, sys
z = json.load(open(sys.argv[1]))["scan"]["zones"]
print(sum(x["hugepages"]["free"] + x["hugepages"]["compaction"] for x in z))' "$1"
}

# gigantic_ranges BEFORE HELD: for each 1 GiB range whose blocks are all huge in the map HELD
# (a 1 GiB pool is held), the classes the map BEFORE gave its blocks, counted ("node/zone pfn:
# free 500 movable 12 ...").
gigantic_ranges() {
  python3 - "$1" "$2" <<'PY'
import json, sys
names = {".": "free", "m": "movable", "x": "hybrid", "U": "unmovable", "H": "huge", "-": "offline", "?": "unseen"}
def zones(path):
    return {(z["node"], z["zone"]): z for z in json.load(open(path))["scan"]["zones"]}
before, held = zones(sys.argv[1]), zones(sys.argv[2])
per = 512  # 2 MiB blocks per 1 GiB range
out = []
for key, z in held.items():
    c = z["classes"]
    first = z["first_block"]
    for i in range((-first) % per, len(c) - per + 1, per):
        if c[i:i + per] != "H" * per:
            continue
        b = before.get(key)
        if not b:
            continue
        j = first + i - b["first_block"]
        seen = b["classes"][j:j + per]
        counts = {names.get(ch, ch): seen.count(ch) for ch in sorted(set(seen))}
        used = sum(b["used"][j:j + per])
        out.append(f"{key[0]}/{key[1]} pfn {(first + i) * 512}: " + " ".join(f"{k} {v}" for k, v in counts.items()) + f", pages in use {used}")
print("; ".join(out) or "no range all huge in the held map")
PY
}

# classes MAP OWNED: how the scan classified physmap's owned blocks.
# Prints "<owned> <movable> <hybrid> <other> <used_ok>", used_ok = blocks with
# at least their kept pages in use.
classes() {
  python3 - "$1" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["scan"]
cls, used = {}, {}
for z in m["zones"]:
    for i, c in enumerate(z["classes"]):
        cls[z["first_block"] + i] = c
        used[z["first_block"] + i] = z["used"][i]
owned = [l.split() for l in open(sys.argv[2]) if l.startswith("block ")]
n = len(owned)
mov = sum(1 for o in owned if cls.get(int(o[1])) == "m")
hyb = sum(1 for o in owned if cls.get(int(o[1])) == "x")
ok = sum(1 for o in owned if used.get(int(o[1]), 0) >= int(o[3]))
print(n, mov, hyb, n - mov - hyb, ok)
PY
}

# 0. kpageflags unreadable.
: >"$WORK/no-kpageflags"
chmod 000 "$WORK/no-kpageflags"
PORT=$(free_port)
SOCK="$WORK/fragd.sock"
FRAGD_LOG="$WORK/fragd-nokpf.log"
unshare -m bash -c 'mount --bind "$1" /proc/kpageflags && shift && exec setpriv --bounding-set -dac_override,-dac_read_search "$@"' \
  _ "$WORK/no-kpageflags" "$BUILD/fragd" --config "$SRC/configs/fragd.yaml" --listen "127.0.0.1:$PORT" --socket "$SOCK" \
  >"$FRAGD_LOG" 2>&1 &
FRAGD_PID=$!
PIDS+=("$FRAGD_PID")
wait_scored || { cat "$FRAGD_LOG" >&2; fail "fragd without kpageflags did not publish a node score in 30 s"; }
sleep 2
scrape >"$WORK/nokpf.prom"
grep -q '^fragd_pageblock_class' "$WORK/nokpf.prom" && fail "fragd_pageblock_class exported without kpageflags"
grep -q '^fragd_node_fragmentation_score_percent' "$WORK/nokpf.prom" || fail "the rest of the metrics went missing"
[ "$(grep -c 'cannot open /proc/kpageflags' "$FRAGD_LOG")" -eq 1 ] ||
  { cat "$FRAGD_LOG" >&2; fail "want exactly one warning about /proc/kpageflags"; }
if FRAGCTL map >"$WORK/nokpf-map.txt" 2>&1; then fail "fragctl map succeeded without a scan"; fi
grep -q "kpageflags" "$WORK/nokpf-map.txt" || { cat "$WORK/nokpf-map.txt" >&2; fail "fragctl map did not say why"; }
stop_fragd
log "kpageflags unreadable: scan off with one warning, no fragd_pageblock_class, the rest works"

# The shipped defaults but a sampled round every 10 s: 0.6% of a core over 10 s buys the blocks
# the default 0.1% buys over 60 s, so the rounds here are the size the shipped config makes. The
# checks below ask for a full scan many times in a row: full_scan_budget lets them.
# Compaction runs by status (metrics.detail), which the compaction below reads.
cat >"$WORK/sampled.yaml" <<'YAML'
pageblocks: {mode: sample, interval: 10s, max_age: 10s, budget: 0.6, full_scan_budget: 100}
metrics: {detail: [statuses]}
YAML
FRAGD_CONFIG="$WORK/sampled.yaml" start_fragd
wait_scored || { cat "$FRAGD_LOG" >&2; fail "fragd did not publish a node score in 30 s"; }
grep -q "pageblock scan is off" "$FRAGD_LOG" && { cat "$FRAGD_LOG" >&2; fail "the scanner is off"; }

# sampled_estimate SINCE_NS: waits (up to 40 s) for a sampled round that began after SINCE_NS
# (CLOCK_BOOTTIME) and prints "<estimate> <lower> <upper> <blocks read> <blocks>": 2 MiB pages
# obtainable (free + compaction) summed over the zones, with the interval.
sampled_estimate() {
  local since=$1 deadline=$((SECONDS + 40))
  while ((SECONDS < deadline)); do
    FRAGCTL status --json >"$WORK/status-sampled.json" || fail "fragctl status --json failed"
    if python3 - "$WORK/status-sampled.json" "$since" "$(boot_ns)" <<'PY'; then return 0; fi
import json, sys
s = json.load(open(sys.argv[1])).get("scan") or {}
since, now = int(sys.argv[2]), int(sys.argv[3])
if not s.get("sampled") or now - s.get("age_ns", 1 << 62) <= since:
    sys.exit(1)
est = lo = hi = read = blocks = 0
for z in s["zones"]:
    h = z["hugepages"]
    est += h["free"] + h["compaction"]
    lo += h["free"] + h["compaction_lower"]
    hi += h["free"] + h["compaction_upper"]
    read += z["sample_blocks"]
    blocks += z["blocks"]
print(est, lo, hi, read, blocks)
PY
    sleep 1
  done
  fail "no sampled round began within 40 s (pageblocks.interval 10s, max_age 10s)"
}
boot_ns() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_BOOTTIME))'; }

# 4 (first, while no pageblock has been claimed for page tables: a block the
# kernel gave to unmovable pages keeps that type after they are freed, its free
# pages are no migration target any more, and compaction then aborts early).
# Estimate vs one compaction and a pool write, on the fragmenter's layout.
trace_start compaction/mm_compaction_end  # how each compaction run ends (compaction_stops)
fragment 90
sleep 2
# 4a. The sampled estimate against a full scan's, on the same splintered memory: a round that
# began after the fragmenter settled, then at once a full scan. Each sampled estimate must be
# within 10% of its full scan's. The full scan's must be inside the round's 95% interval in two
# rounds of at most three: a calibrated 95% interval misses one round in twenty, so one miss is
# allowed, two in three (under 1% for a calibrated interval) are not.
covered=0 missed=0
for round in 1 2 3; do
  read -r s_est s_lo s_hi s_read s_blocks < <(sampled_estimate "$(boot_ns)")
  map_json "$WORK/map3.json"
  est=$(map_estimate "$WORK/map3.json")
  log "sampled round $round: $s_est huge pages obtainable (95%: $s_lo-$s_hi) from $s_read of $s_blocks blocks; full scan: $est"
  [ "$s_read" -lt "$s_blocks" ] || fail "the sampled round read every block ($s_read of $s_blocks): nothing was sampled"
  python3 -c 'import sys; e, g = map(int, sys.argv[1:]); sys.exit(abs(e - g) > 0.10 * g)' "$s_est" "$est" ||
    fail "sampled estimate $s_est is not within 10% of the full scan's $est"
  if [ "$s_lo" -le "$est" ] && [ "$est" -le "$s_hi" ]; then covered=$((covered + 1)); else missed=$((missed + 1)); fi
  [ "$covered" -ge 2 ] && break
  [ "$missed" -le 1 ] ||
    fail "the full scan's estimate was outside the sampled round's 95% interval in $missed of $round rounds (last: $est, $s_lo-$s_hi)"
done
# One compaction that ran to its end: the kernel aborts a run as "contended"
# now and then (its free scanner found no target for a page), after a fraction
# of its work; such a run is repeated after a pause (fragd counts run endings
# by status). If ten in a row end so, the comparison says nothing about the
# estimate: it is not made, and the test ends with skip_or_fail naming it.
contended() { scrape | awk '/^fragd_compaction_runs_total\{.*trigger="manual".*status="contended"/ { s += $2 } END { print s + 0 }'; }
# memory_state: what a compaction's free scanner has to work with in each zone with pages: free
# pages against the min watermark (below min + 1 page the kernel isolates no target page), and
# the pageblocks and free pages by migrate type (only movable blocks' free pages are targets).
memory_state() {
  python3 - <<'PY'
import re
out, zone = [], None
free, wmin = {}, {}
for line in open("/proc/zoneinfo"):
    m = re.match(r"Node (\d+), zone\s+(\S+)", line)
    if m:
        zone = f"{m.group(1)}/{m.group(2)}"
        continue
    w = line.split()
    if zone and len(w) == 3 and w[:2] == ["pages", "free"]:
        free[zone] = int(w[2])
    elif zone and len(w) == 2 and w[0] == "min" and zone not in wmin:
        wmin[zone] = int(w[1])
blocks, ffree = {}, {}
types, capped = [], False
for line in open("/proc/pagetypeinfo"):
    m = re.match(r"Node\s+(\d+), zone\s+(\S+), type\s+(\S+)\s+(.*)", line)
    if m:
        z = f"{m.group(1)}/{m.group(2).rstrip(',')}"
        # A count over 100000 is printed ">100000": the sums are then at least what is shown.
        ffree.setdefault(z, {})[m.group(3)] = sum(int(c.lstrip(">")) << o for o, c in enumerate(m.group(4).split()))
        capped |= ">" in m.group(4)
        continue
    if line.startswith("Number of blocks type"):
        types = line.split()[4:]
        continue
    m = re.match(r"Node (\d+), zone\s+(\S+)\s+(.*)", line)
    if m and types:
        blocks[f"{m.group(1)}/{m.group(2)}"] = dict(zip(types, map(int, m.group(3).split())))
for z in free:
    if z not in blocks or sum(blocks[z].values()) < 64:
        continue
    b, f = blocks[z], ffree.get(z, {})
    out.append(f"{z}: free {free[z]} (min {wmin.get(z)}), blocks movable {b.get('Movable', 0)} unmovable {b.get('Unmovable', 0)}"
               f" reclaimable {b.get('Reclaimable', 0)}, free pages in movable blocks {'>=' * capped}{f.get('Movable', 0)},"
               f" in others {'>=' * capped}{sum(v for k, v in f.items() if k != 'Movable')}")
print("; ".join(out))
PY
}
# estimate_vs_write: one node compaction (again while it ends contended), then a pool write of
# twice the estimate $est; returns 1 with MISS set when what it got is not within 10% of $est.
# The kernel's part varies from run to run: direct compaction deferred or not during the write,
# page cache it reclaims (bench/preflight.sh: (free + makeable) / reached 0.918-1.015 over 5 rounds
# on holes). As with the sampled interval above, one miss is allowed: a second one, on a fresh
# fragmentation, fails the test.
estimate_vs_write() {
  completed=0
  contended_tries=0
  log "before the compaction: $(memory_state)"
  for try in $(seq 1 10); do
    c0=$(contended)
    echo 1 > /proc/sys/vm/compact_memory
    sleep 2  # a collector tick
    c1=$(contended)
    if [ "$c1" -eq "$c0" ]; then completed=1; break; fi
    contended_tries=$try
    log "the compaction ended contended ($((c1 - c0)) zone runs); compacting again in 3 s; $(memory_state); $(compaction_stops)"
    sleep 3
  done
  log "compactions that ended contended before one ran to its end: $contended_tries" 
  # The kernel's direct-compaction counters around the pool write: a write that got little with
  # few compaction stalls met zones whose compaction was deferred (compact_defer_shift); one that
  # got more than the estimate with many (641 in a run that got 8568 against 7706) made pages the
  # node compaction had not, perhaps from reclaimed page cache: the pages direct reclaim took and the
  # page cache before the write are logged to tell.
  v0="$(vmstat compact_stall) $(vmstat compact_fail) $(vmstat compact_success)"
  steal0=$(vmstat pgsteal_direct) cached0=$(awk '$1 == "Cached:" { print $2 }' /proc/meminfo)
  got=$(pool_write $HP $((est * 2)))
  echo 0 > $HP
  log "direct compaction during the pool write (stall fail success): before $v0, after $(vmstat compact_stall) $(vmstat compact_fail) $(vmstat compact_success); direct reclaim took $(($(vmstat pgsteal_direct) - steal0)) pages, page cache $cached0 kB before"
  log "estimate free+compaction $est huge pages; one compaction, then a pool write of $((est * 2)) got $got"
  if [ "$completed" -ne 1 ]; then
    NOT_COMPARED+=("estimate vs pool write: ten compactions in a row ended contended, so the $got huge pages say nothing of the estimate $est")
    return 0
  fi
  python3 -c 'import sys; e, g = map(int, sys.argv[1:]); sys.exit(abs(e - g) > 0.10 * g)' "$est" "$got" && return 0
  MISS="estimate $est is not within 10% of the $got huge pages obtained"
  return 1
}
if ! estimate_vs_write; then
  log "miss 1 of at most 1: $MISS; fragmenting afresh for a second comparison"
  unfragment
  fragment 90
  sleep 2
  map_json "$WORK/map3b.json"
  est=$(map_estimate "$WORK/map3b.json")
  estimate_vs_write || fail "$MISS, the second comparison in a row to miss (the first: see above)"
fi

# 4b. 1 GiB pages: the estimate (free ranges + those contiguous-range migration could free)
# against a 1 GiB pool write of more than that, on the same splintered memory.
G1=/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
if [ -w "$G1" ]; then
  save_sysctl "$G1"
  on_exit "echo 0 > $G1"
  map_json "$WORK/map4.json"
  # preflight answers from the scan just made (/metrics would wait for a tick to follow it).
  rc=0
  FRAGCTL preflight 1GB 1 --json >"$WORK/preflight1g.json" || rc=$?
  case $rc in 0 | 3 | 4) ;; *) fail "fragctl preflight 1GB 1 failed (exit $rc)" ;; esac
  read -r est1g free1g age1g <<<"$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["free"] + d["makeable"], d["free"], d["age_seconds"])' "$WORK/preflight1g.json")"
  got1g=$(pool_write "$G1" $((est1g + 4)))  # from a shell of its own (lib.sh: a pending signal)
  # While the pages are held, a scan shows where the kernel took them: what the scan before the
  # write saw in those ranges says why an estimate missed them.
  map_json "$WORK/map5.json"
  echo 0 >"$G1"
  log "1 GiB pages: estimate $est1g (free $free1g, scan ${age1g} s old), a pool write of $((est1g + 4)) got $got1g"
  python3 -c 'import sys; e, g = map(int, sys.argv[1:]); sys.exit(abs(e - g) > max(1, 0.10 * g))' "$est1g" "$got1g" ||
    fail "1 GiB estimate $est1g is not within 10% (or 1) of the $got1g 1 GiB pages obtained; before the write, the ranges the kernel took held: $(gigantic_ranges "$WORK/map4.json" "$WORK/map5.json")"
else
  NOT_COMPARED+=("1 GiB estimate: no 1 GiB hugetlb pool on this kernel ($G1)")
fi

# The fragmenter gives its memory back.
exec 9>&-
wait_for 120 bash -c '! pgrep -x fragmenter >/dev/null' || fail "the fragmenter did not exit"

# Start from compacted memory: physmap then owns more whole blocks.
echo 1 > /proc/sys/vm/compact_memory
avail_mib=$(($(awk '/^MemAvailable/ { print $2 }' /proc/meminfo) / 1024))
frag_mib=$((avail_mib * 90 / 100))
mkfifo "$WORK/hold-frag" "$WORK/hold-pt"
"$BUILD/physmap" frag --mib "$frag_mib" --drop 8 --out "$WORK/owned.txt" <"$WORK/hold-frag" >"$WORK/frag.out" 2>"$WORK/frag.err" &
PIDS+=("$!")
exec 7>"$WORK/hold-frag"
wait_for 300 grep -q '^ready' "$WORK/frag.out" || { cat "$WORK/frag.err" >&2; fail "physmap frag did not get ready in 300 s"; }
owned=$(awk '/^ready/ { print $2 }' "$WORK/frag.out")
log "physmap holds $frag_mib MiB, owns $owned whole pageblocks, freed 1 page in 8 of each"
[ "$owned" -ge 200 ] || fail "physmap owned only $owned whole pageblocks (want >= 200): memory too busy to test"
# The holes physmap freed went to the CPUs' page lists first; until drained, page tables
# cannot take them (the kernel takes whole free blocks elsewhere, of DMA32 first).
read -r held floor writes < <(drain_page_lists)
log "CPUs' page lists: $held pages held after $writes writes of vm.stat_refresh (floor $floor)"
[ "$held" -le "$floor" ] || fail "the CPUs' page lists still hold $held pages (floor $floor) after $writes writes of vm.stat_refresh"

# 1. Owned blocks are movable.
map_json "$WORK/map1.json"
read -r n mov hyb other used_ok < <(classes "$WORK/map1.json" "$WORK/owned.txt")
log "scan 1: owned $n: movable $mov, hybrid $hyb, other $other; kept pages in use in $used_ok"
[ $((mov * 100)) -ge $((n * 95)) ] || fail "only $mov of $n owned blocks classified movable (want >= 95%)"
[ $((used_ok * 100)) -ge $((n * 99)) ] || fail "only $used_ok of $n owned blocks show their kept pages in use"

# 2. Page tables pollute them.
# Page tables for all the kernel counts available (MemAvailable: free memory, the holes
# among it, and the page cache it can reclaim) but half the holes: more than what is free
# or reclaimable outside physmap's holes, so they must land in them. The holes are 64
# pages a block: too few for the kernel to claim the block for unmovable pages, so it
# steals them and the block becomes hybrid. At least 256 MiB stays free whatever the holes.
read -r _ _ _ _ kept_pages _ <"$WORK/owned.txt"
holes_kib=$(((owned * 512 - kept_pages) * 4))
read -r avail_kib free_kib < <(awk '/^MemAvailable/ { a = $2 } /^MemFree/ { f = $2 } END { print a, f }' /proc/meminfo)
leave_kib=$((holes_kib / 2 > 262144 ? holes_kib / 2 : 262144))
pt_count=$(((avail_kib - leave_kib) / 4))
[ "$pt_count" -gt 0 ] || fail "MemAvailable $avail_kib kB leaves no room for page tables past half of physmap's $holes_kib kB of holes"
log "before the page tables: MemAvailable $avail_kib kB, MemFree $free_kib kB, holes in owned blocks $holes_kib kB"
"$BUILD/physmap" pgtables --count "$pt_count" --out "$WORK/pt.txt" <"$WORK/hold-pt" >"$WORK/pt.out" 2>"$WORK/pt.err" &
PT_PID=$!
PIDS+=("$PT_PID")
exec 6>"$WORK/hold-pt"
wait_for 120 grep -q '^ready' "$WORK/pt.out" || { cat "$WORK/pt.err" >&2; fail "physmap pgtables did not get ready"; }
log "page tables: $(cat "$WORK/pt.out")"
sleep 2
# The whole ledger (--blocks 32768): the release below is counted against every block physmap
# polluted, not against those among the 256 with most pages (fragctl map's default listing).
FRAGCTL map --max-age 0 --blocks 32768 --json >"$WORK/map2.json" || fail "fragctl map --blocks 32768 --json failed"
read -r n mov2 hyb2 other2 _ < <(classes "$WORK/map2.json" "$WORK/owned.txt")
log "scan 2: owned $n: movable $mov2, hybrid $hyb2, other $other2"
[ "$hyb2" -ge 20 ] || fail "only $hyb2 owned blocks became hybrid after $pt_count page-table pages (want >= 20)"
# The BPF pollution map names physmap for blocks the scan sees polluted. The
# owned blocks were clean at scan 1, so each that is hybrid now was polluted
# while fragd watched: the BPF records must cover them (up to what the ledger
# could hold).
read -r listed agree tracked untracked top mine_all < <(python3 - "$WORK/map2.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["pollution"]
assert p is not None, "no pollution data: the pollution programs are not attached"
assert len(p["blocks"]) == p["tracked_blocks"], "fragctl map --blocks 32768 listed fewer blocks than tracked_blocks"
cls = {}
for z in j["scan"]["zones"]:
    for i, c in enumerate(z["classes"]):
        cls[z["first_block"] + i] = c
# The 256 blocks with most pages (the listing is most pages first): a block a per-CPU refill
# left one page in is flagless in kpageflags until the page is handed out.
mine = [b for b in p["blocks"][:256] if b["comm"] == "physmap" and b["pages"] > 0]
agree = sum(1 for b in mine if cls.get(b["block"]) in ("x", "U"))
top = p["top"][0]["comm"] if p["top"] else "-"
mine_all = sum(1 for b in p["blocks"] if b["comm"] == "physmap")
print(len(mine), agree, p["tracked_blocks"], p["untracked_events"], top, mine_all)
PY
)
log "pollution ledger: $tracked blocks tracked ($untracked fallbacks not recorded: ledger full), $mine_all of them physmap's; of the $listed physmap's among the 256 with most pages, $agree are hybrid or unmovable in the scan; top polluter $top"
[ "$listed" -ge 20 ] || fail "the pollution map lists only $listed blocks polluted by physmap (want >= 20)"
# Not all: a fallback that refills a per-CPU list records pages no task holds
# yet; kpageflags shows them flagless, like free pages, until they are handed out.
[ $((agree * 100)) -ge $((listed * 80)) ] ||
  fail "only $agree of $listed blocks the pollution map lists are hybrid or unmovable in the scan (want >= 80%)"
[ "$top" = physmap ] || fail "top polluter is '$top', not physmap"
# fragd sizes the ledger to every block of memory (concerns/pollution/object.cc, with pollution_ledger_size), so it
# is never full here; untracked events are then fallbacks larger than a block, which
# physmap's order-0 page tables are not: the comparison holds whatever their number.
[ $((tracked * 100)) -ge $((hyb2 * 90)) ] ||
  fail "BPF tracks $tracked polluted blocks ($untracked untracked events), fewer than 90% of the $hyb2 owned blocks the scan sees hybrid"

scrape >"$WORK/polluted.prom"
polluted=$(metric "$WORK/polluted.prom" fragd_polluted_pageblocks 'node="0"')
[ "$polluted" -ge "$listed" ] || fail "fragd_polluted_pageblocks{node=\"0\"} is $polluted, below the $listed blocks listed"

# 3. The PNG.
FRAGCTL map --max-age 0 --png "$WORK/polluted.png" >"$WORK/map-polluted.txt" || fail "fragctl map --png failed"
python3 -c 'import sys; d=open(sys.argv[1],"rb").read(8); sys.exit(d!=b"\x89PNG\r\n\x1a\n")' "$WORK/polluted.png" ||
  fail "fragctl map --png did not write a PNG"
grep -q "polluted" "$WORK/map-polluted.txt" || fail "fragctl map --png printed no summary"

# Freed page tables leave their blocks without page-table pages: a scan that
# begins after physmap exited (fragctl map --max-age 0 asks for one) finds those
# clean, and fragd releases them from the ledger before it answers. The answer lists
# the whole ledger (--blocks, checked against tracked_blocks), and every block of it the
# same scan finds clean (class free, movable or huge: no unmovable page) must be gone,
# whoever polluted it, except the blocks a scan cannot see in time: those with a fallback
# recorded after the scan began (its last_ns, CLOCK_REALTIME, at or after the scan's
# time_ns, less 1 ms for the two clock offsets read apart). Such a block was polluted again
# while the scan read memory or before the answer read the ledger; fragd keeps it until a
# later scan (reconcile_pollution), rightly. Other tasks' fallbacks during one scan (~0.5 s)
# make them: at most LATE_MAX (measured: see the log line "late").
# What else stays listed must be what the scan still sees polluted: the holes physmap's
# page tables left can take other tasks' kernel allocations (slab pages), and a page a
# per-CPU refill recorded for physmap may be held by another task; physmap's listed
# blocks must still fall to at most half (page tables are freed through RCU: waited for).
LATE_MAX=32
rel0=$(metric "$WORK/polluted.prom" fragd_pollution_released_pageblocks_total '')
exec 6>&-
wait "$PT_PID" || fail "physmap pgtables exited non-zero"
released() {
  FRAGCTL map --max-age 0 --blocks 32768 --json >"$WORK/map-rel.json" || fail "fragctl map --blocks 32768 --json failed"
  local rc=0
  python3 - "$WORK/map-rel.json" "$mine_all" "$LATE_MAX" "$WORK/left.txt" <<'PY' || rc=$?
import json, sys
j = json.load(open(sys.argv[1]))
p, scan = j["pollution"], j["scan"]
listed, late_max = int(sys.argv[2]), int(sys.argv[3])
blocks = p["blocks"]
cls = {}
for z in scan["zones"]:
    for i, c in enumerate(z["classes"]):
        cls[z["first_block"] + i] = c
clean = [b for b in blocks if cls.get(b["block"]) in (".", "m", "H")]
late = [b for b in clean if b["last_ns"] >= scan["time_ns"] - 1_000_000]
stale = [b for b in clean if b not in late]
mine = [b for b in blocks if b["comm"] == "physmap"]
# What keeps the first physmap blocks still listed polluted: their pages by kpageflags bit
# (SLAB 7, PGTABLE 26, RESERVED 32, BUDDY 10, LRU 5, no flag: per-CPU lists or kernel
# pages without a type), for the log.
kinds = {}
with open("/proc/kpageflags", "rb") as kf:
    for b in mine[:16]:
        kf.seek(b["block"] * 512 * 8)
        d = kf.read(512 * 8)
        for i in range(0, len(d), 8):
            f = int.from_bytes(d[i:i + 8], "little")
            k = ("slab" if f >> 7 & 1 else "pgtable" if f >> 26 & 1 else "reserved" if f >> 32 & 1 else
                 "free" if f >> 10 & 1 else "lru" if f >> 5 & 1 else "anon" if f >> 12 & 1 else
                 "noflags" if f == 0 else "other")
            kinds[k] = kinds.get(k, 0) + 1
open(sys.argv[4], "w").write(
    "%d tracked, %d listed, %d of them physmap's; clean in the same scan: %d late (polluted after it began), "
    "%d stale %s; pages of the first %d physmap blocks: %s" %
    (p["tracked_blocks"], len(blocks), len(mine), len(late), len(stale), [b["block"] for b in stale[:8]],
     min(16, len(mine)), " ".join("%s=%d" % kv for kv in sorted(kinds.items()))))
if len(blocks) != p["tracked_blocks"]:
    sys.exit(2)
if stale or len(late) > late_max:
    sys.exit(3)
sys.exit(1 if len(mine) * 2 > listed else 0)
PY
  case $rc in
    0) return 0 ;;
    1) return 1 ;;
    2) fail "fragctl map --blocks 32768 listed fewer blocks than tracked_blocks: $(cat "$WORK/left.txt")" ;;
    *) fail "the ledger keeps blocks the scan it answered with found clean (stale: released by no scan; late: more than $LATE_MAX polluted after the scan began): $(cat "$WORK/left.txt")" ;;
  esac
}
wait_for 30 released ||
  fail "30 s after physmap's page tables were freed, more than half of the $mine_all blocks physmap polluted are still listed: $(cat "$WORK/left.txt")"
log "page tables freed: $polluted blocks tracked before, now $(cat "$WORK/left.txt")"
tracked_now=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pollution"]["tracked_blocks"])' "$WORK/map-rel.json")
# The releases show on /metrics within a tick of the scan.
fell=$((polluted - tracked_now))
rel=0 gone=0
released_metric() {
  scrape >"$WORK/released.prom"
  rel=$(( $(metric "$WORK/released.prom" fragd_pollution_released_pageblocks_total '') - rel0 ))
  gone=$(( polluted - $(metric "$WORK/released.prom" fragd_polluted_pageblocks 'node="0"') ))
  [ "$rel" -ge "$fell" ] && [ "$rel" -ge "$gone" ]
}
wait_for 5 released_metric ||
  fail "the ledger fell by $fell blocks in fragctl map and fragd_polluted_pageblocks by $gone, but fragd_pollution_released_pageblocks_total rose by only $rel: blocks left the ledger uncounted"
log "released by scans: $rel blocks (fragd_pollution_released_pageblocks_total); the ledger fell by $fell in fragctl map, fragd_polluted_pageblocks by $gone"
exec 7>&-

stop_fragd
[ ${#NOT_COMPARED[@]} -eq 0 ] || skip_or_fail "not compared: $(printf '%s; ' "${NOT_COMPARED[@]}")"
log "PASS"
