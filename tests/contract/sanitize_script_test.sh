#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/sanitize.sh as make sanitize calls it: a build dir named relative to the caller's
# directory (make passes build-asan), stdin closed (CI). A stand-in build dir holds the two
# GoogleTest binaries as scripts that check where they run and a ctest file of one test; the
# script must run both binaries from BUILD/tests, run ctest, and pass; a failing binary must fail
# it; a sanitizer report file must fail it. Needs no root, no sanitizer build.
#   bash tests/contract/sanitize_script_test.sh
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/fragd-sanitize-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

mkdir -p "$WORK/build-x/tests"
echo 'FRAGD_SANITIZE:BOOL=ON' >"$WORK/build-x/CMakeCache.txt"
# A stand-in test binary: passes only when run from BUILD/tests, as the real ones need
# (their fixtures are found from there); BEHAVE=fail makes it fail, BEHAVE=report writes a
# sanitizer report where ASAN_OPTIONS' log_path says.
for name in fragd_unit_tests fragd_replay_tests; do
	cat >"$WORK/build-x/tests/$name" <<'SH'
#!/usr/bin/env bash
[[ $PWD == */build-x/tests ]] || { echo "run from $PWD, not BUILD/tests"; exit 1; }
case ${BEHAVE:-} in
fail) echo "[  FAILED  ] 1 test"; exit 1 ;;
report) p=${ASAN_OPTIONS##*log_path=}; p=${p%%:*}; echo "ERROR: AddressSanitizer: stand-in" >"$p.$$" ;;
esac
echo "[==========] 3 tests from 1 test suite ran. (1 ms total)"
SH
	chmod +x "$WORK/build-x/tests/$name"
done
echo 'add_test(standin "/bin/true")' >"$WORK/build-x/CTestTestfile.cmake"

# run [BEHAVE]: the script on the stand-in; the scratch dir it keeps after a report is removed.
run() {
	local rc=0 kept
	(cd "$WORK" && BEHAVE=${1:-} bash "$SRC/scripts/sanitize.sh" build-x) >"$WORK/out" 2>&1 0<&- || rc=$?
	kept=$(sed -n 's/.*kept in \(\/tmp\/fragd-sanitize\.[A-Za-z0-9]*\)$/\1/p' "$WORK/out")
	[[ -z $kept ]] || rm -rf "$kept"
	return "$rc"
}
if run; then
	grep -q 'fragd_unit_tests: 3 tests from 1 test suite ran, passed' "$WORK/out" ||
		fail "a passing run does not say the unit binary passed: $(grep 'sanitize:' "$WORK/out" | head -3)"
	grep -q 'sanitize: PASS' "$WORK/out" || fail "a passing run does not end with PASS: $(tail -2 "$WORK/out")"
else
	fail "a relative build dir with stdin closed fails: $(grep -v '^sanitize: [A-Z]*_OPTIONS' "$WORK/out" | head -8)"
fi
if run fail; then fail "a failing unit binary passed the run"; else
	grep -q 'fragd_unit_tests failed' "$WORK/out" || fail "a failing unit binary is not named: $(tail -3 "$WORK/out")"
fi
if run report; then fail "a sanitizer report passed the run"; else
	grep -q 'sanitizer report(s)' "$WORK/out" || fail "a report is not said: $(tail -3 "$WORK/out")"
fi
((fails == 0)) || exit 1
echo "ok: sanitize.sh runs the unit binaries from a relative build dir, fails on a failure and on a report"
