#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragd act-mode benchmark: how each way of compacting memory serves a burst of 2 MiB
# allocations on a fragmented machine. Part of `make bench`; only this part: `make bench-act`,
# or as root after the build:
#
#   bash bench/act.sh                  # full run (3 rounds), writes BENCHMARKS.md (act section)
#   BENCH_QUICK=1 bash bench/act.sh    # smoke run: 1 round, 500 pages, --percent 50, 5 s wait;
#                                      # writes /tmp/fragd-bench-quick.md
#
# Modes (ondemand kernel20 kernel90 manual hugeadm fragd defrag defrag_fragd) and scenarios
# (fixed free thp pool) run interleaved, REPEATS rounds; the section bench/act_report.py writes
# says what each mode and scenario does, when a run counts compaction as settled, and every
# column. run_one below is one run, in that order.
#
# Knobs (environment): FRAGD_BUILD_DIR (fragd and fragctl, default build), BENCH_QUICK,
# BENCH_ACT_MODES, BENCH_ACT_SCENARIOS (comma- or space-separated subsets, in that order),
# REPEATS or BENCH_ACT_REPEATS (3; quick 1), BENCH_ACT_PAGES (3000; quick 500),
# BENCH_ACT_PERCENT (95; quick 50), BENCH_ACT_WAIT (20; quick 5), BENCH_ACT_SETTLE_MAX
# (120; quick 20), BENCH_ACT_WARMUP (1: touch PERCENT% of MemAvailable once before the
# first run), BENCH_ACT_UNDEFER (0; 1: before each run, with fragd not yet started, fragment
# memory once and end the kernel's order-9 compaction deferral there, undefer_order9 in
# tests/tools/fragmenter.sh), BENCH_ACT_PAGECACHE (0; N: before each run's fragmentation, N MiB
# of clean page cache in a file on /var/tmp, removed after the run, so that reclaim frees
# something), BENCH_OUTPUT (file to update), BENCH_KEEP=1 keeps the work directory.
# Changes global settings, all restored after every run and on exit whatever happens:
# vm.compaction_proactiveness, vm.defrag_mode (where it exists), vm.nr_hugepages (must be
# 0 at start), THP enabled/defrag (only if they would not let MADV_HUGEPAGE faults compact).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=bench/act_trace.sh
source "$(dirname "${BASH_SOURCE[0]}")/act_trace.sh"
bench_start act "it writes sysctls and loads BPF" fragd fragctl -- gcc bpftrace bpftool python3 curl hugeadm flock
debian_python prometheus_client python3-prometheus-client

ALL_MODES="ondemand kernel20 kernel90 manual hugeadm fragd defrag defrag_fragd"
ALL_SCENARIOS="fixed free thp pool"
read_subset MODES BENCH_ACT_MODES "$ALL_MODES"
read_subset SCENARIOS BENCH_ACT_SCENARIOS "$ALL_SCENARIOS"
REPEATS=${BENCH_ACT_REPEATS:-${REPEATS:-$(q 3 1)}}
PAGES=${BENCH_ACT_PAGES:-$(q 3000 500)}
PERCENT=${BENCH_ACT_PERCENT:-$(q 95 50)}
WAIT=${BENCH_ACT_WAIT:-$(q 20 5)}
SETTLE_MAX=${BENCH_ACT_SETTLE_MAX:-$(q 120 20)}
WARMUP=${BENCH_ACT_WARMUP:-1}
UNDEFER=${BENCH_ACT_UNDEFER:-0}
PAGECACHE=${BENCH_ACT_PAGECACHE:-0}
require_uint BENCH_ACT_ REPEATS PAGES PERCENT WAIT SETTLE_MAX WARMUP UNDEFER PAGECACHE
((REPEATS >= 1)) || die "REPEATS must be >= 1"
((PAGES >= 1)) || die "BENCH_ACT_PAGES must be >= 1"
((PERCENT >= 1 && PERCENT <= 98)) || die "BENCH_ACT_PERCENT must be in 1..98, got $PERCENT"
((WAIT >= 2)) || die "BENCH_ACT_WAIT must be >= 2 (seconds)"
((${#MODES[@]} > 0 && ${#SCENARIOS[@]} > 0)) || die "no mode or no scenario selected"

THP_EN=/sys/kernel/mm/transparent_hugepage/enabled
THP_DF=/sys/kernel/mm/transparent_hugepage/defrag
thp_current() { sed -n 's/.*\[\(.*\)\].*/\1/p' "$1"; }
# The host's settings, read under the heavy lock below.
THP_EN_ORIG='' THP_DF_ORIG=''

# The run's files (fragd's log, the snapshots, the latencies) live on tmpfs when /dev/shm is one,
# where a compaction can move them (work_base, tests/tools/fragmenter.sh), in every mode alike.
WORK=$(mktemp -d "$(work_base)/fragd-bench-act.XXXXXX")
T_START=$(date +%s)
PIDS=() FAILED=1 LOCKED=0
exec {LOCK_FD}>>/tmp/fragd-heavy.lock

# Puts back the THP settings this script changes (at the end and on exit; restore_memory_settings
# the others); nothing before they were read. thp_put FILE VALUE NAME: one of them.
thp_put() { [[ -z $2 || $(thp_current "$1") == "$2" ]] || echo "$2" >"$1" || log "cannot restore THP $3=$2"; }
restore_thp() {
	thp_put "$THP_EN" "$THP_EN_ORIG" enabled
	thp_put "$THP_DF" "$THP_DF_ORIG" defrag
}

CACHE_FILE=/var/tmp/fragd-bench-act-cache.$$
restore_on_exit() { # run by cleanup (lib.sh), once every tracked process is stopped
	rm -f "$CACHE_FILE"
	trace_close TRACE_INST
	tracefs_unmount
	restore_memory_settings
	restore_thp
	((LOCKED)) && flock -u "$LOCK_FD"
}
install_cleanup 15

lock() {
	local t0=$SECONDS
	flock "$LOCK_FD"
	LOCKED=1
	LOCK_WAIT=$((SECONDS - t0))
	((LOCK_WAIT < 2)) || log "waited ${LOCK_WAIT}s for /tmp/fragd-heavy.lock"
}
unlock() { flock -u "$LOCK_FD"; LOCKED=0; }

# Another benchmark's run changes these settings while it holds the heavy lock and
# puts them back before letting go: read them under the lock, or its values would be
# taken for the host's (and "restored").
lock
save_memory_settings
THP_EN_ORIG=$(thp_current "$THP_EN" 2>/dev/null || true)
THP_DF_ORIG=$(thp_current "$THP_DF" 2>/dev/null || true)
unlock

now_us() { local t=$EPOCHREALTIME; echo "${t/./}"; }
sleep_until_us() {
	local d=$(($1 - $(now_us)))
	((d > 0)) && sleep "$(printf '%d.%06d' $((d / 1000000)) $((d % 1000000)))"
	return 0
}

# --- preparation -----------------------------------------------------------
# Rows that need vm.defrag_mode are dropped, with the reason kept for the report,
# where the kernel has no such sysctl.
SKIPPED=() keep=() need_fragd_act=0
for m in "${MODES[@]}"; do # defrag*: vm.defrag_mode; *fragd: fragd in act mode
	if [[ -z $DFM_ORIG && $m == defrag* ]]; then
		SKIPPED+=("$m")
	else
		keep+=("$m")
		[[ $m == *fragd ]] && need_fragd_act=1
	fi
done
((${#SKIPPED[@]} == 0)) || log "skipping ${SKIPPED[*]}: $DFM does not exist on this kernel ($(uname -r))"
MODES=("${keep[@]}")
((${#MODES[@]} > 0)) || die "no mode left to run"
# Private copies: others may rebuild the build directory while this runs.
cp "$BUILD_DIR/fragd" "$BUILD_DIR/fragctl" "$WORK/"
FRAGD="$WORK/fragd" FRAGCTL="$WORK/fragctl"
cp configs/fragd.yaml "$WORK/fragd-observe.yaml"
# The shipped policy with only its mode changed.
sed 's/^mode: observe$/mode: act/' configs/fragd.yaml >"$WORK/fragd-act.yaml"
changed=$(diff configs/fragd.yaml "$WORK/fragd-act.yaml" | grep -c '^>' || true)
[[ $changed == 1 ]] && grep -q '^mode: act$' "$WORK/fragd-act.yaml" ||
	die "configs/fragd.yaml has no line 'mode: observe' to turn into 'mode: act' ($changed lines changed)"
# The policy's compaction.min_interval in seconds (default 10 s): the settle watch of the
# fragd rows waits longer than that for fragd's next action.
FRAGD_MIN_INTERVAL=$(awk '/^[^ #]/ { c = /^compaction:/ } c && /^  min_interval:/ { print $2; exit }' "$WORK/fragd-act.yaml")
case $FRAGD_MIN_INTERVAL in
'') FRAGD_MIN_INTERVAL=10 ;;
*ms) FRAGD_MIN_INTERVAL=1 ;;
*s) FRAGD_MIN_INTERVAL=${FRAGD_MIN_INTERVAL%s} ;;
*m) FRAGD_MIN_INTERVAL=$((${FRAGD_MIN_INTERVAL%m} * 60)) ;;
*h) FRAGD_MIN_INTERVAL=$((${FRAGD_MIN_INTERVAL%h} * 3600)) ;;
esac
is_uint "$FRAGD_MIN_INTERVAL" || die "cannot read compaction.min_interval from configs/fragd.yaml: '$FRAGD_MIN_INTERVAL'"
if ((need_fragd_act)); then
	"$FRAGD" --check-config "$WORK/fragd-act.yaml" >"$WORK/check-act.txt" 2>&1 ||
		die "fragd --check-config rejects the shipped policy in act mode: $(tail -3 "$WORK/check-act.txt")"
	"$FRAGCTL" --help 2>&1 | grep -Eq '^ +pool( |$)' && "$FRAGCTL" pool --help 2>&1 | grep -q 'set' ||
		die "$BUILD_DIR/fragctl has no 'pool' command: act mode is not built (set BENCH_ACT_MODES without fragd)"
fi
gcc -O2 -Wall -Wextra -o "$WORK/fragmenter" tests/tools/fragmenter.c || die "cannot compile tests/tools/fragmenter.c"
gcc -O2 -Wall -Wextra -o "$WORK/thpfault" bench/thpfault.c || die "cannot compile bench/thpfault.c"

if [[ " ${SCENARIOS[*]} " == *" thp "* ]]; then
	# MADV_HUGEPAGE faults must be allowed to compact: enabled always|madvise, defrag
	# always|defer+madvise|madvise.
	[[ -n $THP_EN_ORIG && -n $THP_DF_ORIG ]] || die "THP is not available ($THP_EN): drop scenario thp"
	[[ $THP_EN_ORIG =~ ^(always|madvise)$ ]] || { echo madvise >"$THP_EN"; log "THP enabled: $THP_EN_ORIG -> madvise (restored on exit)"; }
	[[ $THP_DF_ORIG =~ ^(always|defer\+madvise|madvise)$ ]] || { echo madvise >"$THP_DF"; log "THP defrag: $THP_DF_ORIG -> madvise (restored on exit)"; }
fi

begin_meta "$FRAGD" bpftrace
meta hugeadm_version "$(dpkg-query -W -f='${Version}' libhugetlbfs-bin 2>/dev/null || echo '?')"
meta thp_enabled="$(thp_current "$THP_EN" 2>/dev/null)" thp_defrag="$(thp_current "$THP_DF" 2>/dev/null)"
meta proactiveness_orig="$PRO_ORIG" defrag_mode_orig="${DFM_ORIG:-absent}"
meta quick="$QUICK" repeats="$REPEATS" pages="$PAGES" percent="$PERCENT" undefer="$UNDEFER"
meta pagecache_mib="$PAGECACHE" keep=4 wait="$WAIT" settle_max="$SETTLE_MAX"
meta settle_quiet_fragd "$((FRAGD_MIN_INTERVAL + 5))"
meta modes="${MODES[*]}" skipped="${SKIPPED[*]}" scenarios="${SCENARIOS[*]}" order=arm_order
meta loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
RUNS="$WORK/runs.tsv"
: >"$RUNS"

# --- one run ---------------------------------------------------------------------
R='' FRAGD_PID='' URL='' SOCK='' BT_PID=''
start_bpftrace() { # comm
	local i
	BPFTRACE_MAP_KEYS_MAX=65536 bpftrace bench/act_alloc.bt "$1" >"$R/bt.out" 2>"$R/bt.err" {LOCK_FD}>&- &
	BT_PID=$!
	PIDS+=("$BT_PID")
	STOP_SIGNAL[$BT_PID]=INT
	# Its two tracepoints must be attached before anything is measured.
	for ((i = 0; i < 600; i++)); do
		kill -0 "$BT_PID" 2>/dev/null || die "bpftrace exited at start: $(grep -v RLIMIT "$R/bt.err" | head -5)"
		(($(attached_count "$BT_PID") >= 2)) && return 0
		sleep 0.1
	done
	die "bpftrace did not attach bench/act_alloc.bt in 60s"
}

# snap NAME [sync]: fragd's /metrics, /proc/vmstat and /proc/buddyinfo now. With sync,
# first waits (up to 2.5 s) for fragd's next collector tick, so that its counters are fresh.
snap() {
	local name=$1 sync=${2:-} prev v i
	if [[ $sync == sync ]]; then
		prev=$(tick_seconds 2)
		for ((i = 0; i < 50; i++)); do
			sleep 0.05
			v=$(tick_seconds 2)
			[[ -n $v && $v != "$prev" ]] && break
		done
	fi
	curl -sf --max-time 5 "$URL" >"$R/$name.prom" || log "cannot scrape fragd for snapshot $name"
	cat /proc/vmstat >"$R/$name.vmstat"
	cat /proc/buddyinfo >"$R/$name.buddyinfo"
	echo "$name $(now_us)" >>"$R/times"
}

rmeta() { printf '%s=%s\n' "$@" >>"$R/run.env"; } # KEY VALUE...
# burst OP ARG...: bench/act_burst.py OP ARG..., without the heavy lock's fd.
burst() { python3 bench/act_burst.py "$@" {LOCK_FD}>&-; }

# Starts the fragmenter (FRAG_PID) and waits for "ready". Other processes on the
# machine come and go: when they hold memory as the fragmenter sizes itself, and
# free it later, that memory stays unfragmented and the run would not be the same
# fragmentation as the others. So: wait (up to 3 min) until MemAvailable is back to
# 90% of what it was at the start of the benchmark, and redo a fragmentation that
# kept less than 90% of what PERCENT of that would keep (at most 2 redos, then go on
# with a warning). The s0 snapshot is taken just before the attempt that is kept.
FRAG_PID=
fragment() {
	local attempt i avail want_kib kept
	for ((attempt = 1; ; attempt++)); do
		for ((i = 0; i < 180; i++)); do
			avail=$(meminfo MemAvailable)
			((avail * 10 >= MEMAVAIL_REF * 9)) && break
			((i == 0)) && log "[${R##*/}] MemAvailable $((avail / 1024)) MiB < 90% of $((MEMAVAIL_REF / 1024)) MiB: waiting"
			sleep 1
		done
		snap s0 sync
		start_fragmenter "$WORK/fragmenter" "$R" "$PERCENT" 900 || die "$FRAG_ERROR"
		kept=$(awk '/^ready/ { print $2 }' "$R/frag.out")
		want_kib=$((MEMAVAIL_REF / 100 * PERCENT / 4))
		rmeta "attempt${attempt}_kept_kib" "$kept"
		((kept * 10 >= want_kib * 9)) && break
		if ((attempt == 3)); then
			log "[${R##*/}] fragmenter kept $((kept / 1024)) MiB, < 90% of the expected $((want_kib / 1024)) MiB, 3 times: going on"
			rmeta weak_fragmentation 1
			break
		fi
		log "[${R##*/}] fragmenter kept $((kept / 1024)) MiB, < 90% of the expected $((want_kib / 1024)) MiB (memory held by others): fragmenting again"
		stop_pid "$FRAG_PID" 60 || true
		sleep 5
	done
	rmeta ready_kib "$kept" fragment_attempts "$attempt"
}

# BENCH_ACT_UNDEFER=1: a fragmentation of its own (the run's, the same size), the kernel's order-9
# deferral ended in it, the fragmenter stopped; before fragd starts, outside every measured window.
undefer_before_run() {
	local n t0
	mkdir -p "$R/undefer"
	start_fragmenter "$WORK/fragmenter" "$R/undefer" "$PERCENT" 900 || die "$FRAG_ERROR"
	rmeta undefer_node_unreclaimable "$(node_unreclaimable)"
	t0=$(now_us)
	n=$(undefer_order9 "$HP" 200) || n="none of 200"
	rmeta undefer_writes "$n"
	rmeta undefer_ms "$((($(now_us) - t0) / 1000))"
	stop_pid "$FRAG_PID" 60 || true
	exec 9>&-
}

# A fragd in act mode may hold a pool of its own for a while (compaction by a
# temporary hugetlb pool): the burst starts from an empty pool, so wait for it.
wait_empty_pool() {
	local i n
	for ((i = 0; i < 300; i++)); do
		n=$(<"$HP")
		[[ $n == 0 ]] && { rmeta pool_wait_s "$((i / 10))"; return 0; }
		sleep 0.1
	done
	die "[${R##*/}] vm.nr_hugepages still $n 30 s after the burst was due (fragd's pool not given back?)"
}

# The kernel's proactive threshold (mm/compaction.c fragmentation_score_wmark, high).
proactive_high() { # proactiveness
	local low=$((100 - $1 < 5 ? 5 : 100 - $1))
	echo $((low + 10 > 100 ? 100 : low + 10))
}

run_one() {
	local round=$1 sc=$2 mode=$3 pos=$4 cfg=$WORK/fragd-observe.yaml comm=act_burst act=0 dfm=0 pro_ready=0
	local ready_us want show burst_cmd prep_cmd rc quiet
	R="$WORK/r$round-$sc-$mode"
	mkdir -p "$R"
	: >"$R/times"
	: >"$R/run.env"
	log "[r$round $sc/$mode] waiting for the heavy lock"
	lock
	log "[r$round $sc/$mode] start"
	rmeta lock_wait_s "$LOCK_WAIT" loadavg "$(cut -d' ' -f1-3 /proc/loadavg)"
	[[ $(<"$HP") == 0 ]] || die "vm.nr_hugepages is $(<"$HP") before a run: someone else uses a pool"
	case $mode in
	kernel20 | defrag | defrag_fragd) pro_ready=20 ;;
	kernel90) pro_ready=90 ;;
	esac
	[[ $mode == defrag* ]] && dfm=1
	[[ -n $DFM_ORIG ]] && echo "$dfm" >"$DFM"
	echo 0 >"$PRO"
	[[ $mode == *fragd ]] && act=1 cfg=$WORK/fragd-act.yaml
	((UNDEFER)) && undefer_before_run
	if ((PAGECACHE)); then
		clean_page_cache "$CACHE_FILE" "$PAGECACHE" || die "cannot write $CACHE_FILE"
		rmeta pagecache_kib "$(meminfo Cached)"
	fi
	start_fragd_in "$R" "$cfg" --log-level debug
	rmeta fragd_config "$(basename "$cfg")" defrag_mode "${DFM_ORIG:+$(<"$DFM")}"
	if [[ $sc == fixed || $sc == free ]]; then
		[[ $mode == hugeadm ]] && comm=hugeadm
		start_bpftrace "$comm"
	fi
	fragment
	ready_us=$(now_us)
	echo "ready $ready_us" >>"$R/times"
	snap s1

	prep_cmd="sysctl ${DFM_ORIG:+vm.defrag_mode=$dfm }vm.compaction_proactiveness=0 (before fragmenting)"
	if ((pro_ready)); then
		echo "$pro_ready" >"$PRO"
		prep_cmd="$prep_cmd; sysctl vm.compaction_proactiveness=$pro_ready (at ready)"
	fi
	if [[ $mode == manual ]]; then
		burst write /proc/sys/vm/compact_memory 1 >"$R/compact.json" || die "manual compaction failed"
		prep_cmd="$prep_cmd; echo 1 > /proc/sys/vm/compact_memory (at ready, timed)"
	fi
	((act)) && prep_cmd="$prep_cmd; fragd in act mode since before fragmenting"
	rmeta prep_cmd "$prep_cmd"

	if [[ $sc == pool ]]; then
		snap s2
	else
		sleep_until_us $((ready_us + (WAIT - 2) * 1000000))
		snap s2 sync
		sleep_until_us $((ready_us + WAIT * 1000000))
	fi
	wait_empty_pool
	deferral_start
	echo "burst $(now_us)" >>"$R/times"
	rmeta mem_free_kib_burst "$(meminfo MemFree)" mem_available_kib_burst "$(meminfo MemAvailable)"
	# 1 when kswapd has given up on a node: it is then not woken, so it never goes to sleep and
	# clears compaction's skip hints (see deferral_start).
	rmeta node_unreclaimable "$(node_unreclaimable)"
	# compact_stall over the burst alone: act_burst.py reads /proc/vmstat right before and
	# after its timed part (vmstat_before/after in burst.json); for thpfault the shell does.
	want=$PAGES show=$PAGES
	case $sc/$mode in
	thp/*)
		burst_cmd="thpfault $PAGES (MADV_HUGEPAGE, one first touch per 2 MiB)"
		cat /proc/vmstat >"$R/b0.vmstat"
		"$WORK/thpfault" "$PAGES" "$R/thp.lat" >"$R/thp.out" {LOCK_FD}>&- || die "thpfault failed"
		cat /proc/vmstat >"$R/b1.vmstat"
		;;
	*/hugeadm) # fixed, free (the pool emptied after it), pool
		[[ $sc == free ]] && want=$(($(meminfo MemFree) / 2048)) show="\$((MemFree / 2 MiB))"
		burst_cmd="hugeadm --pool-pages-min 2MB:$show --hard"
		burst exec --settle 0 "$want" -- hugeadm --pool-pages-min "2MB:$want" --hard >"$R/burst.json" ||
			die "hugeadm $sc run failed"
		[[ $sc == pool ]] || echo 0 >"$HP"
		;;
	pool/*)
		burst_cmd="fragctl pool set 2MB $PAGES"
		burst exec "$PAGES" -- "$FRAGCTL" --socket "$SOCK" pool set 2MB "$PAGES" >"$R/burst.json" ||
			die "fragctl pool set run failed"
		;;
	*)
		[[ $sc == free ]] && want=free show="\$((MemFree / 2 MiB))"
		burst_cmd="echo $show > /proc/sys/vm/nr_hugepages"
		burst hugetlb "$want" >"$R/burst.json" || die "hugetlb burst failed"
		;;
	esac
	echo "burst_end $(now_us)" >>"$R/times"
	deferral_stop
	rmeta burst_cmd "$burst_cmd"
	snap s3 sync

	if [[ $sc != pool ]] && ((pro_ready || act)); then
		quiet=3
		((act)) && quiet=$((FRAGD_MIN_INTERVAL + 5))
		burst settle --url "$URL" --high "$(proactive_high "$pro_ready")" --quiet "$quiet" --max "$SETTLE_MAX" \
			>"$R/settle.json" || die "settle watch failed"
		snap s4
	fi

	if [[ -n $BT_PID ]]; then
		stop_pid "$BT_PID" 20 INT || log "bpftrace exited with status $? (see $R/bt.err)"
		BT_PID=
	fi
	rc=0
	kill -0 "$FRAGD_PID" 2>/dev/null || log "[r$round $sc/$mode] fragd died during the run: $(tail -3 "$R/fragd.log")"
	stop_pid "$FRAGD_PID" 20 || rc=$?
	FRAGD_PID=
	rmeta fragd_exit "$rc" proactiveness_after_fragd "$(<"$PRO")" pool_after_fragd "$(<"$HP")"
	stop_pid "$FRAG_PID" 60 || true
	rm -f "$CACHE_FILE"
	restore_memory_settings
	[[ $(<"$HP") == 0 ]] || log "[r$round $sc/$mode] the pool did not empty: $(<"$HP") pages left"
	printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$pos" "$sc" "$mode" "$R" >>"$RUNS"
	unlock
	log "[r$round $sc/$mode] done: $(cat "$R/burst.json" "$R/thp.out" 2>/dev/null | cut -c1-160)"
}

# The modes of scenario $1 that run.
scenario_modes() {
	local m
	for m in "${MODES[@]}"; do
		[[ $1 == thp && $m == hugeadm ]] && continue
		[[ $1 == pool && $m != hugeadm && $m != fragd ]] && continue
		echo "$m"
	done
}

# --- warm-up -------------------------------------------------------------------
if ((WARMUP)); then
	lock
	log "warm-up: touching ${PERCENT}% of MemAvailable once (guest memory is initialised at first use)"
	"$WORK/fragmenter" --percent "$PERCENT" --keep 1 >"$WORK/warmup.out" 2>&1 </dev/null {LOCK_FD}>&- ||
		die "warm-up failed: $(cat "$WORK/warmup.out")"
	unlock
fi

# --- runs ------------------------------------------------------------------------
MEMAVAIL_REF=$(meminfo MemAvailable)
meta mem_available_kib_ref "$MEMAVAIL_REF"
for ((round = 0; round < REPEATS; round++)); do
	log "round $((round + 1)) of $REPEATS"
	for sc in "${SCENARIOS[@]}"; do
		mapfile -t ms < <(scenario_modes "$sc")
		pos=0
		for mode in $(arm_order $((round + 1)) "${ms[@]}"); do
			run_one "$round" "$sc" "$mode" "$((pos++))" </dev/null
		done
	done
done
restore_memory_settings
restore_thp

RUNTIME=$(($(date +%s) - T_START))
meta loadavg_end="$(cut -d' ' -f1-3 /proc/loadavg)" runtime_s="$RUNTIME"

# --- report ----------------------------------------------------------------------
OUT=$(report_output "$QUICK" "$ROOT")
# Each run's records (no program, not the raw deferral trace whose summary run.env holds, nothing
# over 4 MiB), as bench/data/act/NAME for the section NAME the run writes: `python3
# bench/act_report.py --work bench/data/act/NAME --output OUT` writes that section again.
keep_found "act/$("$PY" bench/act_report.py --work "$WORK" --name)" "$WORK" -name runs.tsv -o -name meta.env \
	-o -path './r[0-9]*-*/*' ! -perm -u+x ! -name deferral.trace -size -4M
"$PY" bench/act_report.py --work "$WORK" --output "$OUT" >"$WORK/section.md"
cat "$WORK/section.md"
log "section written to $OUT"
[[ $QUICK == 1 && -z ${BENCH_OUTPUT:-} ]] && log "(quick run: BENCHMARKS.md not touched)"
log "act benchmark took $((RUNTIME / 60)) min $((RUNTIME % 60)) s ($REPEATS round(s), $(wc -l <"$RUNS") runs)"
FAILED=0
