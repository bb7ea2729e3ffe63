#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Stacks that find no room in the stack map are counted. fragd runs with a stack map of one
# bucket (attribution.stacks 1) and a stack at every stall (attribution.stack_interval 0s),
# on memory fragmented 1 page in 4 with every free 2 MiB block taken into the hugetlb pool.
# Two workloads stall on two call paths: a pool write (hugetlb) and THP faults of a
# MADV_HUGEPAGE region (thp_fault). The map holds one stack, so every stall of one path at
# least is lost. Checked:
#  - fragctl top --stacks shows at most one stack;
#  - fragd_stall_stacks_lost_total is at least the stalls of the consumer with fewer
#    (without a stack, the gfp flags classify a stall: hugetlb and thp_fault still part);
#  - every stall entry fragd counted is under the stored stack or lost:
#    lost + the stack's stalls = fragd_direct_stall_entries_total (summed over phase), with
#    no site map full.
source "$(dirname "$0")/lib.sh"
require_root
THP=/sys/kernel/mm/transparent_hugepage
grep -q '\[never\]' $THP/enabled && skip_or_fail "THP is off on this host ($THP/enabled)"
heavy_lock
quiet_memory 0

cat >"$WORK/fragd.yaml" <<YAML
mode: observe
attribution: {stacks: 1, stack_interval: 0s}
YAML
FRAGD_CONFIG="$WORK/fragd.yaml" start_fragd
grow_pool() { echo $(($(cat $HP) + $1)) >$HP; }
kernel_stalls() { awk '$1 == "compact_stall" || $1 ~ /^allocstall_/ { s += $2 } END { print s }' /proc/vmstat; }

log "fragmenting 60% of available memory (keeps 1 of every 4 pages)"
start_fragmenter "$BUILD/fragmenter" "$WORK" 60 360 || fail "$FRAG_ERROR"
grow_pool "$(free_blocks9)"
log "fragmented; the pool took the free 2 MiB blocks ($(cat $HP) pages, $(free_blocks9) free blocks left)"

k0=$(kernel_stalls)
scrape >"$WORK/s0.prom"
grow_pool "$(free_blocks9)"
grow_pool 20
grow_pool "$(free_blocks9)"
python3 - <<'PY'
import mmap
m = mmap.mmap(-1, 128 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_HUGEPAGE)
for off in range(0, len(m), 4096):
    m[off] = 1
PY
sleep 2.5  # two ticks: fragd reads the maps
k1=$(kernel_stalls)
scrape >"$WORK/s1.prom"
FRAGCTL top --once --stacks --json >"$WORK/top.json" || fail "fragctl top --once --stacks --json failed"

grep -q '^fragd_stall_stacks_lost_total ' "$WORK/s1.prom" || fail "no fragd_stall_stacks_lost_total in /metrics"
lost=$(metric "$WORK/s1.prom" fragd_stall_stacks_lost_total)
entries=$(metric "$WORK/s1.prom" fragd_direct_stall_entries_total)
full=$(metric "$WORK/s1.prom" fragd_attribution_map_full_total 'map="sites"')
hug=$(( $(metric "$WORK/s1.prom" fragd_stalls_total 'consumer="hugetlb"') - $(metric "$WORK/s0.prom" fragd_stalls_total 'consumer="hugetlb"') ))
thp=$(( $(metric "$WORK/s1.prom" fragd_stalls_total 'consumer="thp_fault"') - $(metric "$WORK/s0.prom" fragd_stalls_total 'consumer="thp_fault"') ))
read -r nstacks stacked < <(python3 -c 'import json, sys
s = json.load(open(sys.argv[1])).get("stacks", [])
print(len(s), sum(x["stalls"] for x in s))' "$WORK/top.json")
log "stalls: hugetlb +$hug, thp_fault +$thp (compact_stall + allocstall_* +$((k1 - k0))); $entries stall entries since fragd started: $stacked under $nstacks stack, $lost lost"

[ "$hug" -gt 0 ] && [ "$thp" -gt 0 ] ||
  fail "the pool write and the THP faults did not both stall (hugetlb +$hug, thp_fault +$thp): nothing collides"
[ "$nstacks" -le 1 ] || fail "fragctl top shows $nstacks stacks from a stack map of one bucket"
[ "$full" -eq 0 ] || fail "the sites map was full ($full events): the sums below would not hold"
min=$((hug < thp ? hug : thp))
[ "$lost" -ge "$min" ] ||
  fail "fragd_stall_stacks_lost_total is $lost; the one-bucket map holds one of the two paths, so the other's $min stalls at least had no room"
[ $((lost + stacked)) -eq "$entries" ] ||
  fail "lost ($lost) + the stored stack's stalls ($stacked) != fragd_direct_stall_entries_total ($entries)"
stop_fragd
log "PASS"
