#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragd benchmarks: tracing overhead (page faults, hugepage burst) and footprint.
# Entry point of `make bench`; run from anywhere as root after the build:
#
#   bash bench/run.sh                  # full run (~25 min), writes BENCHMARKS.md
#   BENCH_PAIRS=20 bash bench/run.sh   # more pairs
#   BENCH_QUICK=1 bash bench/run.sh    # smoke run (~1 min); prints its section and writes
#                                      # it to /tmp/fragd-bench-quick.md, BENCHMARKS.md untouched
#
# Knobs (environment): BENCH_PAIRS (default 10, quick 2), BENCH_QUICK, BENCH_CPU (CPU the
# workloads are pinned to, default the last one), BENCH_PF_MIB (256), BENCH_PF_SECONDS (3),
# BENCH_HUGEPAGES (1000), BENCH_HP_CYCLES (30), BENCH_OUTPUT (file to update),
# BENCH_WAIT_QUIET (seconds to wait for other tracers on the same tracepoints to go, 30),
# BENCH_BUILD_PAIRS (clean builds per arm, default 5, quick 1), FRAGD_BUILD_DIR (the build's
# fragd, default build), BENCH_KEEP=1 keeps the work directory (logs, raw results).
#
# Each round runs ten slots (D E O L B: fragd adaptive, exact, off, the floor program, bpftrace;
# U1..U5 untraced), each a page-fault run then a hugepage burst, paired and alternated; then
# clean builds of fragd's core library, untraced and with fragd. The method and the pairing are
# written with the figures (bench/report.py).
# Changes one global setting: vm.nr_hugepages (grown, then put back to 0 after each
# burst, and restored on exit whatever happens), under the heavy lock (/tmp/fragd-heavy.lock),
# which it holds for the whole run. Every process started here is tracked by pid and stopped
# on exit.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start bench "it loads BPF and writes vm.nr_hugepages" fragd -- gcc clang cmake bpftrace taskset python3 curl
HAVE_BPFTOOL=$(command -v bpftool >/dev/null && echo 1 || echo 0)

PAIRS=${BENCH_PAIRS:-$(q 10 2)}
PF_MIB=${BENCH_PF_MIB:-256}
PF_SECONDS=${BENCH_PF_SECONDS:-$(q 3 1)}
HP_PAGES=${BENCH_HUGEPAGES:-1000}
HP_CYCLES=${BENCH_HP_CYCLES:-$(q 30 5)}
BUILD_PAIRS=${BENCH_BUILD_PAIRS:-$(q 5 1)}
RSS_WAIT=$(q 30 5)
SCRAPES=$(q 200 20)
WAIT_QUIET=${BENCH_WAIT_QUIET:-30}
NCPU=$(nproc)
CPU=${BENCH_CPU:-$((NCPU - 1))}
require_uint BENCH_ PAIRS PF_MIB PF_SECONDS HP_PAGES HP_CYCLES BUILD_PAIRS WAIT_QUIET CPU
((PAIRS >= 1)) || die "BENCH_PAIRS must be >= 1"
((CPU < NCPU)) || die "BENCH_CPU=$CPU but this machine has $NCPU CPUs"

HP=/proc/sys/vm/nr_hugepages
# The bursts grow the hugetlb pool: no other memory-heavy job (a test's pool, a benchmark's
# fragmenter) may run meanwhile. The settings are read under the lock: another run changes them
# while it holds it.
take_heavy_lock
require_empty_pool
PROACTIVE_ORIG=$(</proc/sys/vm/compaction_proactiveness)
bench_work overhead 10
T_START=$(date +%s)
restore_on_exit() {
	if [[ $(<"$HP") != 0 ]]; then echo 0 >"$HP" && log "restored vm.nr_hugepages=0"; fi
	if [[ $(</proc/sys/vm/compaction_proactiveness) != "$PROACTIVE_ORIG" ]]; then
		log "warning: vm.compaction_proactiveness changed during the run (not by bench) to" \
			"$(</proc/sys/vm/compaction_proactiveness); left as is"
	fi
}

build_fault_tools
# Private copies: other people may rebuild build/fragd while this runs.
cp "$BUILD_DIR/fragd" "$WORK/fragd"
cp configs/fragd.yaml "$WORK/fragd.yaml"
grep -q '^  allocations: adaptive$' "$WORK/fragd.yaml" || die "configs/fragd.yaml does not ship bpf.allocations: adaptive"
for mode in exact off; do
	sed -E "s/^(  allocations:).*/\1 $mode/" configs/fragd.yaml >"$WORK/fragd-$mode.yaml"
done
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
SOCK="$WORK/fragd.sock"
BT_SCRIPT="$ROOT/bench/fragd-equivalent.bt"
BT_TRACEPOINTS=$(grep -c '^tracepoint:' "$BT_SCRIPT")
TRACEPOINTS='mm_page_alloc|mm_compaction_try_to_compact_pages|mm_vmscan_direct_reclaim_begin|mm_vmscan_direct_reclaim_end|mm_compaction_begin|mm_compaction_end|mm_compaction_migratepages|mm_page_alloc_extfrag'
RESULTS="$WORK/results.tsv"
: >"$RESULTS"

# Processes other than ours with a BPF program on one of the tracepoints benchmarked here
# (another fragd, a bpftrace...): they add their own cost to every arm.
foreign_tracers() {
	((HAVE_BPFTOOL)) || return 0
	local mine=" ${PIDS[*]} "
	bpftool perf list 2>/dev/null | awk -v mine="$mine" -v tps="^($TRACEPOINTS)\$" '
		$1 == "pid" && $NF ~ tps && index(mine, " " $2 " ") == 0 { print $2 }' | sort -u |
		while read -r p; do printf '%s(%s) ' "$p" "$(cat /proc/"$p"/comm 2>/dev/null || echo '?')"; done
}

wait_quiet() {
	local f i
	for ((i = 0; i < WAIT_QUIET; i++)); do
		f=$(foreign_tracers)
		[[ -z $f ]] && return 0
		((i == 0)) && log "other tracers on the same tracepoints: $f- waiting up to ${WAIT_QUIET}s"
		sleep 1
	done
	log "still there after ${WAIT_QUIET}s: $f- measuring anyway (runs flagged)"
}

FRAGD_STARTS=0
FRAGD_BAD_EXITS=0
start_fragd() { # [config]
	local cfg=${1:-$WORK/fragd.yaml}
	echo "=== start $((++FRAGD_STARTS)) $(date -u +%T) $(basename "$cfg")" >>"$WORK/fragd.log"
	bg_nolock "$WORK/fragd" --config "$cfg" --listen "127.0.0.1:$PORT" --socket "$SOCK" \
		2>>"$WORK/fragd.log"
	FRAGD_PID=$!
	PIDS+=("$FRAGD_PID")
	wait_fragd_ready "$FRAGD_PID" "$WORK/fragd.log"
	# The first pageblock scan runs at start (0.6 s of kernel time here): a one-time cost, not
	# the steady state measured here. Wait for it to end.
	wait_first_scan 10 "$WORK/fragd.log"
}

# fragd's count of allocations in the order group that starts at order $1 (fast + stalled +
# failed; the shipped metrics.orders counts order 9 in group "9-10", where only order 9 happens
# here), -1 if no answer.
fragd_count() {
	local m
	m=$(curl -sf --max-time 5 "$URL") || { echo -1; return 0; }
	metric /dev/stdin fragd_alloc_total "order=\"$1(-[0-9]+)?\"" <<<"$m"
}

# Stops fragd; sets SEEN to its count of order-$1 allocations, read once it reaches $2
# (its counters are exported once per tick) or after 5 s, and SWITCHED to the times it
# switched allocation counting on.
stop_fragd() {
	local order=$1 want=$2 rc=0 i
	for ((i = 0; i < 25; i++)); do
		SEEN=$(fragd_count "$order")
		((SEEN >= want)) && break
		sleep 0.2
	done
	SWITCHED=$(curl -sf --max-time 5 "$URL" | awk '/^fragd_alloc_counting_switches_total\{to="on"\}/ { printf "%d", $NF }')
	stop_pid "$FRAGD_PID" 15 || rc=$?
	if ((rc != 0)); then
		FRAGD_BAD_EXITS=$((FRAGD_BAD_EXITS + 1))
		echo "=== exit status $rc" >>"$WORK/fragd.log"
	fi
}

BT_RUN=0
start_bpftrace() {
	local i out
	BT_RUN=$((BT_RUN + 1))
	out="$WORK/bpftrace.$BT_RUN"
	bg_nolock bpftrace "$BT_SCRIPT" >"$out.out" 2>"$out.err"
	BT_PID=$!
	PIDS+=("$BT_PID")
	# "Attaching N probes..." is printed before the probes are attached: wait until the
	# kernel lists all of them (bpftool), or give it a few seconds more without bpftool.
	for ((i = 0; i < 600; i++)); do
		kill -0 "$BT_PID" 2>/dev/null || die "bpftrace exited at start: $(grep -v RLIMIT "$out.err" | head -5)"
		if ((HAVE_BPFTOOL)); then
			(($(attached_count "$BT_PID") >= BT_TRACEPOINTS)) && return 0
		elif grep -q '^Attaching' "$out.out" 2>/dev/null; then
			sleep 3
			return 0
		fi
		sleep 0.1
	done
	die "bpftrace did not attach its $BT_TRACEPOINTS tracepoints in 60s"
}

# Stops bpftrace; sets SEEN to its count of order-$1 allocations (from the maps it prints).
stop_bpftrace() {
	local order=$1 out="$WORK/bpftrace.$BT_RUN" rc=0
	stop_pid "$BT_PID" 15 || rc=$?
	((rc == 0)) || log "bpftrace exited with status $rc (see $out.err)"
	SEEN=$(awk -v o="@allocs[$order, " 'index($0, o) == 1 { s += $NF } END { printf "%d", s }' "$out.out")
}

# figure KEY NAME LINE: sets V to the N of LINE's KEY=N (dies naming NAME, the program that
# printed LINE, without one) and INFO to the rest of LINE.
figure() {
	V=$(sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$3")
	[[ -n $V ]] || die "$2 printed no figure: $3"
	INFO=$(sed "s/$1=[0-9]* //" <<<"$3")
}
# result BENCH ROUND POS ARM FOREIGN OTHERS: the row of results.tsv of the last figure, flagged
# when tracers not ours were seen around its run (FOREIGN), OTHERS named in its info.
result() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$V" "$((${#5} > 0))" "$INFO ${6:+others:$6}" >>"$RESULTS"
}

# run_slot ROUND POS ARM: one page-fault run, then one hugepage burst, each a row of results.tsv.
run_slot() {
	local f0 f1 f2 line t=0 m=-1
	f0=$(foreign_tracers)
	line=$(taskset -c "$CPU" "$WORK/pagefault" -m "$PF_MIB" -t "$PF_SECONDS" -w 2) ||
		die "pagefault run failed"
	figure faults_per_s pagefault "$line"
	# Every touched page must have faulted (no THP, no pages kept across MADV_DONTNEED):
	# touched <= minflt <= touched * 1.01 + 100.
	[[ $line =~ touched=([0-9]+)\ minflt=([0-9]+) ]] && t=${BASH_REMATCH[1]} m=${BASH_REMATCH[2]}
	((t <= m && 100 * m <= 101 * t + 10000)) || die "pagefault: minor faults do not match pages touched: $line"
	f1=$(foreign_tracers)
	result pf "$@" "$f0$f1" "$f0"

	line=$(taskset -c "$CPU" python3 bench/hugepage_burst.py "$HP_PAGES" "$HP_CYCLES") ||
		die "hugepage burst failed"
	figure pages_per_s hugepage_burst "$line"
	f2=$(foreign_tracers)
	result hp "$@" "$f1$f2" "$f2"
}

SEEN_LOG="$WORK/seen.tsv" # tracer's own count of order-9 allocations, per traced slot
: >"$SEEN_LOG"
declare -A MODE=([E]=exact [O]=off)
run_arm() { # round position arm
	case $3 in
	D) start_fragd ;;
	E | O) start_fragd "$WORK/fragd-${MODE[$3]}.yaml" ;;
	L) start_floor "$WORK" ;;
	B) start_bpftrace ;;
	esac
	run_slot "$@"
	case $3 in
	D | O) stop_fragd 9 0 ;;
	E) stop_fragd 9 $((HP_PAGES * HP_CYCLES)) ;;
	L) stop_pid "$FLOOR_PID" 15 || die "floor exited non-zero" ;;
	B)
		stop_bpftrace 9
		SWITCHED=0
		;;
	esac
	if [[ $3 == [DEB] ]]; then printf '%s\t%s\t%s\t%s\n' "$3" "$1" "$SEEN" "$SWITCHED" >>"$SEEN_LOG"; fi
}

# --- overhead ------------------------------------------------------------------
begin_meta "$WORK/fragd" bpftrace
log "work directory $WORK; $PAIRS pairs; workloads on CPU $CPU; fragd $FRAGD_VERSION ($FRAGD_SHA)"
meta mem_available_kib_start "$(meminfo MemAvailable)"
meta loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
meta quick="$QUICK" pairs="$PAIRS" cpu="$CPU" pf_mib="$PF_MIB" pf_seconds="$PF_SECONDS" hp_pages="$HP_PAGES"
meta hp_cycles="$HP_CYCLES" rss_wait="$RSS_WAIT" proactiveness="$PROACTIVE_ORIG"
meta spectre_v2 "$(cat /sys/devices/system/cpu/vulnerabilities/spectre_v2 2>/dev/null | cut -d';' -f1)"
meta thp_enabled "$(cat /sys/kernel/mm/transparent_hugepage/enabled)"
meta have_bpftool="$HAVE_BPFTOOL" bt_tracepoints="$BT_TRACEPOINTS"
meta foreign_start "$(foreign_tracers)"

wait_quiet
log "warm-up run (discarded)"
taskset -c "$CPU" "$WORK/pagefault" -m "$PF_MIB" -t "$PF_SECONDS" -w 2 >/dev/null
taskset -c "$CPU" python3 bench/hugepage_burst.py "$HP_PAGES" "$HP_CYCLES" >/dev/null

for ((r = 0; r < PAIRS; r++)); do
	if ((r % 2 == 0)); then order=(D U1 E U2 L U3 B U4 O U5); else order=(U5 O U4 B U3 L U2 E U1 D); fi
	wait_quiet
	log "round $((r + 1))/$PAIRS: ${order[*]}"
	for ((p = 0; p < ${#order[@]}; p++)); do run_arm "$r" "$p" "${order[p]}"; done
done
meta fragd_programs "${FRAGD_PROGRAMS:-?}"
meta fragd_starts="$FRAGD_STARTS" fragd_bad_exits="$FRAGD_BAD_EXITS"
meta bpftrace_rlimit_msg "$(cat "$WORK"/bpftrace.*.err 2>/dev/null | grep -m1 RLIMIT_MEMLOCK || true)"
meta bpftrace_attach_line "$(grep -h -m1 '^Attaching' "$WORK/bpftrace.1.out" 2>/dev/null || true)"

# --- a realistic workload: clean builds --------------------------------------------
# fragd's own core library (C++: many processes, page faults, file I/O), cmake + make -j.
BUILD_LOG="$WORK/builds.tsv"
: >"$BUILD_LOG"
# fragd's rooms below the daemon and fragctl, as CMakeLists.txt declares them (FRAGD_ROOMS), its
# BPF objects with them.
read -ra CORE_TARGETS <<<"$(sed -n 's/^set(FRAGD_ROOMS \(.*\))$/\1/p' CMakeLists.txt | sed 's/[^ ]*/fragd_&/g')"
((${#CORE_TARGETS[@]} > 0)) || die "CMakeLists.txt declares no FRAGD_ROOMS"
build_once() { # arm round: one clean build, wall seconds appended to builds.tsv
	local d="$WORK/build-src" t0 t1
	rm -rf "$d"
	cmake -S "$ROOT" -B "$d" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null 2>"$WORK/build.err" ||
		die "cmake failed: $(tail -3 "$WORK/build.err")"
	t0=$(date +%s.%N)
	cmake --build "$d" --target "${CORE_TARGETS[@]}" -j "$NCPU" >/dev/null 2>>"$WORK/build.err" || die "build failed"
	t1=$(date +%s.%N)
	printf '%s\t%s\t%s\n' "$1" "$2" "$(python3 -c "print(f'{$t1 - $t0:.3f}')")" >>"$BUILD_LOG"
	rm -rf "$d"
}
log "realistic workload: $BUILD_PAIRS pairs of clean builds of fragd's core libraries, untraced and with fragd"
build_once warmup -1
for ((r = 0; r < BUILD_PAIRS; r++)); do
	wait_quiet
	if ((r % 2 == 0)); then arms=(U D); else arms=(D U); fi
	for a in "${arms[@]}"; do
		[[ $a == U ]] || start_fragd
		build_once "$a" "$r"
		[[ $a == U ]] || stop_fragd 9 0
	done
done
meta build_pairs "$BUILD_PAIRS"
meta core_targets "${CORE_TARGETS[*]}"

# --- footprint -----------------------------------------------------------------
# fragd's CPU on a quiet host is bench/cost.sh's figure (5 runs per arm, interleaved, threads apart).
log "footprint: fragd idle ${RSS_WAIT}s, then $SCRAPES scrapes"
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

wait_quiet
start_fragd
sleep "$RSS_WAIT"
meta rss_kib "$(status_kib "$FRAGD_PID" VmRSS)"
meta hwm_kib_idle "$(status_kib "$FRAGD_PID" VmHWM)"
meta threads "$(status_kib "$FRAGD_PID" Threads)"
meta pagetypeinfo_ms "$(python3 -c '
import sys, time
sys.path.insert(0, "bench")
from verdict import median
ts = []
for _ in range(5):
    t = time.perf_counter()
    open("/proc/pagetypeinfo").read()
    ts.append((time.perf_counter() - t) * 1e3)
print(f"{median(ts):.2f}")')"
meta tick_seconds "$(tick_seconds 5)"
SCRAPE_LOG="$WORK/scrapes.txt"
for ((i = 0; i < SCRAPES; i++)); do
	curl -sf -o /dev/null -w '%{time_total} %{size_download}\n' "$URL" || echo "fail 0"
done >"$SCRAPE_LOG"
meta rss_kib_after_scrapes "$(status_kib "$FRAGD_PID" VmRSS)"
meta hwm_kib_after_scrapes "$(status_kib "$FRAGD_PID" VmHWM)"
meta foreign_footprint "$(foreign_tracers)"
stop_fragd 9 0

meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
meta foreign_end "$(foreign_tracers)"
meta other_heavy "$(ps -eo pid=,rss=,pcpu=,comm= --sort=-rss | awk '$2 > 1048576 { printf "%s(%s, %d MiB) ", $4, $1, $2 / 1024 }')"
# fragd's log: anything that is not an info line is worth reading.
grep -v -e '^<6>' -e '^=== start' "$WORK/fragd.log" >"$WORK/fragd.notes" || true

meta runtime_s "$(($(date +%s) - T_START))"

# --- report --------------------------------------------------------------------
OUT=$(report_output "$QUICK" "$ROOT")
# What bench/report.py reads, kept: `python3 bench/report.py --results bench/data/overhead/results.tsv ...`
keep_raw overhead -C "$WORK" results.tsv meta.env seen.tsv builds.tsv scrapes.txt fragd.notes
python3 bench/report.py --results "$RESULTS" --meta "$META" --seen "$SEEN_LOG" --builds "$BUILD_LOG" \
	--scrapes "$SCRAPE_LOG" --fragd-notes "$WORK/fragd.notes" --output "$OUT" >"$WORK/section.md"
cat "$WORK/section.md"
log "section written to $OUT"
if [[ $QUICK == 1 && -z ${BENCH_OUTPUT:-} ]]; then log "(quick run: BENCHMARKS.md not touched)"; fi
FAILED=0
