# SPDX-License-Identifier: Apache-2.0
# What a busy host puts into the fragmenter's holes, shared by bench/apps.sh and
# bench/preflight.sh. Sourced after bench/lib.sh, not run.
#
# The sourcing script sets, before calling them:
#   WORK             its work directory, holding its private copy of physmap ($WORK/physmap)
#   PIDS             the array of processes its cleanup stops (lib.sh)
#   CACHE_FILE       the page-cache file mixed_start writes (on a disk file system, not tmpfs)
#   SLAB_DIR         the tmpfs folder of mixed_start's empty files
#   MIXED_CACHE_MIB, MIXED_FILES, MIXED_PGTABLES   mixed_start's sizes
# and calls fill_stop from its restore_on_exit, so that whatever ends it frees what these made.
# shellcheck shell=bash

PT_PID=

# pgtables_start DIR COUNT: `physmap pgtables --count COUNT` (COUNT page-table pages, unmovable
# kernel memory, one per 2 MiB of a large mapping read once), held until fill_stop; its output in
# DIR/pt.out. Waits for its "ready" (at most 120 s).
pgtables_start() {
	local dir=$1 count=$2
	rm -f "$dir/pt.in"
	mkfifo "$dir/pt.in"
	# Without the fragmenter's FIFO (fd 9): holding it open, physmap would keep the fragmenter from
	# its EOF at the end of the run; nor the heavy lock's fd (LOCK_FD, when set).
	if [[ -n ${LOCK_FD:-} ]]; then
		"$WORK/physmap" pgtables --count "$count" --out "$dir/pt.txt" <"$dir/pt.in" >"$dir/pt.out" 2>"$dir/pt.err" 9>&- {LOCK_FD}>&- &
	else
		"$WORK/physmap" pgtables --count "$count" --out "$dir/pt.txt" <"$dir/pt.in" >"$dir/pt.out" 2>"$dir/pt.err" 9>&- &
	fi
	PT_PID=$!
	PIDS+=("$PT_PID")
	exec 8>"$dir/pt.in"
	wait_line "$PT_PID" "$dir/pt" 120
}

# mixed_start DIR: after the fragmenter's "ready", MIXED_CACHE_MIB of clean page cache (a file
# written and synced), MIXED_FILES empty files on a tmpfs (inodes and dentries: slab that stays
# while the files do) and MIXED_PGTABLES page-table pages (pgtables_start). The slab and the page
# tables are unmovable allocations that fall back into the holes' movable blocks.
mixed_start() {
	dd if=/dev/zero of="$CACHE_FILE" bs=1M count="$MIXED_CACHE_MIB" status=none conv=fsync ||
		die "cannot write $MIXED_CACHE_MIB MiB to $CACHE_FILE"
	mkdir -p "$SLAB_DIR"
	python3 -c '
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    os.close(os.open(f"{d}/{i}", os.O_CREAT | os.O_WRONLY, 0o600))' "$SLAB_DIR" "$MIXED_FILES" ||
		die "cannot create $MIXED_FILES files in $SLAB_DIR"
	pgtables_start "$1" "$MIXED_PGTABLES"
	log "mixed: $(head -1 "$1/pt.out"), slab $(meminfo Slab) kB, cached $(meminfo Cached) kB"
}

# fill_stop: frees what pgtables_start and mixed_start made (the page tables' holder, the files,
# the cache file).
fill_stop() {
	if [[ -n $PT_PID ]]; then
		exec 8>&-
		wait "$PT_PID" 2>/dev/null || true
		untrack "$PT_PID"
		PT_PID=
	fi
	rm -rf "$SLAB_DIR" "$CACHE_FILE"
}
