#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Act mode against a fragmented machine:
#  1. observe and dry_run write nothing to the kernel: fragd runs under strace
#     and opens no /proc/sys or /sys file for writing, while its policy wants
#     a compaction and a pool;
#  2. method proactiveness raises vm.compaction_proactiveness, and SIGTERM puts
#     the old value back (exit 0); a value left by a killed fragd is restored
#     at the next start;
#  3a. method pool: a reserve goal of 400 more free 2 MiB blocks is met by a
#     temporary pool in fragd's own process, put back to 0 at once (and a node
#     compaction that stops at the goal, for what the pool's writes left); the
#     direct compaction it causes counts as fragd's (trigger fragd, the
#     fragd_own_* counters), not as the host's stalls;
#  3. method node, fragd running from before memory is fragmented again, with
#     compaction.settle 5s: no compaction starts until the fragmenter is ready
#     (while it gives 3 pages of every 4 back the node is hot, and fragd says
#     "settling"); then fragd compacts the hot node (score above high 40) and the
#     compaction helps (the score falls by backoff.min_gain, 8, or more: result
#     ok); the pool target is reached, and the action is visible in the metrics,
#     the log and `fragctl status`. Below the low threshold (20) is not asserted:
#     how far the kernel's node compaction gets depends on what it can move (one
#     CI run reached 3; another stopped at 49 after 3a's goal-sized compaction,
#     and a further compaction then ended no_gain), which fragd does not control;
#  4. fragctl compact / pool set (grow and shrink: the freed pages free 2 MiB
#     blocks when it returns, a CPU's page list drained) / reload (bad file kept,
#     counted; SIGHUP with a good one applied).
source "$(dirname "$0")/lib.sh"
require_root
command -v strace >/dev/null || skip_or_fail "strace missing (Debian package strace)"
heavy_lock

quiet_memory 0

# cpu_budget 30s, the largest: a whole-node compaction of this fragmented node takes longer
# than the 6 s default (a CI run: cut at 6.01 s with the score at 97 -> 21), and the test
# wants one that runs to its end; fault_compact_test checks the cut.
policy() {  # policy MODE DRY_RUN METHOD POOL_COUNT
  cat <<YAML
mode: $1
dry_run: $2
compaction:
  method: $3
  cpu_budget: 30s
  score: {high: 40, low: 20}
  reserve: {memory_percent: 0}
  min_interval: 2s
  settle: ${SETTLE:-0s}
  proactiveness: {value: 90, hold: 60s}
hugepages:
  guard: 1GiB
  pools:
    - {size: 2MB, node: all, count: $4}
YAML
}

# How each compaction run ended, for the failure messages (compaction_stops).
trace_start compaction/mm_compaction_end
fragment 95

# 1. observe and dry_run: no write to the kernel.
for variant in "observe false" "act true"; do
  set -- $variant
  policy "$1" "$2" node 200 >"$WORK/quiet.yaml"
  PORT=$(free_port); SOCK="$WORK/fragd.sock"; FRAGD_LOG="$WORK/quiet-$1.log"
  # In a sanitized build (make sanitize) LeakSanitizer's check at exit needs ptrace,
  # which strace holds: it is off here only; every other fragd run checks for leaks.
  ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
  strace -f -qq -e trace=openat,open,creat,truncate -o "$WORK/strace-$1.txt" \
    "$BUILD/fragd" --config "$WORK/quiet.yaml" --listen "127.0.0.1:$PORT" --socket "$SOCK" \
    >"$FRAGD_LOG" 2>&1 &
  STRACE_PID=$!
  PIDS+=("$STRACE_PID")
  wait_for 10 pgrep -P "$STRACE_PID" >/dev/null || fail "fragd did not start under strace"
  FRAGD_PID=$(pgrep -P "$STRACE_PID")
  wait_scored || { cat "$FRAGD_LOG" >&2; fail "fragd ($1) did not publish a node score in 30 s"; }
  score=$(node_score)
  [ "$score" -gt 40 ] || fail "node score $score is not above the policy's high threshold 40: memory not fragmented enough to test"
  if [ "$1" = act ]; then
    # dry_run decides: both the compaction and the pool are logged as dry_run.
    wait_for 20 grep -q 'compact node 0 .*: dry_run' "$FRAGD_LOG" || { cat "$FRAGD_LOG" >&2; fail "dry_run did not decide a compaction"; }
    wait_for 20 grep -q 'pool 2048kB (global) .*: dry_run' "$FRAGD_LOG" || { cat "$FRAGD_LOG" >&2; fail "dry_run did not decide the pool"; }
  else
    sleep 5
    ! grep -q '^.*action ' "$FRAGD_LOG" || fail "observe mode ran an action: $(grep 'action ' "$FRAGD_LOG")"
  fi
  scrape >"$WORK/quiet.prom"
  kill -TERM "$FRAGD_PID"
  rc=0; wait "$STRACE_PID" || rc=$?   # strace exits with fragd's status
  [ "$rc" -eq 0 ] || { cat "$FRAGD_LOG" >&2; fail "fragd ($1) exited $rc after SIGTERM"; }
  writes=$(grep -E 'open(at)?\(.*"/(proc/sys|sys)/[^"]*".*O_(WRONLY|RDWR)|creat\(|truncate\(' "$WORK/strace-$1.txt" | grep -v 'tracing' || true)
  [ -z "$writes" ] || fail "mode $1 (dry_run $2) opened kernel files for writing:\n$writes"
  [ "$(cat $HP)" -eq 0 ] || fail "mode $1 changed nr_hugepages to $(cat $HP)"
  [ "$(cat $PRO)" -eq 0 ] || fail "mode $1 changed compaction_proactiveness to $(cat $PRO)"
  runs=$(metric "$WORK/quiet.prom" fragd_compaction_runs_total 'trigger="fragd"')
  [ "$runs" -eq 0 ] || fail "mode $1: $runs compaction runs by fragd"
  log "mode $1 dry_run $2: no kernel file opened for writing, pool and proactiveness untouched"
done

# 2a. A value left by a fragd killed while holding proactiveness raised is put back
# by the next act-mode fragd (dry_run: it writes nothing else).
STATE=/run/fragd/saved-state
[ ! -e $STATE ] || fail "$STATE exists before the test: run fragd --restore first"
mkdir -p /run/fragd
on_exit "rm -f $STATE"
(umask 077; echo '/proc/sys/vm/compaction_proactiveness 0' >$STATE)
echo 37 > $PRO
policy act true node 0 >"$WORK/recover.yaml"
FRAGD_CONFIG="$WORK/recover.yaml" start_fragd
[ "$(cat $PRO)" -eq 0 ] || fail "the saved proactiveness 0 was not restored at start (reads $(cat $PRO))"
grep -q 'left changed by a fragd that did not exit cleanly' "$FRAGD_LOG" || fail "no warning about the restored value"
[ ! -e $STATE ] || fail "the state file was not removed after restoring"
stop_fragd

# 2b. method proactiveness: raised while the node is hot; SIGTERM restores it.
policy act false proactiveness 0 >"$WORK/pro.yaml"
FRAGD_CONFIG="$WORK/pro.yaml" start_fragd
pro_is() { [ "$(cat $PRO)" -eq "$1" ]; }
wait_for 20 pro_is 90 || { cat "$FRAGD_LOG" >&2; fail "proactiveness was not raised to 90"; }
grep -Eqx '/proc/sys/vm/compaction_proactiveness 0 root=/proc wrote=[0-9]+' $STATE || fail "the value to restore was not saved before raising"
stop_fragd
[ "$(cat $PRO)" -eq 0 ] || fail "SIGTERM left compaction_proactiveness at $(cat $PRO), want 0"
[ ! -e $STATE ] || fail "state file left after a clean exit"
log "method proactiveness: raised to 90, restored to 0 on SIGTERM"

# 3a. method pool: the reserve asks for 400 free 2 MiB blocks more than there are.
goal_policy() {  # goal_policy BLOCKS
  cat <<YAML
mode: act
compaction:
  method: pool
  score: {enabled: false}
  demand: {enabled: false}
  reserve: {order: 9, blocks: $1, memory_percent: 0}
  min_interval: 60s
hugepages: {guard: 1GiB}
YAML
}
# The check needs a pool write that compacts. The kernel can grant the goal's pool without
# migrating a page (free blocks that appear during the write, or reclaim: one full run in ten
# did, 0 pages migrated in 0.03 s), and then there is nothing to attribute: the kernel's own
# pgmigrate_success tells, and the section is tried again, at most 3 times, with the kernel's
# counters for the try in the log. A compaction that fragd counts wrongly still fails at once.
kdelta() {  # kdelta FILE0 FILE1: the reclaim and compaction counters that moved between them
  awk 'NR == FNR { a[$1] = $2; next } $1 ~ /^(compact_(stall|fail|success|migrate_scanned)|pgmigrate_success|pgsteal_(direct|kswapd)|pgscan_direct)$/ && $2 != a[$1] { printf "%s +%d ", $1, $2 - a[$1] }' "$1" "$2"
}
goal_try() {  # goal_try N: 0 when a pool write compacted, 2 when the kernel migrated nothing
  # Started with no goal, so that the counters are read before fragd acts.
  goal_policy 0 >"$WORK/goal.yaml"
  FRAGD_CONFIG="$WORK/goal.yaml" start_fragd
  # kcompactd may still be finishing the proactive compaction of 2b: wait until the free
  # blocks hold still, then ask for 400 more than there are.
  wait_for 60 steady || log "free 2 MiB blocks still moving after 60 s: $(free_blocks9)"
  scrape >"$WORK/goal0.prom"
  cp /proc/vmstat "$WORK/vmstat0"
  have=$(free_blocks9)
  goal=$((have + 400))
  goal_policy $goal >"$WORK/goal.yaml"
  kill -HUP "$FRAGD_PID"
  wait_for 120 grep -qE "action [0-9]+ compact node 0 \[reserve: .*goal $goal free order-9 blocks.*\]: (ok|no_gain)" "$FRAGD_LOG" ||
    { cat "$FRAGD_LOG" >&2; fail "no goal-sized compaction of node 0 in 120 s"; }
  made=$(free_blocks9)
  sleep 2
  scrape >"$WORK/goal1.prom"
  cp /proc/vmstat "$WORK/vmstat1"
  line=$(grep -E "action [0-9]+ compact node 0" "$FRAGD_LOG" | head -1)
  log "method pool, try $1: $line"
  local moved
  moved=$(( $(awk '$1 == "pgmigrate_success" { print $2 }' "$WORK/vmstat1") - $(awk '$1 == "pgmigrate_success" { print $2 }' "$WORK/vmstat0") ))
  [ "$moved" -gt 0 ] && return 0
  log "method pool, try $1: the kernel granted the pool with no page migrated: $(kdelta "$WORK/vmstat0" "$WORK/vmstat1")"
  stop_fragd
  return 2
}
steady() { local a; a=$(free_blocks9); sleep 2; [ "$(free_blocks9)" -eq "$a" ]; }
for try in 1 2 3; do
  rc=0; goal_try $try || rc=$?
  [ $rc -eq 0 ] && break
  [ $try -lt 3 ] || fail "3 tries of the goal-sized pool, and the kernel migrated no page in any: no compaction to attribute"
done
s0=$(awk '$1 == "compact_stall" { print $2 }' "$WORK/vmstat0")
s1=$(awk '$1 == "compact_stall" { print $2 }' "$WORK/vmstat1")
[ "$(cat $HP)" -eq 0 ] || fail "the temporary pool was left at $(cat $HP) pages"
[ ! -e $STATE ] || fail "the temporary pool's size is still in $STATE after the action: $(cat $STATE)"
grep -q "held [0-9]* of $goal pages" <<<"$line" || fail "the outcome does not say what the pool held: $line"
# Free blocks right after: the goal, less what others took meanwhile (10%).
[ "$made" -ge $((goal * 9 / 10)) ] || fail "free 2 MiB blocks $have -> $made, goal $goal"
d() { echo $(( $(metric "$WORK/goal1.prom" "$1" "$2") - $(metric "$WORK/goal0.prom" "$1" "$2") )); }
own=$(d fragd_own_direct_stall_entries_total 'phase="compaction"')
host=$(d fragd_direct_stall_entries_total 'phase="compaction"')
runs=$(d fragd_compaction_runs_total 'trigger="fragd"')
direct=$(d fragd_compaction_runs_total 'trigger="direct"')
[ "$own" -gt 0 ] || fail "no direct compaction counted as fragd's own (the pool grew from $have free blocks to $goal)"
[ "$runs" -gt 0 ] || fail "no compaction run counted as trigger fragd"
# BPF sees every entry the kernel counts (and those it returns from as COMPACT_SKIPPED
# before counting); fragd's own are not the host's: nothing else here allocates 2 MiB pages.
[ $((own + host)) -ge $((s1 - s0)) ] || fail "compact_stall +$((s1 - s0)), fragd own $own + host $host"
[ $((host * 4)) -le "$own" ] || fail "host stall entries +$host while fragd's own pool made $own: fragd's own counted as the host's?"
log "method pool: free 2 MiB blocks $have -> $made (goal $goal), compact_stall +$((s1 - s0)) = fragd's own $own + host $host, $runs runs by fragd ($direct direct by others)"
stop_fragd

# 3. method node: a compaction that helps, pool target reached.
# The pool target starts at 0 so that the score alone drives the first action (a pool
# write compacts too and could take the score below the threshold first); the target is
# raised by SIGHUP once the compaction is seen.
# 3a's action may end in a node compaction (when the kernel defers direct compaction,
# the pool's writes leave blocks missing): fragment memory again first, with fragd
# (compaction.settle 5s) already running. The node turns hot while the fragmenter gives 3 pages
# of every 4 back; a compaction then would move pages about to be freed (the act benchmark's
# runs did, before the wait). A watcher notes when the fragmenter said "ready", when fragd
# started its first compaction (its debug line) and whether `fragctl status` said "settling".
WANT=1000
export SETTLE=5s
policy act false node 0 >"$WORK/act.yaml"
unfragment
rm -f "$WORK/t_ready" "$WORK/t_act" "$WORK/settling"
FRAGD_CONFIG="$WORK/act.yaml" start_fragd --log-level debug
(
  while :; do
    [ -s "$WORK/t_ready" ] || ! grep -q '^ready' "$WORK/frag.out" 2>/dev/null || date +%s.%N >"$WORK/t_ready"
    [ -s "$WORK/t_act" ] || ! grep -q 'starting action [0-9]* compact' "$FRAGD_LOG" || date +%s.%N >"$WORK/t_act"
    [ -s "$WORK/settling" ] || ! FRAGCTL status 2>/dev/null | grep -q ' settling' || echo seen >"$WORK/settling"
    sleep 0.2
  done
) &
WATCH_PID=$!
PIDS+=("$WATCH_PID")
fragment 95
sleep 1.5  # a tick after "ready" (settle 5s: fragd cannot have started a compaction yet)
score0=$(node_score)
log "fragmented again with fragd running; node 0 score $score0"
[ "$score0" -gt 40 ] || fail "node score $score0 is not above the policy's high threshold 40 after fragmenting again: memory not fragmented enough to test"
wait_for 120 grep -q "compact node 0 .*: ok" "$FRAGD_LOG" ||
  { cat "$FRAGD_LOG" >&2; fail "no compaction of node 0 helped in 120 s [$(compaction_stops)]"; }
sleep 2
score1=$(node_score)
kill "$WATCH_PID" 2>/dev/null || true
wait "$WATCH_PID" 2>/dev/null || true
[ -s "$WORK/t_ready" ] || fail "the watcher never saw the fragmenter's 'ready'"
[ -s "$WORK/t_act" ] || { cat "$FRAGD_LOG" >&2; fail "fragd logged no 'starting action N compact' line, though it compacted"; }
after=$(awk -v r="$(cat "$WORK/t_ready")" '{ printf "%.1f", $1 - r }' "$WORK/t_act")
awk -v r="$(cat "$WORK/t_ready")" '{ exit !($1 > r) }' "$WORK/t_act" ||
  { grep 'action ' "$FRAGD_LOG" >&2; fail "fragd started a compaction ${after#-} s before the fragmenter was ready: compaction.settle 5s did not wait for free memory to settle"; }
[ -s "$WORK/settling" ] || fail "fragctl status never said 'settling' while the fragmenter gave memory back and the node was hot"
log "compaction.settle: fragd's first compaction started $after s after 'ready'; status said 'settling' before"
policy act false node $WANT >"$WORK/act.yaml"
kill -HUP "$FRAGD_PID"
wait_for 120 grep -q "pool 2048kB (global) .*: ok" "$FRAGD_LOG" || { cat "$FRAGD_LOG" >&2; fail "pool target $WANT not reached in 120 s"; }
grep 'action ' "$FRAGD_LOG" | sed 's/^/    /'
[ "$(cat $HP)" -eq $WANT ] || fail "nr_hugepages is $(cat $HP), want the target $WANT"
# How far the kernel's node compaction gets depends on what earlier runs left (3 in CI runs on a
# fresh machine; 49 after 3a's goal-sized compaction in one run: 408303 pages migrated): the
# test holds fragd to what it controls, a compaction that helped (the score fell by at least
# backoff.min_gain, 8, which is what "ok" means) and reported as such.
[ "$score1" -le $((score0 - 8)) ] || fail "node score $score0 -> $score1 after fragd's compaction: it did not help [$(compaction_stops)]"
scores() { sed -E 's/.*: [a-z_]+, score ([0-9]+) -> ([0-9]+).*/\1 \2/' <<<"$1"; }
read -r b a < <(scores "$(grep -m1 "compact node 0 .*: ok, score" "$FRAGD_LOG")")
[ "$a" -le $((b - 8)) ] || fail "the compaction logged ok took the score from $b to $a: want a fall of 8 or more"
# fragd_action_score_percent holds node 0's last compaction (min_interval 2s: by now it may be a
# later one than the ok), published at the next tick: it must come to equal that one's line.
gauge_is_last() {
  read -r b a < <(scores "$(grep -E "action [0-9]+ compact node 0 .*: [a-z_]+, score [0-9]+ -> " "$FRAGD_LOG" | tail -1)")
  scrape >"$WORK/act.prom"
  LAST="$b -> $a"
  GAUGE="$(metric "$WORK/act.prom" fragd_action_score_percent 'node="0",when="before"') -> $(
    metric "$WORK/act.prom" fragd_action_score_percent 'node="0",when="after"')"
  [ "$GAUGE" = "$LAST" ]
}
wait_for 5 gauge_is_last || fail "fragd_action_score_percent says $GAUGE, node 0's last compaction logged $LAST"
ok=$(metric "$WORK/act.prom" fragd_actions_total 'action="compact",node="0",result="ok"')
[ "$ok" -ge 1 ] || fail "fragd_actions_total has no ok compaction of node 0"
migrated=$(metric "$WORK/act.prom" fragd_action_pages_migrated_total 'action="compact"')
bpf_migrated=$(metric "$WORK/act.prom" fragd_compaction_pages_migrated_total 'trigger="fragd"')
[ "$migrated" -gt 0 ] || fail "the compaction migrated no page"
[ "$migrated" -le "$bpf_migrated" ] || fail "actions claim $migrated pages, BPF saw $bpf_migrated by trigger fragd"
target=$(metric <(scrape) fragd_hugepages_target 'node="all",size="2048kB"')
[ "$target" -eq $WANT ] || fail "fragd_hugepages_target = $target, want $WANT"
FRAGCTL status >"$WORK/status.txt"
grep -q 'compact' "$WORK/status.txt" || { cat "$WORK/status.txt"; fail "fragctl status shows no action"; }
log "compacted: score $score0 -> $score1, $migrated pages migrated; pool $WANT/$WANT"

# 4. On demand.
FRAGCTL compact --node 0 >"$WORK/compact.txt" || { cat "$WORK/compact.txt"; fail "fragctl compact failed"; }
log "fragctl compact: $(cat "$WORK/compact.txt")"
# The shrink frees $WANT - 300 pages: each is a free 2 MiB block when fragctl returns, but for
# the floor of the CPUs' page lists (their high_min in /proc/zoneinfo), which fragd's drain
# leaves. Without the drain a page list keeps far more (Linux 6.7+ grows it while a CPU frees).
free0=$(free_blocks9)
FRAGCTL pool set 2MB 300 >"$WORK/pool.txt" || { cat "$WORK/pool.txt"; fail "fragctl pool set (shrink) failed"; }
free1=$(free_blocks9)
[ "$(cat $HP)" -eq 300 ] || fail "fragctl pool set 2MB 300 left nr_hugepages at $(cat $HP)"
log "fragctl pool set 2MB 300: $(cat "$WORK/pool.txt")"
read -r _ floor < <(page_lists)
floor=$(((floor + 511) / 512))
[ $((free1 - free0)) -ge $((WANT - 300 - floor)) ] ||
  fail "the shrink freed $((WANT - 300)) pages, free 2 MiB blocks $free0 -> $free1: more than the page lists' floor of $floor blocks missing [$(grep 'pool 2048kB' "$FRAGD_LOG" | tail -1)]"
log "shrink: free 2 MiB blocks $free0 -> $free1 (the page lists' floor $floor blocks)"
sudo_out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$(unprivileged "$BUILD/fragctl")" --socket "$SOCK" compact 2>&1) &&
  fail "a non-root fragctl compact was accepted: $sudo_out"
echo "$sudo_out" | grep -qiE 'needs root|permission denied' || fail "non-root refusal does not say why: $sudo_out"

# A bad reload keeps the running policy and is counted; a good SIGHUP applies.
cp "$WORK/act.yaml" "$WORK/act.good"
printf 'compaction:\n  score: {high: 10, low: 30}\n' >"$WORK/act.yaml"
FRAGCTL reload 2>"$WORK/reload.err" && fail "fragctl reload accepted low >= high"
grep -q 'compaction.score' "$WORK/reload.err" || fail "reload error does not name the key: $(cat "$WORK/reload.err")"
scraped_is() { [ "$(metric <(scrape) "$1" "$2")" -eq "$3" ]; }
wait_for 5 scraped_is fragd_policy_reloads_total 'result="error"' 1 || fail "failed reload not counted"
[ "$(metric <(scrape) fragd_policy_info 'mode="act"')" -eq 1 ] || fail "the running policy was not kept after a bad reload"
sed 's/^mode: act/mode: observe/' "$WORK/act.good" >"$WORK/act.yaml"
kill -HUP "$FRAGD_PID"
wait_for 5 scraped_is fragd_policy_info 'mode="observe"' 1 || fail "SIGHUP did not apply the new policy"
FRAGCTL compact 2>"$WORK/observe.err" && fail "observe mode accepted fragctl compact"
grep -q 'mode: act' "$WORK/observe.err" || fail "observe refusal does not name the fix: $(cat "$WORK/observe.err")"
stop_fragd
log "PASS"
