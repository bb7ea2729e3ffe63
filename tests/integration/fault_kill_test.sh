#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragd killed, stopped and flooded:
#  a. SIGKILL mid-run, then a new fragd on the same control socket: no BPF
#     program or link of the killed one is left (its ids, read from its fds,
#     are gone from bpftool's lists; nothing loaded since the list taken before
#     the first start is left without a live owner), the stale socket is
#     replaced and served, the metrics come back with every program attached.
#  b. SIGTERM while a pool resize runs and while a node compaction runs (each
#     seen "running" through the control socket), with vm.compaction_proactiveness
#     changed by fragd (method proactiveness): exit 0, the action's outcome
#     logged after the signal, proactiveness back to its value before (0), the
#     saved-state file gone, no process left.
#  d. the slow-stall ring buffer (256 KiB, ~2978 events) flooded while fragd is
#     stopped: SIGSTOP, then THP faults and a hugepage burst on fragmented
#     memory with bpf.slow_stall_threshold 1us, then SIGCONT: the drop counter
#     rises, fragd's RSS stays within 2 MiB, fragd serves on.
# Order: a; fragment, b (pool); fragment again, d; fragment again, b
# (compaction), so that each part that needs fragmented memory has it (a pool
# resize only compacts when free blocks are short, faults after a compaction
# hardly stall, and a compaction of compacted memory ends in 0.1 s).
source "$(dirname "$0")/lib.sh"
require_root
command -v bpftool >/dev/null || skip_or_fail "bpftool missing (Debian package bpftool)"
heavy_lock

quiet_memory 20
STATE=/run/fragd/saved-state   # host-wide, whatever the socket
die() { tail -30 "$FRAGD_LOG" | cut -c1-300 >&2; fail "$*"; }

# bpf_ids prog|link: the ids bpftool lists.
bpf_ids() { bpftool -j "$1" show | python3 -c 'import json, sys; print(" ".join(str(p["id"]) for p in json.load(sys.stdin)))'; }
# held_ids prog|link [PID]: ids held open by PID (default: by any process), from /proc/*/fdinfo.
held_ids() {
  python3 - "$1" "${2:-*}" <<'PY'
import glob, sys
key = sys.argv[1] + "_id:"
ids = set()
for f in glob.glob(f"/proc/{sys.argv[2]}/fdinfo/*"):
    try:
        for line in open(f):
            if line.startswith(key):
                ids.add(line.split()[1])
    except OSError:
        pass
print(" ".join(sorted(ids)))
PY
}
# act_and_term JSON: sends an act request, polls its action until fragd says
# "running", then sends fragd SIGTERM at once. Prints the action id.
act_and_term() {
  python3 "$SRC/tests/integration/act_running.py" "$SOCK" "$1" "$FRAGD_PID"
}
# term_checks ID WHAT: after act_and_term, fragd must exit 0 having logged the
# action's outcome after the signal, with proactiveness and the state file restored.
term_checks() {
  local id=$1 what=$2 rc=0 pid=$FRAGD_PID
  wait "$pid" || rc=$?
  [ "$rc" -eq 0 ] || die "fragd exited $rc after SIGTERM during a $what (want 0)"
  local sig_line out_line
  sig_line=$(grep -n 'received Terminated' "$FRAGD_LOG" | head -1 | cut -d: -f1)
  out_line=$(grep -n "^.*action $id $what" "$FRAGD_LOG" | head -1 | cut -d: -f1)
  [ -n "$sig_line" ] || die "no 'received Terminated' line"
  [ -n "$out_line" ] || die "the outcome of action $id ($what) was not logged"
  [ "$out_line" -gt "$sig_line" ] || die "action $id ended before the SIGTERM was handled: not a SIGTERM during the $what"
  [ "$(cat $PRO)" -eq "$BEFORE" ] || die "SIGTERM during a $what left compaction_proactiveness at $(cat $PRO), want $BEFORE"
  grep -q "vm.compaction_proactiveness restored to $BEFORE" "$FRAGD_LOG" || die "no 'restored to $BEFORE' line"
  [ ! -e "$STATE" ] || die "saved-state file $STATE left after SIGTERM during a $what"
  ! kill -0 "$pid" 2>/dev/null || die "fragd $pid still runs"
  ! pgrep -f -- "--socket $SOCK" >/dev/null || die "a process with fragd's socket is left: $(pgrep -af -- "--socket $SOCK")"
  log "SIGTERM during a $what: exit 0, $(sed -n "${out_line}p" "$FRAGD_LOG" | sed 's/^<[0-9]>//' | cut -c1-160)"
}
# act_policy HIGH LOW: method proactiveness, so that fragd changes vm.compaction_proactiveness
# and holds it. Its value is 1, not 90: at 90 kcompactd compacts the hot node in the
# background, and the compaction to be interrupted finds nothing left to do in 10 ms.
act_policy() { proactiveness_policy "$1" "$2" 1 'hugepages: {guard: 1GiB}'; }
pro_is() { [ "$(cat $PRO)" -eq "$1" ]; }
# hold_changed HIGH LOW: starts fragd in act mode on the hot node; returns once it holds
# proactiveness changed, with the value to restore saved.
hold_changed() {
  act_policy "$1" "$2" >"$WORK/act.yaml"
  FRAGD_CONFIG="$WORK/act.yaml" start_fragd
  wait_for 20 pro_is 1 || die "fragd did not change compaction_proactiveness (node score $(node_score), high $1)"
  grep -Eqx "/proc/sys/vm/compaction_proactiveness $BEFORE root=/proc wrote=[0-9]+" "$STATE" || die "the value to restore ($BEFORE) is not in $STATE"
}

# --- a: SIGKILL, then a new fragd on the same socket ---------------------------
progs0=$(bpf_ids prog)
links0=$(bpf_ids link)
cat >"$WORK/observe.yaml" <<'YAML'
mode: observe
pageblocks: {scan: true, interval: 1s}
YAML
FRAGD_CONFIG="$WORK/observe.yaml" start_fragd
sleep 1.5  # mid-run: ticks and pageblock scans under way
my_progs=$(held_ids prog "$FRAGD_PID")
my_links=$(held_ids link "$FRAGD_PID")
attached=$(metric <(scrape) fragd_bpf_program_attached)
[ -n "$my_links" ] && [ "$(wc -w <<<"$my_progs")" -ge "$attached" ] ||
  die "could not read the killed fragd's programs and links from /proc/$FRAGD_PID/fdinfo"
kill -KILL "$FRAGD_PID"
wait "$FRAGD_PID" 2>/dev/null || true
[ -S "$SOCK" ] || die "no socket left behind by the killed fragd: nothing stale to test"
none_left() {
  local progs links id
  progs=" $(bpf_ids prog) "; links=" $(bpf_ids link) "
  for id in $my_progs; do [[ "$progs" != *" $id "* ]] || return 1; done
  for id in $my_links; do [[ "$links" != *" $id "* ]] || return 1; done
}
wait_for 10 none_left || die "programs or links of the killed fragd are still loaded (progs $my_progs, links $my_links)"
# Anything loaded since the first list must belong to a live process (another fragd on this host).
held=" $(held_ids prog) $(held_ids link) "
for kind in prog link; do
  before=" $([ $kind = prog ] && echo "$progs0" || echo "$links0") "
  for id in $(bpf_ids $kind); do
    [[ "$before" == *" $id "* || "$held" == *" $id "* ]] || die "BPF $kind $id is loaded, owned by no process, and was not there before"
  done
done
log "a: SIGKILL left none of its $(wc -w <<<"$my_progs") programs and $(wc -w <<<"$my_links") links"
FRAGD_CONFIG="$WORK/observe.yaml" start_fragd
grep -q "removing stale control socket $SOCK" "$FRAGD_LOG" || die "the stale socket was not noticed"
FRAGCTL status >/dev/null || die "the new fragd does not serve $SOCK"
scrape >"$WORK/a.prom" || die "no /metrics from the new fragd"
[ "$(metric "$WORK/a.prom" fragd_bpf_program_attached)" -eq "$attached" ] ||
  die "the new fragd attached $(metric "$WORK/a.prom" fragd_bpf_program_attached) programs, the killed one $attached"
stop_fragd
log "a: restarted on the stale socket, serves it, $attached programs attached"

# --- b: SIGTERM during a pool resize ------------------------------------------------
# On fresh fragmentation free 2 MiB blocks are short: the resize compacts the node first (seconds).
# Proactiveness is 0 from before the fragmentation: at 20 kcompactd compacts a node scoring
# above 90 on its own, and a run of it under way leaves fragd's compaction of that node
# nothing to do (measured: 0.05 s instead of 2 s). So the value fragd replaces, and must put
# back, is 0.
BEFORE=0
echo $BEFORE >$PRO
fragment 95
hold_changed 40 20
id=$(act_and_term '{"cmd":"pool","size_kib":2048,"count":3000}') || die "no pool resize seen running"
term_checks "$id" "pool 2048kB"
echo 0 >$HP

# --- d: the ring buffer flooded while fragd is stopped ---------------------------
exec 9>&-  # the fragmenter ends; a new one splinters memory again
wait_for 60 bash -c '! pgrep -x fragmenter >/dev/null' || fail "the fragmenter did not exit"
rm -f "$WORK/frag.in"
# No proactive compaction while memory splinters: kcompactd would keep free 2 MiB blocks
# ready (at 20, up to a fifth of free memory), and the faults below would take them without a stall.
echo 0 >$PRO
fragment 95
cat >"$WORK/flood.yaml" <<'YAML'
mode: observe
bpf: {allocations: exact, min_order: 1, slow_stall_threshold: 1us}  # every stall an event, while fragd is stopped too
pageblocks: {scan: false}
YAML
FRAGD_CONFIG="$WORK/flood.yaml" start_fragd
sleep 2
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$FRAGD_PID/status"; }
scrape >"$WORK/d0.prom"
dropped0=$(metric "$WORK/d0.prom" fragd_events_dropped_total)
events0=$(metric "$WORK/d0.prom" fragd_slow_stall_events_total)
rss0=$(rss_kib)
kill -STOP "$FRAGD_PID"
t=$(date +%s%N)
# Madvised THPs touched 512 MiB at a time: each 2 MiB fault that finds no free block
# compacts (defrag: madvise) and is one slow stall. It goes on until the kernel counted
# 4500 direct compactions (one per stalled fault: 1.5 times the ring's capacity), or
# 10 GiB, or MemAvailable would fall below 4 GiB, and holds the memory until the burst
# below is over.
mkfifo "$WORK/thp-hold"
: >"$WORK/thp.out"
python3 - "$WORK/thp-hold" >"$WORK/thp.out" <<'PY' &
import mmap, sys
def field(path, key):
    for line in open(path):
        f = line.split()
        if f[0] == key:
            return int(f[1])
def compact_stall():
    return field("/proc/vmstat", "compact_stall")
chunk, maps = 512 << 20, []
start = compact_stall()
limit = min(10 << 30, field("/proc/meminfo", "MemAvailable:") * 1024 - (4 << 30))
while compact_stall() - start < 4500 and (len(maps) + 1) * chunk <= limit:
    m = mmap.mmap(-1, chunk, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    m.madvise(mmap.MADV_HUGEPAGE)
    for off in range(0, chunk, 2 << 20):
        m[off] = 1
    maps.append(m)
print("touched", len(maps) * chunk >> 20, "MiB, compact_stall +%d" % (compact_stall() - start), flush=True)
open(sys.argv[1]).read()
PY
THP_PID=$!
PIDS+=("$THP_PID")
exec 7<>"$WORK/thp-hold"  # read-write: never blocks, and closing it is the toucher's EOF
wait_for 90 grep -q touched "$WORK/thp.out" || fail "the THP toucher did not finish in 90 s"
thp_kib=$(awk '/^AnonHugePages:/ { print $2 }' "/proc/$THP_PID/smaps_rollup")
# The burst stops 3 GiB short of MemAvailable: the machine is shared, nothing may run out.
cap=$((($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) - 3145728) / 2048))
for n in 2000 4000; do [ "$n" -le "$cap" ] || n=$cap; [ "$n" -gt 0 ] && echo "$n" >$HP; done
got=$(cat $HP)
kill -CONT "$FRAGD_PID"
echo 20 >$PRO
exec 7>&-
wait "$THP_PID" || true
log "d: while fragd was stopped ($((($(date +%s%N) - t) / 1000000)) ms): $(cat "$WORK/thp.out"), $((thp_kib / 2048)) THPs; $got huge pages allocated"
consumed() { [ "$(metric <(scrape) fragd_slow_stall_events_total)" -gt "$events0" ]; }
wait_for 10 consumed || die "fragd read no slow-stall event after SIGCONT"
sleep 2
scrape >"$WORK/d1.prom" || die "no /metrics after the flood"
dropped1=$(metric "$WORK/d1.prom" fragd_events_dropped_total)
events1=$(metric "$WORK/d1.prom" fragd_slow_stall_events_total)
stalls=$(metric "$WORK/d1.prom" fragd_alloc_total 'outcome="stalled"')
failed=$(metric "$WORK/d1.prom" fragd_alloc_total 'outcome="failed"')
rss1=$(rss_kib)
echo 0 >$HP
log "d: $stalls stalled and $failed failed allocations; events read $events0 -> $events1, dropped $dropped0 -> $dropped1; VmRSS $rss0 -> $rss1 kB"
[ "$dropped1" -gt "$dropped0" ] || die "the drop counter did not rise: the ring never filled ($((events1 - events0)) events read)"
# Under ASan (make sanitize) freed memory sits in its quarantine: RSS measures the sanitizer; LeakSanitizer checks leaks.
sanitized || [ "$rss1" -le $((rss0 + 2048)) ] || die "VmRSS grew from $rss0 to $rss1 kB with the flood (bound +2 MiB)"
FRAGCTL status >/dev/null || die "fragctl status failed after the flood"
stop_fragd

# --- b: SIGTERM during a node compaction -------------------------------------------
# The faults and the burst compacted much of memory, and what they left takes a node
# compaction 0.1 to 0.4 s: memory is splintered once more, for 2 to 3 s of work.
exec 9>&-
wait_for 60 bash -c '! pgrep -x fragmenter >/dev/null' || fail "the fragmenter did not exit"
rm -f "$WORK/frag.in"
echo $BEFORE >$PRO  # as for the pool resize above
fragment 95
hold_changed 40 20
id=$(act_and_term '{"cmd":"compact","node":0}') || die "no compaction seen running"
term_checks "$id" "compact node 0"
log "PASS in $((SECONDS - STARTED)) s"
