#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# THP coverage against the kernel's own files. With 64 KiB anonymous mTHP switched
# on (put back on exit), one region faulted with MADV_HUGEPAGE (2 MiB pages) and one
# without (64 KiB pages):
#  - every per-size statistic fragd exports (fragd_thp_allocations_total,
#    _fallbacks_total by cause, _splits_total, _swapouts_total, _anon_folios) lies
#    within the values the kernel's hugepages-<size>kB/stats file showed, read every
#    0.1 s over the 12 s before the scrape (fragd reads them every 10 s) and after it,
#    for every size it lists;
#  - the faults moved the 2048kB and 64kB anon_fault counters (the workload
#    reached the kernel), and fragd's counters moved with them;
#  - every thp_* and compact_* counter of /proc/vmstat is exported under its name,
#    bracketed the same way.
source "$(dirname "$0")/lib.sh"
require_root
THP=/sys/kernel/mm/transparent_hugepage
[ -d "$THP/hugepages-2048kB/stats" ] || skip_or_fail "this kernel has no per-size THP statistics (Linux 6.9+): $THP/hugepages-2048kB/stats"
[ -f "$THP/hugepages-64kB/enabled" ] || skip_or_fail "this kernel has no 64 KiB mTHP ($THP/hugepages-64kB/enabled)"
grep -q '\[never\]' "$THP/enabled" && skip_or_fail "THP is off on this host ($THP/enabled is never)"

# Huge page faults need free 2 MiB blocks: not while another test or benchmark fragments memory.
heavy_lock

old64=$(choice "$THP/hugepages-64kB/enabled")
on_exit "echo $old64 > $THP/hugepages-64kB/enabled"
echo always >"$THP/hugepages-64kB/enabled"

# Every mTHP size and the kernel's counters by name (metrics.detail): all of them are compared.
printf 'metrics: {detail: [thp_sizes, kernel_counters]}\n' >"$WORK/fragd.yaml"
FRAGD_CONFIG="$WORK/fragd.yaml" start_fragd

before=$(cat "$THP/hugepages-2048kB/stats/anon_fault_alloc")
before64=$(cat "$THP/hugepages-64kB/stats/anon_fault_alloc")
fb64=$(cat "$THP/hugepages-64kB/stats/anon_fault_fallback")
# 64 MiB with MADV_HUGEPAGE (2 MiB faults where THP is "madvise" or "always"),
# then 16 MiB without it (64 KiB faults: that size is "always" now).
python3 - <<'PY'
import mmap
a = mmap.mmap(-1, 64 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
a.madvise(mmap.MADV_HUGEPAGE)
for off in range(0, len(a), 4096):
    a[off] = 1
b = mmap.mmap(-1, 16 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for off in range(0, len(b), 4096):
    b[off] = 1
a.close()
b.close()
PY
after=$(cat "$THP/hugepages-2048kB/stats/anon_fault_alloc")
after64=$(cat "$THP/hugepages-64kB/stats/anon_fault_alloc")
afb64=$(cat "$THP/hugepages-64kB/stats/anon_fault_fallback")
[ "$after" -gt "$before" ] || fail "the MADV_HUGEPAGE region got no 2 MiB page (anon_fault_alloc $before -> $after): THP is not usable here"
[ $((after64 - before64 + afb64 - fb64)) -ge 128 ] ||
  fail "the 16 MiB region made $((after64 - before64)) 64 KiB faults and $((afb64 - fb64)) fallbacks (want >= 128 in all)"
log "2048kB anon_fault_alloc +$((after - before)); 64kB +$((after64 - before64)), fallbacks +$((afb64 - fb64))"

# The kernel's files (every stats file, vmstat thp_*/compact_*) as "key value" lines in FILE.
kernel_state() {
  python3 - "$1" <<'PY'
import glob, sys
out = []
for f in glob.glob("/sys/kernel/mm/transparent_hugepage/hugepages-*kB/stats/*"):
    size = f.split("/hugepages-")[1].split("/")[0]
    out.append(f"{size}/{f.rsplit('/', 1)[1]} {open(f).read().strip()}")
for line in open("/proc/vmstat"):
    if line.startswith(("thp_", "compact_")):
        out.append("vmstat/" + line.strip())
open(sys.argv[1], "w").write("\n".join(out) + "\n")
PY
}
# Other processes fault huge pages too: 64 KiB back to what it was, then the kernel's
# files every 0.1 s from before fragd's last read of them (it reads the per-size
# statistics every 10 s, vmstat every tick) to after the scrape. fragd's figure must
# lie within what the kernel showed over that time.
echo "$old64" >"$THP/hugepages-64kB/enabled"
N=0
end=$((SECONDS + 12))
while [ $SECONDS -lt $end ]; do kernel_state "$WORK/k$N"; N=$((N + 1)); sleep 0.1; done
scrape >"$WORK/s.prom"
kernel_state "$WORK/k$N"
N=$((N + 1))

/usr/bin/python3 - "$WORK" "$WORK/s.prom" "$before" "$after" "$before64" "$N" <<'PY' || fail "fragd's THP figures differ from the kernel's files (above)"
import sys
from prometheus_client.parser import text_string_to_metric_families

def read(p):
    return {k: int(v) for k, v in (l.split() for l in open(p) if l.strip())}

ks = [read(f"{sys.argv[1]}/k{i}") for i in range(int(sys.argv[6]))]
k0 = ks[0]
b2m, a2m, b64 = (int(x) for x in sys.argv[3:6])
got = {}
for fam in text_string_to_metric_families(open(sys.argv[2]).read()):
    for s in fam.samples:
        got[(s.name, tuple(sorted(s.labels.items())))] = s.value

def key(name, **labels):
    return (name, tuple(sorted(labels.items())))

# (kernel key, fragd's series) pairs; fallbacks: the causes must sum to the file.
pairs = []
for k in k0:
    if k.startswith("vmstat/"):
        c = k.split("/", 1)[1]
        fam = "fragd_thp_vmstat_total" if c.startswith("thp_") else "fragd_compaction_vmstat_total"
        pairs.append((k, [key(fam, counter=c)]))
        continue
    size, stat = k.split("/")
    paths = {"anon_fault_alloc": ("anon_fault",), "shmem_alloc": ("shmem",), "swpin": ("swpin",)}
    fbs = {"anon_fault_fallback": "anon_fault", "shmem_fallback": "shmem", "swpin_fallback": "swpin"}
    charge = {"anon_fault_fallback_charge": "anon_fault", "shmem_fallback_charge": "shmem", "swpin_fallback_charge": "swpin"}
    splits = {"split": "split", "split_failed": "failed", "split_deferred": "deferred"}
    swaps = {"swpout": "swap", "zswpout": "zswap", "swpout_fallback": "fallback"}
    if stat in paths:
        pairs.append((k, [key("fragd_thp_allocations_total", size=size, path=paths[stat][0])]))
    elif stat in fbs:
        p = fbs[stat]
        series = [key("fragd_thp_fallbacks_total", size=size, path=p, cause="alloc")]
        if f"{size}/{p}_fallback_charge" in k0 or (p == "swpin" and f"{size}/swpin_fallback_charge" in k0):
            series.append(key("fragd_thp_fallbacks_total", size=size, path=p, cause="charge"))
        pairs.append((k, series))
    elif stat in charge:
        pairs.append((k, [key("fragd_thp_fallbacks_total", size=size, path=charge[stat], cause="charge")]))
    elif stat in splits:
        pairs.append((k, [key("fragd_thp_splits_total", size=size, result=splits[stat])]))
    elif stat in swaps:
        pairs.append((k, [key("fragd_thp_swapouts_total", size=size, how=swaps[stat])]))
    elif stat == "nr_anon":
        pairs.append((k, [key("fragd_thp_anon_folios", size=size)]))
    elif stat == "nr_anon_partially_mapped":
        pairs.append((k, [key("fragd_thp_anon_partially_mapped_folios", size=size)]))
    else:
        print(f"note: {k} is a statistic fragd does not export")

bad = 0
for k, series in pairs:
    missing = [s for s in series if s not in got]
    if missing:
        print(f"FAIL {k}: fragd exports no {missing}")
        bad += 1
        continue
    v = sum(got[s] for s in series)
    seen = [x[k] for x in ks if k in x]
    lo, hi = min(seen), max(seen)
    if not lo <= v <= hi:
        print(f"FAIL {k}: fragd {v:.0f}, the kernel between {lo} and {hi} from the tick before to after the scrape")
        bad += 1
# The workload is in fragd's figures: it read the files after the faults.
if got.get(key("fragd_thp_allocations_total", size="2048kB", path="anon_fault"), 0) < a2m:
    print(f"FAIL fragd's 2048kB anon_fault allocations are below the kernel's {a2m} after the faults")
    bad += 1
print(f"{len(pairs)} kernel figures checked against fragd's, {bad} differ")
sys.exit(1 if bad or len(pairs) < 20 else 0)
PY
sizes=$(ls -d "$THP"/hugepages-*kB/stats | wc -l)
log "every statistic of $sizes sizes and every thp_*/compact_* vmstat counter equals the kernel's"
stop_fragd
log "PASS"
