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
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start stall_cost "it loads BPF and writes sysctls" fragd fragctl fragmenter -- python3 curl flock
bench_work stall-cost 10
restore_on_exit() { restore_memory_settings; }
take_heavy_lock
save_memory_settings
echo 0 >"$PRO"
sed 's/^mode: .*/mode: observe/' configs/fragd.yaml >"$WORK/fragd.yaml"
[[ -n ${STALL_COST_YAML:-} ]] && printf '%s\n' "$STALL_COST_YAML" >>"$WORK/fragd.yaml"
FRAGD="$BUILD_DIR/fragd" start_fragd_in "$WORK" "$WORK/fragd.yaml"
FRAG_SYNC=0 start_fragmenter "$BUILD_DIR/fragmenter" "$WORK" 60 300 || die "$FRAG_ERROR"
free_blocks9 >"$HP" # every free 2 MiB block into the pool: each page after it must compact
sleep 2
"$BUILD_DIR/fragctl" --socket "$SOCK" cost --seconds 20 >"$WORK/cost.txt" &
COST=$!
sleep 1
s0=$(awk '$1 == "compact_stall" { print $2 }' /proc/vmstat)
for _ in $(seq 300); do echo $(($(<"$HP") + 1)) >"$HP"; done
s1=$(awk '$1 == "compact_stall" { print $2 }' /proc/vmstat)
wait "$COST"
echo "compact_stall +$((s1 - s0)) during 300 one-page pool writes (fragd $BUILD_DIR/fragd${STALL_COST_YAML:+, $STALL_COST_YAML})"
cat "$WORK/cost.txt"
curl -s "$URL" | grep -E '^fragd_(alloc_stall_phase_seconds|direct_stall_entries)_total\{order="9(-10)?"'
FAILED=0
