#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Puts back what integration tests that died changed (sourced by lib.sh at every test's start; run
# by page_reporting.sh restore after the last test).
#
# Each test journals what its exit puts back (lib.sh's on_exit: a kernel setting's old value, a
# mount, a tracing instance, its work directory) in RESTORE_DIR/<pid>-<start time>, one command a
# line, and removes the journal after its exit ran them. A test ended by SIGKILL (ctest's
# timeout), or by a SIGTERM that arrived while a long command ran in its foreground (bash runs
# the TERM trap only after that command ends, and the caller may not wait), runs no exit: its
# journal stays. This runs each journal of a process no longer alive, last line first, and
# removes it.
#   bash tests/integration/restore_orphans.sh        (or: source it, then restore_orphans)
RESTORE_DIR=${FRAGD_TEST_RESTORE_DIR:-/run/fragd-test-restore}

# proc_start PID: the process's start time (field 22 of /proc/PID/stat); empty when it is gone.
proc_start() {
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s
  echo "${20}"
}

restore_orphans() {
  local j base pid start cmd n
  [ -d "$RESTORE_DIR" ] || return 0
  for j in "$RESTORE_DIR"/*; do
    [ -f "$j" ] || continue
    base=${j##*/}
    pid=${base%%-*} start=${base#*-}
    [ "$(proc_start "$pid")" = "$start" ] && continue  # that test still runs
    n=0
    while IFS= read -r cmd; do
      [ -n "$cmd" ] || continue
      eval "$cmd" 2>/dev/null || true
      n=$((n + 1))
    done < <(tac "$j")
    rm -f "$j"
    echo "[restore_orphans] a test (pid $pid) ended without its exit: ran its $n restore command(s)"
  done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  restore_orphans
fi
