#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The 1 GiB estimates (fragd_hugepages_obtainable{size="1GiB"}) and fragd_free_contiguous_max_bytes
# need every pageblock read once. In sample mode (the shipped policy) fragd's start pass runs its
# sampled rounds, each what pageblocks.budget buys over an interval (0.1% x 60 s), at the pace that
# spends pageblocks.full_scan_budget (2% of a core: a round every 3 s) until every block was read: the
# families come after about blocks x (CPU time per block) / 0.02, on any host and whether memory
# moves or not (docs/metrics.md). Before the start pass they waited for ~10 sampled rounds, which
# run only while memory changes (else every max_age, 10 minutes).
# Here, with the shipped policy: the families appear within 3 times that bound plus 10 s (fragd's
# own CPU time per block gives it), and the scanner's CPU time until then stays within the start
# pass's share of the time plus two rounds' (0.12 s: the first round runs at once, and a round reads
# what the blocks before it cost, not what its own do).
source "$(dirname "$0")/lib.sh"
require_root
[ -r /proc/kpageflags ] || skip_or_fail "/proc/kpageflags is not readable (no CONFIG_PROC_PAGE_MONITOR)"

FRAGD_CONFIG="$SRC/configs/fragd.yaml" start_fragd
t0=$(date +%s.%N)
sum() { awk -v re="$1" '$0 ~ re { s += $NF } END { printf "%.9f\n", s + 0 }' "$2"; }
since() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
# figures FILE: blocks in the map, blocks sampled, the scanner's CPU, its CPU a block, and the bound.
figures() {
  local b r c
  b=$(sum '^fragd_pageblock_class[{]' "$1") r=$(sum '^fragd_scan_pageblocks_read_total[{].*how="sample"' "$1")
  c=$(sum '^fragd_scan_cpu_seconds_total ' "$1")
  awk -v b="$b" -v r="$r" -v c="$c" 'BEGIN { per = r > 0 ? c / r : 0; printf "%d %d %.6f %.9f %.1f\n", b, r, c, per, b * per / 0.02 }'
}
while :; do
  scrape >"$WORK/m.prom" || true
  elapsed=$(since)
  read -r blocks read_sample cpu per bound < <(figures "$WORK/m.prom")
  grep -q '^fragd_pageblock_map_age_seconds ' "$WORK/m.prom" && break
  # Once a round has measured a block's cost: at most 3 x the bound + 10 s.
  if awk -v e="$elapsed" -v bd="$bound" -v r="$read_sample" 'BEGIN { exit !(r > 0 && e > 3 * bd + 10 || e > 900) }'; then
    fail "no whole pageblock map $elapsed s after the start, over 3 x the bound $bound s + 10 s ($blocks blocks, $read_sample read, $(awk -v p="$per" 'BEGIN { printf "%.1f", p * 1e6 }') us a block at 2% of a core)"
  fi
  sleep 1
done
grep -q '^fragd_hugepages_obtainable{.*size="1GiB"' "$WORK/m.prom" || fail "the map is whole and fragd_hugepages_obtainable{size=\"1GiB\"} is absent"
grep -q '^fragd_free_contiguous_max_bytes' "$WORK/m.prom" || fail "the map is whole and fragd_free_contiguous_max_bytes is absent"
allowed=$(awk -v e="$elapsed" 'BEGIN { printf "%.3f", 0.02 * e + 0.12 }')
awk -v c="$cpu" -v a="$allowed" 'BEGIN { exit !(c <= a) }' ||
  fail "the scanner spent $cpu s of CPU in the $elapsed s to a whole map, over 2% of it plus two rounds' 0.12 s ($allowed s)"
log "a whole map and the 1 GiB estimates $elapsed s after the start (bound $bound s: $blocks blocks at $(awk -v p="$per" 'BEGIN { printf "%.1f", p * 1e6 }') us a block, 2% of a core); the scanner's CPU $cpu s (allowed $allowed s); $read_sample blocks read"
