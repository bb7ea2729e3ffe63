#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds fragd's libFuzzer targets with clang and runs each on a scratch copy
# of its seed corpus (tests/fuzz/corpus/<target>); nothing is written into the
# source tree. `make fuzz` calls this.
#
# Environment:
#   FUZZ_BUILD    build directory (default build-fuzz), configured with CC=clang CXX=clang++ -DFRAGD_FUZZ=ON
#   FUZZ_SECONDS  seconds per target (default 60), passed as -max_total_time
#   FUZZ_JOBS     targets run at once (default 2)
#   FUZZ_TARGETS  space-separated subset (default: all)
#   FUZZ_OUT      scratch directory for corpora, crash inputs and logs, kept (default: a new
#                 /tmp/fragd-fuzz.XXXXXX, removed at exit unless a target found something)
#   FUZZ_RSS_MB   -rss_limit_mb per target (default 2048)
#   JOBS          build parallelism (default nproc)
# Prints one line per target; exits 1 when any target found a crash, a leak,
# a timeout or an out-of-memory, after printing the reproducer and the log tail.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
cd "$src"
build=${FUZZ_BUILD:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-2}
rss_mb=${FUZZ_RSS_MB:-2048}
all_targets="fuzz_policy fuzz_buddyinfo fuzz_pagetypeinfo fuzz_zoneinfo fuzz_vmstat fuzz_iomem fuzz_kpageflags fuzz_request fuzz_answer fuzz_labels"
targets=${FUZZ_TARGETS:-$all_targets}

die() { echo "fuzz: $*" >&2; exit 2; }
for v in seconds jobs rss_mb; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer, got '${!v}'"
done
for t in $targets; do
  [[ " $all_targets " == *" $t "* ]] || die "unknown target '$t' (targets: $all_targets)"
done
command -v clang >/dev/null && command -v clang++ >/dev/null ||
  die "clang is not installed; run scripts/install-deps.sh (make deps) as root"

# --- build ------------------------------------------------------------------
if [ -f "$build/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER_ID:.*Clang\|^CMAKE_CXX_COMPILER:.*clang' "$build/CMakeCache.txt"; then
  die "$build was configured with another compiler; remove it or set FUZZ_BUILD to a fresh directory"
fi
# Ninja where it is installed, for a tree not configured before (the Makefile's sanitizer trees do
# the same): it compiles the targets' files while the library they link is still building.
gen=()
[ -f "$build/CMakeCache.txt" ] || ! command -v ninja >/dev/null || gen=(-G Ninja)
CC=clang CXX=clang++ cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFRAGD_FUZZ=ON >/dev/null ||
  die "configuring $build failed (libFuzzer missing? run scripts/install-deps.sh)"
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target fuzz_targets >/dev/null ||
  die "building the fuzz targets failed; rerun: cmake --build $build --target fuzz_targets"

# --- run --------------------------------------------------------------------
# A scratch directory this script made is removed at exit (the targets stopped first), but kept
# when a target found something: it holds the reproducers. FUZZ_OUT's is always kept.
keep=1
if [ -n "${FUZZ_OUT:-}" ]; then
  out=$FUZZ_OUT
else
  out=$(mktemp -d /tmp/fragd-fuzz.XXXXXX)
  keep=0
fi
mkdir -p "$out"
on_exit() {
  # Fuzzers still running (a signal stopped the run): each names its corpus in the scratch
  # directory, and may have lost its subshell to the same signal, so they are found by that.
  local i
  pkill -TERM -f "$out/corpus/" 2>/dev/null || true
  for i in $(seq 50); do pgrep -f "$out/corpus/" >/dev/null || break; sleep 0.1; done
  wait 2>/dev/null || true
  [ "$keep" = 1 ] || rm -rf "$out"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo "fuzz: ${seconds}s per target, $jobs at a time, scratch $out"

dict_for() {
  case $1 in
    fuzz_policy) echo policy.dict ;;
    fuzz_request) echo request.dict ;;
    fuzz_answer) echo answer.dict ;;
    fuzz_buddyinfo | fuzz_pagetypeinfo | fuzz_zoneinfo) echo procfs.dict ;;
    fuzz_vmstat) echo vmstat.dict ;;
    fuzz_iomem) echo iomem.dict ;;
    fuzz_kpageflags) echo kpageflags.dict ;;
    fuzz_labels) echo labels.dict ;;
  esac
}

run_one() {
  local t=$1 corpus="$out/corpus/$1" art="$out/artifacts/$1/" log="$out/logs/$1.log"
  mkdir -p "$corpus" "$art" "$out/logs"
  cp -r "tests/fuzz/corpus/$t/." "$corpus/"
  local args=(-max_total_time="$seconds" -rss_limit_mb="$rss_mb" -timeout=10 -print_final_stats=1
              -artifact_prefix="$art")
  local d; d=$(dict_for "$t")
  [ -n "$d" ] && [ -f "tests/fuzz/$d" ] && args+=(-dict="tests/fuzz/$d")
  local rc=0
  ASAN_OPTIONS=detect_leaks=1:symbolize=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build/$t" "${args[@]}" "$corpus" >"$log" 2>&1 || rc=$?
  echo "$rc" >"$out/logs/$t.rc"
}

running=0
for t in $targets; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$t" &
  running=$((running + 1))
done
wait

# --- report -----------------------------------------------------------------
failed=0
for t in $targets; do
  log="$out/logs/$t.log"
  rc=$(cat "$out/logs/$t.rc" 2>/dev/null || echo "?")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  files=$(find "$out/corpus/$t" -type f | wc -l)
  kib=$(( ($(find "$out/corpus/$t" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}') + 1023) / 1024 ))
  artifacts=$(find "$out/artifacts/$t" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) 2>/dev/null)
  status=ok
  if [ "$rc" != 0 ] || [ -n "$artifacts" ]; then status="FAILED (exit $rc)"; failed=1; fi
  printf '%-18s %4ss  execs %-10s exec/s %-7s corpus %4s files %5s KiB  cov %-5s ft %-6s %s\n' \
    "$t" "$seconds" "${execs:--}" "${rate:--}" "$files" "$kib" "${cov:--}" "${ft:--}" "$status"
done

if [ "$failed" -ne 0 ]; then
  keep=1
  for t in $targets; do
    rc=$(cat "$out/logs/$t.rc" 2>/dev/null || echo "?")
    artifacts=$(find "$out/artifacts/$t" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) 2>/dev/null)
    [ "$rc" = 0 ] && [ -z "$artifacts" ] && continue
    echo
    echo "== $t: exit $rc"
    for a in $artifacts; do echo "reproducer: $a  (rerun: $build/$t $a)"; done
    echo "log: $out/logs/$t.log; its tail:"
    tail -n 40 "$out/logs/$t.log"
  done
  echo "fuzz: findings above; scratch kept in $out"
  exit 1
fi
if [ "$keep" = 1 ]; then echo "fuzz: no findings; logs in $out/logs"
else echo "fuzz: no findings (scratch removed; FUZZ_OUT=DIR keeps corpora and logs)"; fi
