#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The forecast trigger end to end (compaction.forecast): fragd in act mode with only that trigger
# on (horizon 1h, forecast_window 1m, method node; score, demand and reserve off) while a process
# takes node 0's free 2 MiB blocks steadily (MADV_HUGEPAGE memory faulted 32 MiB every 0.25 s:
# 64 blocks a second). fragd must compact node 0 with trigger "forecast", not before half the
# window (30 s) has been fitted; the action's reason names the free blocks and when they run out;
# the compaction ran (result ok or no_gain, counted in fragd_actions_total); and the fit fragd
# exports for the node says blocks are being lost (fragd_free_hugepage_blocks_rate < 0).
source "$(dirname "$0")/lib.sh"
require_root
THP=/sys/kernel/mm/transparent_hugepage
grep -q '\[never\]' "$THP/enabled" && skip_or_fail "THP is off on this host ($THP/enabled is never)"
heavy_lock
quiet_memory 0  # no proactive compaction: the blocks fall only as the taker takes them

cat >"$WORK/forecast.yaml" <<'YAML'
mode: act
forecast_window: 1m
compaction:
  method: node
  score: {enabled: false}
  demand: {enabled: false}
  reserve: {memory_percent: 0}
  forecast: {enabled: true, horizon: 1h}
pageblocks: {scan: false}
YAML
FRAGD_CONFIG="$WORK/forecast.yaml" start_fragd
t0=$(date +%s%N)

# The taker: up to 8 GiB, 2 MiB regions faulted one by one, then held until it is ended.
python3 - <<'PY' &
import mmap, time
size, step = 8 << 30, 32 << 20
m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_HUGEPAGE)
for off in range(0, size, step):
    for o in range(off, off + step, 2 << 20):
        m[o] = 1
    time.sleep(0.25)
time.sleep(3600)
PY
TAKER=$!
PIDS+=("$TAKER")

wait_for 90 grep -q "compact node 0 \[forecast: .*\]: " "$FRAGD_LOG" ||
  { tail -20 "$FRAGD_LOG" >&2; fail "no compaction of node 0 with trigger forecast within 90 s of a steady fall"; }
line=$(grep -m1 "compact node 0 \[forecast: " "$FRAGD_LOG" | sed 's/^<[0-9]>//')
at_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
log "$line"
kill "$TAKER"
wait "$TAKER" 2>/dev/null || true

# Not before half the window: the first action's outcome line came at least 29 s after start.
[ "$at_ms" -ge 29000 ] || fail "the forecast fired $at_ms ms after fragd started, before half of forecast_window (30 s) was fitted"
grep -qE "forecast: [0-9]+ free 2 MiB blocks run out in [0-9.]+[a-z]+ at [0-9.]+/s lost, within horizon 3600s" <<<"$line" ||
  fail "the action's reason does not say what the forecast saw: $line"
result=$(sed -E 's/.*\]: ([a-z_]+).*/\1/' <<<"$line")
case "$result" in ok | no_gain) ;; *) fail "the forecast's compaction ended $result, not ok or no_gain: $line" ;; esac
scrape >"$WORK/after.prom"
acts=$(metric "$WORK/after.prom" fragd_actions_total 'action="compact",node="0"')
[ "$acts" -ge 1 ] || fail "fragd_actions_total{action=\"compact\",node=\"0\"} is $acts after the forecast's compaction"
rate=$(awk '$1 == "fragd_free_hugepage_blocks_rate{node=\"0\"}" { print $2 }' "$WORK/after.prom")
awk -v r="$rate" 'BEGIN { exit !(r < 0) }' || fail "fragd_free_hugepage_blocks_rate{node=\"0\"} is $rate while blocks were taken"
log "the forecast fired after $at_ms ms (half of forecast_window 1m: 30 s); $result; free 2 MiB blocks rate $rate/s"
stop_fragd
log "PASS in $((SECONDS - STARTED)) s"
