#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A compaction write that fragd must be able to abandon, and fragd's own
# compactions recognised in a pid namespace:
#  a. SIGTERM while fragd's compaction write of nodeN/compact runs: the write
#     is made by a child process ("fragd-write"), fragd kills it and exits 0
#     within 5 s (its stop bound), that child is gone, and the action is
#     logged "abandoned" after the signal. To make the compaction long, as on a larger machine, the
#     fragmented memory's pages are mapped by 17 processes (fragmenter
#     --share 16): a node compaction moves them several times slower.
#  c. every compaction write runs under a deadline: with a budget of 1s, a
#     compact request that names no bound (a raw {"cmd":"compact"}: one whole
#     budget) of the still fragmented node is killed at 1 s and recorded "cut"
#     (the action's outcome, the log line, fragd_actions_total{result="cut"},
#     fragctl status), its writer is gone, and the time it ran counts in
#     fragd_compaction_budget_used_seconds; before it, `fragctl compact
#     --timeout 3` runs under its own bound (3 s, not the 1 s budget) and is cut there.
#  b. fragd in its own pid namespace (unshare -p -f --mount-proc): a
#     `fragctl compact` counts in fragd_compaction_runs_total{trigger="fragd"},
#     not trigger "manual", and in fragd_compaction_budget_used_seconds (its
#     getpid() is 1 there, the kernel's tgid is another number); a pool grown
#     past the free 2 MiB blocks stalls in fragd's writer, and those stalls
#     count as fragd's own, not the host's.
source "$(dirname "$0")/lib.sh"
require_root
command -v unshare >/dev/null || skip_or_fail "unshare missing (Debian package util-linux)"
heavy_lock

quiet_memory 0
# How each compaction run ended, for the failure messages (compaction_stops).
trace_start compaction/mm_compaction_end
die() { tail -30 "$FRAGD_LOG" | cut -c1-300 >&2; fail "$* [$(compaction_stops)]"; }

# A policy that acts only when asked (fragctl compact).
cat >"$WORK/act.yaml" <<'YAML'
mode: act
compaction:
  method: node
  score: {enabled: false}
  demand: {enabled: false}
  reserve: {memory_percent: 0}
pageblocks: {scan: false}
YAML

# --- a: SIGTERM during a compaction write ----------------------------------------
# Fragmented memory whose pages 16 more processes map: each page moved costs 17 reverse-map
# walks, and a node compaction of 5 GiB of it takes several seconds.
wait_for 120 bash -c '! pgrep -x fragmenter >/dev/null' || fail "another fragmenter is still running"
start_fragmenter "$BUILD/fragmenter" "$WORK" 95 360 --share 16 || fail "$FRAG_ERROR"
log "fragmented, every kept page mapped 17 times: $(cat "$WORK/frag.out")"
FRAGD_CONFIG="$WORK/act.yaml" start_fragd
# compact_running: asks for a compaction of node 0 and returns once fragd says it runs; prints its id.
compact_running() {
  python3 "$SRC/tests/integration/act_running.py" "$SOCK" '{"cmd": "compact", "node": 0}'
}
# A compaction that a file another writer on the host dirtied after the sync stops early is
# started again (at most 3 times, each logged); any other early end fails.
for try in 1 2 3; do
  sync
  trace_mark "a-$try"
  score=$(node_score)
  id=$(compact_running) || die "no compaction seen running"
  sleep 1  # well into the compaction
  WRITER=$(pgrep -x fragd-write -P "$FRAGD_PID" || true)
  [ -n "$WRITER" ] && kill -0 "$WRITER" 2>/dev/null && break
  page_cache_stop "a-$try" ||
    die "the compaction of node 0 (score $score) ended within 1 s: memory not fragmented enough to test"
  [ "$try" -lt 3 ] || die "the compaction of node 0 stopped at page cache within 1 s, 3 times: a writer keeps dirtying files"
  log "a: try $try: the compaction ended within 1 s, contended at page cache: $(compaction_stops); again"
done
t0=$(date +%s%N)
kill -TERM "$FRAGD_PID"
rc=0
wait "$FRAGD_PID" || rc=$?
t1=$(date +%s%N)
stop_ms=$(((t1 - t0) / 1000000))
log "a: SIGTERM 1 s into the compaction write (node 0 score $score): fragd exited $rc after $stop_ms ms"
[ "$rc" -eq 0 ] || die "fragd exited $rc after SIGTERM during a compaction (want 0)"
[ "$stop_ms" -lt 5000 ] || die "fragd took $stop_ms ms to exit after SIGTERM during a compaction (bound 5000 ms)"
sig_line=$(grep -n 'received Terminated' "$FRAGD_LOG" | head -1 | cut -d: -f1 || true)
out_line=$(grep -n "action $id compact node 0 .*: abandoned" "$FRAGD_LOG" | head -1 | cut -d: -f1 || true)
[ -n "$sig_line" ] || die "no 'received Terminated' line"
[ -n "$out_line" ] || die "the compaction was not logged abandoned: $(grep "action $id " "$FRAGD_LOG" || echo "no line for action $id")"
[ "$out_line" -gt "$sig_line" ] || die "the compaction ended before the SIGTERM was handled"
[ -n "$WRITER" ] || die "no fragd-write process was seen writing the compaction"
! kill -0 "$WRITER" 2>/dev/null || die "the compaction writer $WRITER still runs after fragd exited"
log "a: $(sed -n "${out_line}p" "$FRAGD_LOG" | sed 's/^<[0-9]>//' | cut -c1-160)"
log "a: $(grep -o 'the writing process was killed and gone [0-9.]* ms later' "$FRAGD_LOG")"

# --- c: a compaction write cut at its budget ------------------------------------
# fragment_afresh: the node fragmented anew (a's compaction, or one cut at 3 s, may have left less
# work than the next cut needs: once 2.6 s after a's 1 s), so that only the cut can end the next
# write early. (By its pid: fragd, started after the fragmenter, holds the FIFO's writing end too.)
fragment_afresh() {
  kill -TERM "$FRAG_PID"
  wait "$FRAG_PID" 2>/dev/null || true
  wait_for 120 bash -c '! pgrep -x fragmenter >/dev/null' || fail "the fragmenter did not exit"
  start_fragmenter "$BUILD/fragmenter" "$WORK" 95 360 --share 16 || fail "$FRAG_ERROR"
}
fragment_afresh
cat >"$WORK/budget.yaml" <<'YAML'
mode: act
compaction:
  method: node
  cpu_budget: 1s
  score: {enabled: false}
  demand: {enabled: false}
  reserve: {memory_percent: 0}
pageblocks: {scan: false}
YAML
FRAGD_CONFIG="$WORK/budget.yaml" start_fragd
wait_scored || die "fragd did not publish a node score in 30 s"
score=$(node_score)
# raw_compact: the request fragctl would send, without timeout_ms; then the action's outcome,
# polled, printed as fragctl --json prints it.
raw_compact() {
  python3 - "$SOCK" <<'PY'
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rw")
def ask(req):
    f.write(json.dumps(req) + "\n"); f.flush()
    return json.loads(f.readline())
ids = ask({"cmd": "compact", "node": 0})["ids"]
for _ in range(600):
    a = ask({"cmd": "action", "id": ids[0]})
    if a.get("state") == "done":
        print(json.dumps([a["outcome"]])); break
    time.sleep(0.1)
PY
}
# cut_outcome NAME WHAT CMD...: runs CMD (a compaction that must be cut), sets result and dur_ns
# from its outcome (WORK/NAME.json). Started again (at most 3 times, each logged) when it ended
# early and stopped at page cache, as in a.
cut_outcome() {
  local name=$1 what=$2 try
  shift 2
  for try in 1 2 3; do
    sync
    trace_mark "$name-$try"
    "$@" >"$WORK/$name.json" 2>"$WORK/$name.err" || true
    read -r result dur_ns < <(python3 -c 'import json, sys
o = json.load(open(sys.argv[1]))[0]
print(o["result"], o.get("duration_ns", 0))' "$WORK/$name.json") ||
      die "$what printed no outcome: $(cat "$WORK/$name.json" "$WORK/$name.err")"
    [ "$result" != cut ] && [ "$try" -lt 3 ] && page_cache_stop "$name-$try" || return 0
    log "c: try $try: $what ended $result after $((dur_ns / 1000000)) ms, contended at page cache: $(compaction_stops); again"
  done
}
# fragctl sends its --timeout: the operator's bound (3 s), not the 1 s budget.
cut_outcome cut2 "fragctl compact --timeout 3" FRAGCTL compact --node 0 --timeout 3 --json
log "c: fragctl compact --node 0 --timeout 3 under a 1s budget: $result after $((dur_ns / 1000000)) ms"
[ "$result" = cut ] || die "fragctl compact --timeout 3 ended $result after $((dur_ns / 1000000)) ms, not cut at 3 s"
[ "$dur_ns" -ge 3000000000 ] ||
  die "fragctl compact --timeout 3 was cut after $((dur_ns / 1000000)) ms: not its own 3 s bound"
# The 3 s compaction can leave less than a second's work (a fast host compacted the rest in 955 ms).
fragment_afresh
score=$(node_score)
cut_outcome cut "the compact request" raw_compact
log "c: a compact request of node 0 (score $score) with no bound of its own, under a 1s budget: $result after $((dur_ns / 1000000)) ms"
if [ "$result" != cut ]; then
  [ "$dur_ns" -ge 1000000000 ] ||
    die "the compaction of node 0 ended in $((dur_ns / 1000000)) ms, within the budget: memory not fragmented enough to test"
  die "a compaction write ran $((dur_ns / 1000000)) ms past compaction.cpu_budget 1s and was not cut (result $result)"
fi
! pgrep -x fragd-write -P "$FRAGD_PID" >/dev/null || die "a fragd-write process still runs after the cut"
grep -q "compact node 0 .*: cut.*cut short at its deadline" "$FRAGD_LOG" ||
  die "no log line for the cut: $(grep 'action ' "$FRAGD_LOG" | tail -2)"
sleep 2  # a tick reads the BPF counters
scrape >"$WORK/cut.prom"
cuts=$(metric "$WORK/cut.prom" fragd_actions_total 'result="cut"')
[ "$cuts" -eq 2 ] || die "fragd_actions_total{result=\"cut\"} is $cuts, want 2 (the two requests)"
used=$(awk '$1 == "fragd_compaction_budget_used_seconds" { print $2 }' "$WORK/cut.prom")
awk -v u="$used" 'BEGIN { exit !(u > 0) }' || die "the cut compaction's time is not in the budget (used $used s)"
FRAGCTL status >"$WORK/cut-status.txt" 2>&1 || die "fragctl status failed: $(cat "$WORK/cut-status.txt")"
grep -q "actions cut short at their deadline: 2" "$WORK/cut-status.txt" ||
  die "fragctl status does not show the cut: $(grep -A1 '^policy' "$WORK/cut-status.txt")"
log "c: $(grep -m1 'cut short at its deadline' "$FRAGD_LOG" | sed 's/^<[0-9]>//' | cut -c1-220)"
log "c: budget used $used s; fragd_actions_total{result=\"cut\"} $cuts"
stop_fragd

# --- b: fragd in a pid namespace ------------------------------------------------
# Any compaction will do: the fragmenter ends, and the node compacts in a fraction of a second.
exec 9>&-
wait_for 60 bash -c '! pgrep -x fragmenter >/dev/null' || fail "the fragmenter did not exit"
PORT=$(free_port)
SOCK="$WORK/ns.sock"
FRAGD_LOG="$WORK/fragd-ns.log"
unshare -p -f --mount-proc "$BUILD/fragd" --config "$WORK/act.yaml" --listen "127.0.0.1:$PORT" --socket "$SOCK" \
  >"$FRAGD_LOG" 2>&1 &
NS_PID=$!
PIDS+=("$NS_PID")
wait_scored || die "fragd in a pid namespace did not publish a node score in 30 s"
FRAGD_PID=$(pgrep -P "$NS_PID" -x fragd) || die "no fragd under unshare $NS_PID"
PIDS+=("$FRAGD_PID")
ns_pid=$(awk '/^NSpid:/ { print $NF }' "/proc/$FRAGD_PID/status")
[ "$ns_pid" = 1 ] || die "fragd is not in a pid namespace of its own (NSpid says $ns_pid)"
sleep 1
scrape >"$WORK/b0.prom"
FRAGCTL compact --node 0 >"$WORK/compact-b.txt" 2>&1 || die "fragctl compact failed: $(cat "$WORK/compact-b.txt")"
sleep 2  # a tick reads the BPF counters
scrape >"$WORK/b1.prom"
runs() { metric "$1" fragd_compaction_runs_total "trigger=\"$2\""; }
budget() { awk '$1 == "fragd_compaction_budget_used_seconds" { print $2 }' "$1"; }
f0=$(runs "$WORK/b0.prom" fragd); f1=$(runs "$WORK/b1.prom" fragd)
m0=$(runs "$WORK/b0.prom" manual); m1=$(runs "$WORK/b1.prom" manual)
u0=$(budget "$WORK/b0.prom"); u1=$(budget "$WORK/b1.prom")
log "b: pid namespace (fragd is pid 1 there, $FRAGD_PID here): runs by fragd $f0 -> $f1, manual $m0 -> $m1, budget used $u0 -> $u1 s; $(cat "$WORK/compact-b.txt" | head -1)"
[ "$f1" -gt "$f0" ] || die "fragd's compaction in a pid namespace did not count as trigger fragd ($f0 -> $f1; manual $m0 -> $m1)"
[ "$m1" -eq "$m0" ] || die "fragd's compaction in a pid namespace counted as trigger manual ($m0 -> $m1)"
awk -v a="$u0" -v b="$u1" 'BEGIN { exit !(b > a) }' || die "fragd_compaction_budget_used_seconds did not grow ($u0 -> $u1)"
# A pool grown past the free 2 MiB blocks: fragd's writer stalls in direct compaction,
# and those stalls are fragd's own (marked through a pidfd), not the host's.
fragment 60
want=$(( $(free_blocks9) + 300 ))
sleep 1.5
scrape >"$WORK/c0.prom"
s0=$(vmstat compact_stall)
FRAGCTL pool set 2MB "$want" >"$WORK/pool-c.txt" 2>&1 || log "b: fragctl pool set: $(cat "$WORK/pool-c.txt")"
sleep 2
scrape >"$WORK/c1.prom"
s1=$(vmstat compact_stall)
FRAGCTL pool set 2MB 0 >/dev/null 2>&1 || true
echo 0 >/proc/sys/vm/nr_hugepages
d() { echo $(( $(metric "$WORK/c1.prom" "$1" "$2") - $(metric "$WORK/c0.prom" "$1" "$2") )); }
own=$(d fragd_own_direct_stall_entries_total 'phase="compaction"')
host=$(d fragd_direct_stall_entries_total 'phase="compaction"')
log "b: pool set 2MB $want in the namespace: compact_stall +$((s1 - s0)), fragd's own $own, host $host; $(head -1 "$WORK/pool-c.txt")"
[ "$own" -gt 0 ] || die "the pool's direct compaction in a pid namespace was not counted as fragd's own (own +$own, host +$host, compact_stall +$((s1 - s0)))"
[ $((host * 4)) -le "$own" ] || die "host stall entries +$host beside fragd's own +$own: fragd's own counted as the host's?"
kill -TERM "$FRAGD_PID"
rc=0; wait "$NS_PID" || rc=$?
[ "$rc" -eq 0 ] || die "fragd in a pid namespace exited $rc after SIGTERM"
log "PASS in $((SECONDS - STARTED)) s"
