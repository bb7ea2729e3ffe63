#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test-kernels: fragd on the kernels fleets run, each booted as a qemu guest, KERNEL_JOBS (2) at once.
#
# For each kernel of tests/kernels/kernels.tsv: fetch Debian's linux-image package
# (apt-get download, never installed on this host) into a cache, boot its kernel with a
# small initramfs (busybox-static, build/fragd, build/fragctl, build/fragmenter, bpftool, curl,
# their libraries, tests/kernels/guest.sh as /init, the files it sources: guest_setup.sh and
# tests/tools/suite_lib.sh) and read the guest suite's lines from the serial console: every
# program must attach as tests/kernels/programs.tsv says for that kernel, the guest must have as
# many NUMA nodes online as its row's nodes (the kernel command line tells the guest that count
# as fragd.nodes=N), and every check of guest.sh must pass. One line per kernel, then a summary.
# Under TCG (no usable KVM) timings mean nothing: the guests prove behaviour and counts.
#
#   bash tests/kernels/matrix.sh [ID ...]     (as root, after the build)
#
# Environment: FRAGD_BUILD_DIR (build), FRAGD_KERNEL_CACHE (/var/cache/fragd-kernels),
# FRAGD_KERNEL_TIMEOUT (seconds per guest, 900). Serial logs: $BUILD/kernels/<id>.log.
# Without a kernel package (no network, nothing cached) it fails under CI=true and skips
# with the reason otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BUILD=${FRAGD_BUILD_DIR:-$SRC/build}
CACHE=${FRAGD_KERNEL_CACHE:-/var/cache/fragd-kernels}
TIMEOUT=${FRAGD_KERNEL_TIMEOUT:-900}
OUT="$BUILD/kernels"
WORK=$(mktemp -d /tmp/fragd-kernels.XXXXXX)
QEMU_PID=
GUESTS=()

log() { echo "[test-kernels] $*"; }
die() { echo "[test-kernels] FAIL: $*" >&2; exit 1; }
skip_or_fail() {
	[ "${CI:-}" = true ] && die "$* (CI=true: the kernel matrix must run)"
	echo "[test-kernels] SKIP: $*"
	exit 0
}
cleanup() {
	local rc=$?
	local g f
	# Each guest's qemu (its timeout process) first: its console loop then ends and the guest's
	# run returns; then the runs themselves.
	for f in "$WORK"/*.qemu; do [ -f "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null || true; done
	for g in "${GUESTS[@]}"; do kill -TERM "$g" 2>/dev/null || true; done
	[ ${#GUESTS[@]} -eq 0 ] || wait "${GUESTS[@]}" 2>/dev/null || true  # not errexit: a killed guest exits 143
	rm -rf "$WORK"
	exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

[ "$(id -u)" -eq 0 ] || skip_or_fail "needs root (apt-get download into $CACHE)"
for f in fragd fragctl fragmenter; do [ -x "$BUILD/$f" ] || die "$BUILD/$f missing: run make first"; done
missing=()
for p in qemu-system-x86 busybox-static cpio bpftool curl; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
		skip_or_fail "cannot install ${missing[*]}"
fi
mkdir -p "$CACHE" "$OUT"

# --- the kernels: newest package matching each pattern, downloaded once ----------------
newest() { apt-cache search --names-only "$1" 2>/dev/null | awk '{ print $1 }' | grep -E "$1" | sort -V | tail -1; }
fetch() { # PACKAGE -> prints the extracted tree
	local pkg=$1 dir="$CACHE/$1"
	# A kernel built here (no Debian package has it): tests/kernels/build-<name>.sh builds and caches it.
	if [[ $pkg == build:* ]]; then
		bash "$HERE/build-${pkg#build:}.sh"
		return
	fi
	if [ ! -d "$dir/boot" ]; then
		(cd "$CACHE" && rm -f "${pkg}"_*.deb && apt-get download -q "$pkg" >/dev/null 2>"$WORK/dl.err") || {
			cat "$WORK/dl.err" >&2
			return 1
		}
		rm -rf "$dir.tmp" && dpkg-deb -x "$CACHE/${pkg}"_*.deb "$dir.tmp" && rm -f "$CACHE/${pkg}"_*.deb &&
			rm -rf "$dir.tmp/lib/modules" "$dir.tmp/usr" && mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

# --- the initramfs, one for all kernels ----------------------------------------------
build_initramfs() {
	local root="$WORK/root" bin lib
	mkdir -p "$root"/{bin,etc,proc,sys,dev,run,tmp,usr/sbin}
	cp /bin/busybox "$root/bin/busybox"
	cp "$BUILD/fragd" "$BUILD/fragctl" "$BUILD/fragmenter" "$root/"
	cp "$(command -v bpftool)" "$root/usr/sbin/bpftool"
	# busybox-static's wget crashes on this host (a static glibc): curl reads /metrics.
	cp "$(command -v curl)" "$root/usr/sbin/curl"
	for bin in "$BUILD/fragd" "$BUILD/fragctl" "$BUILD/fragmenter" "$(command -v bpftool)" "$(command -v curl)"; do
		for lib in $(ldd "$bin" | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	done
	cp "$HERE/guest.sh" "$root/init"
	cp "$HERE/guest_setup.sh" "$root/guest_setup.sh"
	# The helpers guest.sh sources, shared with the service guests' suite and the integration tests.
	cp "$SRC/tests/tools/suite_lib.sh" "$root/suite_lib.sh"
	cp "$SRC/configs/fragd.yaml" "$root/etc/fragd-default.yaml"
	chmod 755 "$root/init"
	# Every allocation counted (the counts are compared), no pageblock scan (it reads all of
	# memory under TCG), pools guarded by 64 MiB only (the guest has 2 GiB); order 9 on its own
	# and every mTHP size (metrics:), as the checks compare them with the kernel's.
	sed -e 's/^  allocations: adaptive$/  allocations: exact/' -e 's/^  scan: true$/  scan: false/' \
		-e 's/^  orders: \[1, 4, 9\]$/  orders: [1, 4, 9, 10]/' -e 's/^  detail: \[\]$/  detail: [thp_sizes]/' \
		"$SRC/configs/fragd.yaml" >"$root/etc/fragd-exact.yaml"
	grep -q '^  allocations: exact$' "$root/etc/fragd-exact.yaml" || die "configs/fragd.yaml has no 'allocations: adaptive' line"
	grep -q '^  orders: \[1, 4, 9, 10\]$' "$root/etc/fragd-exact.yaml" || die "configs/fragd.yaml has no 'orders: [1, 4, 9]' line"
	grep -q '^  detail: \[thp_sizes\]$' "$root/etc/fragd-exact.yaml" || die "configs/fragd.yaml has no 'detail: []' line"
	sed -e 's/^mode: observe$/mode: act/' -e 's/^  guard: 1GiB$/  guard: 64MiB/' -e 's/^    enabled: true$/    enabled: false/' \
		"$root/etc/fragd-exact.yaml" >"$root/etc/fragd-act.yaml"
	grep -q '^mode: act$' "$root/etc/fragd-act.yaml" || die "configs/fragd.yaml has no 'mode: observe' line"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$WORK/initramfs.gz"
}

. "$HERE/accel.sh"

# --- one guest ------------------------------------------------------------------------
RESULTS=()
FAILS=0
run_kernel() { # ID PACKAGE MEMORY NODES APPEND
	local id=$1 pkg=$2 mem=$3 want_nodes=$4 append=${5#-} tree vmlinuz serial="$OUT/$1.log" numa_args=() t0 line boot="" end="" rc=0
	tree=$(fetch "$pkg") || { RESULTS+=("$id $pkg: FAIL (download)"); FAILS=$((FAILS + 1)); return; }
	vmlinuz=$(ls "$tree"/boot/vmlinuz-* | head -1)
	if [ "$want_nodes" -gt 1 ]; then
		# One vCPU on each of the first two nodes, any further node memory only.
		local part=$((${mem%G} * 1024 / want_nodes)) n cpus
		for ((n = 0; n < want_nodes; n++)); do
			cpus=; ((n < 2)) && cpus=",cpus=$n"
			numa_args+=(-object "memory-backend-ram,id=m$n,size=${part}M" -numa "node,nodeid=$n$cpus,memdev=m$n")
		done
	fi
	log "$id: booting $(basename "$vmlinuz") ($(accel | cut -d' ' -f2), $mem, $want_nodes node(s)${append:+, $append})"
	t0=${EPOCHREALTIME/./}
	# shellcheck disable=SC2046
	timeout "$TIMEOUT" qemu-system-x86_64 -machine q35 $(accel) -smp 2 -m "$mem" "${numa_args[@]}" \
		-nographic -no-reboot -kernel "$vmlinuz" -initrd "$WORK/initramfs.gz" \
		-append "console=ttyS0 panic=-1 quiet fragd.nodes=$want_nodes${append:+ $append}" </dev/null >"$WORK/$id.raw" 2>&1 &
	QEMU_PID=$!
	echo "$QEMU_PID" >"$WORK/$id.qemu"
	: >"$serial"
	# Stamp each console line with the seconds since qemu started.
	local now
	while IFS= read -r line; do
		line=${line%$'\r'}
		# The console's reset sequence can precede the suite's first line.
		[[ $line == *FRAGD-* ]] && line="FRAGD-${line#*FRAGD-}"
		now=${EPOCHREALTIME/./}
		printf '%4d.%02d %s\n' $(((now - t0) / 1000000)) $(((now - t0) / 10000 % 100)) "$line" >>"$serial"
	done < <(tail -n +1 -s 0.1 -F --pid="$QEMU_PID" "$WORK/$id.raw" 2>/dev/null)
	wait "$QEMU_PID" || rc=$?
	QEMU_PID=
	rm -f "$WORK/$id.qemu"
	[ "$rc" = 124 ] && echo "qemu killed after ${TIMEOUT}s" >>"$serial"

	local kernel nodes online verdict detail="" progs_ok=0 progs_bad=() checks=0 bad=()
	kernel=$(awk '$2 == "FRAGD-KERNEL" { print $3 }' "$serial")
	nodes=$(awk '$2 == "FRAGD-KERNEL" { print $4 }' "$serial")
	online=$(awk '$2 == "FRAGD-KERNEL" { print $5 }' "$serial")
	boot=$(awk '$2 == "FRAGD-KERNEL" { print $1; exit }' "$serial")
	end=$(awk '$2 == "FRAGD-END" { print $1; exit }' "$serial")
	# Programs against the table: each reported one must be listed with the same state, each listed one reported.
	local col
	col=$(awk -v id="$id" '/^# program/ { for (i = 1; i <= NF; i++) if ($i == id) print i - 1 }' "$HERE/programs.tsv")
	[ -n "$col" ] || die "tests/kernels/programs.tsv has no column $id"
	# "-": fragd must not report the program at all (the kernel lacks its tracepoint).
	local want="$WORK/$id.want" got="$WORK/$id.got"
	awk -v c="$col" '!/^#/ && NF && $c != "-" { print $1, $2, $c }' "$HERE/programs.tsv" | sort >"$want"
	awk '$2 == "FRAGD-PROGRAM" { print $3, $4, $5 }' "$serial" | sort >"$got"
	while read -r p tp st; do
		if grep -qx "$p $tp $st" "$want"; then progs_ok=$((progs_ok + 1)); else progs_bad+=("$p($tp)=$st"); fi
	done <"$got"
	while read -r p tp st; do
		grep -q "^$p $tp " "$got" || progs_bad+=("$p($tp) not reported")
	done <"$want"
	local dup
	dup=$(awk '{ print $1, $2 }' "$got" | uniq -d | tr '\n' ' ')
	[ -z "$dup" ] || progs_bad+=("reported more than once: $dup")
	checks=$(awk '$2 == "FRAGD-CHECK"' "$serial" | wc -l)
	mapfile -t bad < <(awk '$2 == "FRAGD-CHECK" && $4 == "FAIL" { $1 = ""; $2 = ""; print substr($0, 3) }' "$serial")
	if [ -z "$kernel" ]; then
		verdict=FAIL detail="the guest printed nothing (see $serial)"
	elif [ "$nodes" != "$want_nodes" ]; then
		# A guest with fewer nodes than its row passes every per-node check on the nodes it has.
		verdict=FAIL detail="the guest has ${nodes:-?} NUMA node(s) (/sys/devices/system/node/online: ${online:-?}), tests/kernels/kernels.tsv asks for $want_nodes"
	elif ! grep -q ' FRAGD-RESULT ' "$serial"; then
		verdict=FAIL detail="the suite did not finish (see $serial)"
	elif [ ${#progs_bad[@]} -gt 0 ] || [ ${#bad[@]} -gt 0 ] || [ ! -s "$got" ]; then
		verdict=FAIL
	else
		verdict=PASS
	fi
	series=$(awk '$2 == "FRAGD-SERIES" { print $3 " series (shipped config, " $4 " zones)" }' "$serial")
	RESULTS+=("$(printf '%-16s %-28s %s: %s, programs %d/%d as expected, %d checks, %s, console at %ss, suite done at %ss' \
		"$id" "${kernel:-?}" "${nodes:-?} node(s)" "$verdict" "$progs_ok" "$(wc -l <"$want")" "$checks" \
		"${series:-series not counted}" "${boot:-?}" "${end:-?}")")
	log "${RESULTS[-1]}"
	[ -n "$detail" ] && log "  $detail"
	for b in "${progs_bad[@]}"; do log "  program not as in programs.tsv: $b"; done
	for b in "${bad[@]}"; do log "  check failed: $b"; done
	[ "$verdict" = PASS ] || FAILS=$((FAILS + 1))
	return 0
}

# --- the matrix -----------------------------------------------------------------------
declare -A PKG MEM NODES APPEND
IDS=()
lineno=0
while read -r id pat mem nodes append; do
	lineno=$((lineno + 1))
	[[ -z $id || $id == \#* ]] && continue
	[[ $nodes =~ ^[1-9][0-9]*$ ]] ||
		die "tests/kernels/kernels.tsv:$lineno: nodes of $id is '${nodes}', not a count of NUMA nodes (1, 2, ...)"
	[[ $mem =~ ^[1-9][0-9]*G$ ]] ||
		die "tests/kernels/kernels.tsv:$lineno: memory of $id is '${mem}', not a size in GiB (2G, 4G, ...)"
	# Kernels built here run only when named (make test-kernels-cma): a fresh machine has no cache.
	[[ $pat == build:* ]] || IDS+=("$id")
	PKG[$id]=$pat MEM[$id]=$mem NODES[$id]=$nodes APPEND[$id]=${append:--}
done <"$HERE/kernels.tsv"
[ $# -gt 0 ] && IDS=("$@")

# Resolve and fetch first: without a kernel package nothing can be tested.
apt-cache search --names-only '^linux-image-6' 2>/dev/null | grep -q . || apt-get update -qq 2>/dev/null || true
declare -A NAME
for id in "${IDS[@]}"; do
	[ -n "${PKG[$id]:-}" ] || die "no kernel '$id' in tests/kernels/kernels.tsv"
	if [[ ${PKG[$id]} == build:* ]]; then
		NAME[$id]=${PKG[$id]}
		fetch "${NAME[$id]}" >/dev/null || die "cannot build the kernel of $id (tests/kernels/build-${PKG[$id]#build:}.sh)"
		continue
	fi
	NAME[$id]=$(newest "${PKG[$id]}")
	if [ -z "${NAME[$id]}" ]; then
		cached=$(ls -d "$CACHE"/* 2>/dev/null | xargs -n1 basename 2>/dev/null | grep -E "${PKG[$id]}" | sort -V | tail -1 || true)
		[ -n "$cached" ] || skip_or_fail "no package matches ${PKG[$id]} (apt-cache) and none is cached in $CACHE"
		NAME[$id]=$cached
	fi
	fetch "${NAME[$id]}" >/dev/null || skip_or_fail "cannot download ${NAME[$id]} and it is not cached in $CACHE"
done
build_initramfs
log "initramfs $(du -h "$WORK/initramfs.gz" | cut -f1); serial logs in $OUT"
T0=$SECONDS
# KERNEL_JOBS guests at once (default 2): each runs on one TCG thread (accel.sh), so two keep
# two cores busy. Each guest's run writes its verdict line to $WORK/<id>.result and its log
# lines to $WORK/<id>.out, printed in the table's order once it is done.
JOBS=${KERNEL_JOBS:-2}
[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "KERNEL_JOBS must be a positive integer, got '$JOBS'"
GUESTS=()
one_guest() { # ID
	local id=$1
	trap '[ -n "$QEMU_PID" ] && kill -TERM "$QEMU_PID" 2>/dev/null; exit 143' TERM
	RESULTS=() FAILS=0
	run_kernel "$id" "${NAME[$id]}" "${MEM[$id]}" "${NODES[$id]}" "${APPEND[$id]}" >"$WORK/$id.out" 2>&1
	[ ${#RESULTS[@]} -gt 0 ] && printf '%s\n' "${RESULTS[@]}" >"$WORK/$id.result"
	[ "$FAILS" -eq 0 ]
}
i=0
for id in "${IDS[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
	one_guest "$id" &
	GUESTS+=($!)
done
wait "${GUESTS[@]}" 2>/dev/null || true
GUESTS=()
for id in "${IDS[@]}"; do
	cat "$WORK/$id.out" 2>/dev/null || true
	if [ -s "$WORK/$id.result" ]; then
		RESULTS+=("$(cat "$WORK/$id.result")")
		grep -q ": PASS, " "$WORK/$id.result" || FAILS=$((FAILS + 1))
	else
		RESULTS+=("$id ${NAME[$id]}: FAIL (no verdict: see $WORK/$id.out above)")
		FAILS=$((FAILS + 1))
	fi
done
echo
echo "kernel matrix ($((SECONDS - T0)) s, $(accel | cut -d' ' -f2)):"
printf '  %s\n' "${RESULTS[@]}"
echo "kernels: $((${#IDS[@]} - FAILS)) passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
