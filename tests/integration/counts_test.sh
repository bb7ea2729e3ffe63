#!/usr/bin/env bash
# Fragments memory as DESIGN.md describes, asks for 2 MiB huge pages with
# on-demand compaction only, and checks fragd's counts against the kernel's:
#   order-9 allocations granted   vs  the hugetlb pool's growth
#   direct compaction entries     vs  /proc/vmstat compact_stall
#   pages migrated (all triggers) vs  /proc/vmstat pgmigrate_success
# and that every stall reaches `fragctl trace` and the scrape passes `promtool check metrics`.
source "$(dirname "$0")/lib.sh"
require_root
command -v promtool >/dev/null || skip_or_fail "promtool missing (Debian package prometheus)"
heavy_lock

HP=/proc/sys/vm/nr_hugepages
save_sysctl /proc/sys/vm/compaction_proactiveness
save_sysctl $HP
RESTORE+=("echo 0 > $HP")   # runs first on exit: free the pool before anything else
echo 0 > /proc/sys/vm/compaction_proactiveness
echo 0 > $HP

# Every stall becomes a trace event, so the trace stream can be counted too.
printf 'mode: observe\nbpf:\n  slow_stall_threshold: 1us\n' >"$WORK/fragd.yaml"
FRAGD_CONFIG="$WORK/fragd.yaml" start_fragd

log "fragmenting 95% of available memory (keeps 1 of every 4 pages)"
mkfifo "$WORK/hold"
"$BUILD/fragmenter" --percent 95 <"$WORK/hold" >"$WORK/frag.out" &
PIDS+=("$!")
exec 9>"$WORK/hold"
# Touching memory the host has taken back is slow: allow 6 minutes.
wait_for 360 grep -q '^ready' "$WORK/frag.out" || fail "fragmenter did not get ready in 360 s"
log "fragmented: $(cat "$WORK/frag.out")"
sleep 1.5   # one tick so the baseline includes the fragmenting itself

scrape >"$WORK/before.prom"
stall0=$(vmstat compact_stall); mig0=$(vmstat pgmigrate_success)

"$BUILD/fragctl" --socket "$SOCK" trace --json >"$WORK/trace.jsonl" &
TRACE_PID=$!
PIDS+=("$TRACE_PID")
sleep 0.5

WANT=3000
log "asking for $WANT x 2 MiB huge pages in one write"
echo $WANT > $HP
granted=$(cat $HP)
sleep 1.5   # let a tick read the maps
kill -INT "$TRACE_PID"; wait "$TRACE_PID" || true

scrape >"$WORK/after.prom"
stall1=$(vmstat compact_stall); mig1=$(vmstat pgmigrate_success)
echo 0 > $HP

d() { echo $(( $(metric "$WORK/after.prom" "$1" "$2") - $(metric "$WORK/before.prom" "$1" "$2") )); }
ok9=$(d fragd_alloc_total 'order="9",outcome="(fast|stalled)"')
stalled9=$(d fragd_alloc_total 'order="9",outcome="stalled"')
failed9=$(d fragd_alloc_total 'order="9",outcome="failed"')
entries=$(d fragd_direct_stall_entries_total 'phase="compaction"')
migrated=$(d fragd_compaction_pages_migrated_total '')
stalls=$((stall1 - stall0)); pgmig=$((mig1 - mig0))

log "pool granted $granted/$WANT; fragd order-9 granted $ok9 (stalled $stalled9), failed $failed9"
log "direct compaction: fragd $entries entries, kernel compact_stall +$stalls"
log "pages migrated: fragd $migrated, kernel pgmigrate_success +$pgmig"

[ "$granted" -gt 0 ] || fail "no huge page was granted: the machine could not run this test"
[ "$stalled9" -gt 0 ] || fail "no stalled order-9 allocation seen: memory was not fragmented enough to test"
# Every page that entered the pool is one order-9 allocation; other order-9
# users (THP, khugepaged) may add a few.
[ "$ok9" -ge "$granted" ] || fail "fragd saw $ok9 granted order-9 allocations, fewer than the $granted pool pages"
within "$ok9" "$granted" 2 || fail "fragd's $ok9 granted order-9 allocations differ from the pool's $granted by > 2%"
within "$entries" "$stalls" 5 || fail "fragd's $entries direct compaction entries differ from compact_stall +$stalls by > 5%"
within "$migrated" "$pgmig" 5 || fail "fragd's $migrated migrated pages differ from pgmigrate_success +$pgmig by > 5%"

# The stall histogram holds every stalled order-9 allocation: the granted ones
# and the failures that stalled (failures without a stall are not in it).
hist_ok=$(d fragd_alloc_stall_seconds_count 'order="9",result="success"')
hist_fail=$(d fragd_alloc_stall_seconds_count 'order="9",result="failure"')
[ "$hist_ok" -eq "$stalled9" ] || fail "stall histogram (success) holds $hist_ok, want the $stalled9 stalled allocations"
[ "$hist_fail" -le "$failed9" ] || fail "stall histogram (failure) holds $hist_fail > $failed9 failed allocations"

# Every order-9 stall (threshold 1us) reached `fragctl trace`, or was counted as dropped.
traced=$(grep -c '"order":9,' "$WORK/trace.jsonl" || true)
dropped=$(( $(d fragd_events_dropped_total '') + $(d fragd_trace_events_unsent_total '') ))
log "trace: $traced order-9 events streamed, $dropped dropped; histogram holds $((hist_ok + hist_fail))"
[ $((traced + dropped)) -ge $((hist_ok + hist_fail)) ] ||
  fail "fragctl trace streamed $traced + $dropped dropped events, fewer than the $((hist_ok + hist_fail)) order-9 stalls"
[ "$traced" -le $((hist_ok + hist_fail)) ] || fail "fragctl trace streamed $traced order-9 events, more than $((hist_ok + hist_fail)) stalls"

promtool check metrics <"$WORK/after.prom" || fail "promtool check metrics rejected the scrape"
stop_fragd
log "PASS"
