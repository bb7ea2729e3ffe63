#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where the VM workload's time goes (bench/apps.sh, vm): qemu -mem-prealloc allocating a guest's
# RAM from a 2 MiB hugetlb pool of the same size, by where the pool's pages were just before:
#   held    the pool was grown, touched by a guest, and kept: its pages stayed allocated;
#   fresh   the same, then the pool emptied and grown again at once (its pages spent a moment in
#           the free lists);
#   idle    the same, but emptied for IDLE seconds before growing it again: on a guest with
#           virtio free page reporting, free 2 MiB blocks are handed back to the host meanwhile.
# No fragmentation, no fragd: this measures the machine, not a mode. As root:
#
#   bash bench/backing.sh     # 5 rounds (cases in arm_order's order), a 4096 MiB guest, idle 20 s
#
# Knobs: BENCH_BACKING_ROUNDS (5), GUEST_MIB (4096), BENCH_BACKING_IDLE (20); BENCH_QUICK=1: one
# round, 512 MiB, 5 s.
# One line per run in runs.txt (case, round, ms from qemu's start to its RAM allocated, MiB the
# guest reported to its host over the case); bench/backing_report.py writes the section of
# BENCHMARKS.md (BENCH_OUTPUT; a quick run /tmp/fragd-bench-quick.md).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start backing "it writes vm.nr_hugepages and mounts hugetlbfs" -- qemu-system-x86_64 python3

BACKING_ROUNDS=${BENCH_BACKING_ROUNDS:-$(q 5 1)}
GUEST_MIB=${GUEST_MIB:-$(q 4096 512)}
BACKING_IDLE=${BENCH_BACKING_IDLE:-$(q 20 5)}
require_uint BENCH_ BACKING_ROUNDS BACKING_IDLE
require_uint "" GUEST_MIB
((BACKING_ROUNDS >= 1 && GUEST_MIB >= 2)) || die "BENCH_BACKING_ROUNDS must be >= 1 and GUEST_MIB >= 2"
PAGES=$((GUEST_MIB / 2))

OUT=$(report_output "$QUICK" "$ROOT")
bench_work backing 10
META="$WORK/meta.env"
meta_machine
meta quick="$QUICK" rounds="$BACKING_ROUNDS" guest_mib="$GUEST_MIB" idle_s="$BACKING_IDLE"
MNT="$WORK/hugetlbfs"
take_heavy_lock
save_memory_settings
restore_on_exit() {
	mountpoint -q "$MNT" && umount "$MNT"
	restore_memory_settings
}
mkdir -p "$MNT"

pool() {
	echo "$1" >"$HP"
	[[ $(<"$HP") == "$1" ]] || die "the pool grew to $(<"$HP") of $1 pages"
}

# guest: qemu allocates its RAM from the pool (-mem-prealloc; the guest is never run, -S); sets MS
# to the time from qemu's start to HugePages_Free having fallen by the guest's pages.
guest() {
	local free0 t0 i
	free0=$(meminfo HugePages_Free)
	mount -t hugetlbfs -o pagesize=2M none "$MNT"
	t0=$(now_ms)
	start_hugetlb_guest "$GUEST_MIB" "$MNT" "$WORK/qemu.out"
	for ((i = 0; $(meminfo HugePages_Free) + PAGES > free0; i++)); do
		((i < 3000)) || die "qemu did not allocate its RAM in 30 s"
		kill -0 "$GUEST_PID" 2>/dev/null || die "qemu exited: $(cat "$WORK/qemu.out")"
		sleep 0.01
	done
	MS=$(($(now_ms) - t0))
	stop_pid "$GUEST_PID" || true
	umount "$MNT"
}

run_case() { # CASE ROUND
	local r0 r1
	pool 0
	pool "$PAGES"
	guest # the pool's pages are touched once: backed by the host
	r0=$(reported_kib)
	case $1 in
	held) ;;
	fresh) pool 0 && pool "$PAGES" ;;
	idle) pool 0 && sleep "$BACKING_IDLE" && pool "$PAGES" ;;
	esac
	guest
	pool 0
	r1=$(reported_kib)
	echo "case=$1 round=$2 ms=$MS reported_mib=$(((${r1:-0} - ${r0:-0}) / 1024))" | tee -a "$WORK/runs.txt"
}

for ((round = 1; round <= BACKING_ROUNDS; round++)); do
	for c in $(arm_order "$round" held fresh idle); do run_case "$c" "$round"; done
done

meta_minutes
# What the report reads, kept: `python3 bench/backing_report.py bench/data/backing OUT`.
keep_raw backing "$WORK/meta.env" "$WORK/runs.txt"
FAILED=0
/usr/bin/python3 bench/backing_report.py "$WORK" "$OUT"
