# SPDX-License-Identifier: Apache-2.0
# Shell helpers of fragd's benchmarks, sourced by every bench/*.sh that starts a run.
#
# The sourcing script sets, before calling them (bench_start and bench_work set the first five):
#   LOG_TAG    its name at the head of every message (die, log)
#   LOG_TIME   1: log stamps each message with the time of day
#   WORK       its work directory; FAILED=1 until it has written its report
#   PIDS       array of the background processes it started (track with PIDS+=)
#   QUICK      1 on a smoke run (BENCH_QUICK=1)
#   URL        fragd's /metrics (start_fragd's wait_fragd_ready)
#   META       the key=value file meta appends to
# and may define restore_on_exit, which cleanup runs once every process is stopped.
# shellcheck shell=bash

# shellcheck source=tests/tools/fragmenter.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tests/tools/fragmenter.sh"
# shellcheck source=tests/tools/suite_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../tests/tools/suite_lib.sh"

die() { echo "$LOG_TAG: $*" >&2; exit 1; }
log() {
	if ((${LOG_TIME:-0})); then
		echo "$LOG_TAG: $(date +%T) $*" >&2
	else
		echo "$LOG_TAG: $*" >&2
	fi
}

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
# require_uint PREFIX VAR...: dies unless each VAR holds a non-negative integer, naming the knob
# PREFIX+VAR. require_positive VAR...: the same for a positive integer, naming VAR.
require_uint() {
	local p=$1 v
	shift
	for v in "$@"; do is_uint "${!v}" || die "$p$v must be a non-negative integer, got '${!v}'"; done
}
require_positive() {
	local v
	for v in "$@"; do is_uint "${!v}" && ((${!v} > 0)) || die "$v must be a positive integer (got '${!v}')"; done
}
# q FULL QUICK: FULL, or QUICK on a smoke run.
q() { [[ $QUICK == 1 ]] && echo "$2" || echo "$1"; }
# arm_order ROUND ARM...: the ARMs in the order of round ROUND (from 1), on one line. The rounds
# follow a Williams design (a balanced Latin square): every arm runs once a round, and over n
# rounds (2n for an odd number n of arms) each arm comes right after each other arm equally
# often, so that what one arm leaves behind (page cache, fragmentation, a warm kernel) weighs on
# every other arm alike. Two arms alternate, the first first. Every benchmark that interleaves
# arms over rounds takes its order from here (tests/bench/arm_order_test.py), but run.sh, whose
# order is its pairing, cost.sh (quiet before busy) and the guest's sh of defrag_atomic_rounds.sh.
arm_order() {
	local r=$(($1 - 1)) n=$(($# - 1)) j k base=() out=()
	shift
	((n > 0)) || { echo; return 0; }
	for ((j = 0; j < n; j++)); do
		if ((j == 0)); then base+=(0); elif ((j % 2)); then base+=($(((j + 1) / 2))); else base+=($((n - j / 2))); fi
	done
	k=$((r % (n % 2 ? 2 * n : n)))
	# Odd n: rounds n+1..2n are rounds 1..n reversed.
	for ((j = 0; j < n; j++)); do out[k < n ? j : n - 1 - j]=${@:$(((base[j] + k) % n + 1)):1}; done
	echo "${out[*]}"
}
# bg_nolock CMD...: CMD in the background without the heavy lock's fd (LOCK_FD, when set).
bg_nolock() { if [[ -n ${LOCK_FD:-} ]]; then "$@" {LOCK_FD}>&- & else "$@" & fi; }

# require_tools HINT TOOL...: dies naming the first TOOL not in PATH, followed by HINT.
require_tools() {
	local hint=$1 tool
	shift
	for tool in "$@"; do
		command -v "$tool" >/dev/null || die "$tool not found in PATH$hint"
	done
}

# Dies unless the hugetlb pool is empty: one in use belongs to someone else.
require_empty_pool() {
	local n
	n=$(</proc/sys/vm/nr_hugepages)
	[[ $n == 0 ]] || die "vm.nr_hugepages is $n, not 0: a hugetlb pool is in use, not touching it"
}

untrack() {
	local p keep=()
	for p in "${PIDS[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
	PIDS=("${keep[@]}")
}

# stop_pid PID [GRACE] [SIGNAL]: signal (TERM), wait up to GRACE s, then KILL. Returns the exit status.
stop_pid() {
	local pid=$1 grace=${2:-10} sig=${3:-TERM} rc=0 i
	if kill -0 "$pid" 2>/dev/null; then
		kill "-$sig" "$pid" 2>/dev/null || true
		for ((i = 0; i < grace * 10; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "pid $pid did not exit ${grace}s after SIG$sig: SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || rc=$?
	untrack "$pid"
	return "$rc"
}

# On exit, whatever happens: stops every tracked process (SIGTERM, or the signal
# STOP_SIGNAL[pid] names, e.g. INT for bpftrace, which did not exit on TERM here; SIGKILL after
# CLEANUP_GRACE seconds), runs restore_on_exit, and removes the work directory unless
# the run failed or BENCH_KEEP=1.
declare -gA STOP_SIGNAL=()
cleanup() {
	local rc=$? p
	set +e
	trap - EXIT INT TERM
	for p in "${PIDS[@]}"; do stop_pid "$p" "$CLEANUP_GRACE" "${STOP_SIGNAL[$p]:-TERM}"; done
	restore_on_exit
	if [[ ${BENCH_KEEP:-0} == 1 || $FAILED == 1 ]]; then
		log "work directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}

# install_cleanup GRACE: makes cleanup run on exit, SIGINT and SIGTERM.
install_cleanup() {
	CLEANUP_GRACE=$1
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}
restore_on_exit() { :; } # until the script defines its own: nothing changed yet

# bench_work NAME GRACE: a new work directory /tmp/fragd-bench-NAME.*, no process tracked yet, the
# run failed until its report is written, and cleanup on exit (install_cleanup GRACE).
bench_work() {
	WORK=$(mktemp -d "/tmp/fragd-bench-$1.XXXXXX")
	FAILED=1
	PIDS=()
	install_cleanup "$2"
}

# A free TCP port on 127.0.0.1 for fragd's /metrics.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# fragd_identity BINARY: sets FRAGD_SHA (first 12 hex digits of its sha256) and FRAGD_VERSION.
fragd_identity() {
	FRAGD_SHA=$(sha256sum "$1" | cut -c1-12)
	FRAGD_VERSION=$("$1" --version 2>&1 | head -1 || true)
}

# wait_fragd_ready PID LOG: waits until fragd PID answers on URL with all its BPF programs
# attached (the mm_page_alloc counting program only while fragd_alloc_counting says counting
# is on), and sets FRAGD_PROGRAMS to the number attached; dies with the end of LOG if it
# exits or is not ready after 30 s.
# start_fragd_in DIR CONFIG [ARGS...]: starts fragd (FRAGD, default $WORK/fragd) with CONFIG on a
# free loopback port and DIR/fragd.sock, its log in DIR/fragd.log, without the heavy lock's fd,
# and waits until it is ready (wait_fragd_ready). Sets PORT, URL, SOCK and FRAGD_PID.
start_fragd_in() {
	local dir=$1 cfg=$2
	shift 2
	PORT=$(free_port)
	URL="http://127.0.0.1:$PORT/metrics"
	SOCK="$dir/fragd.sock"
	bg_nolock "${FRAGD:-$WORK/fragd}" --config "$cfg" --listen "127.0.0.1:$PORT" --socket "$SOCK" "$@" >"$dir/fragd.log" 2>&1
	FRAGD_PID=$!
	PIDS+=("$FRAGD_PID")
	wait_fragd_ready "$FRAGD_PID" "$dir/fragd.log"
}

wait_fragd_ready() {
	local pid=$1 flog=$2 i m total ones
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || die "fragd exited at start; log $flog: $(tail -5 "$flog")"
		if m=$(curl -sf --max-time 2 "$URL" 2>/dev/null); then
			total=$(grep -c '^fragd_bpf_program_attached{' <<<"$m" || true)
			ones=$(grep -c '^fragd_bpf_program_attached{.*} 1$' <<<"$m" || true)
			grep -q '^fragd_alloc_counting{.*} 0$' <<<"$m" && total=$((total - 1))
			if ((total > 0 && ones == total)); then
				FRAGD_PROGRAMS=$total
				return 0
			fi
			((total > 0 && i >= 100)) && die "fragd attached only $ones of $total BPF programs after 10s: $(grep '^fragd_bpf_program_attached{.*} 0$' <<<"$m" | tr '\n' ' ')"
		fi
		sleep 0.1
	done
	die "fragd not ready after 30s; log $flog: $(tail -5 "$flog")"
}

# wait_first_scan SECONDS LOG: waits until fragd (URL) has ended its first pageblock scan (the one
# at start); dies with the end of LOG after SECONDS.
wait_first_scan() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		curl -sf --max-time 2 "$URL" | grep -Eq '^fragd_scans_total\{result="ok"\} [1-9]' && return 0
		sleep 0.1
	done
	die "fragd's first pageblock scan did not end in $1 s: $(tail -3 "$2")"
}

attached_count() { # number of tracepoint attachments of pid $1
	bpftool perf list 2>/dev/null | awk -v p="$1" '$1 == "pid" && $2 == p { n++ } END { print n + 0 }'
}

# fragd's collector_tick_seconds (duration of its last tick), empty if it does not answer.
tick_seconds() { curl -sf --max-time "$1" "$URL" | awk '/^fragd_collector_tick_seconds / { print $2 }' || true; }

# meta KEY VALUE, or meta KEY=VALUE...: lines of the run's key=value file (META).
meta() {
	if (($# == 2)) && [[ $1 != *=* ]]; then printf '%s=%s\n' "$1" "$2"; else printf '%s\n' "$@"; fi >>"$META"
}

# meta_minutes: minutes="M.T" in META, the time since T_START (default: the script's start) in
# minutes and tenths.
meta_minutes() {
	local s=$((SECONDS - ${T_START:-0}))
	meta minutes "$((s / 60)).$((s % 60 / 6))"
}

# The machine, for the report's first line.
meta_machine() {
	meta date "$(date -u '+%Y-%m-%d %H:%M UTC')"
	meta kernel "$(uname -r)"
	meta cpu_model "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	meta ncpu "$(nproc)"
	meta mem_total_kib "$(meminfo MemTotal)"
}

# begin_meta BINARY [bpftrace]: a new $WORK/meta.env (META) with the machine and fragd BINARY's
# identity (fragd_identity), and bpftrace's version when the run measured with it.
begin_meta() {
	fragd_identity "$1"
	META="$WORK/meta.env"
	: >"$META"
	meta_machine
	meta fragd_version="$FRAGD_VERSION" fragd_sha="$FRAGD_SHA"
	[[ ${2:-} != bpftrace ]] || meta bpftrace_version "$(bpftrace --version 2>&1 | head -1)"
}

# report_output QUICK ROOT [RELIABILITY]: the file the report goes to: BENCH_OUTPUT if set, else
# /tmp/fragd-bench-quick.md (/tmp/fragd-reliability-quick.md) for a smoke run, else
# BENCHMARKS.md (RELIABILITY.md with the third argument).
report_output() {
	local doc=BENCHMARKS quick=/tmp/fragd-bench-quick.md
	if [[ ${3:-} == RELIABILITY ]]; then
		doc=RELIABILITY
		quick=/tmp/fragd-reliability-quick.md
	fi
	if [[ -n ${BENCH_OUTPUT:-} ]]; then
		echo "$BENCH_OUTPUT"
	elif [[ $1 == 1 ]]; then
		echo "$quick"
	else
		echo "$2/$doc.md"
	fi
}

# use_build_dir BIN...: BUILD_DIR from FRAGD_BUILD_DIR (default build, relative to ROOT);
# dies naming the first BIN missing from it.
# bench_start TAG WHY BINARY... -- TOOL...: the start every benchmark shares. Sets ROOT (the
# repository) and works from there, names messages TAG with the time of day, sets QUICK from
# BENCH_QUICK, dies unless root (WHY says what needs it), unless each BINARY is built
# (use_build_dir) and each TOOL is in PATH.
bench_start() {
	LOG_TAG=$1
	LOG_TIME=1
	QUICK=${BENCH_QUICK:-0}
	local why=$2 bins=() tools=()
	shift 2
	while (($#)) && [[ $1 != -- ]]; do bins+=("$1"); shift; done
	(($#)) && shift
	tools=("$@")
	ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	cd "$ROOT"
	[[ $(id -u) -eq 0 ]] || die "must run as root ($why)"
	use_build_dir "${bins[@]}"
	[[ -f configs/fragd.yaml ]] || die "configs/fragd.yaml missing"
	require_tools " (bash scripts/install-deps.sh installs it)" "${tools[@]}"
}

# debian_python MODULES PACKAGES: sets PY to a python3 that imports every one of MODULES
# ("matplotlib, prometheus_client"): the first python3 in PATH, or Debian's /usr/bin/python3,
# where PACKAGES install them.
debian_python() {
	PY=python3
	python3 -c "import $1" 2>/dev/null || PY=/usr/bin/python3
	"$PY" -c "import $1" 2>/dev/null ||
		die "$1 not importable by python3 nor /usr/bin/python3 (bash scripts/install-deps.sh installs $2)"
}

# save_memory_settings: HP, PRO and DFM name the hugetlb pool size, vm.compaction_proactiveness
# and vm.defrag_mode files; dies unless the pool is empty; PRO_ORIG and DFM_ORIG (empty on a
# kernel without vm.defrag_mode) keep the values to put back (restore_memory_settings, after a
# run and from the script's restore_on_exit). Call it under the heavy lock: another run changes
# them while it holds it.
save_memory_settings() {
	HP=/proc/sys/vm/nr_hugepages
	PRO=/proc/sys/vm/compaction_proactiveness
	DFM=/proc/sys/vm/defrag_mode
	require_empty_pool
	PRO_ORIG=$(<"$PRO")
	DFM_ORIG=
	[[ -e $DFM ]] && DFM_ORIG=$(<"$DFM")
	((PRO_ORIG == 20)) || log "note: vm.compaction_proactiveness is $PRO_ORIG at start (the default is 20); restored to $PRO_ORIG on exit"
}

# restore_memory_settings: empties the pool, then puts vm.compaction_proactiveness and
# vm.defrag_mode back (nothing before save_memory_settings).
restore_memory_settings() {
	[[ -n ${PRO_ORIG:-} ]] || return 0
	[[ $(<"$HP") == 0 ]] || echo 0 >"$HP" || log "cannot empty the hugetlb pool"
	[[ $(<"$PRO") == "$PRO_ORIG" ]] || echo "$PRO_ORIG" >"$PRO" || log "cannot restore vm.compaction_proactiveness=$PRO_ORIG"
	if [[ -n $DFM_ORIG && $(<"$DFM") != "$DFM_ORIG" ]]; then
		echo "$DFM_ORIG" >"$DFM" || log "cannot restore vm.defrag_mode=$DFM_ORIG"
	fi
}

use_build_dir() {
	BUILD_DIR=${FRAGD_BUILD_DIR:-build}
	[[ $BUILD_DIR == /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
	local b
	for b in "$@"; do
		[[ -x $BUILD_DIR/$b ]] || die "$BUILD_DIR/$b missing: run make first (or set FRAGD_BUILD_DIR)"
	done
}

# Private tracefs instances. tracefs_mount: tracefs where nothing mounted it (a host booted without
# systemd): mounted at /sys/kernel/tracing, and unmounted again by tracefs_unmount (restore_on_exit).
TRACEFS_MOUNT=
tracefs_mount() {
	local t=/sys/kernel/tracing
	if [[ -z $TRACEFS_MOUNT && ! -d $t/instances && -d $t ]] && ! mountpoint -q "$t" &&
		mount -t tracefs tracefs "$t" 2>/dev/null; then
		TRACEFS_MOUNT=$t
	fi
}
tracefs_unmount() {
	[[ -n $TRACEFS_MOUNT ]] || return 0
	umount "$TRACEFS_MOUNT" 2>/dev/null || log "cannot unmount $TRACEFS_MOUNT"
	TRACEFS_MOUNT=
}
# trace_open VAR NAME KB EVENT...: a private tracefs instance NAME (a buffer of KB a CPU) recording
# each EVENT (category/event) this kernel has; its directory in VAR, empty where tracefs has no
# instances or the first EVENT does not exist. trace_lost DIR: the events its buffer lost.
# trace_close VAR: removes it (restore_on_exit should call it too).
trace_open() {
	local var=$1 name=$2 kb=$3 t=/sys/kernel/tracing dir e
	shift 3
	printf -v "$var" '%s' ""
	tracefs_mount
	[[ -d $t/instances ]] || t=/sys/kernel/debug/tracing
	[[ -d $t/instances && -e $t/events/$1 ]] || return 0
	dir=$t/instances/$name
	mkdir "$dir" 2>/dev/null || return 0
	echo "$kb" >"$dir/buffer_size_kb"
	for e in "$@"; do
		if [[ -e $dir/events/$e/enable ]]; then echo 1 >"$dir/events/$e/enable"; fi
	done
	printf -v "$var" '%s' "$dir"
}
trace_lost() { awk '$1 == "overrun:" { n += $2 } END { print n + 0 }' "$1"/per_cpu/cpu*/stats; }
trace_close() {
	local dir=${!1}
	printf -v "$1" '%s' ""
	[[ -n $dir && -d $dir ]] || return 0
	echo 0 >"$dir/events/enable" 2>/dev/null || true
	rmdir "$dir" 2>/dev/null || log "cannot remove the tracefs instance $dir"
}

# The kernel's own record of who stalled in direct compaction over a window: an instance with
# compaction:mm_compaction_try_to_compact_pages (one event per allocation that entered direct
# compaction, in the allocating task). direct_trace_start opens it (nothing when tracefs has no
# instances: direct_trace_stop then prints nothing); direct_trace_stop closes it and prints
# "kernel_own_stall_workload=N kernel_host_stall_workload=M kernel_stall_lost=L": fragd's own
# writers (comm fragd-write, fragd) and every other task, and the events the buffer lost.
# restore_on_exit should call trace_close DIRECT_TRACE.
DIRECT_TRACE=
direct_trace_start() { trace_open DIRECT_TRACE "fragd-bench-direct-$$" 2048 compaction/mm_compaction_try_to_compact_pages; }
direct_trace_stop() {
	[[ -n $DIRECT_TRACE ]] || return 0
	echo 0 >"$DIRECT_TRACE/tracing_on"
	awk -v lost="$(trace_lost "$DIRECT_TRACE")" '/mm_compaction_try_to_compact_pages:/ {
		task = $1; sub(/-[0-9]+$/, "", task)
		if (task == "fragd-write" || task == "fragd") own++; else host++ }
		END { printf "kernel_own_stall_workload=%d kernel_host_stall_workload=%d kernel_stall_lost=%d", own, host, lost }' \
		"$DIRECT_TRACE/trace"
	trace_close DIRECT_TRACE
}

# build_fault_tools: $WORK/pagefault (bench/pagefault.c, order-0 faults) and the floor of any
# per-page hook, $WORK/floor with $WORK/floor.bpf.o (bench/floor.c: an empty tp_btf program on
# kmem:mm_page_alloc).
build_fault_tools() {
	gcc -O2 -Wall -Wextra -o "$WORK/pagefault" bench/pagefault.c || die "cannot compile bench/pagefault.c"
	clang -g -O2 -target bpf -Wall -Werror -I"/usr/include/$(gcc -print-multiarch)" -c bench/floor.bpf.c \
		-o "$WORK/floor.bpf.o" || die "cannot compile bench/floor.bpf.c"
	gcc -O2 -Wall -Wextra -o "$WORK/floor" bench/floor.c -lbpf || die "cannot compile bench/floor.c"
}
# start_floor [DIR]: starts $WORK/floor (its output in DIR, default WORK), tracked as FLOOR_PID,
# and waits until its program is attached.
start_floor() {
	local dir=${1:-$WORK}
	bg_nolock "$WORK/floor" "$WORK/floor.bpf.o" >"$dir/floor.out" 2>"$dir/floor.err"
	FLOOR_PID=$!
	PIDS+=("$FLOOR_PID")
	wait_line "$FLOOR_PID" "$dir/floor" 10 attached
}
# wait_line PID OUT SECONDS [WORD]: waits up to SECONDS for a line starting with WORD (ready) in
# OUT.out of the process PID started; dies with the end of OUT.err when it exits first or the
# time runs out.
wait_line() {
	local pid=$1 out=$2 seconds=$3 word=${4:-ready} i
	for ((i = 0; i < seconds * 10; i++)); do
		grep -q "^$word" "$out.out" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || die "$(basename "$out") exited before '$word': $(tail -3 "$out.err")"
		sleep 0.1
	done
	die "$(basename "$out") did not print '$word' in $seconds s: $(tail -3 "$out.err")"
}

# keep_raw NAME [-C DIR] FILE...: a run's raw data kept in the tree, in bench/data/NAME/ (what was
# there before is replaced), so that anyone can recompute its figures and intervals: the
# benchmark's report reads the same files back. With -C, the FILEs are paths under DIR and keep
# them. Quick runs keep nothing.
keep_raw() {
	local name=$1 dir from=.
	shift
	[[ ${QUICK:-0} == 1 ]] && return 0
	if [[ ${1:-} == -C ]]; then
		from=$2
		shift 2
	fi
	dir="$ROOT/bench/data/$name"
	rm -rf "$dir"
	mkdir -p "$dir"
	if [[ $from == . ]]; then cp "$@" "$dir/"; else (cd "$from" && cp --parents "$@" "$dir/"); fi
	log "raw data: bench/data/$name ($(du -sk "$dir" | cut -f1) KiB)"
}
# keep_found NAME DIR FIND-TEST...: keep_raw of the regular files under DIR that the find tests
# select (their paths kept under bench/data/NAME/); none found is said, not an error.
keep_found() {
	local name=$1 from=$2 files
	shift 2
	mapfile -t files < <(cd "$from" && find . -type f \( "$@" \) -printf '%P\n' | sort)
	if [[ ${#files[@]} == 0 ]]; then
		log "raw data: nothing to keep for bench/data/$name"
		return 0
	fi
	keep_raw "$name" -C "$from" "${files[@]}"
}

# now_ms: wall-clock milliseconds.
now_ms() { local t=$EPOCHREALTIME; t=${t/./}; echo $((t / 1000)); }
# meminfo KEY: its value in /proc/meminfo (kB; a count for HugePages_*).
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
# reported_kib: free memory the guest has handed back to its host so far (virtio free page
# reporting, where the kernel counts it); empty where it does not. Touching such memory again
# faults on the host.
REPORTED=/sys/module/page_reporting/parameters/reported_kib
reported_kib() { if [[ -r $REPORTED ]]; then cat "$REPORTED"; fi; }

# guest_root DIR INIT FILE...: the tree of a qemu guest's initramfs in DIR: busybox, curl,
# tests/kernels/guest_setup.sh, INIT as /init and each FILE at / (programs without their debug
# info: the guest's kernel unpacks the initramfs under TCG before anything runs), with the
# libraries they and curl load. Pack it with guest_pack DIR OUT once the caller's own files are in.
guest_root() {
	local root=$1 init=$2 f lib
	shift 2
	mkdir -p "$root"/{bin,etc,proc,sys,dev,run,tmp,usr/sbin}
	cp /bin/busybox "$root/bin/busybox"
	cp "$(command -v curl)" "$root/usr/sbin/curl"
	for f in "$@"; do
		if [[ $(head -c 4 "$f") == $'\x7fELF' ]]; then strip --strip-debug -o "$root/${f##*/}" "$f"; else cp "$f" "$root/"; fi
	done
	for f in "$@" "$(command -v curl)"; do
		for lib in $(ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
	cp "$init" "$root/init"
	cp "$ROOT/tests/kernels/guest_setup.sh" "$root/guest_setup.sh"
	chmod 755 "$root/init"
}
guest_pack() { (cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2"; }

# start_hugetlb_guest MIB MNT OUT: qemu with MIB of RAM from the 2 MiB hugetlbfs mounted at MNT,
# allocated at its start (-mem-prealloc; the guest never runs, -S), its output in OUT; in the
# background, tracked in PIDS, its pid in GUEST_PID.
start_hugetlb_guest() {
	qemu-system-x86_64 -machine q35,accel=tcg -m "${1}M" -mem-path "$2" -mem-prealloc -S \
		-display none -nodefaults -monitor none -serial none >"$3" 2>&1 &
	GUEST_PID=$!
	PIDS+=("$GUEST_PID")
}

# take_heavy_lock: one memory-heavy job at a time on this machine. Held already when an
# ancestor (flock(1) around the script) holds /tmp/fragd-heavy.lock; otherwise taken here
# and kept until exit, on LOCK_FD, which what start_fragd_in and bg_nolock start does not hold.
take_heavy_lock() {
	local lock=/tmp/fragd-heavy.lock ino p pids=" " t0
	if [[ -e $lock ]]; then
		ino=$(stat -c %i "$lock")
		for ((p = $$; p > 1; )); do
			pids+="$p "
			p=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $2 }') || break
			[[ -n $p ]] || break
		done
		if awk -v ino="$ino" -v pids="$pids" '$2 == "FLOCK" && index(pids, " " $5 " ") {
			n = split($6, a, ":"); if (a[n] == ino) found = 1 } END { exit !found }' /proc/locks; then
			log "heavy lock held by the caller"
			return 0
		fi
	fi
	exec {HEAVY_LOCK_FD}>>"$lock"
	t0=$SECONDS
	flock "$HEAVY_LOCK_FD"
	((SECONDS - t0 < 2)) || log "waited $((SECONDS - t0))s for $lock"
	LOCK_FD=$HEAVY_LOCK_FD
}

# spawn VAR CMD...: CMD in the background without the heavy lock's fd (bg_nolock), tracked in PIDS,
# its pid in VAR. reap PID: waits for PID to end and untracks it; its exit status in RC.
spawn() { bg_nolock "${@:2}"; printf -v "$1" '%s' "$!"; PIDS+=("$!"); }
# shellcheck disable=SC2034 # RC is the caller's
reap() { RC=0; wait "$1" || RC=$?; untrack "$1"; }
# wait_no_fragmenter: waits up to 120 s for a fragmenter of another run to end; dies if it does not.
wait_no_fragmenter() {
	local i
	for ((i = 0; ; i++)); do
		pgrep -x fragmenter >/dev/null || return 0
		((i < 120)) || die "another fragmenter is still running after 120 s: $(pgrep -a -x fragmenter | head -3)"
		((i == 0)) && log "waiting for another fragmenter to end"
		sleep 1
	done
}

# read_subset ARRAY KNOB KNOWN: ARRAY gets the words of KNOB's value (comma- or space-separated; all
# of KNOWN when it is unset or empty); dies naming KNOB unless each is one of KNOWN's.
read_subset() {
	local -n _subset=$1
	local w
	IFS=', ' read -r -a _subset <<<"${!2:-$3}"
	for w in "${_subset[@]}"; do [[ " $3 " == *" $w "* ]] || die "$2: unknown '$w' (known: $3)"; done
}
