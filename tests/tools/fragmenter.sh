# SPDX-License-Identifier: Apache-2.0
# Starting tests/tools/fragmenter.c, shared by the integration tests (tests/integration/lib.sh)
# and the benchmarks (bench/lib.sh). Sourced, not run.
# shellcheck shell=bash

# work_base: prints /dev/shm when it is tmpfs, else /tmp. Files written while a node compaction
# runs belong there: on a disk file system each one is page cache in small large folios (ext4:
# 16 KiB and up), and a dirty one, or one being read at that moment, has no free target of its
# size in fragmented memory and cannot be split, so the compaction ends there (RELIABILITY.md,
# "Compactions that stop early"). tmpfs pages are single pages, which migrate.
work_base() {
	if [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]]; then
		echo /dev/shm
	else
		echo /tmp
	fi
}

# clean_page_cache FILE MIB: MIB MiB of clean page cache in FILE, which must be on a disk file
# system (tmpfs pages cannot be reclaimed without swap); the caller removes FILE. Reclaim then has
# something to free: a node kswapd had given up on (node_unreclaimable 1) is revived by the first
# reclaim that makes progress there, and kswapd clears the skip hints when it next sleeps.
clean_page_cache() {
	dd if=/dev/zero of="$1" bs=1M count="$2" conv=fsync status=none
}

# undefer_order9 HP [MAX] [SECONDS]: ends the kernel's deferral of order-9 direct compaction in
# fragmented memory. After failed sync compactions a zone skips up to 64 attempts at that order, and the
# pageblock skip hints compaction leaves are cleared only when kswapd goes to sleep after a direct
# compaction's scanners met, or when a compaction restarts after the longest deferral
# (mm/compaction.c); on a node kswapd has given up on (node_unreclaimable in /proc/zoneinfo) only
# the latter. Grows the hugetlb pool HP (empty) one page past the free 2 MiB blocks until a page is
# made by direct compaction (compact_success rises: the kernel then resets the zone's deferral),
# emptying it after each write, at most MAX writes (200), and no write begun after SECONDS (no
# limit when unset). Writes back to back keep kswapd awake and so the skip hints in place: after
# every 20 writes that made no page it pauses 3 s, for kswapd to sleep. Dirty page cache is
# written back first: a direct compaction cannot move a dirty file folio with buffers. Prints the
# number of writes it took; returns 1 when none made a page.
undefer_order9() {
	local hp=$1 max=${2:-200} seconds=${3:-} s0 i end=
	[[ -n $seconds ]] && end=$((${EPOCHREALTIME/./} + seconds * 1000000))
	sync
	s0=$(awk '$1 == "compact_success" { print $2 }' /proc/vmstat)
	for ((i = 1; i <= max; i++)); do
		[[ -n $end ]] && ((${EPOCHREALTIME/./} >= end)) && break
		echo $(($(awk '{ n += $(5 + 9) + 2 * $(5 + 10) } END { print n + 0 }' /proc/buddyinfo) + 1)) >"$hp" 2>/dev/null || true
		echo 0 >"$hp"
		if (($(awk '$1 == "compact_success" { print $2 }' /proc/vmstat) > s0)); then
			echo "$i"
			return 0
		fi
		((i % 20 != 0)) || sleep 3
	done
	return 1
}

# start_fragmenter BIN DIR PERCENT SECONDS [ARG...]: starts BIN --percent PERCENT [ARG...] reading a FIFO
# (DIR/frag.in) whose write end this shell holds on fd 9: the fragmenter stops at EOF, when the
# shell closes fd 9 (`exec 9>&-`) or exits, however it exits, or on SIGTERM. Its output goes
# to DIR/frag.out, errors to DIR/frag.err. Waits up to SECONDS for its "ready" line. Sets
# FRAG_PID and adds it to PIDS (the caller's cleanup stops it). Returns 1 with FRAG_ERROR set
# when it exits first or is not ready in time. The heavy lock's fd (LOCK_FD, when set) is not
# inherited, so the fragmenter never holds the lock.
# Once it is ready, dirty page cache is written back (sync; FRAG_SYNC=0 skips it): a dirty large
# page-cache folio has no free target of its size in fragmented memory and cannot be split, so
# a node compaction that reaches it ends there ("contended"), and how far it got would depend on
# what the tests before happened to write (RELIABILITY.md, "Compactions that stop early").
start_fragmenter() {
	local bin=$1 dir=$2 percent=$3 seconds=$4 i
	shift 4
	exec 9>&-
	rm -f "$dir/frag.in"
	mkfifo "$dir/frag.in"
	if [[ -n ${LOCK_FD:-} ]]; then
		"$bin" --percent "$percent" "$@" <"$dir/frag.in" >"$dir/frag.out" 2>"$dir/frag.err" {LOCK_FD}>&- &
	else
		"$bin" --percent "$percent" "$@" <"$dir/frag.in" >"$dir/frag.out" 2>"$dir/frag.err" &
	fi
	FRAG_PID=$!
	PIDS+=("$FRAG_PID")
	exec 9>"$dir/frag.in"
	for ((i = 0; i < seconds * 10; i++)); do
		if grep -q '^ready' "$dir/frag.out" 2>/dev/null; then
			[[ ${FRAG_SYNC:-1} == 0 ]] || sync
			return 0
		fi
		if ! kill -0 "$FRAG_PID" 2>/dev/null; then
			FRAG_ERROR="fragmenter exited before 'ready': $(cat "$dir/frag.err")"
			return 1
		fi
		sleep 0.1
	done
	FRAG_ERROR="fragmenter not ready after $seconds s"
	return 1
}
