#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs fragd's tests (ctest) in a sanitizer build dir and fails if any process
# reported anything:
#   -DFRAGD_SANITIZE=ON (make sanitize): ASan (memory errors), LeakSanitizer (leaks
#                       at exit) and UBSan;
#   -DFRAGD_TSAN=ON     (make tsan): ThreadSanitizer (data races, lock-order
#                       inversions);
# each on the unit tests and the ctest tests the Makefile selects.
# cmake/Sanitize.cmake has the flags.
#
#   bash scripts/sanitize.sh BUILD_DIR [ctest args...]      (make sanitize / make tsan build first)
#
# First the GoogleTest binaries (the unit and replay tests), each run once, then ctest with the
# arguments given (make sanitize and make tsan: the tests labelled `daemon`).
#
# Every report goes to a file in one scratch directory (log_path), not to stderr:
# the integration tests start fragd, fragctl and the test tools themselves, often
# with their output captured or an expected failure, so a report on stderr or a
# non-zero exit alone could be lost. ctest passes this environment through to
# every test and the tests to every process they start.
set -euo pipefail

BUILD=${1:?usage: scripts/sanitize.sh BUILD_DIR [ctest args...]}
shift
# Absolute: the unit test binaries run from inside it (make passes build-asan, relative).
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || {
  echo "sanitize: no build dir '$BUILD': run make sanitize (or make tsan), which configures and builds it" >&2
  exit 2
}
if grep -q '^FRAGD_SANITIZE:BOOL=ON$' "$BUILD/CMakeCache.txt" 2>/dev/null; then
  kind=asan
elif grep -q '^FRAGD_TSAN:BOOL=ON$' "$BUILD/CMakeCache.txt" 2>/dev/null; then
  kind=tsan
else
  echo "sanitize: $BUILD is not a sanitizer build dir: configure it with" \
    "cmake -S . -B $BUILD -DFRAGD_SANITIZE=ON (or -DFRAGD_TSAN=ON), or run make sanitize (make tsan)" >&2
  exit 2
fi

SCRATCH=$(mktemp -d /tmp/fragd-sanitize.XXXXXX)
# Some tests run fragd and fragctl as nobody: they must be able to write a report too.
chmod 1777 "$SCRATCH"

if [ "$kind" = asan ]; then
  # halt_on_error: the first error ends the process (non-zero exit) after its report.
  # detect_stack_use_after_return: locals are moved to a heap "fake stack" so a pointer
  # to a dead frame is caught. LeakSanitizer runs at every clean exit (detect_leaks).
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1:log_path=$SCRATCH/asan"
  # Leaks of system libraries' own caches, each explained in tests/lsan.supp.
  export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")/.." && pwd)/tests/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$SCRATCH/ubsan"
  echo "sanitize: ASAN_OPTIONS=$ASAN_OPTIONS"
  echo "sanitize: LSAN_OPTIONS=$LSAN_OPTIONS"
  echo "sanitize: UBSAN_OPTIONS=$UBSAN_OPTIONS"
else
  # Every race is reported (the process goes on: a report file is the failure);
  # second_deadlock_stack gives both stacks of a lock-order inversion.
  # Races in libraries fragd does not own, each explained in tests/tsan.supp.
  export TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1:history_size=4:log_path=$SCRATCH/tsan:suppressions=$(cd "$(dirname "$0")/.." && pwd)/tests/tsan.supp"
  echo "sanitize: TSAN_OPTIONS=$TSAN_OPTIONS"
fi
echo "sanitize: reports go to $SCRATCH"

# The unit tests: each GoogleTest binary once, every test in one process (under ctest each of the
# ~700 tests is a process of its own, and a sanitized process takes 0.1-0.2 s to start: 84 s
# against 24 s for the same tests under TSan). LeakSanitizer then checks at the one exit.
start=$SECONDS
rc=0
for bin in "$BUILD"/tests/fragd_unit_tests "$BUILD"/tests/fragd_replay_tests; do
  [ -x "$bin" ] || { echo "sanitize: FAIL: $bin missing: build $BUILD first" >&2; exit 2; }
  name=$(basename "$bin")
  if (cd "$BUILD/tests" && "$bin" --gtest_brief=1) >"$SCRATCH/$name.out" 2>&1; then
    echo "sanitize: $name: $(grep -o '[0-9]* tests\? from [0-9]* test suites\? ran' "$SCRATCH/$name.out"), passed"
  else
    cat "$SCRATCH/$name.out"
    echo "sanitize: $name failed (above)" >&2
    rc=1
  fi
  rm -f "$SCRATCH/$name.out"
done
echo "sanitize: unit tests took $((SECONDS - start)) s"

start=$SECONDS
ctest --test-dir "$BUILD" --output-on-failure "$@" || rc=$?
echo "sanitize: ctest exited $rc after $((SECONDS - start)) s"

shopt -s nullglob
reports=("$SCRATCH"/asan.* "$SCRATCH"/ubsan.* "$SCRATCH"/tsan.*)
if [ ${#reports[@]} -gt 0 ]; then
  for r in "${reports[@]}"; do
    echo "===== sanitizer report $r ====="
    cat "$r"
  done
  echo "sanitize: FAIL: ${#reports[@]} sanitizer report(s), kept in $SCRATCH" >&2
  exit 1
fi
rmdir "$SCRATCH"
[ "$rc" -eq 0 ] || { echo "sanitize: FAIL: a test failed (no sanitizer report)" >&2; exit "$rc"; }
echo "sanitize: PASS: the unit tests and ctest passed, no sanitizer report"
