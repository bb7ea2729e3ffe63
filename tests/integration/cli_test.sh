#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragd and fragctl end to end on a live daemon, and the bad-input paths a
# user meets first: no daemon, a taken port, a taken or bogus socket path, no
# privileges, a broken config file. Every refusal must be one clear line that
# names the thing and the fix, with a non-zero exit.
source "$(dirname "$0")/lib.sh"
require_root

expect_fail() {  # expect_fail 'substring' cmd...: cmd must exit non-zero and say substring
  local want=$1; shift
  local out rc=0
  out=$("$@" 2>&1) || rc=$?
  [ "$rc" -ne 0 ] || fail "'$*' exited 0, want an error containing: $want"
  grep -qF -- "$want" <<<"$out" || fail "'$*' said: $out -- want: $want"
}

# --- without a daemon
expect_fail "fragd is not running" "$BUILD/fragctl" --socket "$WORK/none.sock" status
expect_fail "fragd is not running" "$BUILD/fragctl" --socket "$WORK/none.sock" hist

# --- config checking needs no privileges
setpriv --reuid=65534 --regid=65534 --clear-groups "$(unprivileged "$BUILD/fragd")" --check-config \
  "$(unprivileged "$SRC/configs/fragd.yaml")" >/dev/null ||
  fail "--check-config of the shipped config failed without privileges"
printf 'mode: observe\nbpf:\n  min_order: eleven\n' >"$WORK/bad.yaml"
expect_fail "$WORK/bad.yaml:3:14: key 'bpf.min_order': expected an integer" "$BUILD/fragd" --check-config "$WORK/bad.yaml"
expect_fail "cannot read config file $WORK/missing.yaml" "$BUILD/fragd" --config "$WORK/missing.yaml"

# --- no privileges: the error names the capabilities
expect_fail "CAP_BPF" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
  "$(unprivileged "$BUILD/fragd")" --listen "127.0.0.1:$(free_port)" --socket "/tmp/fragd-nopriv-$$.sock"

# --- a live daemon
save_sysctl /proc/sys/vm/nr_hugepages
# The shipped config counts allocations only from a stall on (bpf.allocations: adaptive):
# on this idle host hist says counting is off, and a fast-path allocation is not counted.
start_fragd
echo 1 > /proc/sys/vm/nr_hugepages; echo 0 > /proc/sys/vm/nr_hugepages
hist=$("$BUILD/fragctl" --socket "$SOCK" hist)
grep -q "^allocation counting is off now (bpf.allocations: adaptive, on from the next stall)" <<<"$hist" ||
  fail "fragctl hist under the shipped config does not say counting is off: $hist"
! grep -q "^order 9" <<<"$hist" || fail "fragctl hist counted an allocation while counting was off: $hist"
stop_fragd
# The rest with every allocation counted.
sed 's/^  allocations: adaptive$/  allocations: exact/' "$SRC/configs/fragd.yaml" >"$WORK/exact.yaml"
grep -q '^  allocations: exact$' "$WORK/exact.yaml" || fail "configs/fragd.yaml has no 'allocations: adaptive' line"
FRAGD_CONFIG="$WORK/exact.yaml" start_fragd
# one order-9 allocation of our own, so `hist` has something to show
echo 1 > /proc/sys/vm/nr_hugepages; echo 0 > /proc/sys/vm/nr_hugepages
hist=$("$BUILD/fragctl" --socket "$SOCK" hist)
grep -q "^order 9" <<<"$hist" || fail "fragctl hist shows no order 9 line: $hist"
"$BUILD/fragctl" --socket "$SOCK" hist --json | python3 -c '
import json, sys
d = json.loads(sys.stdin.readline())
orders = {o["order"]: o for o in d["orders"]}
assert set(orders) <= set(range(1, 11)), orders.keys()
o9 = orders[9]
assert o9["fast"] + o9["stalled"] >= 1, o9
' || fail "fragctl hist --json is not the expected JSON"
"$BUILD/fragctl" --socket "$SOCK" hist --interval 1 --count 2 >"$WORK/interval.txt" || fail "fragctl hist --interval failed"
[ "$(grep -cE '^[0-9]{2}:[0-9]{2}:[0-9]{2}$' "$WORK/interval.txt")" -eq 2 ] ||
  fail "fragctl hist --interval 1 --count 2 did not print 2 timestamped intervals: $(cat "$WORK/interval.txt")"

# cost: run statistics of fragd's programs over a window, through a BPF_ENABLE_STATS fd;
# kernel.bpf_stats_enabled stays as it was. Huge pages allocated in the window run the
# allocation counter (exact here) on their order-9 mm_page_alloc, and every page fault on
# its order-0 one.
stats0=$(cat /proc/sys/kernel/bpf_stats_enabled)
"$BUILD/fragctl" --socket "$SOCK" cost --seconds 2 --json >"$WORK/cost.json" &
COST_PID=$!
PIDS+=("$COST_PID")
sleep 0.5
for _ in 1 2 3; do echo 4 > /proc/sys/vm/nr_hugepages; echo 0 > /proc/sys/vm/nr_hugepages; done
wait "$COST_PID" || fail "fragctl cost --json failed"
[ "$(cat /proc/sys/kernel/bpf_stats_enabled)" = "$stats0" ] || fail "fragctl cost left kernel.bpf_stats_enabled changed"
python3 - "$WORK/cost.json" <<'PY' || fail "fragctl cost --json: $(cat "$WORK/cost.json")"
import json, sys
c = json.load(open(sys.argv[1]))
progs = {p["name"]: p for p in c["programs"]}
assert 1.5 < c["seconds"] < 5, c["seconds"]
assert c["page_faults"] > 0, c
a = progs["page_alloc_btf"]
assert a["attached"] and a["id"] > 0, a
assert a["runs"] >= 12 and a["run_ns"] > 0, a      # 12 order-9 allocations at least
assert all(p["id"] > 0 for p in progs.values()), progs
PY
"$BUILD/fragctl" --socket "$SOCK" cost --seconds 0.5 >"$WORK/cost.txt" || fail "fragctl cost failed"
grep -q "^page_alloc_btf " "$WORK/cost.txt" || fail "fragctl cost shows no page_alloc_btf line: $(cat "$WORK/cost.txt")"
log "fragctl cost: $(grep '^page_alloc_btf ' "$WORK/cost.txt" | tr -s ' ')"

# status: the node score fragctl shows is the kernel formula on the same data fragd exports
"$BUILD/fragctl" --socket "$SOCK" status >"$WORK/status.txt" || fail "fragctl status failed"
grep -q "node 0" "$WORK/status.txt" || fail "fragctl status shows no node 0: $(cat "$WORK/status.txt")"
"$BUILD/fragctl" --socket "$SOCK" status --json >"$WORK/status.json"
python3 - "$WORK/status.json" <<'PY' || fail "fragctl status --json disagrees with /proc/buddyinfo"
import json, sys
s = json.load(open(sys.argv[1]))
progs = {p["name"]: p["attached"] for p in s["programs"]}
assert progs and all(progs.values()), progs
zones = {z["zone"]: z for z in s["nodes"][0]["zones"]}
for line in open("/proc/buddyinfo"):
    f = line.split()
    if f[1] != "0,": continue
    name, blocks = f[3], [int(x) for x in f[4:]]
    # free counts move between two reads; the shape (orders per zone) must not
    assert len(zones[name]["free_blocks"]) == len(blocks), (name, zones[name]["free_blocks"], blocks)
for z in zones.values():
    free = sum(b << o for o, b in enumerate(z["free_blocks"]))
    suit = sum(b << o for o, b in enumerate(z["free_blocks"]) if o >= 9)
    want = 0 if free == 0 else (free - suit) * 100 // free
    assert z["score"] == want, (z["zone"], z["score"], want)
PY

# --- bad input while one daemon runs
expect_fail "cannot serve metrics on 127.0.0.1:$PORT" "$BUILD/fragd" --listen "127.0.0.1:$PORT" --socket "$WORK/other.sock"
expect_fail "another fragd is already serving $SOCK" "$BUILD/fragd" --listen "127.0.0.1:$(free_port)" --socket "$SOCK"
touch "$WORK/plainfile"
expect_fail "exists and is not a socket" "$BUILD/fragd" --listen "127.0.0.1:$(free_port)" --socket "$WORK/plainfile"

# --- SIGTERM: exit 0, every program detached, socket removed
# The programs this fragd holds (its BPF fds' fdinfo), not any fragd's: another may run.
prog_ids=$(grep -h '^prog_id:' /proc/"$FRAGD_PID"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u)
[ -n "$prog_ids" ] || fail "fragd $FRAGD_PID holds no BPF program fd"
stop_fragd
[ ! -e "$SOCK" ] || fail "fragd left its socket $SOCK behind"
# The kernel frees a tracepoint link's program after RCU grace periods (bpf_link_free), not at
# the close of the last fd: an id may still show for a moment after fragd's exit, so each gets 10 s.
prog_gone() { ! bpftool prog show id "$1" >/dev/null 2>&1; }
if command -v bpftool >/dev/null; then
  for id in $prog_ids; do
    wait_for 10 prog_gone "$id" || fail "BPF program $id still loaded 10 s after fragd exited"
  done
fi
expect_fail "fragd is not running" "$BUILD/fragctl" --socket "$SOCK" status
log "PASS"
