#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Least privilege and bounded doors: the control socket is root's alone unless a
# group is configured, and then members may only look; malformed, oversized,
# unfinished and too many requests are answered with an error and cut off;
# /metrics serves two paths on loopback and is not tied up by slow or huge
# requests; after attaching, no thread of fragd holds a capability, yet the
# scan and an action still work; fragd never runs a program; a member of the group
# reads no kernel address, no block at a physical address and no polluter.
source "$(dirname "$0")/lib.sh"
require_root
for tool in setpriv strace groupadd groupdel ss python3 curl; do
  command -v $tool >/dev/null || skip_or_fail "needs $tool"
done
PRO=/proc/sys/vm/compaction_proactiveness
save_sysctl $PRO
PROBE="python3 $SRC/tests/integration/sec_probe.py"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
FRAGCTL_U=$(unprivileged "$BUILD/fragctl")  # fragctl as nobody and the member run it
chmod 0755 "$WORK"   # the directory must not be what keeps others out

# --- 1. Default: socket 0600 root:root; nobody is refused by the file mode.
FRAGD_CONFIG="$SRC/configs/fragd.yaml" start_fragd
mode=$(stat -c '%a %U:%G' "$SOCK")
[ "$mode" = "600 root:root" ] || fail "control socket is $mode, want 600 root:root"
out=$("${NOBODY[@]}" "$FRAGCTL_U" --socket "$SOCK" status 2>&1) && fail "nobody read status: $out"
grep -q 'permission denied' <<<"$out" || fail "nobody's refusal does not say why: $out"
log "socket 0600 root:root; nobody refused: $out"

# --- 2. Capabilities: none left in any thread; no_new_privs; the log says what was kept.
for t in /proc/$FRAGD_PID/task/*; do
  for set in CapEff CapPrm CapInh CapAmb; do
    v=$(awk -v k="$set:" '$1 == k {print $2}' "$t/status")
    [ "$v" = "0000000000000000" ] || fail "thread $(basename "$t") of fragd has $set $v after attaching"
  done
done
threads=$(ls /proc/$FRAGD_PID/task | wc -l)
[ "$threads" -ge 3 ] || fail "expected fragd's worker threads (HTTP, runner, scanner), found $threads threads"
grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$FRAGD_PID/status || fail "no_new_privs is not set"
grep -q 'capabilities after attaching: .*now =; kept none' "$FRAGD_LOG" || { cat "$FRAGD_LOG"; fail "no log line naming the dropped capabilities"; }
# Without capabilities fragd still reads BPF maps, scans kpageflags and sees /proc/iomem's addresses.
"$BUILD/fragctl" --socket "$SOCK" map --json --max-age 0 >"$WORK/map.json" || fail "fragctl map failed after the drop"
python3 - "$WORK/map.json" <<'PY' || fail "the scan after the capability drop is wrong"
import json, sys
m = json.load(open(sys.argv[1]))
zones = m["scan"]["zones"]
blocks = sum(len(z["classes"]) for z in zones)
offline = sum(z["counts"]["offline"] for z in zones)
assert blocks > 1000, blocks
assert offline < blocks / 2, f"{offline} of {blocks} blocks offline: /proc/iomem read as zeros?"
print(f"scan after the drop: {blocks} blocks, {offline} offline")
PY
grep -q 'addresses read as zero' "$FRAGD_LOG" && fail "/proc/iomem was read without its addresses after the drop"
"$BUILD/fragctl" --socket "$SOCK" hist >/dev/null || fail "fragctl hist failed after the drop"
log "every thread ($threads) has no capability; no_new_privs; scan and maps still read"

# --- 3. Malformed requests: one error, then the connection is closed; limits hold.
$PROBE malformed "$SOCK" || fail "malformed requests"
$PROBE slow-line "$SOCK" 15 || fail "unfinished request line"
$PROBE too-many "$SOCK" 64 || fail "client limit"
rate_out=$($PROBE rate "$SOCK" 100) || fail "pipelined requests: $rate_out"
echo "$rate_out" | grep -v SECONDS
secs=$(awk '/^SECONDS/ {print $2}' <<<"$rate_out")
# 100 requests against a burst of 40 at 20 per second cannot all be answered in under 3 s.
python3 -c "import sys; sys.exit(0 if float('$secs') >= 2.5 else 1)" ||
  fail "100 pipelined requests were answered in $secs s: the per-connection rate limit did not hold"
kill -0 "$FRAGD_PID" || fail "fragd died"

# --- 4. HTTP: only /metrics and /healthz, loopback, bounded requests.
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "http://127.0.0.1:$PORT/metrics")" = 200 ] || fail "/metrics is not 200"
[ "$(curl -s "http://127.0.0.1:$PORT/healthz")" = ok ] || fail "/healthz does not say ok"
for p in / /index.html /metrics/x /healthz/x /../../etc/passwd /debug/pprof; do
  c=$(code --path-as-is "http://127.0.0.1:$PORT$p")
  [ "$c" = 404 ] || fail "GET $p answered $c, want 404"
done
c=$(code -X POST -d x "http://127.0.0.1:$PORT/metrics")
[ "$c" != 200 ] || fail "POST /metrics answered 200"
$PROBE http-big "$PORT" || fail "oversized HTTP request"
$PROBE http-slow "$PORT" 12 10 || fail "slow HTTP clients"
[ "$(code "http://127.0.0.1:$PORT/metrics")" = 200 ] || fail "/metrics is not 200 after the hostile clients"
stop_fragd
log "HTTP serves /metrics and /healthz only; oversized and slow requests cut off, scrapes go on"

# The default listen address is loopback.
if ! ss -Hltn 'sport = :9717' | grep -q .; then
  DEF_SOCK="$WORK/def.sock"
  "$BUILD/fragd" --socket "$DEF_SOCK" >"$WORK/def.log" 2>&1 &
  DEF_PID=$!; PIDS+=("$DEF_PID")
  wait_for 15 curl -sf http://127.0.0.1:9717/healthz -o /dev/null || { cat "$WORK/def.log"; fail "fragd with defaults did not serve 127.0.0.1:9717"; }
  bound=$(ss -Hltnp 'sport = :9717' | awk '{print $4}')
  [ "$bound" = "127.0.0.1:9717" ] || fail "fragd with defaults listens on $bound, want 127.0.0.1:9717"
  kill -TERM "$DEF_PID"; wait "$DEF_PID" || fail "fragd with defaults exited $? on SIGTERM"
  log "default listen address: $bound"
else
  log "port 9717 is taken on this host: the default listen address is checked by the unit tests only"
fi

# --- 5. A group may look, never act; fragd runs no program while acting.
GROUP="fragdt$$"
groupadd "$GROUP"
RESTORE+=("groupdel $GROUP")
GID=$(getent group "$GROUP" | cut -d: -f3)
cat >"$WORK/group.yaml" <<YAML
mode: act
socket_group: $GROUP
compaction:
  score: {high: 100, low: 99}
  reserve: {memory_percent: 0}
YAML
"$BUILD/fragd" --check-config "$WORK/group.yaml" >/dev/null || fail "policy with socket_group $GROUP rejected"
PORT=$(free_port); SOCK="$WORK/group.sock"; FRAGD_LOG="$WORK/group.log"
# LeakSanitizer (make sanitize) needs the ptrace that strace holds: off for this run only.
ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
strace -f -qq -e trace=execve,execveat -o "$WORK/exec.txt" \
  "$BUILD/fragd" --config "$WORK/group.yaml" --listen "127.0.0.1:$PORT" --socket "$SOCK" >"$FRAGD_LOG" 2>&1 &
STRACE_PID=$!; PIDS+=("$STRACE_PID")
wait_for 20 curl -sf "http://127.0.0.1:$PORT/healthz" -o /dev/null || { cat "$FRAGD_LOG"; fail "fragd with socket_group did not start"; }
FRAGD_PID=$(pgrep -P "$STRACE_PID")
mode=$(stat -c '%a %U:%G' "$SOCK")
[ "$mode" = "660 root:$GROUP" ] || fail "control socket is $mode, want 660 root:$GROUP"
MEMBER=(setpriv --reuid=65534 --regid=65534 --groups="$GID")
"${MEMBER[@]}" "$FRAGCTL_U" --socket "$SOCK" status >"$WORK/member-status.txt" 2>&1 ||
  { cat "$WORK/member-status.txt"; fail "a member of $GROUP could not read status"; }
"${MEMBER[@]}" "$FRAGCTL_U" --socket "$SOCK" hist >/dev/null 2>&1 || fail "a member of $GROUP could not read hist"
# preflight is a read: a member asks it as root does (exit 0, 3 or 4 is the verdict).
rc=0
"${MEMBER[@]}" "$FRAGCTL_U" --socket "$SOCK" preflight 2MB 1 --json >"$WORK/member-pf.json" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || [ "$rc" -eq 4 ] || { cat "$WORK/member-pf.json"; fail "a member of $GROUP could not ask preflight (exit $rc)"; }
grep -q '"verdict"' "$WORK/member-pf.json" || fail "a member's preflight answer has no verdict"
for act in "compact" "pool set 2MB 10" "ensure 2MB 1 --for g:1" "release --for g:1" "reload"; do
  out=$("${MEMBER[@]}" "$FRAGCTL_U" --socket "$SOCK" $act 2>&1) && fail "a member of $GROUP could '$act': $out"
  grep -q 'needs root' <<<"$out" || fail "'$act' refusal for a group member does not say why: $out"
done
out=$("${NOBODY[@]}" "$FRAGCTL_U" --socket "$SOCK" status 2>&1) && fail "a non-member read status: $out"
# Root acts: the compaction is a write to a sysfs file, with no capability and no program run.
"$BUILD/fragctl" --socket "$SOCK" compact --node 0 >"$WORK/compact.txt" 2>&1 ||
  { cat "$WORK/compact.txt"; fail "root's fragctl compact failed without capabilities"; }
# ok, or no_gain when the node was compact already: either way the write went through.
grep -qE 'compact node 0: (ok|no_gain),' "$WORK/compact.txt" || { cat "$WORK/compact.txt"; fail "the compaction did not run"; }
kill -TERM "$FRAGD_PID"
rc=0; wait "$STRACE_PID" || rc=$?
[ "$rc" -eq 0 ] || { cat "$FRAGD_LOG"; fail "fragd exited $rc"; }
execs=$(grep -cE 'execve(at)?\(' "$WORK/exec.txt" || true)
[ "$execs" -eq 1 ] || { cat "$WORK/exec.txt"; fail "fragd ran $((execs - 1)) programs; it must run none"; }
log "group $GROUP reads status, hist and preflight, is refused compact/pool/ensure/release/reload; root compacts with no capability; no program run"

# --- 6. What a member reads. fragd without kernel symbols (--path.kallsyms: the file as a
# reader without CAP_SYSLOG sees it, every address zero) on fragmented memory, where a pool
# grows by direct compaction: its stall stacks have frames it cannot name. A member gets
# them counted, never as addresses; the map's counts without the per-block classes, polluted
# blocks or polluters; root gets the map whole.
heavy_lock
quiet_memory 0
sed 's/^[0-9a-f]*/0000000000000000/' /proc/kallsyms >"$WORK/kallsyms.zero"
cat >"$WORK/reader.yaml" <<YAML
mode: observe
socket_group: $GROUP
YAML
FRAGD_CONFIG="$WORK/reader.yaml" start_fragd --path.kallsyms "$WORK/kallsyms.zero"
fragment 30
echo $(($(cat $HP) + $(free_blocks9))) >$HP
echo $(($(cat $HP) + 20)) >$HP
has_stack() { FRAGCTL top --once --json | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["stacks"] else 1)'; }
wait_for 20 has_stack || fail "no stall stack after growing the pool on fragmented memory: nothing to test"
"${MEMBER[@]}" /usr/bin/python3 "$(unprivileged "$SRC/tests/integration/sec_probe.py")" reader "$SOCK" member || fail "a member of $GROUP read what only root may"
$PROBE reader "$SOCK" root || fail "root's answers"
"${MEMBER[@]}" "$FRAGCTL_U" --socket "$SOCK" map >"$WORK/member-map.txt" 2>&1 ||
  { cat "$WORK/member-map.txt"; fail "a member's fragctl map failed"; }
grep -q 'withheld' "$WORK/member-map.txt" || fail "a member's fragctl map does not say what fragd withheld"
out=$("${MEMBER[@]}" "$FRAGCTL_U" --socket "$SOCK" map --png "$WORK/m.png" 2>&1) && fail "a member drew the per-block map: $out"
grep -q 'as root' <<<"$out" || fail "a member's fragctl map --png refusal does not say why: $out"
"${MEMBER[@]}" "$FRAGCTL_U" --socket "$SOCK" top --once --stacks >"$WORK/member-top.txt" 2>&1 ||
  { cat "$WORK/member-top.txt"; fail "a member's fragctl top failed"; }
grep -q 'without a kernel symbol' "$WORK/member-top.txt" || fail "fragctl top --stacks does not count the unnamed frames"
grep -qE '0x[0-9a-f]{8,}' "$WORK/member-top.txt" && fail "fragctl top --stacks shows a kernel address: $(grep -E '0x[0-9a-f]{8,}' "$WORK/member-top.txt" | head -3)"
stop_fragd
log "a member reads counts, unnamed frames counted and no address, no block or polluter; root reads the map whole"
log "PASS"
