#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What one stall event costs fragd's programs: `fragctl cost` (the kernel's BPF run-time
# statistics) over 20 s while 300 one-page hugetlb pool writes stall on memory fragmented 60%
# with no free 2 MiB block left. try_to_compact is the program that opens a stall and
# attributes it (site, cgroup, kernel stack); compare its NS/RUN across builds or settings:
#
#   bash bench/stall_cost.sh                              # build/, the shipped config
#   FRAGD_BUILD_DIR=/other/build bash bench/stall_cost.sh # another build
#   STALL_COST_YAML='attribution: {stack_interval: 0s}' bash bench/stall_cost.sh
#
# Prints the cost table, the compact_stall delta and fragd's stall totals. Changes
# vm.compaction_proactiveness (0) and vm.nr_hugepages, both put back on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${FRAGD_BUILD_DIR:-$ROOT/build}
[[ $(id -u) -eq 0 ]] || { echo "stall_cost: must run as root (it loads BPF and writes sysctls)" >&2; exit 1; }
for f in fragd fragctl fragmenter; do [[ -x $B/$f ]] || { echo "stall_cost: $B/$f missing: make build" >&2; exit 1; }; done
WORK=$(mktemp -d /tmp/fragd-stall-cost.XXXXXX)
HP=/proc/sys/vm/nr_hugepages
PRO=/proc/sys/vm/compaction_proactiveness
[[ $(<$HP) == 0 ]] || { echo "stall_cost: vm.nr_hugepages is $(<$HP): someone else uses a pool" >&2; exit 1; }
P0=$(<$PRO)
PIDS=()
cleanup() {
	echo 0 >$HP
	echo "$P0" >$PRO
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
exec 8>/tmp/fragd-heavy.lock
flock 8
echo 0 >$PRO
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sed 's/^mode: .*/mode: observe/' "$ROOT/configs/fragd.yaml" >"$WORK/fragd.yaml"
[[ -n ${STALL_COST_YAML:-} ]] && printf '%s\n' "$STALL_COST_YAML" >>"$WORK/fragd.yaml"
"$B/fragd" --config "$WORK/fragd.yaml" --listen "127.0.0.1:$PORT" --socket "$WORK/fragd.sock" >"$WORK/fragd.log" 2>&1 &
PIDS+=($!)
mkfifo "$WORK/frag.in"
"$B/fragmenter" --percent 60 <"$WORK/frag.in" >"$WORK/frag.out" 2>&1 &
PIDS+=($!)
exec 9>"$WORK/frag.in"
for _ in $(seq 600); do grep -q ready "$WORK/frag.out" && break; sleep 0.5; done
grep -q ready "$WORK/frag.out" || { echo "stall_cost: the fragmenter did not get ready" >&2; exit 1; }
free9() { awk '{ n += $(5 + 9) + 2 * $(5 + 10) } END { print n + 0 }' /proc/buddyinfo; }
echo "$(free9)" >$HP  # every free 2 MiB block into the pool: each page after it must compact
sleep 2
"$B/fragctl" --socket "$WORK/fragd.sock" cost --seconds 20 >"$WORK/cost.txt" &
COST=$!
sleep 1
s0=$(awk '$1 == "compact_stall" { print $2 }' /proc/vmstat)
for _ in $(seq 300); do echo $(($(<$HP) + 1)) >$HP; done
s1=$(awk '$1 == "compact_stall" { print $2 }' /proc/vmstat)
wait "$COST"
echo "compact_stall +$((s1 - s0)) during 300 one-page pool writes (fragd $B/fragd${STALL_COST_YAML:+, $STALL_COST_YAML})"
cat "$WORK/cost.txt"
curl -s "http://127.0.0.1:$PORT/metrics" | grep -E '^fragd_(alloc_stall_phase_seconds|direct_stall_entries)_total\{order="9(-10)?"'
