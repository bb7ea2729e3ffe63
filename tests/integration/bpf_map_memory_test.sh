#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What fragd's BPF maps take, against the kernel's own view of the maps fragd holds:
#  1. every BPF map fd of the fragd process (its /proc/PID/fdinfo: map_id) is looked up with
#     `bpftool map show id N`: each fragd_bpf_map_memory_bytes{object,map} series equals the
#     memlock bpftool prints for that map (map="globals": the sum of the object's .rodata and
#     .bss maps), every map fragd holds is in exactly one series, and the exported total
#     equals bpftool's total over fragd's maps (metrics.detail `programs`: one series per map);
#  1b. with the shipped config, one series per object (map="all") equal to the sum of that
#     object's maps in 1;
#  2. the pollution ledger (polluted_blocks) is sized from this machine's memory: one record
#     per pageblock below the highest zone end of /proc/zoneinfo, at most 262144;
#  3. the CMA maps exist only where the kernel traces CMA (fragd_cma_* exported).
source "$(dirname "$0")/lib.sh"
require_root
command -v bpftool >/dev/null || skip_or_fail "bpftool missing (Debian package bpftool)"

sed 's/^  detail: \[\]$/  detail: [programs]/' "$SRC/configs/fragd.yaml" >"$WORK/detail.yaml"
grep -q '^  detail: \[programs\]$' "$WORK/detail.yaml" || fail "configs/fragd.yaml has no '  detail: []' line to turn into [programs]"
FRAGD_CONFIG="$WORK/detail.yaml" start_fragd
scrape >"$WORK/scrape.prom"
grep -q '^fragd_bpf_map_memory_bytes{' "$WORK/scrape.prom" ||
  fail "fragd exports no fragd_bpf_map_memory_bytes (log: $(grep -i warn "$FRAGD_LOG" | head -3))"

# The kernel's view: each map fd of fragd, by map id (unique: a map held twice counts once).
: >"$WORK/ids"
for fd in /proc/"$FRAGD_PID"/fd/*; do
  [ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf-map" ] || continue
  awk '$1 == "map_id:" { print $2 }' "/proc/$FRAGD_PID/fdinfo/${fd##*/}" >>"$WORK/ids"
done
sort -un "$WORK/ids" -o "$WORK/ids"
[ -s "$WORK/ids" ] || fail "fragd ($FRAGD_PID) holds no BPF map fd"
while read -r id; do
  bpftool --json map show id "$id" >>"$WORK/bpftool.jsonl" || fail "bpftool map show id $id"
  echo >>"$WORK/bpftool.jsonl"
done <"$WORK/ids"
log "fragd holds $(wc -l <"$WORK/ids") BPF maps"

# pageblock order and the highest zone end, as the kernel reports them
ORDER=$(awk '/^Page block order:/ { print $4 }' /proc/pagetypeinfo)
MAX_PFN=$(awk '$1 == "Node" { sp = 0 } $1 == "spanned" { sp = $2 } $1 == "start_pfn:" && $2 + sp > m { m = $2 + sp }
  END { print m }' /proc/zoneinfo)
[ -n "$ORDER" ] && [ -n "$MAX_PFN" ] || fail "cannot read the pageblock order or the zone spans"
CMA=0
grep -q '^fragd_cma_' "$WORK/scrape.prom" && CMA=1

python3 - "$WORK/scrape.prom" "$WORK/bpftool.jsonl" "$ORDER" "$MAX_PFN" "$CMA" <<'PY' || fail "exported map memory differs from the kernel's (above)"
import json, re, sys
prom, jsonl, order, max_pfn, cma = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
series = {}
for line in open(prom):
    m = re.match(r'^fragd_bpf_map_memory_bytes\{object="([^"]+)",map="([^"]+)"\} (\S+)$', line)
    if m:
        key = (m.group(1), m.group(2))
        if key in series:
            sys.exit(f"series {key} exported twice")
        series[key] = float(m.group(3))
maps = [json.loads(l) for l in open(jsonl) if l.strip()]
# A kernel map name is the map's name cut to 15 bytes; libbpf names an object's global data
# "<first 8 bytes of the object name>.rodata" (.bss, .data, .kconfig).
prefix = {"stalls": "stalls_b", "compaction": "compacti", "pollution": "pollutio"}
bad, claimed = [], set()
for (obj, name), v in sorted(series.items()):
    if name == "globals":
        mine = [m for m in maps if re.fullmatch(re.escape(prefix[obj]) + r"\.(rodata|bss|data|kconfig)", m["name"])]
    else:
        mine = [m for m in maps if m["name"] == name[:15]]
    if len(mine) == 0 or (name != "globals" and len(mine) != 1):
        bad.append(f"{obj}/{name}: {len(mine)} of fragd's kernel maps match")
        continue
    want = sum(m["bytes_memlock"] for m in mine)
    claimed.update(m["id"] for m in mine)
    print(f"  {obj:10s} {name:17s} exported {v:>10.0f}  bpftool {want:>10d}")
    if v != want:
        bad.append(f"{obj}/{name}: exported {v:.0f}, bpftool memlock {want}")
unclaimed = [f'{m["id"]}:{m["name"]}' for m in maps if m["id"] not in claimed]
if unclaimed:
    bad.append("maps fragd holds that no series covers: " + ", ".join(unclaimed))
total_exported = sum(series.values())
total_kernel = sum(m["bytes_memlock"] for m in maps)
print(f"  total exported {total_exported:.0f}, bpftool over fragd's {len(maps)} maps {total_kernel}")
if total_exported != total_kernel:
    bad.append(f"total: exported {total_exported:.0f}, kernel {total_kernel}")
# 2. the ledger, sized from the zones' highest end (pollution_ledger_size)
ledger = [m for m in maps if m["name"] == "polluted_blocks"]
want_entries = min(((max_pfn - 1) >> order) + 1, 262144)
if len(ledger) != 1 or ledger[0]["max_entries"] != want_entries:
    bad.append(f"polluted_blocks max_entries {[m['max_entries'] for m in ledger]}, want {want_entries} "
               f"(max_pfn {max_pfn}, pageblock order {order})")
else:
    print(f"  polluted_blocks: {want_entries} records for max_pfn {max_pfn} (pageblock order {order})")
# 3. CMA maps only with CMA tracing
cma_maps = [m["name"] for m in maps if m["name"].startswith("cma_")]
if not cma and cma_maps:
    bad.append(f"CMA maps created on a kernel without CMA tracing: {cma_maps}")
if cma and len(cma_maps) != 4:
    bad.append(f"CMA traced but its maps are {cma_maps}")
for b in bad:
    print("  MISMATCH " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
log "every map's exported bytes equal bpftool's memlock; the ledger is sized from the zones"
stop_fragd

# 1b. the shipped config: one series per object, its maps summed (the maps are sized at load, so
# the same kernel and memory give the same maps as the run above).
start_fragd
scrape >"$WORK/default.prom"
stop_fragd
python3 - "$WORK/scrape.prom" "$WORK/default.prom" <<'PY' || fail "the default's per-object map memory is not the sum of its maps (above)"
import re, sys
def read(path):
    out = {}
    for line in open(path):
        m = re.match(r'^fragd_bpf_map_memory_bytes\{object="([^"]+)",map="([^"]+)"\} (\S+)$', line)
        if m:
            out[(m.group(1), m.group(2))] = float(m.group(3))
    return out
per_map, default = read(sys.argv[1]), read(sys.argv[2])
want = {}
for (obj, _), v in per_map.items():
    want[(obj, "all")] = want.get((obj, "all"), 0) + v
print(f"  default: {sorted(default.items())}")
if default != want:
    sys.exit(f"default series {sorted(default.items())}, want the per-map sums {sorted(want.items())}")
PY
log "the default exports $(grep -c '^fragd_bpf_map_memory_bytes{' "$WORK/default.prom") series, one per object, each its maps' sum"
