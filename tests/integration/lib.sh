# SPDX-License-Identifier: Apache-2.0
# Shared helpers of fragd's integration tests (sourced, not run).
# Each test restores every kernel setting it changes and ends what it starts.
set -euo pipefail

BUILD="${FRAGD_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}"
SRC="${FRAGD_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
TEST_NAME="$(basename "$0" .sh)"
# shellcheck source=tests/tools/fragmenter.sh
source "$SRC/tests/tools/fragmenter.sh"
# The test's files (logs, the trace record, scrapes) live on tmpfs when /dev/shm is one, where a
# node compaction can move them (work_base, tests/tools/fragmenter.sh). WORK_BASE overrides it
# (image_test builds images: on disk).
WORK_BASE="${WORK_BASE:-$(work_base)}"
WORK="$(mktemp -d "$WORK_BASE/fragd-${TEST_NAME}.XXXXXX")"
PIDS=()
RESTORE=()
# What a test that died changed is put back before this one starts (restore_orphans.sh).
# shellcheck source=tests/integration/restore_orphans.sh
source "$SRC/tests/integration/restore_orphans.sh"
if mkdir -p "$RESTORE_DIR" 2>/dev/null && [ -w "$RESTORE_DIR" ]; then
  restore_orphans
  JOURNAL="$RESTORE_DIR/$$-$(proc_start $$)"
else
  JOURNAL=""  # not root: a test that changes nothing global
fi
# on_exit CMD: CMD runs at the test's exit (after the ones given later), and, should the test die
# without its exit, before the next test starts or after the last one (restore_orphans.sh).
on_exit() {
  RESTORE+=("$1")
  [ -z "$JOURNAL" ] || printf '%s\n' "$1" >>"$JOURNAL"
}
# The work directory goes last (given first), after any unmount, unless FRAGD_TEST_KEEP is set.
[ -n "${FRAGD_TEST_KEEP:-}" ] || on_exit "rm -rf --one-file-system $(printf '%q %q' "$WORK" "$WORK.unprivileged")"

log() { echo "[$TEST_NAME] $*"; }
# metric, vmstat, free_blocks9 and proactiveness_policy: the guests' suites source them too.
# shellcheck source=tests/tools/suite_lib.sh
source "$SRC/tests/tools/suite_lib.sh"
fail() { echo "[$TEST_NAME] FAIL: $*" >&2; exit 1; }

# Skip (exit 77) outside CI; fail under CI=true, where nothing may be skipped.
skip_or_fail() {
  if [ "${CI:-}" = "true" ]; then fail "$* (CI=true: a missing privilege or feature fails the run)"; fi
  echo "[$TEST_NAME] SKIP: $*"
  exit 77
}

# sanitized: $BUILD is a sanitizer build (make sanitize, make tsan). ASan's quarantine, TSan's shadow,
# shadow memory and fake stacks make fragd's RSS grow by design there, so a bound on its
# growth measures the sanitizer, not fragd: skip such a bound when this is true
# (LeakSanitizer checks every exit of that build for leaks instead).
sanitized() { grep -qsE "^FRAGD_(SANITIZE|TSAN):BOOL=ON$" "$BUILD/CMakeCache.txt"; }

require_root() {
  [ "$(id -u)" -eq 0 ] || skip_or_fail "needs root to load BPF programs and drive the kernel"
}

cleanup() {
  local rc=$?
  for pid in "${PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  local i
  for ((i = ${#RESTORE[@]} - 1; i >= 0; i--)); do eval "${RESTORE[$i]}" || true; done
  [ -z "$JOURNAL" ] || rm -f "$JOURNAL"
  [ -z "${FRAGD_TEST_KEEP:-}" ] || log "kept $WORK (FRAGD_TEST_KEEP)"
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# unprivileged FILE: a path to FILE that user nobody can read and run: FILE itself when nobody
# reaches it, else a copy in $WORK.unprivileged (0755; removed on exit). A checkout in a home
# or in /root is out of nobody's reach on a fresh Debian (both 0700: adduser's DIR_MODE), and the
# tests run fragd, fragctl and their probes as nobody or a group member.
unprivileged() {
  if setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$1" 2>/dev/null; then
    echo "$1"
    return
  fi
  mkdir -p -m 0755 "$WORK.unprivileged"
  cp -p "$1" "$WORK.unprivileged/" && echo "$WORK.unprivileged/$(basename "$1")"
}

# choice FILE: the bracketed choice of a kernel setting file ("always [madvise] never" -> madvise).
choice() { sed -n 's/.*\[\(.*\)\].*/\1/p' "$1"; }
# set_kernel_file FILE VALUE: writes VALUE to FILE, and its old value (the bracketed choice of a
# choice file) back on exit.
set_kernel_file() {
  local old
  if [[ $(cat "$1") == *\[* ]]; then old=$(choice "$1"); else old=$(cat "$1"); fi
  on_exit "echo $old > $1"
  echo "$2" >"$1"
}

# quiet_memory PROACTIVENESS: sets HP and PRO (the hugetlb pool size and
# vm.compaction_proactiveness files), empties the pool and writes PROACTIVENESS (0: kcompactd
# does not tidy memory behind the test's back); on exit the pool is emptied first, then both
# get their old values back.
quiet_memory() {
  HP=/proc/sys/vm/nr_hugepages
  PRO=/proc/sys/vm/compaction_proactiveness
  save_sysctl $PRO
  save_sysctl $HP
  on_exit "echo 0 > $HP"
  echo "$1" > $PRO
  echo 0 > $HP
}

# page_lists: "<pages> <floor>": the pages the CPUs' page lists (pcp) hold, all zones, and the
# sum of their high_min, the least a list keeps.
page_lists() { awk '$1 == "count:" { c += $2 } $1 == "high_min:" { f += $2 } END { print c + 0, f + 0 }' /proc/zoneinfo; }
# drain_page_lists: returns to the buddy lists the pages the CPUs' page lists hold past their
# floor. Linux 6.7+ grows a page list while its CPU frees, to a share of the zone (1.9 GB held on
# an idle 24 GiB host here), and shrinks it only as vmstat refreshes decay it: pages held there
# are in no free list an allocation of another migratetype can take, and not in MemFree. Each
# write of vm.stat_refresh decays every list by at least 63 << 5 pages; it writes until the lists
# hold no more than their floor, at most 1000 times, and prints "<pages held> <floor> <writes>".
drain_page_lists() {
  local i count floor
  for ((i = 0; ; i++)); do
    read -r count floor < <(page_lists)
    ((count <= floor || i == 1000)) && break
    echo 1 >/proc/sys/vm/stat_refresh
  done
  echo "$count $floor $i"
}

# try_undefer_compaction [MAX] [SECONDS]: ends the kernel's deferral of order-9 direct compaction
# that failures before left (undefer_order9, tests/tools/fragmenter.sh), with the pool HP (empty;
# see quiet_memory), in at most MAX (200) pool writes begun within SECONDS (no limit when unset);
# returns 1, saying so, when none made a page by direct compaction (compact_success stayed at its
# value before).
try_undefer_compaction() {
  local n max=${1:-200} seconds=${2:-}
  if n=$(undefer_order9 "$HP" "$max" "$seconds"); then
    log "order-9 direct compaction succeeded at pool write $n: the kernel's deferral is reset"
    return 0
  fi
  log "no order-9 page was made by direct compaction in $max pool writes${seconds:+ or $seconds s}: the deferral is not reset (node_unreclaimable $(node_unreclaimable))"
  return 1
}
# undefer_compaction: the same, and the test fails when 200 writes made no page.
undefer_compaction() {
  try_undefer_compaction 200 || fail "the kernel's deferral of order-9 direct compaction could not be ended (above)"
}

# save_sysctl FILE: restore FILE's current value on exit.
save_sysctl() {
  local f=$1 v
  v=$(cat "$f")
  on_exit "echo $v > $f"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_fragd [extra args]: starts fragd on a free port and a private socket; sets
# FRAGD_PID, PORT, SOCK, FRAGD_LOG; waits until every program is attached.
start_fragd() {
  PORT=$(free_port)
  SOCK="$WORK/fragd.sock"
  FRAGD_LOG="$WORK/fragd.log"
  "$BUILD/fragd" --config "${FRAGD_CONFIG:-$SRC/configs/fragd.yaml}" --listen "127.0.0.1:$PORT" --socket "$SOCK" "$@" \
    >"$FRAGD_LOG" 2>&1 &
  FRAGD_PID=$!
  PIDS+=("$FRAGD_PID")
  for _ in $(seq 1 100); do
    if curl -sf "http://127.0.0.1:$PORT/metrics" -o "$WORK/first.prom" 2>/dev/null &&
      grep -q '^fragd_bpf_program_attached' "$WORK/first.prom"; then
      return 0
    fi
    kill -0 "$FRAGD_PID" 2>/dev/null || { cat "$FRAGD_LOG" >&2; fail "fragd exited during start-up"; }
    sleep 0.1
  done
  cat "$FRAGD_LOG" >&2
  fail "fragd did not serve metrics within 10 s"
}

# stop_clean PID NAME LOG: SIGTERM to PID (a child of the test), which must exit 0; else its
# LOG goes to stderr and the test fails.
stop_clean() {
  kill -TERM "$1"
  local rc=0
  wait "$1" || rc=$?
  [ "$rc" -eq 0 ] || { cat "$3" >&2; fail "$2 exited $rc after SIGTERM (want 0)"; }
}

# stop_fragd: SIGTERM, and fragd must exit 0.
stop_fragd() { stop_clean "$FRAGD_PID" fragd "$FRAGD_LOG"; }

scrape() { curl -sf "http://127.0.0.1:$PORT/metrics"; }

# heavy_lock: one memory-heavy test or benchmark at a time on this machine
# (fragmenting 95% of memory twice at once measures nothing).
# STARTED: $SECONDS once the lock is held (a test's own time, without the wait).
heavy_lock() {
  exec 8>/tmp/fragd-heavy.lock
  flock 8
  STARTED=$SECONDS
}

# FRAGCTL ARGS: fragctl on the socket of the fragd start_fragd started.
FRAGCTL() { "$BUILD/fragctl" --socket "$SOCK" "$@"; }

# wait_for SECONDS CMD...: polls CMD every 0.2 s until it succeeds; 1 on timeout.
wait_for() {
  local secs=$1; shift
  local end=$((SECONDS + secs))
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.2
  done
}

# fragment PERCENT: starts the fragmenter holding PERCENT% of available memory
# (1 page of every 4 kept); returns when it is ready. It ends with the test.
fragment() {
  # Another fragmenter still giving its memory back would halve the share this one gets.
  wait_for 120 bash -c '! pgrep -x fragmenter >/dev/null' || fail "another fragmenter is still running"
  start_fragmenter "$BUILD/fragmenter" "$WORK" "$1" 360 || fail "$FRAG_ERROR"
  log "fragmented: $(cat "$WORK/frag.out")"
}

# unfragment: ends the running fragmenter (closing its FIFO), waits for its memory to come back,
# and empties its output (no "ready" left for the next one's watchers).
unfragment() {
  exec 9>&-
  wait "$FRAG_PID" 2>/dev/null || true
  : >"$WORK/frag.out"
}

node_score() { awk '$1 ~ /^fragd_node_fragmentation_score_percent\{node="0"\}/ { print $2 }' <(scrape); }
# wait_scored: until fragd has published its first node score (BPF loaded, first tick done).
has_score() { [ -n "$(node_score)" ]; }
wait_scored() { wait_for 30 has_score; }

# pool_write FILE N: writes N to a hugetlb pool file from a shell of its own and prints what the
# file reads after. The kernel stops growing a pool at a pending signal, and a test's shell gets
# SIGCHLD from its background children (a process substitution ending, the trace reader, the
# fragmenter): a write from it can stop early (one of 11 gigantic pages with 4 whole 1 GiB
# ranges free).
pool_write() { sh -c 'echo "$1" >"$2" && cat "$2"' sh "$2" "$1"; }

# trace_start EVENT...: records the tracepoints EVENT (system/name) in a private tracefs
# instance, read into $WORK/trace.txt as they come (a 16 MiB buffer per CPU); sets TRACE_INST.
# trace_mark NAME puts a marker in the record; trace_sync waits until the record holds every
# event up to now and fails if the kernel dropped any (a full buffer).
trace_start() {
  local t=/sys/kernel/tracing e filter
  # A host that booted without tracefs mounted (no systemd to mount it): mount it for the test,
  # and unmount it at the end.
  if [ ! -d $t/instances ] && [ -d $t ] && mount -t tracefs tracefs $t 2>/dev/null; then
    on_exit "umount $t 2>/dev/null || true"
  fi
  [ -d $t/instances ] || t=/sys/kernel/debug/tracing
  [ -d $t/instances ] || skip_or_fail "no tracefs instances at /sys/kernel/tracing or /sys/kernel/debug/tracing"
  TRACE_INST="$t/instances/fragd-$TEST_NAME-$$"
  mkdir "$TRACE_INST"
  on_exit "rmdir $TRACE_INST 2>/dev/null || true"
  echo 16384 >"$TRACE_INST/buffer_size_kb"
  for e; do  # "group/event", or "group/event:FILTER" to record only what FILTER matches
    filter=""
    [[ $e == *:* ]] && filter=${e#*:} && e=${e%%:*}
    [ -e "$TRACE_INST/events/$e/enable" ] || fail "the kernel has no tracepoint $e ($TRACE_INST/events/$e)"
    [ -z "$filter" ] || echo "$filter" >"$TRACE_INST/events/$e/filter" || fail "tracefs refused the filter '$filter' on $e"
    echo 1 >"$TRACE_INST/events/$e/enable"
    on_exit "echo 0 > $TRACE_INST/events/$e/enable"
  done
  # 9>&-: the reader must not hold the fragmenter's FIFO open (it would never see EOF).
  cat "$TRACE_INST/trace_pipe" >"$WORK/trace.txt" 9>&- &
  TRACE_CAT=$!
  PIDS+=("$TRACE_CAT")
}
trace_mark() { echo "$1" >"$TRACE_INST/trace_marker"; }
trace_sync() {
  local m="sync-$RANDOM$RANDOM" lost
  trace_mark "$m"
  wait_for 10 grep -q "tracing_mark_write: $m\$" "$WORK/trace.txt" || fail "the trace reader did not catch up in 10 s"
  lost=$(awk '$1 == "overrun:" { n += $2 } END { print n + 0 }' "$TRACE_INST"/per_cpu/cpu*/stats)
  [ "$lost" -eq 0 ] || fail "the kernel dropped $lost trace events (buffer full): the record is incomplete"
}

# page_cache_stop MARK: true when a sync compaction run recorded since the trace_mark MARK ended
# contended and each such run stopped at page-cache folios: a file that a writer outside the
# tests dirtied or held after the test's sync (RELIABILITY.md, "Compactions that stop early").
# A test that needs a long compaction may start it again then, a bounded number of times.
page_cache_stop() {
  trace_sync
  [ "$(python3 "$SRC/tests/tools/compaction_stops.py" --cause --since "$1" "$WORK/trace.txt")" = page-cache ]
}

# compaction_stops: for a failure message, how the sync compaction runs recorded since
# trace_start (given compaction/mm_compaction_end) ended, the large folios of the pageblock
# where each "contended" run stopped, and the dirty page cache now. A dirty large page-cache
# folio stops a node compaction on fragmented memory (RELIABILITY.md, "Compactions that stop
# early"); start_fragmenter writes dirty pages back, and this names what stopped a run anyway.
compaction_stops() {
  trace_sync
  printf '%s; Dirty %s kB\n' "$(python3 "$SRC/tests/tools/compaction_stops.py" --oneline "$WORK/trace.txt")" \
    "$(awk '$1 == "Dirty:" { print $2 }' /proc/meminfo)"
}
