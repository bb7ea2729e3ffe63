#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A goal made ahead of demand gives way to a workload that stalls now (docs/configuration.md,
# "A goal made ahead of demand gives way to it"). On fragmented memory processes fault in
# transparent huge pages with MADV_HUGEPAGE (THP defrag madvise: each fault that finds no free
# 2 MiB block enters direct compaction), at a steady pace. While it stalls, fragd (method pool)
# is asked for a reserve of 2000 free 2 MiB blocks more than there are. The temporary pool that
# would make them must stop: the action is recorded `yielded`, the log says how many other
# stalls it saw and how far the pool got (short of the goal), the pool is back at 0 and
# fragd_actions_total{result="yielded"} counts it. The same goal without the workload is
# granted (act_test, 3a): this test fails when fragd does not give way.
source "$(dirname "$0")/lib.sh"
require_root
THP=/sys/kernel/mm/transparent_hugepage
[ -f "$THP/enabled" ] || skip_or_fail "this kernel has no transparent huge pages ($THP)"
grep -q '\[never\]' "$THP/enabled" && skip_or_fail "THP is off on this host ($THP/enabled is never)"
heavy_lock
quiet_memory 0

# The workload's faults must stall in direct compaction: defrag madvise (put back on exit).
set_kernel_file "$THP/defrag" madvise

fragment 95

cat >"$WORK/goal.yaml" <<YAML
mode: act
compaction:
  method: pool
  score: {enabled: false}
  demand: {enabled: false, stalls_per_second: 10}
  reserve: {order: 9, blocks: 0, memory_percent: 0}
  min_interval: 60s
hugepages: {guard: 1GiB}
YAML
FRAGD_CONFIG="$WORK/goal.yaml" start_fragd

# The workload: processes of COUNT x 2 MiB, one byte written at the start of each 2 MiB region every PAUSE
# seconds; after the last region it gives them all back and starts again, until it is stopped
# (a single pass ends after about 20 s, which a slow host can spend before the goal is asked).
cat >"$WORK/faulter.py" <<'PY'
import ctypes, mmap, sys, time
count, pause = int(sys.argv[1]), float(sys.argv[2])
H = 2 << 20
m = mmap.mmap(-1, (count + 1) * H, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
base = ctypes.addressof(ctypes.c_char.from_buffer(m))
off = (-base) % H
m.madvise(mmap.MADV_HUGEPAGE, off, count * H)
print("mapped", flush=True)
passes = 0
while True:
    for i in range(count):
        m[off + i * H] = 1
        time.sleep(pause)
    m.madvise(mmap.MADV_DONTNEED, off, count * H)
    passes += 1
    print("pass", passes, "done", flush=True)
PY
stall() { awk '$1 == "compact_stall" { print $2 }' /proc/vmstat; }
s0=$(stall)
# FAULTERS of them, REGIONS x 2 MiB each: one process's faults stall about 10 times a second
# while the pool compacts beside it, no more than the demand rate the rule compares with (10 a
# second).
FAULTERS=4 REGIONS=512
FAULTER_PIDS=()
for ((i = 0; i < FAULTERS; i++)); do
  python3 "$WORK/faulter.py" "$REGIONS" 0.01 >>"$WORK/faulter.out" 2>&1 &
  FAULTER_PIDS+=("$!")
  PIDS+=("$!")
done
# The condition the test needs: the workload stalls (at least 20 direct compactions).
stalling() { [ $(($(stall) - s0)) -ge 20 ]; }
wait_for 20 stalling || fail "the workload's THP faults did not stall: compact_stall +$(($(stall) - s0)) in 20 s [$(cat "$WORK/faulter.out")]"
log "the workload stalls: compact_stall +$(($(stall) - s0))"

# One attempt: the workload must be demand by the rule's measure, over the policy's demand rate
# (10 a second), and fragd is then asked for the goal. The goal's pool must grow while the
# workload stalls: a deferral of direct compaction, left by the failures of tests before or by
# the workload's own, ends a pool write at its first page, and fragd then makes the goal's blocks
# by compacting the node instead (which takes nothing from the workload): that attempt had no
# pool to give way and is made again, at most ATTEMPTS times. A pool that held pages and did not
# give way fails the test at once. The policy's min_interval (60 s) keeps fragd from acting
# again on its own between two attempts, while the next one resets the deferral.
ATTEMPTS=3
attempt() {
  undefer_compaction
  local r0 rate have
  r0=$(stall)
  sleep 2
  rate=$((($(stall) - r0) / 2))
  [ "$rate" -gt 10 ] || fail "the workload entered direct compaction $rate times a second after the deferral was reset, not over the demand rate of 10"
  log "the workload's rate: $rate direct compactions a second"
  scrape >"$WORK/before.prom"
  have=$(free_blocks9)
  # The workload holds up to FAULTERS x REGIONS huge pages and hands them all back at the end of
  # a pass: a goal they could meet would be reached at once without the pool, which would then
  # end ok with nothing to give way to. So the goal is 2000 blocks past the free ones and past
  # all the workload holds.
  goal=$((have + 2000 + FAULTERS * REGIONS))
  sed -i -E "s/blocks: [0-9]+,/blocks: $goal,/" "$WORK/goal.yaml"
  # This attempt's action is the first goal-sized one logged after the reload.
  local from=$(($(wc -l <"$FRAGD_LOG") + 1))
  goal_action() { tail -n +"$from" "$FRAGD_LOG" | grep -m1 -E "action [0-9]+ compact node 0 \[reserve: .*goal $goal free order-9 blocks.*\]: [a-z_]+"; }
  kill -HUP "$FRAGD_PID"
  # After an attempt before, min_interval (60 s) runs from its action.
  wait_for 90 goal_action >/dev/null ||
    { cat "$FRAGD_LOG" >&2; fail "no goal-sized compaction of node 0 in 90 s (goal $goal free 2 MiB blocks)"; }
  line=$(goal_action)
  log "$line"
}
for ((try = 1; try <= ATTEMPTS; try++)); do
  attempt
  grep -qE 'pool held 0 of [0-9]+ pages' <<<"$line" || break
  log "attempt $try: the pool's first write made no page (direct compaction deferred), so it had nothing to give way"
  ((try < ATTEMPTS)) || fail "in $ATTEMPTS attempts the goal's pool never grew while the workload stalled: the condition this test needs was not produced"
done
grep -q ': yielded, ' <<<"$line" || fail "the goal's pool did not give way to the stalling workload (compact_stall +$(($(stall) - s0)); the workload: $(tr '\n' ' ' <"$WORK/faulter.out")): $line"
read -r held take seen < <(sed -nE 's/.*gave way after ([0-9]+) of ([0-9]+) pages .* ([0-9]+) times at order 9 or above.*/\1 \2 \3/p' <<<"$line")
[ -n "$seen" ] || fail "the yielded outcome does not say how far the pool got and what it saw: $line"
[ "$held" -lt "$take" ] || fail "the pool gave way only after it held all $take pages: $line"
[ "$seen" -ge 4 ] || fail "gave way after $seen stalls of other processes; the rule needs 4 or more: $line"
[ "$(cat "$HP")" -eq 0 ] || fail "the goal's pool was left at $(cat "$HP") pages"
sleep 1.2  # the next tick publishes the action
scrape >"$WORK/after.prom"
yielded=$(($(metric "$WORK/after.prom" fragd_actions_total 'action="compact",node="0",result="yielded"') -
  $(metric "$WORK/before.prom" fragd_actions_total 'action="compact",node="0",result="yielded"')))
[ "$yielded" -eq 1 ] || fail "fragd_actions_total{result=\"yielded\"} moved by $yielded, want 1"
FRAGCTL status >"$WORK/status.txt"
grep -q 'backoff' "$WORK/status.txt" || { cat "$WORK/status.txt" >&2; fail "node 0 does not wait in back-off after the yielded goal"; }
log "gave way: the pool held $held of $take pages when $seen stalls of other processes were seen; back at 0, node 0 in back-off"

kill -TERM "${FAULTER_PIDS[@]}"
for pid in "${FAULTER_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
stop_fragd
log "PASS"
