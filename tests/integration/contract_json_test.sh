#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragctl's --json output is a contract with scripts: the key paths of every command that has
# --json must be those tests/contract/fragctl-json.txt lists (tests/contract/keypaths.py says
# how paths are written). A live fragd in act mode with dry_run (it decides and writes nothing)
# answers hist, status, map, compact, pool set, cost, top and trace.
# FRAGD_CONTRACT_OUT=DIR keeps each command's output there (to record the unit tests' answers).
source "$(dirname "$0")/lib.sh"
require_root
heavy_lock  # the trace's stall comes from filling the hugetlb pool past the free 2 MiB blocks

LIST="$SRC/tests/contract/fragctl-json.txt"
KEYS="$SRC/tests/contract/keypaths.py"
[ -f "$LIST" ] || fail "$LIST is missing"
OUT="${FRAGD_CONTRACT_OUT:-$WORK/out}"
mkdir -p "$OUT"

sed -e 's/^mode: observe$/mode: act/' -e 's/^dry_run: false$/dry_run: true/' \
  -e 's/^  allocations: adaptive$/  allocations: exact/' \
  -e 's/^  slow_stall_threshold: 10ms$/  slow_stall_threshold: 1us/' "$SRC/configs/fragd.yaml" >"$WORK/act.yaml"
grep -q '^mode: act$' "$WORK/act.yaml" && grep -q '^dry_run: true$' "$WORK/act.yaml" ||
  fail "configs/fragd.yaml has no 'mode: observe' and 'dry_run: false' lines to turn into a dry run"
grep -q '^  slow_stall_threshold: 1us$' "$WORK/act.yaml" ||
  fail "configs/fragd.yaml has no '  slow_stall_threshold: 10ms' line to lower (every stall must reach the trace)"
FRAGD_CONFIG="$WORK/act.yaml" start_fragd
wait_scored || fail "fragd published no node score within 30 s"
FRAGCTL() { "$BUILD/fragctl" --socket "$SOCK" "$@"; }

# An order-9 allocation of our own, so that hist has an order to show.
save_sysctl /proc/sys/vm/nr_hugepages
echo 1 > /proc/sys/vm/nr_hugepages; echo 0 > /proc/sys/vm/nr_hugepages

# The trace stream runs in the background while the others are asked.
timeout -s INT 60 "$BUILD/fragctl" --socket "$SOCK" trace --json >"$OUT/trace.json" &
TRACE_PID=$!
PIDS+=("$TRACE_PID")
# A stall for it: a pool write of 64 huge pages more than there are free 2 MiB blocks makes
# the kernel compact or reclaim for the last ones (order 9, direct: a stall of this shell),
# and with slow_stall_threshold 1us every stall is a trace line.
# fragctl gives no sign that its stream is open (a sanitized fragctl takes more than the second
# once waited here): the write is made again, up to 10 times 2 s apart, until a line comes, and
# the kernel's own record (compact_stall, allocstall_*) says whether the writes stalled at all.
stalls() { awk '$1 == "compact_stall" || $1 ~ /^allocstall_/ { n += $2 } END { print n + 0 }' /proc/vmstat; }
k0=$(stalls)
for try in $(seq 10); do
  sleep 1
  echo $(($(free_blocks9) + 64)) > /proc/sys/vm/nr_hugepages
  echo 0 > /proc/sys/vm/nr_hugepages
  wait_for 2 test -s "$OUT/trace.json" && break
done
test -s "$OUT/trace.json" ||
  fail "no trace line after $try pool writes past the free 2 MiB blocks (order 9), 3 s each; the kernel's record: $(($(stalls) - k0)) direct compactions and reclaims in them"
log "a trace line after $try pool write(s) past the free 2 MiB blocks"

FRAGCTL hist --json >"$OUT/hist.json" || fail "fragctl hist --json failed"
FRAGCTL hist --json --interval 0.5 --count 1 >>"$OUT/hist.json" || fail "fragctl hist --json --interval failed"
FRAGCTL status --json >"$OUT/status.json" || fail "fragctl status --json failed"
FRAGCTL map --json --max-age 0 >"$OUT/map.json" || fail "fragctl map --json failed"
FRAGCTL compact --node 0 --timeout 60 --json >"$OUT/compact.json" || fail "fragctl compact --json failed (dry_run)"
pool=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)
FRAGCTL pool set 2MB "$pool" --timeout 60 --json >"$OUT/pool.json" || fail "fragctl pool set --json failed (dry_run)"
FRAGCTL cost --seconds 0.5 --json >"$OUT/cost.json" || fail "fragctl cost --json failed"
FRAGCTL top --once --json >"$OUT/top.json" || fail "fragctl top --once --json failed"
FRAGCTL top --json --interval 0.5 --count 1 >>"$OUT/top.json" || fail "fragctl top --json --interval failed"
# status once more: now with the actions above among its last actions.
FRAGCTL status --json >>"$OUT/status.json" || fail "fragctl status --json failed"
# fragctl trace ends on SIGINT (through its signalfd). Once, under ASan, it did not, and the test
# waited for it until ctest's timeout: now a stream still there 10 s after the signal fails the
# test at once, with where timeout and fragctl were.
kill -INT "$TRACE_PID" 2>/dev/null || true
gone() { ! kill -0 "$1" 2>/dev/null; }
if ! wait_for 10 gone "$TRACE_PID"; then
  where=
  for p in "$TRACE_PID" $(pgrep -P "$TRACE_PID"); do
    where+="pid $p $(cat "/proc/$p/comm" 2>/dev/null): state $(awk '$1 == "State:" { print $2 }' "/proc/$p/status" 2>/dev/null), wchan $(cat "/proc/$p/wchan" 2>/dev/null), blocked $(awk '$1 == "SigBlk:" { print $2 }' "/proc/$p/status" 2>/dev/null), pending $(awk '$1 == "ShdPnd:" { print $2 }' "/proc/$p/status" 2>/dev/null); "
  done
  fail "fragctl trace did not exit within 10 s of SIGINT: $where"
fi
wait "$TRACE_PID" 2>/dev/null || true

bad=0
for cmd in hist status map compact pool cost top; do
  if python3 "$KEYS" check "$LIST" "$cmd" <"$OUT/$cmd.json"; then
    log "$cmd --json: key paths as listed"
  else
    bad=1
  fi
done
[ -s "$OUT/trace.json" ] || fail "fragctl trace --json printed nothing after the stall it printed before"
python3 "$KEYS" check "$LIST" trace <"$OUT/trace.json" || bad=1
[ "$bad" -eq 0 ] || fail "fragctl's --json output differs from $LIST (change the list only on purpose)"
stop_fragd
log "PASS"
