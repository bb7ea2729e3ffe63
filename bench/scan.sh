#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragd pageblock scan benchmark (issue 4): how long a full scan of /proc/kpageflags takes and how
# much memory it adds to fragd, on an idle and on a fragmented machine, with 1 and 2 reading
# threads; and the physical memory map of a fragmented, polluted machine before and after one
# compaction, drawn by `fragctl map --png` into docs/. Part of `make bench`; as root after the build:
#
#   bash bench/scan.sh                 # writes BENCHMARKS.md (scan section) and docs/pageblocks-*.png
#   BENCH_QUICK=1 bash bench/scan.sh   # 2 scans per row, no pictures; writes /tmp/fragd-bench-quick.md
#
# Every row: fragd starts with `pageblocks: {interval: 1h, max_age: 1h, threads: T}` (only
# fragctl's requests scan), SCANS scans are asked with `fragctl map --max-age 0`, each scan's own
# duration_ns is read from the answer, and fragd's VmHWM is compared with a fragd whose scan is
# off (`pageblocks: {scan: false}`) after the same requests.
# Knobs: FRAGD_BUILD_DIR (default build), BENCH_SCAN_COUNT (10; quick 2), BENCH_SCAN_PERCENT (90),
# BENCH_OUTPUT, BENCH_KEEP=1. Changes vm.compaction_proactiveness (0 while fragmented), restored on exit.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start scan "kpageflags, BPF and sysctls" fragd fragctl fragmenter physmap -- python3 curl flock bpftrace
[[ -r /proc/kpageflags ]] || die "/proc/kpageflags is not readable"

SCANS=${BENCH_SCAN_COUNT:-$(q 10 2)}
PERCENT=${BENCH_SCAN_PERCENT:-90}
is_uint "$SCANS" && ((SCANS > 0)) || die "BENCH_SCAN_COUNT must be a positive integer"
is_uint "$PERCENT" && ((PERCENT > 0 && PERCENT <= 95)) || die "BENCH_SCAN_PERCENT must be 1..95"
OUT=$(report_output "$QUICK" "$ROOT")

bench_work scan 15
PRO=/proc/sys/vm/compaction_proactiveness
SAVED_PRO=
restore_on_exit() { [[ -z $SAVED_PRO ]] || echo "$SAVED_PRO" >$PRO; }
T_START=$SECONDS

begin_meta "$BUILD_DIR/fragd" bpftrace
meta quick="$QUICK" scans="$SCANS" percent="$PERCENT"

take_heavy_lock
SAVED_PRO=$(<$PRO) # under the lock: another heavy run sets it to 0 for its own

# start_fragd NAME YAML: fragd with that config, its files in $WORK/NAME (start_fragd_in).
FRAGD="$BUILD_DIR/fragd"
start_fragd() {
	mkdir -p "$WORK/$1"
	printf '%s\n' "$2" >"$WORK/$1/fragd.yaml"
	start_fragd_in "$WORK/$1" "$WORK/$1/fragd.yaml"
}

hwm_kib() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }

# row NAME THREADS: SCANS fresh scans; writes NAME.durations (ns, one per line) and
# NAME.hwm (VmHWM KiB of fragd with the scan, and of fragd without it).
row() {
	local name=$1 threads=$2 i with
	start_fragd "$name" "pageblocks: {scan: true, interval: 1h, max_age: 1h, threads: $threads}"
	: >"$WORK/$name.durations"
	for ((i = 0; i < SCANS; i++)); do
		"$BUILD_DIR/fragctl" --socket "$SOCK" map --max-age 0 --json >"$WORK/$name.json"
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["scan"]["duration_ns"])' "$WORK/$name.json" \
			>>"$WORK/$name.durations"
	done
	with=$(hwm_kib "$FRAGD_PID")
	stop_pid "$FRAGD_PID" 15
	start_fragd "$name-off" "pageblocks: {scan: false}"
	for ((i = 0; i < SCANS; i++)); do
		"$BUILD_DIR/fragctl" --socket "$SOCK" map --max-age 0 --json >/dev/null 2>&1 || true
	done
	echo "$with $(hwm_kib "$FRAGD_PID")" >"$WORK/$name.hwm"
	stop_pid "$FRAGD_PID" 15
	log "$name: $(tr '\n' ' ' <"$WORK/$name.durations") ns; VmHWM with/without $(cat "$WORK/$name.hwm") KiB"
}

# The machine as it is. First the kernel's own cost: one plain read of kpageflags.
meta load_start "$(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(date +%s%N)
dd if=/proc/kpageflags of=/dev/null bs=512K status=none
meta dd_ms "$((($(date +%s%N) - t0) / 1000000))"
row idle1 1
row idle2 2

# Fragmented by the fragmenter (1 page in 4 kept everywhere).
echo 0 >$PRO
start_fragmenter "$BUILD_DIR/fragmenter" "$WORK" "$PERCENT" 360 || die "$FRAG_ERROR"
row frag1 1
row frag2 2

exec 9>&-
stop_pid "$FRAG_PID" 60

# The pictures: physmap frees 1 page in 8 of every block it owns whole, page
# tables outgrow the rest of free memory and fall into those holes (pollution
# the kernel does not claim blocks for); then one compaction.
if [[ $QUICK != 1 ]]; then
	for ((i = 0; i < 600; i++)); do pgrep -x fragmenter >/dev/null || break; sleep 0.2; done
	start_fragd pictures "pageblocks: {scan: true, interval: 1h, max_age: 1h}"
	mkfifo "$WORK/hold-pm" "$WORK/hold-pt"
	avail_mib=$(($(meminfo MemAvailable) / 1024))
	"$BUILD_DIR/physmap" frag --mib $((avail_mib * 85 / 100)) --drop 8 --out "$WORK/owned.txt" \
		<"$WORK/hold-pm" >"$WORK/pm.out" 2>"$WORK/pm.err" &
	PM_PID=$!
	PIDS+=("$PM_PID")
	exec 6>"$WORK/hold-pm"
	wait_line "$PM_PID" "$WORK/pm" 360
	meta physmap "$(cat "$WORK/pm.out") of $((avail_mib * 85 / 100)) MiB"
	free_kib=$(meminfo MemFree)
	"$BUILD_DIR/physmap" pgtables --count $((free_kib * 3 / 4 / 4)) --out "$WORK/pt.txt" <"$WORK/hold-pt" \
		>"$WORK/pt.out" 2>"$WORK/pt.err" &
	PT_PID=$!
	PIDS+=("$PT_PID")
	exec 7>"$WORK/hold-pt"
	wait_line "$PT_PID" "$WORK/pt" 120
	meta pgtables "$(cat "$WORK/pt.out")"
	sleep 2
	"$BUILD_DIR/fragctl" --socket "$SOCK" map --max-age 0 --png docs/pageblocks-before.png >"$WORK/before.txt"
	"$BUILD_DIR/fragctl" --socket "$SOCK" map --max-age 5 --json >"$WORK/before.json"
	m0=$(awk '$1 == "pgmigrate_success" { print $2 }' /proc/vmstat)
	t0=$(date +%s%N)
	echo 1 >/proc/sys/vm/compact_memory
	meta compact_ms "$((($(date +%s%N) - t0) / 1000000))"
	meta compact_migrated "$(($(awk '$1 == "pgmigrate_success" { print $2 }' /proc/vmstat) - m0))"
	sleep 2
	"$BUILD_DIR/fragctl" --socket "$SOCK" map --max-age 0 --png docs/pageblocks-after.png >"$WORK/after.txt"
	"$BUILD_DIR/fragctl" --socket "$SOCK" map --max-age 5 --json >"$WORK/after.json"
	exec 7>&-
	stop_pid "$PT_PID" 30
	exec 6>&-
	stop_pid "$PM_PID" 60
	stop_pid "$FRAGD_PID" 15
	log "pictures: docs/pageblocks-before.png, docs/pageblocks-after.png"
fi

meta load_end "$(cut -d' ' -f1-3 /proc/loadavg)"
meta_minutes
# What the report reads, kept: `python3 bench/scan_report.py bench/data/scan OUT`.
keep_found scan "$WORK" -path ./meta.env -o -path './*.durations' ! -path './*/*' -o -path './*.hwm' ! -path './*/*' \
	-o -path ./idle1.json -o -path ./before.json -o -path ./after.json
python3 bench/scan_report.py "$WORK" "$OUT"
FAILED=0
