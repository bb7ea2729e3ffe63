#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragd's host-wide state: the act lock, the saved kernel settings, readiness
# and least privilege. fragd acts on a scratch tree (--path.procfs/--path.sysfs,
# every zone fragmented, so that method proactiveness raises the scratch
# vm.compaction_proactiveness from 20 to 90 at its first tick); the lock and the
# state file are the real host-wide ones under /run/fragd.
#  A. a second act-mode fragd (another socket and port) is refused before it
#     loads BPF, naming the holder's pid, and changes nothing; an observe-mode
#     fragd runs beside it;
#  B. the act-mode fragd is killed (SIGKILL) while it holds proactiveness
#     raised: `fragd --restore` puts 20 back and removes the state file; a
#     second `fragd --restore` has nothing to do and says so (exit 0);
#  C. /run/fragd/saved-state is a symlink to a passwd-like file: an act-mode
#     fragd refuses to start and `fragd --restore` refuses too, both saying why,
#     and the target is untouched;
#  D. /readyz: 200 "ready" once programs are attached and the first tick ran;
#  F. the saved value is put back only into the tree it was saved from, and
#     only while it holds what fragd wrote: after a SIGKILL while raised,
#     `fragd --restore` on a second scratch tree writes neither tree and keeps
#     the record (it names the first tree); an operator then sets the first
#     tree's value to 55, and `fragd --restore` on it leaves 55, says so, and
#     drops the record;
#  E. fragd is not dumpable after its capability drop: root without
#     CAP_SYS_PTRACE cannot open its /proc/PID/mem (EACCES), while it can open
#     that of a dumpable root process without capabilities (what fragd is
#     after the drop otherwise: a sleep of the test's, checked first).
# ONLY=B (etc.) runs one part.
source "$(dirname "$0")/lib.sh"
require_root
for tool in capsh setpriv flock curl; do command -v $tool >/dev/null || skip_or_fail "needs $tool"; done
heavy_lock

RUN=/run/fragd
STATE=$RUN/saved-state
LOCK=$RUN/act.lock
want() { [ -z "${ONLY:-}" ] || [ "$ONLY" = "$1" ]; }
die() { [ -n "${FRAGD_LOG:-}" ] && tail -20 "$FRAGD_LOG" | cut -c1-300 >&2; fail "$*"; }
if [ -e $LOCK ] && ! flock -n $LOCK true; then
  skip_or_fail "a fragd in act mode runs on this host (it holds $LOCK): this test needs the host's act lock"
fi
if [ -e $STATE ] || [ -L $STATE ]; then
  skip_or_fail "$STATE exists (a fragd left settings to restore): run fragd --restore first"
fi
on_exit "rm -f $STATE"  # whatever a failed part leaves (the scratch tree's values only)

# --- the scratch tree: one node, every zone fragmented --------------------------
R="$WORK/root"; P="$R/proc"; S="$R/sys"; NODES="$S/devices/system/node"
mkdir -p "$P/sys/vm" "$NODES/node0" "$S/kernel/mm/hugepages"
for f in vmstat meminfo zoneinfo pagetypeinfo iomem; do cat /proc/$f >"$P/$f"; done
awk '/^Node 0,/ { line = "Node 0, zone " sprintf("%8s", $4)
  for (i = 5; i <= NF; i++) line = line sprintf(" %6d", (i - 5 < 4) ? 20000 - (i - 5) * 4000 : 0)
  print line }' /proc/buddyinfo >"$P/buddyinfo"
: >"$P/sys/vm/compact_memory"; : >"$P/sys/vm/drop_caches"
echo 20 >"$P/sys/vm/compaction_proactiveness"
for f in online possible has_memory; do echo 0 >"$NODES/$f"; done
cp /sys/devices/system/node/node0/meminfo "$NODES/node0/meminfo"
: >"$NODES/node0/compact"
for size in /sys/kernel/mm/hugepages/hugepages-*; do
  for d in "$S/kernel/mm/hugepages/${size##*/}" "$NODES/node0/hugepages/${size##*/}"; do
    mkdir -p "$d"
    for f in nr_hugepages free_hugepages surplus_hugepages; do echo 0 >"$d/$f"; done
  done
done
SPRO="$P/sys/vm/compaction_proactiveness"
ROOTS=(--path.procfs "$P" --path.sysfs "$S")
proactiveness_policy 40 20 90 'pageblocks: {scan: false}' >"$WORK/act.yaml"
sed 's/^mode: act/mode: observe/' "$WORK/act.yaml" >"$WORK/observe.yaml"
spro_is() { [ "$(cat "$SPRO")" = "$1" ]; }
# start_act: an act-mode fragd on the scratch tree, returning once it holds the scratch value raised.
start_act() {
  FRAGD_CONFIG="$WORK/act.yaml" start_fragd "${ROOTS[@]}"
  wait_for 20 spro_is 90 || die "fragd did not raise the scratch compaction_proactiveness (reads $(cat "$SPRO"))"
}
saved_20() { grep -q '^/proc/sys/vm/compaction_proactiveness 20 ' $STATE 2>/dev/null; }

# --- A. a second act-mode instance ----------------------------------------------
if want A; then
  start_act
  first=$FRAGD_PID
  second_log="$WORK/second.log"
  "$BUILD/fragd" --config "$WORK/act.yaml" "${ROOTS[@]}" --listen "127.0.0.1:$(free_port)" \
    --socket "$WORK/second.sock" >"$second_log" 2>&1 &
  second=$!
  PIDS+=("$second")
  exited() { ! kill -0 $second 2>/dev/null; }
  wait_for 15 exited || fail "a second act-mode fragd started beside pid $first and still runs after 15 s: $(grep -m1 attached "$second_log" | cut -c1-160)"
  rc=0; wait $second || rc=$?
  [ "$rc" -ne 0 ] || { cat "$second_log" >&2; fail "a second act-mode fragd exited 0 beside pid $first"; }
  grep -q "pid $first" "$second_log" || { cat "$second_log" >&2; fail "the refusal does not name the holder's pid $first"; }
  ! grep -q 'attached' "$second_log" || fail "the refused fragd loaded BPF programs: $(grep attached "$second_log")"
  spro_is 90 || fail "the refused fragd changed the scratch proactiveness to $(cat "$SPRO")"
  saved_20 || fail "$STATE does not hold the value to restore (20): $(cat $STATE 2>&1)"
  log "A: second act instance refused (exit $rc): $(grep -m1 'pid' "$second_log" | sed 's/^<[0-9]>//' | cut -c1-200)"
  # An observe-mode fragd writes nothing: it may run beside the act one.
  obs_port=$(free_port)
  "$BUILD/fragd" --config "$WORK/observe.yaml" "${ROOTS[@]}" --listen "127.0.0.1:$obs_port" \
    --socket "$WORK/obs.sock" >"$WORK/obs.log" 2>&1 &
  obs=$!
  PIDS+=("$obs")
  wait_for 20 curl -sf "http://127.0.0.1:$obs_port/readyz" -o /dev/null || { cat "$WORK/obs.log" >&2; fail "an observe-mode fragd did not start beside the act one"; }
  kill -TERM $obs; wait $obs || fail "the observe-mode fragd exited non-zero"
  spro_is 90 && saved_20 || fail "the observe-mode fragd touched the act one's state"
  log "A: an observe-mode fragd ran beside it and touched nothing"
  stop_fragd
  spro_is 20 || fail "SIGTERM left the scratch proactiveness at $(cat "$SPRO")"
  [ ! -e $STATE ] || fail "$STATE left after a clean exit"
fi

# --- B. SIGKILL while raised, then fragd --restore -------------------------------
if want B; then
  start_act
  kill -KILL "$FRAGD_PID"; wait "$FRAGD_PID" 2>/dev/null || true
  spro_is 90 || fail "nothing to restore: the scratch value reads $(cat "$SPRO") after SIGKILL"
  out=$("$BUILD/fragd" --restore "${ROOTS[@]}" 2>&1) || fail "fragd --restore failed: $out"
  spro_is 20 || fail "fragd --restore left the scratch proactiveness at $(cat "$SPRO"), want 20: $out"
  [ ! -e $STATE ] || fail "fragd --restore left $STATE"
  grep -q 'vm.compaction_proactiveness restored to 20' <<<"$out" || fail "fragd --restore does not say what it restored: $out"
  again=$("$BUILD/fragd" --restore "${ROOTS[@]}" 2>&1) || fail "a second fragd --restore failed: $again"
  grep -q 'nothing to restore' <<<"$again" || fail "a second fragd --restore does not say there is nothing to do: $again"
  spro_is 20 || fail "a second fragd --restore changed the scratch value"
  log "B: after SIGKILL: $(sed 's/^<[0-9]>//' <<<"$out" | head -1 | cut -c1-160); again: $(sed 's/^<[0-9]>//' <<<"$again" | cut -c1-100)"
fi

# --- F. restore into the saved tree only, and only fragd's own value --------------
if want F; then
  R2="$WORK/root2"
  cp -a "$R" "$R2"
  echo 90 >"$R2/proc/sys/vm/compaction_proactiveness"
  SPRO2="$R2/proc/sys/vm/compaction_proactiveness"
  start_act
  kill -KILL "$FRAGD_PID"; wait "$FRAGD_PID" 2>/dev/null || true
  out=$("$BUILD/fragd" --restore --path.procfs "$R2/proc" --path.sysfs "$R2/sys" 2>&1) ||
    fail "fragd --restore on another tree failed: $out"
  [ "$(cat "$SPRO2")" = 90 ] || fail "fragd --restore wrote the other tree's value ($(cat "$SPRO2"), want 90 untouched): $out"
  spro_is 90 || fail "fragd --restore on another tree changed the saved tree's value to $(cat "$SPRO")"
  saved_20 || fail "fragd --restore on another tree dropped the record: $(cat $STATE 2>&1); $out"
  grep -q "saved from $(realpath "$P")" <<<"$out" || fail "fragd --restore does not say why it kept the value: $out"
  grep -q "^/proc/sys/vm/compaction_proactiveness 20 root=$(realpath "$P") wrote=90\$" $STATE ||
    fail "$STATE does not name the tree and the value fragd wrote: $(cat $STATE 2>&1)"
  log "F: another tree: $(sed 's/^<[0-9]>//' <<<"$out" | head -1 | cut -c1-200)"
  echo 55 >"$SPRO"  # an operator's value, after fragd's
  out=$("$BUILD/fragd" --restore "${ROOTS[@]}" 2>&1) || fail "fragd --restore failed: $out"
  spro_is 55 || fail "fragd --restore overwrote the operator's 55 with $(cat "$SPRO"): $out"
  [ ! -e $STATE ] || fail "fragd --restore kept the entry of a value it will not restore: $(cat $STATE)"
  grep -q "reads 55, not the 90 fragd wrote" <<<"$out" || fail "fragd --restore does not say why it left the value: $out"
  log "F: operator's value: $(sed 's/^<[0-9]>//' <<<"$out" | head -1 | cut -c1-200)"
  echo 20 >"$SPRO"
fi

# --- C. a symlinked state file ----------------------------------------------------
if want C; then
  mkdir -p $RUN
  printf 'root:x:0:0:root:/root:/bin/bash\n' >"$WORK/passwd"
  sum=$(sha256sum <"$WORK/passwd")
  ln -s "$WORK/passwd" $STATE
  rc=0
  out=$(timeout 20 "$BUILD/fragd" --config "$WORK/act.yaml" "${ROOTS[@]}" --listen "127.0.0.1:$(free_port)" \
    --socket "$WORK/c.sock" 2>&1) || rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "an act-mode fragd started (or hung) with $STATE a symlink (exit $rc): $out"
  grep -q "symbolic link" <<<"$out" || fail "the refusal does not say the state file is a symlink: $out"
  rc=0
  rout=$("$BUILD/fragd" --restore "${ROOTS[@]}" 2>&1) || rc=$?
  [ "$rc" -ne 0 ] && grep -q "symbolic link" <<<"$rout" || fail "fragd --restore did not refuse the symlink (exit $rc): $rout"
  [ "$(sha256sum <"$WORK/passwd")" = "$sum" ] || fail "the symlink's target was written through"
  [ -L $STATE ] || fail "$STATE is no longer the symlink"
  spro_is 20 || fail "the scratch proactiveness changed to $(cat "$SPRO")"
  rm -f $STATE
  log "C: symlinked state refused: $(grep -m1 'symbolic link' <<<"$out" | sed 's/^<[0-9]>//' | cut -c1-200)"
fi

# --- D. /readyz --------------------------------------------------------------------
if want D; then
  FRAGD_CONFIG="$WORK/observe.yaml" start_fragd "${ROOTS[@]}"
  ready() { [ "$(curl -s -o "$WORK/readyz" -w '%{http_code}' "http://127.0.0.1:$PORT/readyz")" = 200 ]; }
  wait_for 10 ready || die "/readyz is not 200 after start: $(cat "$WORK/readyz")"
  [ "$(cat "$WORK/readyz")" = ready ] || fail "/readyz says '$(cat "$WORK/readyz")', want 'ready'"
  log "D: /readyz 200 ready after the first tick"
  E_PID=$FRAGD_PID
fi

# --- E. not dumpable ------------------------------------------------------------------
if want E; then
  [ -n "${E_PID:-}" ] || { FRAGD_CONFIG="$WORK/observe.yaml" start_fragd "${ROOTS[@]}"; E_PID=$FRAGD_PID; }
  setpriv --bounding-set=-all --inh-caps=-all sleep 600 &
  probe=$!
  PIDS+=("$probe")
  wait_for 5 grep -q '^CapPrm:[[:space:]]*0000000000000000' /proc/$probe/status || fail "the probe process kept capabilities"
  mem_opens() { capsh --drop=cap_sys_ptrace -- -c "exec 3</proc/$1/mem" 2>"$WORK/probe.err"; }
  mem_opens $probe || fail "root without CAP_SYS_PTRACE cannot open a dumpable capability-less root process's mem: $(cat "$WORK/probe.err")"
  if mem_opens "$E_PID"; then fail "root without CAP_SYS_PTRACE opened fragd's /proc/$E_PID/mem: fragd is dumpable"; fi
  grep -q 'Permission denied' "$WORK/probe.err" || fail "unexpected error opening fragd's mem: $(cat "$WORK/probe.err")"
  log "E: fragd is not dumpable: $(head -1 "$WORK/probe.err")"
  stop_fragd
fi
log "PASS in $((SECONDS - STARTED)) s"
