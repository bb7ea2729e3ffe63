#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Guests of bench/cost.sh: fragd on Debian 12's 6.12 cloud kernel under qemu, in guests of
# different memory sizes and possible-CPU counts, to show what grows with them and what does not:
# the pageblocks a sampled round reads (fragd_scan_pageblocks_read_total{how="sample"} per round)
# against what a full scan reads (fragctl map --max-age 0), and what fragd's BPF maps take
# (tests/tools/bpf_map_memory: the kernel's memlock). Under TCG (no usable KVM here) timings mean
# nothing, counts do: the guests prove counts.
#
#   bash bench/cost_guest.sh OUTDIR NAME:MEMORY_GIB:CPUS:ROUNDS ...   (root, after the build)
#
# Each guest boots with -smp CPUS -m MEMORY_GIB G, which may exceed this host's memory (all CPUS
# present: the guest kernel did not count qemu's hot-pluggable ones, -smp 2,maxcpus=N, as
# possible), and runs bench/cost_guest_init.sh as /init: fragd with configs/fragd.yaml but
# `pageblocks.max_age` set to its interval (BENCH_GUEST_INTERVAL, default the shipped 60s), so
# that a round comes every interval whether memory changed or not, and, when BENCH_GUEST_BUDGET is
# set, that budget (% of a core) instead of the shipped one; it watches ROUNDS rounds (0: maps
# only). Writes OUTDIR/guest-NAME.log (the serial console, FRAGD-* lines) and prints one line per
# guest. Environment: FRAGD_BUILD_DIR (build), FRAGD_KERNEL_CACHE (/var/cache/fragd-kernels),
# BENCH_GUEST_TIMEOUT (seconds per guest, 2400: a large guest's start pass reads every block at
# the budget's pace under TCG first).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
LOG_TAG=cost_guest
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
use_build_dir fragd fragctl bpf_map_memory
CACHE=${FRAGD_KERNEL_CACHE:-/var/cache/fragd-kernels}
TIMEOUT=${BENCH_GUEST_TIMEOUT:-2400}
INTERVAL=${BENCH_GUEST_INTERVAL:-60s}
BUDGET=${BENCH_GUEST_BUDGET:-}
PATTERN='^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64$'
OUTDIR=${1:?usage: cost_guest.sh OUTDIR NAME:MEMORY_GIB:CPUS:ROUNDS ...}
shift
[[ $(id -u) -eq 0 ]] || die "must run as root (apt-get download into $CACHE)"
require_tools " (Debian: qemu-system-x86, cpio, curl, binutils)" qemu-system-x86_64 cpio gzip curl ldd strip
bench_work cost-guest 10
FAILED=0 # the guests' logs are in OUTDIR: the work directory goes, however the run ends
[[ -x /bin/busybox ]] || die "/bin/busybox missing (Debian: busybox-static)"
mkdir -p "$OUTDIR" "$CACHE"

# The kernel: the newest cached tree matching PATTERN, else the newest package apt knows, downloaded once.
kernel_tree() {
	local pkg dir
	pkg=$(apt-cache search --names-only "$PATTERN" 2>/dev/null | awk '{ print $1 }' | grep -E "$PATTERN" | sort -V | tail -1 || true)
	if [[ -z $pkg || ! -d $CACHE/$pkg/boot ]]; then
		dir=$(ls -d "$CACHE"/linux-image-6.12.*+deb12-cloud-amd64 2>/dev/null | sort -V | tail -1 || true)
		[[ -n $dir && -d $dir/boot ]] && { echo "$dir"; return; }
		[[ -n $pkg ]] || return 1
		(cd "$CACHE" && rm -f "${pkg}"_*.deb && apt-get download -q "$pkg" >/dev/null) || return 1
		rm -rf "$CACHE/$pkg.tmp" && dpkg-deb -x "$CACHE/${pkg}"_*.deb "$CACHE/$pkg.tmp" && rm -f "$CACHE/${pkg}"_*.deb &&
			rm -rf "$CACHE/$pkg.tmp/lib/modules" "$CACHE/$pkg.tmp/usr" && mv "$CACHE/$pkg.tmp" "$CACHE/$pkg"
	fi
	echo "$CACHE/$pkg"
}
TREE=$(kernel_tree) || die "no Debian 6.12 cloud kernel cached in $CACHE and none downloadable (apt-get update?)"
VMLINUZ=$(ls "$TREE"/boot/vmlinuz-* | head -1)

root="$WORK/root"
guest_root "$root" "$ROOT/bench/cost_guest_init.sh" "$BUILD_DIR/fragd" "$BUILD_DIR/fragctl" "$BUILD_DIR/bpf_map_memory"
# configs/fragd.yaml with only the pageblocks section's interval, max_age (and budget) changed.
awk -v iv="$INTERVAL" -v b="$BUDGET" '
	/^pageblocks:/ { pb = 1; print; if (b != "") print "  budget: " b; next }
	/^[a-z]/ { pb = 0 }
	pb && $1 == "interval:" { print "  interval: " iv; next }
	pb && $1 == "max_age:" { print "  max_age: " iv; next }
	pb && $1 == "budget:" && b != "" { next }
	{ print }' "$ROOT/configs/fragd.yaml" >"$root/etc/fragd.yaml"
grep -q "^  max_age: $INTERVAL$" "$root/etc/fragd.yaml" || die "configs/fragd.yaml has no pageblocks max_age line to set"
"$BUILD_DIR/fragd" --check-config "$root/etc/fragd.yaml" >/dev/null || die "the guest's config does not validate"
guest_pack "$root" "$WORK/initramfs.gz"

# shellcheck source=tests/kernels/accel.sh
. "$ROOT/tests/kernels/accel.sh"
for spec in "$@"; do
	IFS=: read -r name gib cpus rounds <<<"$spec"
	[[ $gib =~ ^[0-9]+$ && $cpus =~ ^[0-9]+$ && $rounds =~ ^[0-9]+$ ]] || die "bad guest spec '$spec' (NAME:MEMORY_GIB:CPUS:ROUNDS)"
	serial="$OUTDIR/guest-$name.log"
	log "$name: $(basename "$VMLINUZ"), ${gib} GiB, $cpus CPUs, $rounds rounds ($(accel | cut -d' ' -f2))"
	t0=$SECONDS
	# shellcheck disable=SC2046
	# The guest's RAM reserves nothing (reserve=off: MAP_NORESERVE), so a guest larger than this
	# host boots: the guest kernel touches its struct pages (1/64 of its memory) and what it
	# allocates, not its free memory.
	timeout "$TIMEOUT" qemu-system-x86_64 -machine q35,memory-backend=ram $(accel) -smp "$cpus" -m "${gib}G" \
		-object "memory-backend-ram,id=ram,size=${gib}G,reserve=off" \
		-nographic -no-reboot -kernel "$VMLINUZ" -initrd "$WORK/initramfs.gz" \
		-append "console=ttyS0 panic=-1 quiet fragd_rounds=$rounds" </dev/null >"$serial.raw" 2>&1 &
	QEMU_PID=$!
	PIDS+=("$QEMU_PID")
	rc=0
	wait "$QEMU_PID" || rc=$?
	untrack "$QEMU_PID"
	tr -d '\r' <"$serial.raw" | sed -n 's/.*\(FRAGD-.*\)/\1/p' >"$serial"
	rm -f "$serial.raw"
	((rc != 124)) || echo "FRAGD-COST timeout ${TIMEOUT}s" >>"$serial"
	grep -q '^FRAGD-END' "$serial" || die "$name: the guest did not finish (qemu status $rc); see $serial"
	log "$name: done in $((SECONDS - t0)) s: $(grep -c '^FRAGD-ROUND' "$serial") scrapes, $(grep -c '^FRAGD-MAPMEM' "$serial") map lines"
done
