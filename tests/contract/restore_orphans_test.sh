#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What an integration test changed is put back even when it dies without its exit
# (tests/integration/restore_orphans.sh): a test sourcing lib.sh changes a setting (a stand-in
# file) with set_kernel_file and is killed with SIGKILL; its journal stays, and the next test's
# start puts the old value back and removes the killed test's work directory; a test still running
# keeps its journal; a test that exits normally restores and leaves no journal. Needs no root (the
# journal lives in a scratch dir).
#   bash tests/contract/restore_orphans_test.sh
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/fragd-restore-test.XXXXXX)
# The children's work directories go under $T too.
export FRAGD_TEST_RESTORE_DIR=$T/journal FRAGD_SOURCE_DIR=$SRC WORK_BASE=$T
LIVE=
trap '[ -z "$LIVE" ] || kill -KILL "$LIVE" 2>/dev/null || true; rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# child NAME BODY: a test script NAME.sh sourcing lib.sh, then BODY.
child() {
	printf 'source %q/tests/integration/lib.sh\n%s\n' "$SRC" "$2" >"$T/$1.sh"
	bash "$T/$1.sh"
}

echo 20 >"$T/setting"
child killed "set_kernel_file $T/setting 0; kill -KILL \$\$" || true
[ "$(cat "$T/setting")" = 0 ] || fail "the killed test's write is not there (the setting reads $(cat "$T/setting"))"
[ "$(find "$T/journal" -type f | wc -l)" = 1 ] || fail "the killed test left no journal"
killed_work=$(find "$T" -maxdepth 1 -name 'fragd-killed.*')
[ -n "$killed_work" ] || fail "the killed test left no work directory to remove"

out=$(child next "log started") || fail "the next test failed: $out"
[ "$(cat "$T/setting")" = 20 ] || fail "the next test's start did not put the killed test's setting back (reads $(cat "$T/setting"); said: $out)"
grep -q "ended without its exit: ran its 2 restore" <<<"$out" || fail "the restore is not said: $out"
[ -n "$killed_work" ] && [ ! -e "$killed_work" ] || fail "the killed test's work directory is still there: $killed_work"
[ -z "$(find "$T" -maxdepth 1 -name 'fragd-next.*')" ] || fail "the next test's exit left its work directory"

# A test that still runs: its journal is not touched by the next test's start.
echo 7 >"$T/other"
printf 'source %q/tests/integration/lib.sh\nset_kernel_file %q 8\nsleep 60 & PIDS+=($!)\nwait $!\n' "$SRC" "$T/other" >"$T/live.sh"
bash "$T/live.sh" &
LIVE=$!
for _ in $(seq 50); do [ "$(cat "$T/other")" = 8 ] && break; sleep 0.1; done

out=$(child next2 "log started") || fail "the third test failed: $out"
[ "$(cat "$T/other")" = 8 ] || fail "a running test's setting was put back under it"
[ "$(find "$T/journal" -type f | wc -l)" = 1 ] || fail "the journals are not just the running test's: $(ls "$T/journal")"

kill -TERM "$LIVE"
wait "$LIVE" 2>/dev/null || true
LIVE=
[ "$(cat "$T/other")" = 7 ] || fail "a test ended by SIGTERM did not restore its setting (reads $(cat "$T/other"))"
[ "$(find "$T/journal" -type f | wc -l)" = 0 ] || fail "a test that ran its exit left its journal: $(ls "$T/journal")"
((fails == 0)) || exit 1
echo "ok: a killed test's setting is put back and its work directory removed at the next test's start; a running test's is left; a normal exit leaves no journal"
