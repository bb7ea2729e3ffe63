#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The vm.defrag_mode guard (compaction.defrag_guard) on this kernel, against the kernel's own
# record (/proc/sys/vm/defrag_mode, /proc/pressure/memory):
#  1. healthy: act mode with the guard on and defrag_mode 1, 30 s with no pressure made: the guard
#     does nothing (defrag_mode stays 1, no guard action), and allocation counting is kept on for
#     its atomic check;
#  2. pressure: two readers thrash a file's page cache in a memory cgroup of 32 MiB, which makes
#     every runnable task wait on memory (PSI full, the kernel's count); the guard writes 0
#     within two windows, the kernel's PSI full over the window before it is above the limit,
#     the value it had is in /run/fragd/saved-state, and the action is in the metrics and the log;
#  3. the hold ends: defrag_mode is 1 again, and the saved entry is gone;
#  4. held again, then fragd stopped (SIGTERM): defrag_mode is back to 1 at its exit.
source "$(dirname "$0")/lib.sh"
require_root
heavy_lock
DM=/proc/sys/vm/defrag_mode
[ -f $DM ] || skip_or_fail "this kernel has no vm.defrag_mode (Linux 6.15+)"
[ -f /proc/pressure/memory ] || skip_or_fail "this kernel has no PSI (/proc/pressure/memory)"
set_kernel_file $DM 1

# A memory cgroup of 32 MiB: cgroup v2's memory.max, or v1's memory.limit_in_bytes on a hybrid host.
CG=fragd-guard-$$
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.subtree_control; then
  MEMCG=/sys/fs/cgroup/$CG
  LIMIT=memory.max
elif [ -f /sys/fs/cgroup/memory/cgroup.procs ]; then
  MEMCG=/sys/fs/cgroup/memory/$CG
  LIMIT=memory.limit_in_bytes
else
  skip_or_fail "no memory cgroup controller (cgroup v2 with memory in the root's subtree_control, or v1's /sys/fs/cgroup/memory)"
fi
mkdir "$MEMCG"
on_exit "for p in \$(cat $MEMCG/cgroup.procs); do kill -KILL \$p; done; sleep 0.5; rmdir $MEMCG"
echo $((32 << 20)) >"$MEMCG/$LIMIT"
# The file on disk (page cache, reclaimable), not on tmpfs where its pages could not be reclaimed.
DATA=$(mktemp /var/tmp/fragd-guard.XXXXXX)
on_exit "rm -f $DATA"
dd if=/dev/zero of="$DATA" bs=1M count=384 status=none

WINDOW=10
HOLD=20
LIMIT_PCT=2
cat >"$WORK/guard.yaml" <<YAML
mode: act
compaction:
  score: {enabled: false}
  demand: {enabled: false}
  reserve: {memory_percent: 0}
  defrag_guard: {enabled: true, atomic_failures_per_second: 100000, pressure_full_percent: $LIMIT_PCT, window: ${WINDOW}s, hold: ${HOLD}s}
YAML
full_us() { awk '$1 == "full" { sub("total=", "", $5); print $5 }' /proc/pressure/memory; }
guard_actions() { scrape >"$WORK/s.prom"; metric "$WORK/s.prom" fragd_actions_total "action=\"defrag_mode_$1\""; }
guard_is() { [ "$(guard_actions "$1")" = "$2" ]; }
dm_is() { [ "$(cat $DM)" = "$1" ]; }
THRASH=
thrash_start() {
  dd if="$DATA" iflag=nocache count=0 status=none  # its pages out of the cache: each read charges the cgroup
  bash -c 'echo $$ >"$0/cgroup.procs"; for i in 1 2; do while :; do cat "$1" >/dev/null; done & done; wait' \
    "$MEMCG" "$DATA" &
  THRASH=$!
  PIDS+=("$THRASH")
}
thrash_stop() {
  local p
  for p in $(cat "$MEMCG/cgroup.procs"); do kill -KILL "$p" 2>/dev/null || true; done
  wait "$THRASH" 2>/dev/null || true
}

# 1. healthy; the kernel's PSI full sampled each second of its last window, the start of the
# window the guard judges once the thrash begins.
declare -a T F
FRAGD_CONFIG="$WORK/guard.yaml" start_fragd
sleep $((30 - WINDOW))
for i in $(seq 0 $((WINDOW - 1))); do
  sleep 1
  T[i]=$(date +%s%N)
  F[i]=$(full_us)
done
[ "$(cat $DM)" = 1 ] || fail "healthy host: defrag_mode is $(cat $DM) after 30 s, want 1 (log: $(grep -i defrag "$FRAGD_LOG"))"
[ "$(guard_actions off)" = 0 ] || fail "healthy host: the guard acted: $(grep defrag_mode "$WORK/s.prom")"
[ "$(sample "$WORK/s.prom" 'fragd_alloc_counting{mode="adaptive"}')" = 1 ] ||
  fail "allocation counting is off while the guard watches atomic failures with defrag_mode 1"
log "healthy: 30 s in act mode with the guard on, defrag_mode 1 kept, no guard action, counting on for its atomic check"

# 2. pressure
thrash_start
off_at=
for i in $(seq $WINDOW $((WINDOW * 5))); do
  sleep 1
  T[i]=$(date +%s%N)
  F[i]=$(full_us)
  if [ "$(cat $DM)" = 0 ]; then
    off_at=$i
    break
  fi
done
[ -n "$off_at" ] || fail "defrag_mode still 1 after $((WINDOW * 4)) s of thrashing; PSI full rose $(((F[i] - F[WINDOW - 1]) / 1000)) ms (log: $(tail -n 5 "$FRAGD_LOG"))"
# The kernel's record: PSI full over the window before the write, above the guard's limit.
w=$((off_at - WINDOW))
pct=$(awk -v f=$((F[off_at] - F[w])) -v t=$((T[off_at] - T[w])) 'BEGIN { printf "%.2f", f * 1000 * 100 / t }')
awk -v p="$pct" -v l=$LIMIT_PCT 'BEGIN { exit !(p > l) }' ||
  fail "the guard wrote 0 while the kernel's PSI full over the last ${WINDOW} s was $pct% (limit $LIMIT_PCT%)"
grep -q "^/proc/sys/vm/defrag_mode 1 " /run/fragd/saved-state ||
  fail "defrag_mode 0 but its value 1 is not in /run/fragd/saved-state: $(cat /run/fragd/saved-state 2>&1)"
wait_for 10 guard_is off 1 || fail "fragd_actions_total{action=\"defrag_mode_off\"} is not 1: $(grep defrag "$WORK/s.prom")"
grep -q "memory pressure full" "$FRAGD_LOG" || fail "fragd's log does not say why: $(grep -i defrag "$FRAGD_LOG")"
"$BUILD/fragctl" --socket "$SOCK" status --json >"$WORK/status.json"
python3 - "$WORK/status.json" <<'PY' || fail "fragctl status does not list the guard's action (above)"
import json, sys
acts = [a for a in json.load(open(sys.argv[1])).get("actions") or [] if a.get("action") == "defrag_mode_off"]
print(f"  fragctl status: {acts[-1]['action']} [{acts[-1]['trigger']}] {acts[-1]['result']}: {acts[-1]['reason']}" if acts else "  no defrag_mode_off action")
sys.exit(0 if acts and acts[-1]["trigger"] == "guard" and acts[-1]["result"] == "ok" else 1)
PY
log "pressure: defrag_mode 0 after $((off_at - WINDOW + 1)) s of thrashing; the kernel's PSI full over the window before: $pct% (> $LIMIT_PCT%); saved, in the metrics and the log"
thrash_stop

# 3. the hold ends
wait_for $((HOLD + 10)) dm_is 1 || fail "defrag_mode not put back $((HOLD + 10)) s after the guard wrote 0"
wait_for 10 guard_is restore 1 || fail "no defrag_mode_restore action: $(grep defrag "$WORK/s.prom")"
! grep -qs "defrag_mode" /run/fragd/saved-state || fail "defrag_mode still saved after it was put back"
log "hold: defrag_mode 1 again after the ${HOLD} s hold, its saved entry gone"

# 4. held, then fragd stops
thrash_start
wait_for $((WINDOW * 4)) dm_is 0 || fail "defrag_mode not turned off a second time"
thrash_stop
stop_fragd
[ "$(cat $DM)" = 1 ] || fail "fragd exited with defrag_mode $(cat $DM), want the 1 it had"
! grep -qs "defrag_mode" /run/fragd/saved-state || fail "defrag_mode still saved after fragd's exit"
log "exit: fragd stopped while holding defrag_mode 0 and put back 1"
log "PASS"
