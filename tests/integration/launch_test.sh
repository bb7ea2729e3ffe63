#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Contiguous memory on demand, on fragmented memory (docs/deployment.md "Launch hooks"):
#  a. preflight answers from what fragd holds: its free pages match the kernel's free lists and
#     pool (buddyinfo, free_hugepages), its verdict and exit status follow the count (0 ready,
#     3 makeable, 4 no), an order works, bad asks are refused; observe mode answers too;
#  b. ensure makes COUNT 2 MiB pages in the pool (nr_hugepages and free_hugepages read back),
#     holds them as a lease named in `fragctl status`, the action log and fragd_leases_total
#     and fragd_leased_hugepages; a consumer maps some; when the hold is over the pool
#     goes back to its base and the pages in use stay with the consumer (surplus);
#  c. release ends a lease at once; a second lease of one consumer on one pool is refused; a
#     count no node could hold, a size the kernel lacks, a node that does not exist and a
#     deadline too short each get one clear answer and leave nothing held;
#  d. a client that dies while it waits leaves a lease that names its consumer and ends;
#  e. fragd stopped during a lease puts the pool back; killed during one, the next fragd does;
#  f. the NFD feature file holds the three labels, valid Kubernetes label values.
source "$(dirname "$0")/lib.sh"
require_root
[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] || skip_or_fail "no 2 MiB hugetlb pool on this kernel"
heavy_lock
quiet_memory 0
fragment 95

FRAGCTL() { "$BUILD/fragctl" --socket "$SOCK" "$@"; }
pool() { cat /proc/sys/vm/nr_hugepages; }
pool_free() { cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages; }
surplus() { cat /sys/kernel/mm/hugepages/hugepages-2048kB/surplus_hugepages; }
# json FILE EXPR: a value of fragctl's --json output (python3 expression on `j`).
jq_() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
scanned() { FRAGCTL status --json >"$WORK/st.json" && jq_ "$WORK/st.json" 'j.get("scan") is not None' | grep -q True; }

cat >"$WORK/act.yaml" <<YAML
mode: act
compaction:
  method: pool
  score: {enabled: false}
  demand: {enabled: false}
  reserve: {memory_percent: 0}
  min_interval: 1s
  cpu_budget: 30s
hugepages: {guard: 1GiB}
nfd: {features_file: $WORK/features.d/fragd, hold: 1m}
pageblocks: {interval: 1s}
YAML
mkdir -p "$WORK/features.d"
FRAGD_CONFIG="$WORK/act.yaml" start_fragd
wait_for 60 scanned || fail "no pageblock scan within 60 s"

# --- a: preflight -------------------------------------------------------------------------------
rc=0
FRAGCTL preflight 2MB 1 --json >"$WORK/pf1.json" || rc=$?
[ "$rc" -eq 0 ] || fail "a: preflight 2MB 1 exited $rc (want 0, ready): $(cat "$WORK/pf1.json")"
free=$(jq_ "$WORK/pf1.json" 'j["free"]')
kernel_free=$(($(free_blocks9) + $(pool_free)))
log "a: preflight free $free, the kernel's free 2 MiB blocks + pool free pages $kernel_free"
# The free lists move a little between fragd's last tick and this read: within 5% or 8 blocks.
diff=$((free > kernel_free ? free - kernel_free : kernel_free - free))
((diff <= kernel_free / 20 + 8)) || fail "a: preflight free $free is not the kernel's $kernel_free"
makeable=$(jq_ "$WORK/pf1.json" 'j["makeable"]')
((makeable > 0)) || fail "a: nothing makeable on memory fragmented with movable holes: $(cat "$WORK/pf1.json")"
for key in verdict free makeable pages_to_migrate interval age_seconds; do
	jq_ "$WORK/pf1.json" "j['$key']" >/dev/null || fail "a: --json lacks $key"
done
want=$((free + makeable / 2))
rc=0
FRAGCTL preflight 2MB "$want" >"$WORK/pf2.txt" || rc=$?
[ "$rc" -eq 3 ] || fail "a: preflight 2MB $want exited $rc (want 3, makeable): $(cat "$WORK/pf2.txt")"
log "a: $(cat "$WORK/pf2.txt")"
rc=0
FRAGCTL preflight 2MB 100000000 >"$WORK/pf3.txt" || rc=$?
[ "$rc" -eq 4 ] || fail "a: preflight of 200 TiB exited $rc (want 4, no): $(cat "$WORK/pf3.txt")"
rc=0
FRAGCTL preflight --order 4 8 >"$WORK/pf4.txt" || rc=$?
[ "$rc" -eq 0 ] || fail "a: preflight --order 4 8 exited $rc (want 0): $(cat "$WORK/pf4.txt")"
rc=0
FRAGCTL preflight 2MB 1 --node 7 2>"$WORK/pf5.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "node 7 has no memory" "$WORK/pf5.err" || fail "a: --node 7: rc $rc, $(cat "$WORK/pf5.err")"
rc=0
FRAGCTL preflight 4MB 1 2>"$WORK/pf6.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "no hugetlb pool of 4 MiB" "$WORK/pf6.err" || fail "a: 4MB: rc $rc, $(cat "$WORK/pf6.err")"

# --- b: ensure, hold, give back -----------------------------------------------------------------
base=$(pool)
count=$((free + makeable / 2))
((count > 1024)) && count=1024
t0=$(date +%s.%N)
FRAGCTL ensure 2MB "$count" --within 60s --hold 15s --for test:vm1 >"$WORK/ensure.txt" 2>&1 ||
	fail "b: ensure 2MB $count exited non-zero: $(cat "$WORK/ensure.txt")"
t1=$(date +%s.%N)
log "b: $(tr '\n' ' ' <"$WORK/ensure.txt")"
[ "$(pool)" -eq $((base + count)) ] || fail "b: nr_hugepages $(pool), want $((base + count))"
[ "$(pool_free)" -ge "$count" ] || fail "b: free_hugepages $(pool_free) < $count"
grep -q "lease .* for test:vm1: $count x 2 MiB .*held" "$WORK/ensure.txt" || fail "b: no held lease line"
FRAGCTL status --json >"$WORK/st.json"
jq_ "$WORK/st.json" '[l for l in j["leases"] if l["for"] == "test:vm1" and l["state"] == "held"][0]["count"]' |
	grep -qx "$count" || fail "b: status shows no held lease for test:vm1"
jq_ "$WORK/st.json" '[a for a in j["actions"] if "ensure for test:vm1" in a["reason"]][0]["result"]' | grep -qx ok ||
	fail "b: the action log lacks the ensure for test:vm1"
scrape >"$WORK/m.prom"
(($(metric "$WORK/m.prom" fragd_leases_total 'outcome="made"') >= 1)) || fail "b: fragd_leases_total{outcome=\"made\"} is 0"
[ "$(metric "$WORK/m.prom" fragd_leased_hugepages)" -eq "$count" ] || fail "b: fragd_leased_hugepages is not $count"
log "b: $count pages made and held in $(python3 -c "print(round($t1 - $t0, 2))") s"
# A consumer maps half of them (MAP_HUGETLB) and keeps them while the hold ends.
take=$((count / 2))
cat >"$WORK/take.py" <<'PY'
import mmap, sys
n = int(sys.argv[1])
m = mmap.mmap(-1, n << 21, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40000)  # MAP_HUGETLB
for i in range(n):
    m[i << 21] = 1
print("taken", flush=True)
sys.stdin.read()
PY
mkfifo "$WORK/take.in"
python3 "$WORK/take.py" "$take" <"$WORK/take.in" >"$WORK/take.out" 2>&1 &
PIDS+=($!)
exec 6>"$WORK/take.in"
wait_for 30 grep -q taken "$WORK/take.out" || fail "b: the consumer could not map $take pages: $(cat "$WORK/take.out")"
wait_for 40 bash -c "[ \$(cat /proc/sys/vm/nr_hugepages) -eq $base ]" ||
	fail "b: 40 s after a 15 s hold, nr_hugepages is $(pool), not its base $base"
[ "$(surplus)" -eq "$take" ] || fail "b: the consumer's $take pages should stay as surplus, surplus is $(surplus)"
grep -q "lease [0-9]* for test:vm1 .* ended: hold of 15s over" "$FRAGD_LOG" || fail "b: the log does not say the hold ended"
exec 6>&-
wait_for 10 bash -c "[ \$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/surplus_hugepages) -eq 0 ]" ||
	fail "b: the consumer's pages were not freed when it exited"
log "b: back to $base once the hold was over; the consumer kept its $take pages until it exited"

# --- c: release, refusals -----------------------------------------------------------------------
FRAGCTL ensure 2MB 64 --within 60s --hold 10m --for test:vm2 >"$WORK/e2.txt" 2>&1 || fail "c: $(cat "$WORK/e2.txt")"
rc=0
FRAGCTL ensure 2MB 8 --for test:vm2 2>"$WORK/e3.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "test:vm2 already holds lease" "$WORK/e3.err" || fail "c: a second lease: rc $rc, $(cat "$WORK/e3.err")"
FRAGCTL release --for test:vm2 >"$WORK/rel.txt" || fail "c: release failed"
grep -q "ended" "$WORK/rel.txt" || fail "c: release named no lease: $(cat "$WORK/rel.txt")"
wait_for 20 bash -c "[ \$(cat /proc/sys/vm/nr_hugepages) -eq $base ]" || fail "c: after release nr_hugepages is $(pool)"
FRAGCTL release --for test:vm2 | grep -q "no live lease" || fail "c: a second release is not a no-op"
for bad in "2MB 100000000|cannot supply" "4MB 1|no hugetlb pool of 4 MiB" "2MB 1 --node 7|node 7 has no memory"; do
	rc=0
	# shellcheck disable=SC2086
	FRAGCTL ensure ${bad%%|*} --for test:bad 2>"$WORK/bad.err" || rc=$?
	[ "$rc" -eq 1 ] && grep -q "${bad#*|}" "$WORK/bad.err" || fail "c: ensure ${bad%%|*}: rc $rc, $(cat "$WORK/bad.err")"
done
# A deadline too short: most of what compaction could make, within 100 ms. The write is killed at
# the deadline (cut), the lease ends, and the pages it made go back.
FRAGCTL preflight 2MB 1 --json >"$WORK/pf7.json" || true
hurry=$(jq_ "$WORK/pf7.json" 'j["free"] + j["makeable"] * 3 // 4')
rc=0
FRAGCTL ensure 2MB "$hurry" --within 100ms --for test:hurry >"$WORK/hurry.txt" 2>&1 || rc=$?
log "c: $hurry pages --within 100ms: rc $rc, $(tr '\n' ' ' <"$WORK/hurry.txt")"
[ "$rc" -eq 1 ] || fail "c: $hurry pages needing compaction were made within 100 ms: no deadline was tested"
grep -q "cut" "$WORK/hurry.txt" || fail "c: the action was not cut at its deadline"
wait_for 30 bash -c "[ \$(cat /proc/sys/vm/nr_hugepages) -eq $base ]" || fail "c: a cut ensure left nr_hugepages $(pool)"
FRAGCTL status --json >"$WORK/st.json"
jq_ "$WORK/st.json" '[l["state"] for l in j["leases"] if l["for"] == "test:hurry"][-1]' | grep -qx ended ||
	fail "c: the cut lease is not ended"
rc=0
FRAGCTL ensure 2MB 1 --within 10ms --for test:x 2>"$WORK/e4.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "timeout_ms" "$WORK/e4.err" || fail "c: --within 10ms: rc $rc, $(cat "$WORK/e4.err")"
[ "$(pool)" -eq "$base" ] || fail "c: refusals left nr_hugepages $(pool)"

# --- d: a client that dies while it waits -------------------------------------------------------
FRAGCTL ensure 2MB 256 --within 60s --hold 5m --for test:gone >/dev/null 2>&1 &
client=$!
sleep 0.2
kill -KILL "$client" 2>/dev/null || true
wait "$client" 2>/dev/null || true
lease_state() { FRAGCTL status --json | python3 -c "import json,sys; j=json.load(sys.stdin); print([l['state'] for l in j['leases'] if l['for']=='$1'][-1])"; }
wait_for 60 bash -c "[ \"\$(cat /proc/sys/vm/nr_hugepages)\" -eq $((base + 256)) ]" ||
	fail "d: the lease of a client that died was not made (nr_hugepages $(pool))"
[ "$(lease_state test:gone)" = held ] || fail "d: the lease is $(lease_state test:gone), not held"
log "d: a client that died left lease test:gone held, named in status; it ends with its hold or a release"

# --- e: stop and kill during a lease ------------------------------------------------------------
stop_fragd
[ "$(pool)" -eq "$base" ] || fail "e: fragd stopped during a lease left nr_hugepages $(pool), not $base"
[ ! -e "$WORK/features.d/fragd" ] || fail "e: fragd stopped and left its NFD feature file"
FRAGD_CONFIG="$WORK/act.yaml" start_fragd
wait_for 60 scanned || fail "e: no scan after the restart"
FRAGCTL ensure 2MB 128 --within 60s --hold 10m --for test:kill >/dev/null || fail "e: ensure after restart"
[ "$(pool)" -eq $((base + 128)) ] || fail "e: nr_hugepages $(pool)"
kill -KILL "$FRAGD_PID"
wait "$FRAGD_PID" 2>/dev/null || true
[ "$(pool)" -eq $((base + 128)) ] || fail "e: the pool moved by itself"
FRAGD_CONFIG="$WORK/act.yaml" start_fragd
[ "$(pool)" -eq "$base" ] || fail "e: a fragd killed during a lease: the next one left nr_hugepages $(pool), not $base"
grep -q "left changed by a fragd that did not exit cleanly" "$FRAGD_LOG" || fail "e: the next fragd does not say what it put back"
log "e: stopped during a lease or killed, the pool went back to $base"

# --- f: the NFD feature file --------------------------------------------------------------------
wait_for 60 test -s "$WORK/features.d/fragd" || fail "f: no NFD feature file"
grep -q '^# +expiry-time=' "$WORK/features.d/fragd" || fail "f: no expiry"
for l in fragd-hugepages-2Mi-gib fragd-hugepages-1Gi-count fragd-fragmentation; do
	v=$(sed -n "s/^$l=//p" "$WORK/features.d/fragd")
	[[ $v =~ ^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$ ]] || fail "f: $l='$v' is not a Kubernetes label value"
done
log "f: $(grep -v '^#' "$WORK/features.d/fragd" | tr '\n' ' ')"

# --- observe mode answers preflight and refuses ensure ------------------------------------------
stop_fragd
start_fragd
rc=0
FRAGCTL preflight 2MB 1 >/dev/null || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "observe: preflight exited $rc"
rc=0
FRAGCTL ensure 2MB 1 --for test:obs 2>"$WORK/obs.err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "observe mode" "$WORK/obs.err" || fail "observe: ensure rc $rc, $(cat "$WORK/obs.err")"
stop_fragd
log "PASS"
