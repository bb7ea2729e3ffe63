#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# vm.defrag_mode's first failure mode (allocations that cannot sleep fail while memory is free),
# reproduced and counted with the kernel's own record, then fragd's guard acting on it: on this
# host, and in a qemu guest of Debian's newest 7.x (trixie-backports), whose allocator lets such
# allocations fall back (mm/page_alloc: "fix defrag_mode for non-reclaimable allocations", 2026).
# As root after the build; the guest needs that kernel in the kernel cache (make test-kernels):
#
#   bash bench/defrag_atomic.sh     # 5 rounds each, about 40 minutes; writes BENCHMARKS.md (defrag_atomic section)
#
# bench/defrag_atomic_rounds.sh runs the rounds (host: directly; guest, 2 GiB and 2 CPUs: as /init
# through bench/defrag_atomic_init.sh); bench/defrag_atomic_report.py gives medians with 95%
# bootstrap intervals over them. Under TCG timings mean nothing; the counts are real.
#
# Knobs: BENCH_ATOMIC_WHERE (both | host | guest), BENCH_ATOMIC_PHASES ("modes guard": the failures
# with defrag_mode 0 and 1, then the guard; "storm": host only, the same demand with
# BENCH_ATOMIC_CACHE_MIB (2048) of a file's page cache to reclaim, its own section defrag_storm),
# BENCH_ATOMIC_ROUNDS (5), BENCH_ATOMIC_SECONDS (per phase, 40), BENCH_ATOMIC_GUARD_SECONDS (60),
# BENCH_ATOMIC_LIMIT (the guard's failures a second, 5); on the host BENCH_ATOMIC_HOST_RATE (inserts
# a second, 3000) and BENCH_ATOMIC_HOST_FREE_MIB (memory left in whole free blocks, 512: with 256 a
# 24 GiB host OOM-killed the fragmenter once); in the guest BENCH_ATOMIC_GUEST_RATE (600) and
# BENCH_ATOMIC_GUEST_FREE_MIB (128; 128 more in the guard phase, where fragd runs in the guest's
# 2 GiB too: with the same margin the guest's fragmenter was OOM-killed). BENCH_OUTPUT,
# FRAGD_BUILD_DIR, FRAGD_KERNEL_CACHE (/var/cache/fragd-kernels), BENCH_KEEP=1; BENCH_QUICK=1:
# 1 round, /tmp/fragd-bench-quick.md. The host's vm.defrag_mode and vm.compact_unevictable_allowed
# are put back on exit; every process it starts is stopped.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start defrag_atomic "qemu and the kernel cache" fragd fragmenter nowait_demand -- qemu-system-x86_64 cpio gzip curl ldd strip python3
[[ -x /bin/busybox ]] || die "/bin/busybox missing (Debian: busybox-static)"

WHERE=${BENCH_ATOMIC_WHERE:-both}
ROUNDS=${BENCH_ATOMIC_ROUNDS:-$(q 5 1)}
SECS=${BENCH_ATOMIC_SECONDS:-40}
GSECS=${BENCH_ATOMIC_GUARD_SECONDS:-60}
LIMIT=${BENCH_ATOMIC_LIMIT:-5}
HOST_RATE=${BENCH_ATOMIC_HOST_RATE:-3000}
HOST_FREE=${BENCH_ATOMIC_HOST_FREE_MIB:-512}
GUEST_RATE=${BENCH_ATOMIC_GUEST_RATE:-600}
GUEST_FREE=${BENCH_ATOMIC_GUEST_FREE_MIB:-128}
PHASES=${BENCH_ATOMIC_PHASES:-modes guard}
CACHE_MIB=${BENCH_ATOMIC_CACHE_MIB:-2048}
[[ $WHERE =~ ^(both|host|guest)$ ]] || die "BENCH_ATOMIC_WHERE must be both, host or guest (got '$WHERE')"
[[ $PHASES =~ ^(modes|guard|storm)( (modes|guard|storm))*$ ]] || die "BENCH_ATOMIC_PHASES: words of modes, guard, storm (got '$PHASES')"
[[ $PHASES != *storm* || $WHERE == host ]] || die "BENCH_ATOMIC_PHASES=storm needs BENCH_ATOMIC_WHERE=host (a file on disk to cache)"
require_positive ROUNDS SECS GSECS LIMIT HOST_RATE HOST_FREE GUEST_RATE GUEST_FREE CACHE_MIB
((QUICK == 1 || ROUNDS >= 5)) || log "note: fewer than 5 rounds: no verdict to quote"
OUT=$(report_output "$QUICK" "$ROOT")
[[ -f /proc/sys/vm/defrag_mode || $WHERE == guest ]] || die "this kernel has no vm.defrag_mode (Linux 6.15+): BENCH_ATOMIC_WHERE=guest"
if [[ $WHERE != host ]]; then
	CACHE=${FRAGD_KERNEL_CACHE:-/var/cache/fragd-kernels}
	TREE=$(ls -d "$CACHE"/linux-binary-7.*+deb13-cloud-amd64 2>/dev/null | sort -V | tail -1 || true)
	if [[ -z $TREE && $WHERE == both ]]; then
		log "no 7.x trixie-backports cloud kernel in $CACHE (make test-kernels downloads it there): this host only"
		WHERE=host
	fi
	[[ -n $TREE || $WHERE == host ]] || die "no 7.x trixie-backports cloud kernel in $CACHE: run make test-kernels once (it downloads it there), or BENCH_ATOMIC_WHERE=host"
	[[ -z $TREE ]] || VMLINUZ=$(ls "$TREE"/boot/vmlinuz-* | head -1)
fi
if [[ $WHERE != guest ]]; then
	require_empty_pool
	free_mib=$(($(meminfo MemFree) / 1024))
	((free_mib > HOST_FREE + 2048)) || die "only $free_mib MiB free here: the host rounds need more than $((HOST_FREE + 2048))"
fi

bench_work atomic 30

mkdir -p "$WORK/bin"
cp "$BUILD_DIR/fragd" "$BUILD_DIR/fragmenter" "$BUILD_DIR/nowait_demand" "$WORK/bin/"
begin_meta "$WORK/bin/fragd"
meta quick="$QUICK" where="$WHERE" rounds="$ROUNDS" seconds="$SECS" guard_seconds="$GSECS" limit="$LIMIT"
meta host_rate="$HOST_RATE" host_free_mib="$HOST_FREE" guest_rate="$GUEST_RATE" guest_free_mib="$GUEST_FREE"
meta phases="$PHASES" cache_mib="$CACHE_MIB"

if [[ $WHERE != host ]]; then
	meta guest_kernel "$(basename "$VMLINUZ" | sed 's/^vmlinuz-//')"
	guest_root "$WORK/root" bench/defrag_atomic_init.sh "$WORK/bin/fragd" "$WORK/bin/fragmenter" "$WORK/bin/nowait_demand" \
		bench/defrag_atomic_rounds.sh
	guest_pack "$WORK/root" "$WORK/initramfs.gz"

	# shellcheck source=tests/kernels/accel.sh
	. tests/kernels/accel.sh
	log "guest: $(basename "$VMLINUZ"), 2 GiB, $ROUNDS rounds ($(accel | cut -d' ' -f2))"
	# shellcheck disable=SC2046
	qemu-system-x86_64 -machine q35 $(accel) -smp 2 -m 2G -nographic -no-reboot \
		-kernel "$VMLINUZ" -initrd "$WORK/initramfs.gz" \
		-append "console=ttyS0 panic=-1 quiet fragd_rounds=$ROUNDS fragd_rate=$GUEST_RATE fragd_seconds=$SECS fragd_guard_seconds=$GSECS fragd_free_mib=$GUEST_FREE fragd_guard_free_mib=$((GUEST_FREE + 128)) fragd_limit=$LIMIT" \
		</dev/null >"$WORK/serial.raw" 2>&1 &
	QEMU=$!
	PIDS+=("$QEMU")
	limit_s=$((2 * ROUNDS * (2 * SECS + GSECS + 240) + 300))
	for ((i = 0; i < limit_s; i++)); do kill -0 "$QEMU" 2>/dev/null || break; sleep 1; done
	stop_pid "$QEMU" 10 || true
	tr -d '\r' <"$WORK/serial.raw" | sed -n 's/.*\(FRAGD-.*\)/\1/p' >"$WORK/guest.log"
	grep -q '^FRAGD-END' "$WORK/guest.log" || die "the guest did not finish within $limit_s s: $(tail -5 "$WORK/guest.log" | tr '\n' '|')"
	! grep -q '^FRAGD-INFO error' "$WORK/guest.log" || die "$(grep '^FRAGD-INFO error' "$WORK/guest.log")"
fi

# The host's rounds after the guest's: they take nearly all of the host's free memory.
if [[ $WHERE != guest ]]; then
	take_heavy_lock
	mkdir -p "$WORK/run-host"
	log "host: $(uname -r), $ROUNDS rounds"
	PHASES=$PHASES CACHE_MIB=$CACHE_MIB ROUNDS=$ROUNDS RATE=$HOST_RATE SECONDS_=$SECS GUARD_SECONDS=$GSECS FREE_MIB=$HOST_FREE LIMIT=$LIMIT \
		BIN=$WORK/bin RUN=$WORK/run-host PORT=$(free_port) sh bench/defrag_atomic_rounds.sh >"$WORK/host.raw" 2>&1 &
	hpid=$!
	PIDS+=("$hpid")
	wait "$hpid" || true
	untrack "$hpid"
	grep '^FRAGD-' "$WORK/host.raw" >"$WORK/host.log" || true
	grep -q '^FRAGD-END' "$WORK/host.log" || die "the host rounds did not finish: $(tail -5 "$WORK/host.raw" | tr '\n' '|')"
	! grep -q '^FRAGD-INFO error' "$WORK/host.log" || die "$(grep '^FRAGD-INFO error' "$WORK/host.log")"
fi
FAILED=0
python3 bench/defrag_atomic_report.py "$WORK" "$OUT"
# The rounds' raw lines, kept in the tree so that anyone can recompute the figures:
# bench/data/defrag_atomic/<host|guest>-<phases>.log (the report reads them back from a directory
# holding meta.env and host.log / guest.log).
if ((QUICK == 0)); then
	data=bench/data/defrag_atomic suffix=${PHASES// /-}
	mkdir -p "$data"
	for f in host guest; do [[ ! -f $WORK/$f.log ]] || cp "$WORK/$f.log" "$data/$f-$suffix.log"; done
	cp "$WORK/meta.env" "$data/meta-$suffix.env"
fi
