#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dirty_compaction.sh [ROUNDS]: why a node compaction of fragmented memory can stop early.
# Each round, twice (interleaved): writes 2 GiB to a file (large page-cache folios, dirty), with
# or without `sync` afterwards, fragments 95% of memory (fragmenter), compacts node 0 and
# reports how each zone's run ended (compaction:mm_compaction_end), the 2 MiB blocks it made,
# and, at a run that ended "contended", the folios of the pageblock where it stopped
# (/proc/kpageflags). Root; run it alone (it holds the heavy-test lock). Restores
# vm.compaction_proactiveness, removes its file and trace instance, ends what it started.
set -euo pipefail
ROUNDS=${1:-3}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
source "$ROOT/tests/tools/fragmenter.sh"
[ "$(id -u)" -eq 0 ] || { echo "dirty_compaction.sh: needs root" >&2; exit 1; }
[ -x "$BUILD/fragmenter" ] || { echo "dirty_compaction.sh: no $BUILD/fragmenter (make build)" >&2; exit 1; }
exec 8>/tmp/fragd-heavy.lock
flock 8

PIDS=()
W=$(mktemp -d /tmp/fragd-dirty.XXXXXX)
DATA=/var/tmp/fragd-dirty-compaction.data
T=/sys/kernel/tracing
[ -d $T/instances ] || T=/sys/kernel/debug/tracing
INST=$T/instances/fragd-dirty-$$
PRO=/proc/sys/vm/compaction_proactiveness
OLD_PRO=$(cat $PRO)
cleanup() {
	exec 9>&-
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	if [ -d "$INST" ]; then
		echo 0 >"$INST/events/compaction/mm_compaction_end/enable"
		rmdir "$INST"
	fi
	echo "$OLD_PRO" >$PRO
	rm -rf "$W" "$DATA"
}
trap cleanup EXIT
echo 0 >$PRO # kcompactd does not tidy memory between the fragmenter and the compaction
mkdir "$INST"
echo 4096 >"$INST/buffer_size_kb"

free_blocks9() { awk '{ n += $(5 + 9) + 2 * $(5 + 10) } END { print n + 0 }' /proc/buddyinfo; }


round() {
	local how=$1 b0 b1 t0 t1
	dd if=/dev/zero of=$DATA bs=1M count=2048 status=none
	[ "$how" = dirty ] || sync
	local dirty
	dirty=$(awk '$1 == "Dirty:" { print int($2 / 1024) }' /proc/meminfo)
	FRAG_SYNC=0 start_fragmenter "$BUILD/fragmenter" "$W" 95 360 || { echo "$FRAG_ERROR" >&2; exit 1; }
	echo >"$INST/trace"
	echo 1 >"$INST/events/compaction/mm_compaction_end/enable"
	local dirty_now
	dirty_now=$(awk '$1 == "Dirty:" { print int($2 / 1024) }' /proc/meminfo)
	b0=$(free_blocks9)
	t0=$(date +%s%N)
	echo 1 >/sys/devices/system/node/node0/compact
	t1=$(date +%s%N)
	b1=$(free_blocks9)
	echo 0 >"$INST/events/compaction/mm_compaction_end/enable"
	cat "$INST/trace" >"$W/ends.txt"
	echo "$how (Dirty $dirty MiB before fragmenting, $dirty_now MiB at the compaction): free 2 MiB blocks $b0 -> $b1 in $(((t1 - t0) / 1000000)) ms"
	python3 "$ROOT/tests/tools/compaction_stops.py" "$W/ends.txt" | sed 's/^/    /'
	exec 9>&-
	wait "$FRAG_PID" 2>/dev/null || true
	rm -f $DATA
}

for ((r = 1; r <= ROUNDS; r++)); do
	round dirty
	round synced
done
