#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragd on real workloads: a VM backed by 2 MiB hugetlbfs pages, a JVM with a THP heap, and a
# DPDK-style hugetlb user, each started on fragmented memory, in every mode that could serve it.
# `make bench-apps`, or as root after the build:
#
#   bash bench/apps.sh          # 3 rounds, writes BENCHMARKS.md (the apps section)
#
# Fragmentations holes and mixed (bench/fragment.sh), workloads vm, jvm and hugetlb, modes
# kernel20 kernel90 defrag hugeadm fragd fragd_told fragd_ensure: the section
# bench/apps_report.py writes says what each is and what each column counts; run_one below is
# one run. Counters (/proc/vmstat) are read at "ready" and at the end, so the pages a mode
# migrates ahead of the workload count too.
# Knobs: BENCH_APPS_WORKLOADS, BENCH_APPS_MODES, BENCH_APPS_FRAGMENTATIONS (subsets of the above),
# MIXED_CACHE_MIB (2048), MIXED_FILES (200000), MIXED_PGTABLES (131072), BENCH_APPS_REPEATS (3),
# BENCH_APPS_PERCENT (95), BENCH_APPS_WAIT (20), GUEST_MIB (4096), JVM_MIB (4096), HUGETLB_MIB (2048),
# BENCH_APPS_ENSURE_HOLD (60, seconds), BENCH_OUTPUT (file to update), FRAGD_BUILD_DIR; BENCH_QUICK=1:
# one round at --percent 50, 2 s wait, 512/512/256 MiB, a mixed fragmentation of 64 MiB of cache,
# 2000 files and 1024 page tables, written to /tmp/fragd-bench-quick.md.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=bench/fragment.sh
source "$(dirname "${BASH_SOURCE[0]}")/fragment.sh"
bench_start apps "it writes sysctls, mounts hugetlbfs and loads BPF" fragd fragctl fragmenter physmap -- \
	qemu-system-x86_64 java hugeadm python3 curl flock

read_subset WORKLOADS BENCH_APPS_WORKLOADS "vm jvm hugetlb"
read_subset MODES BENCH_APPS_MODES "kernel20 kernel90 defrag hugeadm fragd fragd_told fragd_ensure"
read_subset FRAGMENTATIONS BENCH_APPS_FRAGMENTATIONS "holes mixed"
REPEATS=${BENCH_APPS_REPEATS:-$(q 3 1)}
PERCENT=${BENCH_APPS_PERCENT:-$(q 95 50)}
WAIT=${BENCH_APPS_WAIT:-$(q 20 2)}
GUEST_MIB=${GUEST_MIB:-$(q 4096 512)}
JVM_MIB=${JVM_MIB:-$(q 4096 512)}
HUGETLB_MIB=${HUGETLB_MIB:-$(q 2048 256)}
MIXED_CACHE_MIB=${MIXED_CACHE_MIB:-$(q 2048 64)}
MIXED_FILES=${MIXED_FILES:-$(q 200000 2000)}
MIXED_PGTABLES=${MIXED_PGTABLES:-$(q 131072 1024)}
ENSURE_HOLD=${BENCH_APPS_ENSURE_HOLD:-60}
require_uint BENCH_APPS_ ENSURE_HOLD REPEATS PERCENT WAIT
require_uint "" GUEST_MIB JVM_MIB HUGETLB_MIB MIXED_CACHE_MIB MIXED_FILES MIXED_PGTABLES
((REPEATS >= 1 && PERCENT >= 1 && PERCENT <= 98 && WAIT >= 2)) ||
	die "BENCH_APPS_REPEATS must be >= 1, BENCH_APPS_PERCENT 1..98, BENCH_APPS_WAIT >= 2"
declare -A MIB=([vm]=$GUEST_MIB [jvm]=$JVM_MIB [hugetlb]=$HUGETLB_MIB) # each workload's size

bench_work apps 15
MNT="$WORK/hugetlbfs"
# The mixed fragmentation's page cache (on disk, not tmpfs: page cache proper) and files (tmpfs).
CACHE_FILE=/var/tmp/fragd-bench-apps-cache.$$
SLAB_DIR=/dev/shm/fragd-bench-apps-slab.$$
take_heavy_lock
save_memory_settings

restore_settings() {
	fill_stop
	mountpoint -q "$MNT" && { umount "$MNT" || log "cannot unmount $MNT"; }
	restore_memory_settings
}
restore_on_exit() { trace_close DIRECT_TRACE; tracefs_unmount; restore_settings; }

# Private copies: the build directory may be rebuilt while this runs.
cp "$BUILD_DIR/fragd" "$BUILD_DIR/fragctl" "$BUILD_DIR/fragmenter" "$BUILD_DIR/physmap" "$WORK/"
FRAGD="$WORK/fragd"
begin_meta "$FRAGD"
meta java_version "$(java -version 2>&1 | head -1)"
meta qemu_version "$(qemu-system-x86_64 --version | head -1)"
meta percent="$PERCENT" wait_s="$WAIT" ensure_hold_s="$ENSURE_HOLD" order=arm_order
meta mixed "cache_mib=$MIXED_CACHE_MIB files=$MIXED_FILES pgtables=$MIXED_PGTABLES"
sel="${WORKLOADS[*]}-${FRAGMENTATIONS[*]}-${MODES[*]}"
meta selection "${sel// /+}" # names bench/data/apps/SELECTION and bench/results/apps-SELECTION.md
sed 's/^mode: observe$/mode: act/' configs/fragd.yaml >"$WORK/act.yaml"
grep -q '^mode: act$' "$WORK/act.yaml" || die "configs/fragd.yaml does not say 'mode: observe' on a line of its own"
mkdir -p "$MNT"
cat >"$WORK/Smaps.java" <<'EOF'
public class Smaps {
  public static void main(String[] a) throws Exception {
    for (String l : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/smaps_rollup")))
      if (l.startsWith("AnonHugePages:")) System.out.println(l.replaceAll("[^0-9]", ""));
  }
}
EOF

vm_counters() { awk '$1 ~ /^(pgmigrate_success|compact_stall|compact_fail|compact_success|thp_fault_alloc|thp_fault_fallback)$/ { printf "%s=%s ", $1, $2 }' /proc/vmstat; }
counter() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }
# fragd_stalls: "host=N own=M", fragd's count of entries into direct compaction by other processes
# and by its own writers (fragd_direct_stall_entries_total, fragd_own_direct_stall_entries_total;
# phase compaction), from its metrics: what compact_stall alone cannot tell apart.
fragd_stalls() {
	curl -sf --max-time 5 "$URL" | awk '
		/^fragd_direct_stall_entries_total\{.*phase="compaction"/ { host += $2 }
		/^fragd_own_direct_stall_entries_total\{.*phase="compaction"/ { own += $2 }
		END { printf "host=%d own=%d", host, own }'
}

# The policy fragd_told runs for workload $1: its size told as a pool (vm, hugetlb) or a reserve (jvm).
told_policy() {
	local f="$WORK/told-$1.yaml" n=$((MIB[$1] / 2))
	if [[ $1 == jvm ]]; then
		sed "0,/^    blocks: 0$/s//    blocks: $n/" "$WORK/act.yaml" >"$f"
		grep -q "^    blocks: $n$" "$f" || die "configs/fragd.yaml has no 'blocks: 0' line under reserve"
	else
		sed "s/^  pools: \[\]$/  pools: [{size: 2MB, node: all, count: $n}]/" "$WORK/act.yaml" >"$f"
		grep -q "count: $n" "$f" || die "configs/fragd.yaml has no 'pools: []' line under hugepages"
	fi
	echo "$f"
}

# grow_pool MODE PAGES: the pool grown the mode's way; prints nothing, fails never (the
# workload shows what was missing).
grow_pool() {
	case $1 in
	hugeadm) hugeadm --pool-pages-min "2MB:$2" --hard >"$R/hugeadm.out" 2>&1 || true ;;
	fragd_told)
		local i
		for ((i = 0; i < 600; i++)); do # fragd grows it from its start: up to 60 s
			[[ $(<"$HP") -ge $2 ]] && break
			grep -q "pool 2048kB (global) .*: \(short\|guard\|error\|cut\)" "$R/fragd.log" && break
			sleep 0.1
		done
		;;
	fragd_ensure) # as a launch hook: exit status and output kept, the workload shows what was missing
		ENSURE_RC=0
		"$WORK/fragctl" --socket "$SOCK" ensure 2MB "$2" --within 120s --hold "${ENSURE_HOLD}s" --for "bench:$3" \
			>"$R/ensure.out" 2>&1 || ENSURE_RC=$?
		ENSURE_END_MS=$(now_ms)
		;;
	*) echo "$2" >"$HP" ;;
	esac
}

# hold_end: after a fragd_ensure workload, waits for the lease's hold to end (ENSURE_HOLD s after
# the ensure returned), then up to 30 s for the pool to go back to its target (0); prints
# "pool_at_hold_end=N pool_after_hold=M pool_back_ms=T" (N: the pool 1 s before the hold's end;
# T: when it was 0, in ms after the hold's end, -1: not back in 30 s).
hold_end() {
	local end=$((ENSURE_END_MS + ENSURE_HOLD * 1000)) at_end back=-1
	while (($(now_ms) < end - 1000)); do sleep 0.2; done
	at_end=$(<"$HP")
	while (($(now_ms) < end + 30000)); do
		(($(<"$HP") == 0)) && { back=$(($(now_ms) - end)); break; }
		sleep 0.1
	done
	echo "pool_at_hold_end=$at_end pool_after_hold=$(<"$HP") pool_back_ms=$back"
}

# run_workload W MODE: sets OUT to "started=... time_ms=... [huge_pct=...]".
run_workload() {
	local w=$1 mode=$2 mib=${MIB[$1]} t0 t1 pages free0 i p pool pool_ms started=0 huge
	t0=$(now_ms)
	case $w in
	vm | hugetlb)
		pages=$((mib / 2))
		grow_pool "$mode" "$pages" "$w"
		pool_ms=$(($(now_ms) - t0))
		pool=$(<"$HP")
		free0=$(meminfo HugePages_Free)
		if [[ $w == vm ]]; then
			mount -t hugetlbfs -o pagesize=2M none "$MNT"
			start_hugetlb_guest "$mib" "$MNT" "$R/qemu.out"
			p=$GUEST_PID
		else
			python3 -c '
import mmap, sys, time
m = mmap.mmap(-1, int(sys.argv[1]) << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40000 | 0x8000)
print("mapped", flush=True)
time.sleep(600)' "$mib" >"$R/hugetlb.out" 2>&1 &
			p=$!
			PIDS+=("$p")
		fi
		for ((i = 0; i < 1200; i++)); do
			(($(meminfo HugePages_Free) + pages <= free0)) && { [[ $w == vm ]] || grep -q mapped "$R/hugetlb.out"; } &&
				{ started=1; break; }
			kill -0 "$p" 2>/dev/null || break
			sleep 0.05
		done
		t1=$(now_ms)
		stop_pid "$p" 2>/dev/null || true
		mountpoint -q "$MNT" && umount "$MNT"
		OUT="started=$started time_ms=$((t1 - t0)) pool_ms=$pool_ms pool=$pool"
		;;
	jvm)
		huge=$(timeout 300 java "-Xms${mib}m" "-Xmx${mib}m" -XX:+UseTransparentHugePages -XX:+AlwaysPreTouch \
			"$WORK/Smaps.java" 2>"$R/java.err" || true)
		OUT="started=$((${#huge} > 0)) time_ms=$(($(now_ms) - t0)) huge_pct=$((${huge:-0} * 100 / (mib * 1024)))"
		;;
	esac
}

run_one() { # W MODE ROUND FRAGMENTATION
	local w=$1 mode=$2 round=$3 frag=$4 c0 c1 w0 k r0 r1 r2 f0='' f1='' kt line
	R="$WORK/$frag-$w-$mode-$round"
	mkdir -p "$R"
	[[ $mode == defrag ]] && echo 1 >"$DFM"
	echo 0 >"$PRO"
	start_fragmenter "$WORK/fragmenter" "$R" "$PERCENT" 600 || die "$FRAG_ERROR"
	[[ $frag == mixed ]] && mixed_start "$R"
	c0=$(vm_counters)
	r0=$(reported_kib)
	case $mode in
	kernel20 | defrag | hugeadm) echo 20 >"$PRO" ;;
	kernel90) echo 90 >"$PRO" ;;
	fragd | fragd_ensure) start_fragd_in "$R" "$WORK/act.yaml" ;;
	fragd_told) start_fragd_in "$R" "$(told_policy "$w")" ;;
	esac
	sleep "$WAIT"
	w0=$(vm_counters)
	r1=$(reported_kib)
	[[ $mode == fragd* ]] && f0=$(fragd_stalls)
	direct_trace_start
	run_workload "$w" "$mode"
	c1=$(vm_counters)
	kt=$(direct_trace_stop)
	r2=$(reported_kib)
	[[ $mode == fragd_ensure ]] && OUT+=" ensure_rc=$ENSURE_RC $(hold_end)"
	if [[ $mode == fragd* ]]; then
		sleep 1.2 # fragd's counters are those of its last tick (tick: 1s)
		f1=$(fragd_stalls)
		stop_pid "$FRAGD_PID" || true
	fi
	exec 9>&-
	reap "$FRAG_PID"
	restore_settings
	line="frag=$frag workload=$w mode=$mode round=$round $OUT"
	for k in pgmigrate_success compact_stall compact_fail thp_fault_alloc thp_fault_fallback; do
		line+=" $k=$(($(counter "$c1" $k) - $(counter "$c0" $k)))"
	done
	# The workload's own window too: fragd's background compactions before it start are out.
	for k in compact_stall thp_fault_alloc; do line+=" ${k}_workload=$(($(counter "$c1" $k) - $(counter "$w0" $k)))"; done
	# fragd's split of that window's direct compactions: other processes' (the workload's) and its own.
	[[ -n $f1 ]] && for k in host own; do line+=" fragd_${k}_stall_workload=$(($(counter "$f1" $k) - $(counter "$f0" $k)))"; done
	# The kernel's record of the same window (tracefs): the stall goals count with it.
	[[ -n $kt ]] && line+=" $kt"
	# Free memory handed back to the host while the mode prepared, and while the workload ran.
	[[ -n $r0 && -n $r1 && -n $r2 ]] && line+=" reported_wait_mib=$(((r1 - r0) / 1024)) reported_workload_mib=$(((r2 - r1) / 1024))"
	# fragd's goal-sized compactions that gave way to the workload's stalls (result yielded).
	[[ $mode == fragd* ]] && line+=" fragd_yielded=$(grep -c ': yielded, ' "$R/fragd.log" || true)"
	echo "$line" >>"$WORK/runs.txt"
	log "$line"
}

# The modes that run workload $1, which arm_order interleaves: no hugetlb pool for the JVM, no
# defrag where the kernel has no vm.defrag_mode.
workload_modes() {
	local m
	for m in "${MODES[@]}"; do
		[[ $1 == jvm && ($m == hugeadm || $m == fragd_ensure) ]] && continue
		[[ $m == defrag && -z $DFM_ORIG ]] && continue
		echo "$m"
	done
}

for frag in "${FRAGMENTATIONS[@]}"; do
for w in "${WORKLOADS[@]}"; do
	mapfile -t wmodes < <(workload_modes "$w")
	for ((round = 1; round <= REPEATS; round++)); do
		for mode in $(arm_order "$round" "${wmodes[@]}"); do
			run_one "$w" "$mode" "$round" "$frag"
		done
	done
done
done

OUTPUT=$(report_output "$QUICK" "$ROOT")
python3 bench/apps_report.py "$WORK/runs.txt" "$WORK/meta.env" "$OUTPUT"
log "wrote $OUTPUT"
# The runs' lines, one directory per selection of workloads, fragmentations and modes:
# `python3 bench/apps_report.py bench/data/apps/<selection>/runs.txt .../meta.env OUT` again.
keep_raw "apps/${sel// /+}" "$WORK/runs.txt" "$WORK/meta.env"
FAILED=0
