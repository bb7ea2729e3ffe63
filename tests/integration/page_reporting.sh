#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Free page reporting off for the integration tests (ctest fixture `page_reporting`,
# tests/CMakeLists.txt):
#
#   page_reporting.sh off       saves page_reporting.page_reporting_order, then sets it past the
#                               largest order, so that no free block is reported
#   page_reporting.sh restore   puts the saved order back
#
# In a VM with a virtio balloon that reports free pages, the guest hands every free block of at
# least page_reporting_order (2 MiB) to the hypervisor, which discards it; the next touch of that
# memory waits for the host to back it again. The tests splinter most of memory again and again,
# and each pass then costs what the host takes to back ~20 GiB: measured on this project's VM,
# fragmenter --percent 90 took 210 and 314 s, 40 s apart, with reporting on, and a 60% pass 5.7 s
# after the memory was last used with it off (206 s for the pass before, which found it reported).
# Reporting also takes free blocks off the free lists while it reports them, under the tests'
# counts of free blocks and pool writes. A host without it (bare metal, most production VMs) is
# what the tests mean to drive. The saved value lives in STATE, so that `restore` (ctest runs it
# after the last test needing the fixture, whatever their result) and the next `off` put back the
# value found before a run, even one that was killed.
set -euo pipefail
PARAM=${FRAGD_PAGE_REPORTING_PARAM:-/sys/module/page_reporting/parameters/page_reporting_order}
STATE=${FRAGD_PAGE_REPORTING_STATE:-/run/fragd-test-page-reporting}
log() { echo "[page_reporting] $*"; }
die() { echo "[page_reporting] FAIL: $*" >&2; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
  log "not root: free page reporting left as it is (the tests themselves skip, or fail under CI=true)"
  exit 0
fi
if ! [ -e "$PARAM" ]; then
  log "no $PARAM: this kernel reports no free pages"
  exit 0
fi

case ${1:-} in
  off)
    # The orders the buddy allocator has: /proc/buddyinfo's columns after "Node N, zone NAME".
    orders=$(awk 'NR == 1 { print NF - 4 }' /proc/buddyinfo)
    [ "$orders" -gt 0 ] || die "cannot read the number of orders from /proc/buddyinfo"
    # A STATE left by a killed run holds the value from before it: keep that one.
    [ -s "$STATE" ] || cat "$PARAM" >"$STATE"
    echo "$orders" >"$PARAM" || die "cannot write $orders to $PARAM"
    log "page_reporting_order $(cat "$STATE") -> $(cat "$PARAM") (orders 0-$((orders - 1)) exist: no free block is reported); restore puts $(cat "$STATE") back"
    ;;
  restore)
    # After the last test: what tests that died changed (restore_orphans.sh).
    bash "$(dirname "$0")/restore_orphans.sh"
    if ! [ -s "$STATE" ]; then
      log "nothing saved in $STATE: page_reporting_order stays $(cat "$PARAM")"
      exit 0
    fi
    saved=$(cat "$STATE")
    echo "$saved" >"$PARAM" || die "cannot write $saved back to $PARAM: echo $saved > $PARAM, as root"
    [ "$(cat "$PARAM")" = "$saved" ] || die "$PARAM reads $(cat "$PARAM") after writing $saved"
    rm -f "$STATE"
    log "page_reporting_order back to $saved"
    ;;
  *) die "usage: page_reporting.sh off|restore" ;;
esac
