#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The rounds of bench/defrag_atomic.sh, on this host or as a guest's /init (bench/defrag_atomic_init.sh):
# vm.defrag_mode's first failure mode, allocations that cannot sleep failing while most memory is
# free, made and counted with the kernel's own record, then fragd's guard acting on it.
#
# Memory is splintered by pages compaction may not move (fragmenter --mlock 1 with
# vm.compact_unevictable_allowed 0, as between pinned pages) and reclaim cannot free, leaving
# about FREE_MIB in whole free blocks. nowait_demand then asks for unmovable order-2 blocks with
# GFP_NOWAIT (a BPF hash map's elements, refilled from irq_work) at RATE a second; each failed
# insert (ENOMEM) is one failure in the kernel's record. Each round runs the PHASES, writing:
#   modes: SECONDS_ s of demand with vm.defrag_mode 0 and 1 (the order alternating by round):
#     FRAGD-PHASE <round> <dm> <ok> <enomem> <memfree_kib> <free_blocks_pages> (these two at the end)
#       <compact_daemon_wake> <pgscan_kswapd> <psi some us> <psi full us>
#   guard: GUARD_SECONDS s of demand, defrag_mode 1, fragd in act mode with only compaction.defrag_guard
#     on (atomic_failures_per_second LIMIT): each second FRAGD-TICK <round> <s> <ok> <enomem> <dm>, then
#     FRAGD-GUARD <round> <fragd failures can_sleep=false> <dm after fragd stopped> <off actions>
#       <fragd's exit status> <by consumer: consumer=count,... or none>
#   storm: the modes' demand after CACHE_MIB (2048) of a file on disk is read into the page cache (what
#     kswapd reclaims under each defrag_mode to make whole free blocks): FRAGD-STORM <round> <dm> <ok>
#       <enomem> <Cached kib before> <after> <pgscan_kswapd> <pgsteal_kswapd> <pgscan_direct>
#       <compact_daemon_wake> <psi some us> <psi full us>
# then FRAGD-END. Environment: ROUNDS RATE SECONDS_ GUARD_SECONDS FREE_MIB LIMIT, WINDOW_S (the guard's
# window in s, 10), PHASES ("modes guard"; tests/integration/defrag_atomic_test.sh: "guard"), CACHE_MIB,
# GUARD_FREE_MIB (FREE_MIB of the guard phase, where fragd runs too; default FREE_MIB), BIN (the
# directory of fragd, fragmenter and nowait_demand), RUN (scratch), PORT (fragd's /metrics on
# 127.0.0.1). vm.defrag_mode, vm.compact_unevictable_allowed and vm.watermark_boost_factor are put
# back on exit, the zones' watermark boost dropped, the 2 MiB hugetlb pool (empty at the start, used
# to take whole free blocks) emptied; every process stopped.
URL=http://127.0.0.1:$PORT/metrics
mem() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
FRAGD_PID=
FRAG_PID=
DEMAND_PID=
CACHE_FILE=
FILLED=
DM_ORIG=$(cat /proc/sys/vm/defrag_mode 2>/dev/null)
HP=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if [ "$(cat "$HP")" != 0 ]; then
	echo "FRAGD-INFO error the 2 MiB hugetlb pool is not empty ($HP): not touching it"
	echo "FRAGD-END"
	exit 1
fi
CUA_ORIG=$(cat /proc/sys/vm/compact_unevictable_allowed)
WBF_ORIG=$(cat /proc/sys/vm/watermark_boost_factor)
finish() {
	[ -n "$DEMAND_PID" ] && kill -TERM "$DEMAND_PID" 2>/dev/null
	[ -n "$FRAGD_PID" ] && kill -TERM "$FRAGD_PID" 2>/dev/null && wait "$FRAGD_PID"
	[ -n "$FRAG_PID" ] && kill -TERM "$FRAG_PID" 2>/dev/null && wait "$FRAG_PID"
	echo 0 >"$HP"
	# The blocks the demand left unmovable-typed go back to movable: left so, they would change
	# what compaction finds for whatever runs next here (a test that times a compaction).
	# Compaction empties those holding only movable pages; then a 2 MiB hugetlb pool asks for
	# every whole free block and 64 more (its movable pages take the free movable blocks, then
	# claim whole free blocks of other types, which become movable, and may reclaim page cache)
	# and is emptied: up to 3 times, until at most 32 more blocks are unmovable than at the start.
	# The pool is written from a shell of its own (a pending signal stops its growth). First the
	# demand's memory must be back: the kernel frees a map's elements after RCU grace periods,
	# seconds after the process ends: wait (at most 120 s) until unreclaimable slab, where those
	# large kmallocs count, is within 64 MiB of the start. The watermark boost the last demand left
	# is dropped first (see unboost).
	echo "$WBF_ORIG" >/proc/sys/vm/watermark_boost_factor
	if [ -n "$FILLED" ]; then
		unboost
		w=0
		while [ $w -lt 120 ] && [ "$(mem SUnreclaim)" -gt $((SUNRECLAIM0 + 65536)) ]; do
			sleep 1
			w=$((w + 1))
		done
		i=0
		while [ $i -lt 3 ] && [ "$(unmovable_blocks)" -gt $((UNMOVABLE0 + 32)) ]; do
			settle
			echo 1 >/proc/sys/vm/compact_memory
			sh -c 'echo $2 >"$1"' sh "$HP" $(( $(vm nr_free_pages_blocks) / 512 + 64 ))
			echo 0 >"$HP"
			i=$((i + 1))
		done
		echo "FRAGD-INFO end unmovable_blocks $(unmovable_blocks) (start $UNMOVABLE0, $i sweeps; the demand's memory back after $w s)"
	fi
	[ -n "$DM_ORIG" ] && echo "$DM_ORIG" >/proc/sys/vm/defrag_mode
	echo "$CUA_ORIG" >/proc/sys/vm/compact_unevictable_allowed
	[ -n "$CACHE_FILE" ] && rm -f "$CACHE_FILE"
	echo "FRAGD-END"
}
trap finish EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

echo "FRAGD-INFO kernel $(uname -r)"
echo "FRAGD-INFO mem_total_kib $(mem MemTotal)"
if [ ! -e /proc/sys/vm/defrag_mode ]; then
	echo "FRAGD-INFO error this kernel has no vm.defrag_mode (Linux 6.15+)"
	exit 1
fi
echo 0 >/proc/sys/vm/compact_unevictable_allowed

vm() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
psi() { awk -v k="$1" '$1 == k { sub("total=", "", $5); print $5 }' /proc/pressure/memory 2>/dev/null || echo 0; }
unmovable_blocks() { awk '/^Number of blocks type/ { on = 1; next } on && NF > 5 { s += $5 } END { print s + 0 }' /proc/pagetypeinfo; }
UNMOVABLE0=$(unmovable_blocks)
SUNRECLAIM0=$(mem SUnreclaim)

# The zones' watermark boost, in KiB. Each time an allocation takes part of a block of another
# migratetype (the demand's unmovable pages with defrag_mode 0; a fill's movable ones in the
# unmovable blocks an earlier demand left) the kernel raises the zone's watermarks by a block, up
# to vm.watermark_boost_factor (150%) of the high watermark, and wakes kswapd, which drops the
# boost once it has reclaimed and compacted. Here nothing is reclaimable: kswapd gives up on the
# node (all_unreclaimable) and the boost stays, so a fill after a phase's demand, leaving FREE_MIB,
# met a min watermark raised by all of it. In the 2 GiB guest (128 MiB left free) the OOM killer
# took the fragmenter with "DMA32 free:144144kB boost:100588kB min:145296kB" (44 MiB without the
# boost). unboost drops it as kswapd would have: a write of vm.watermark_scale_factor (its own
# value) recomputes the watermarks, boost 0.
boost_kib() { awk '$1 == "boost" { s += $2 } END { print s * 4 }' /proc/zoneinfo; }
unboost() {
	f=$(cat /proc/sys/vm/watermark_scale_factor)
	echo "$f" >/proc/sys/vm/watermark_scale_factor
}

# Splinter memory, leaving about FREE_MIB in whole free blocks; sets FRAG_PID. First, with
# defrag_mode 1, movable pages fill what is free and go: defrag_mode lets them take only whole
# free blocks of another type, so the blocks an earlier phase's demand turned unmovable (and
# left free) become movable again, and every phase starts alike.
frag_start() { # MIB KEEP LOCK
	"$BIN/fragmenter" --mib "$1" --keep "$2" --mlock "$3" <"$RUN/frag.in" >"$RUN/frag.out" 2>"$RUN/frag.err" &
	FRAG_PID=$!
	exec 7>"$RUN/frag.in"
	read -r ready kept <"$RUN/frag.out"
	[ "$ready" = ready ] || { echo "FRAGD-INFO error fragmenter --mib $1 did not start: $(cat "$RUN/frag.err") $(dmesg | tail -5 | tr '\n' '|')"; exit 1; }
}
# Until MemFree stops growing (a map's elements go back after a grace period, not at its
# close), at most 60 s.
# Its own counter: POSIX sh has no local, and finish's sweep loop counts with i.
settle() {
	s=0 last=0
	while [ $s -lt 60 ]; do
		now=$(mem MemFree)
		[ $((now - last)) -lt 4096 ] && break
		last=$now
		sleep 1
		s=$((s + 1))
	done
}
splinter() {
	FILLED=1
	settle
	# The fills (setup, not measured) meet the zones' own watermarks, as the first phase's do: the
	# boost an earlier demand left is dropped, and vm.watermark_boost_factor is 0 until the demand
	# starts. With the boost only dropped, the first fill after a demand was still OOM-killed (in
	# 1 guest run of 2): its movable pages, taking pieces of the blocks the demand left unmovable
	# under the last-resort fallback, raise it anew.
	boost=$(boost_kib)
	echo 0 >/proc/sys/vm/watermark_boost_factor
	unboost
	mkfifo "$RUN/frag.in" "$RUN/frag.out" 2>/dev/null
	dm=$(cat /proc/sys/vm/defrag_mode)
	echo 1 >/proc/sys/vm/defrag_mode
	frag_start $(( $(mem MemFree) / 1024 - FREE_MIB )) 1 0
	unsplinter
	echo "$dm" >/proc/sys/vm/defrag_mode
	echo 1 >/proc/sys/vm/compact_memory
	frag_start $(( $(mem MemFree) / 1024 - FREE_MIB )) 16 1
	# Blocks that come back free late (on a VM, free page reporting holds free blocks for a
	# while to hand them to the host) leave more in whole free blocks than FREE_MIB: a 2 MiB
	# hugetlb pool takes the excess, whole blocks and nothing else, until two checks 2 s apart
	# find at most FREE_MIB + 64 (at most 15 checks), so that every phase starts alike. The pool
	# is written from a shell of its own (a pending signal stops its growth) and emptied after.
	i=0 quiet=0
	while [ $i -lt 15 ] && [ $quiet -lt 2 ]; do
		sleep 2
		fb=$(( $(vm nr_free_pages_blocks) * 4 / 1024 ))
		if [ "$fb" -gt $((FREE_MIB + 64)) ]; then
			sh -c 'echo $(( $(cat "$1") + $2 )) >"$1"' sh "$HP" $(((fb - FREE_MIB) / 2))
			quiet=0
		else
			quiet=$((quiet + 1))
		fi
		i=$((i + 1))
	done
	echo "$WBF_ORIG" >/proc/sys/vm/watermark_boost_factor
	echo "FRAGD-INFO round-start unmovable_blocks $(unmovable_blocks) free_blocks_pages $(vm nr_free_pages_blocks) boost_cleared_kib $boost boost_kib $(boost_kib)"
}
unsplinter() {
	exec 7>&-
	kill -TERM "$FRAG_PID" 2>/dev/null
	wait "$FRAG_PID" 2>/dev/null
	FRAG_PID=
	echo 0 >"$HP"
}

phase() { # ROUND DM [storm]
	echo "$2" >/proc/sys/vm/defrag_mode
	if [ "$3" = storm ]; then
		# Clean page cache of a file on disk: what kswapd may reclaim to make whole free blocks.
		settle
		echo 3 >/proc/sys/vm/drop_caches
		cat "$CACHE_FILE" >/dev/null
	fi
	splinter
	c0=$(mem Cached) w0=$(vm compact_daemon_wake) s0=$(vm pgscan_kswapd) t0=$(vm pgsteal_kswapd)
	d0=$(vm pgscan_direct) p0=$(psi some) f0=$(psi full)
	# The map is held (stdin open) until the counters are read, then freed.
	mkfifo "$RUN/demand.in" 2>/dev/null
	"$BIN/nowait_demand" --mib "$DEMAND_MIB" --rate "$RATE" --seconds "$SECONDS_" <"$RUN/demand.in" >"$RUN/demand.out" &
	DEMAND_PID=$!
	exec 8>"$RUN/demand.in"
	while ! grep -q '^done' "$RUN/demand.out"; do sleep 1; done
	mf=$(mem MemFree) fb=$(vm nr_free_pages_blocks)
	c1=$(mem Cached) w1=$(vm compact_daemon_wake) s1=$(vm pgscan_kswapd) t1=$(vm pgsteal_kswapd)
	d1=$(vm pgscan_direct) p1=$(psi some) f1=$(psi full)
	exec 8>&-
	wait "$DEMAND_PID"
	DEMAND_PID=
	set -- "$1" "$2" "$3" $(awk '/^done/ { print $3, $5 }' "$RUN/demand.out")
	if [ "$3" = storm ]; then
		echo "FRAGD-STORM $1 $2 $4 $5 $c0 $c1 $((s1 - s0)) $((t1 - t0)) $((d1 - d0)) $((w1 - w0)) $((p1 - p0)) $((f1 - f0))"
	else
		echo "FRAGD-PHASE $1 $2 $4 $5 $mf ${fb:-0} $((w1 - w0)) $((s1 - s0)) $((p1 - p0)) $((f1 - f0))"
	fi
	unsplinter
}

guard_phase() { # ROUND
	FREE_MIB=${GUARD_FREE_MIB:-$FREE_MIB}
	echo 1 >/proc/sys/vm/defrag_mode
	"$BIN/fragd" --config "$RUN/guard.yaml" --listen "127.0.0.1:$PORT" --socket "$RUN/fragd.sock" >>"$RUN/fragd.log" 2>&1 &
	FRAGD_PID=$!
	i=0
	until curl -sf --max-time 10 "$URL" | grep -q '^fragd_vm_defrag_mode 1'; do
		i=$((i + 1))
		if [ $i -gt 600 ] || ! kill -0 "$FRAGD_PID" 2>/dev/null; then
			echo "FRAGD-INFO error fragd did not start: $(tail -c 2000 "$RUN/fragd.log" | tr '\n' '|')"
			exit 1
		fi
		sleep 0.2
	done
	splinter
	mkfifo "$RUN/ticks" 2>/dev/null
	"$BIN/nowait_demand" --mib "$DEMAND_MIB" --rate "$RATE" --seconds "$GUARD_SECONDS" </dev/null >"$RUN/ticks" &
	DEMAND_PID=$!
	while read -r a t b ok c en; do
		[ "$a" = t ] && echo "FRAGD-TICK $1 $t $ok $en $(cat /proc/sys/vm/defrag_mode)"
	done <"$RUN/ticks"
	wait "$DEMAND_PID"
	DEMAND_PID=
	m=$(curl -sf --max-time 10 "$URL")
	fails=$(echo "$m" | awk '/^fragd_alloc_failures_total\{/ && /can_sleep="false"/ { s += $2 } END { print s + 0 }')
	offs=$(echo "$m" | awk '/^fragd_actions_total\{/ && /action="defrag_mode_off"/ { s += $2 } END { print s + 0 }')
	# By consumer: the failures that could not sleep, "consumer=count" joined by commas.
	cons=$(echo "$m" | awk '/^fragd_alloc_failures_by_consumer_total\{/ && /can_sleep="false"/ {
		c = $1; sub(/.*consumer="/, "", c); sub(/".*/, "", c); n[c] += $2 }
		END { for (c in n) { printf "%s%s=%d", sep, c, n[c]; sep = "," } }')
	kill -TERM "$FRAGD_PID"
	wait "$FRAGD_PID"
	rc=$?
	FRAGD_PID=
	echo "FRAGD-GUARD $1 $fails $(cat /proc/sys/vm/defrag_mode) $offs $rc ${cons:-none}"
	unsplinter
}

# The map may hold every element asked for in the longest phase.
DEMAND_MIB=$((RATE * (GUARD_SECONDS > SECONDS_ ? GUARD_SECONDS : SECONDS_) * 16 / 1024 + 16))
cat >"$RUN/guard.yaml" <<YAML
mode: act
compaction:
  score: {enabled: false}
  demand: {enabled: false}
  reserve: {memory_percent: 0}
  defrag_guard: {enabled: true, atomic_failures_per_second: $LIMIT, pressure_full_percent: 0, window: ${WINDOW_S:-10}s, hold: 1h}
YAML
if ! "$BIN/fragd" --check-config "$RUN/guard.yaml" >"$RUN/check.log" 2>&1; then
	echo "FRAGD-INFO error $(tr '\n' '|' <"$RUN/check.log")"
	exit 1
fi

has() { case " ${PHASES:-modes guard} " in *" $1 "*) ;; *) return 1 ;; esac; }
# pair ROUND [storm]: phase with defrag_mode 0 then 1 in odd rounds, 1 then 0 in even ones.
pair() { first=$(($1 % 2 ? 0 : 1)); phase "$1" "$first" "$2"; phase "$1" $((1 - first)) "$2"; }
if has storm; then
	# On disk, not tmpfs: its pages must be reclaimable. Removed on exit.
	CACHE_FILE=$(mktemp /var/tmp/fragd-defrag-storm.XXXXXX)
	dd if=/dev/zero of="$CACHE_FILE" bs=1M count="${CACHE_MIB:-2048}" status=none
fi
r=1
while [ "$r" -le "$ROUNDS" ]; do
	has modes && pair "$r"
	has guard && guard_phase "$r"
	has storm && pair "$r" storm
	r=$((r + 1))
done
