#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test-kernels: fragd on the kernels fleets run, each booted as a qemu guest, KERNEL_JOBS (2) at once.
#
# For each kernel of tests/kernels/kernels.tsv: fetch the Debian package that holds its image
# from the row's suite (apt-get download with an apt state of the matrix's own, so any suite
# is reachable from any host; never installed on this host) into a cache, boot its kernel with a
# small initramfs (busybox-static, build/fragd, build/fragctl, build/fragmenter, bpftool, curl,
# their libraries, tests/kernels/guest.sh as /init, the files it sources: guest_setup.sh and
# tests/tools/suite_lib.sh) and read the guest suite's lines from the serial console: every
# program must attach as tests/kernels/programs.tsv says for that kernel, the guest must have as
# many NUMA nodes online as its row's nodes (the kernel command line tells the guest that count
# as fragd.nodes=N), and every check of guest.sh must pass. One line per kernel, then a summary.
# Under TCG (no usable KVM) timings mean nothing: the guests prove behaviour and counts.
#
#   bash tests/kernels/matrix.sh [ID ... | all]     (as root, after the build)
#
# Without IDs the kernels whose row says "every" (make test-kernels, each CI run); "all" adds
# those that run only when named, but not the kernels built here (make test-kernels-cma).
#
# Environment: FRAGD_BUILD_DIR (build), FRAGD_KERNEL_CACHE (/var/cache/fragd-kernels: the
# kernels, and each suite's apt lists in apt/<suite>), FRAGD_KERNEL_TIMEOUT (seconds per guest,
# 900), FRAGD_DEBIAN_MIRROR (http://deb.debian.org/debian) and FRAGD_DEBIAN_SECURITY
# (http://deb.debian.org/debian-security). Serial logs: $BUILD/kernels/<id>.log.
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
mkdir -p "$CACHE/.locks" "$OUT"

# --- the kernels: the newest of each row's suite, downloaded once ----------------------
# Each Debian suite of kernels.tsv gets an apt state of its own under $CACHE/apt/<suite> (its
# sources list, lists and package cache), so the host's own sources (bookworm here) are neither
# needed nor touched, and no kernel is installed on the host.
MIRROR=${FRAGD_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${FRAGD_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
apt_opts() { # SUITE -> the options of its private apt state, one a line
	local d="$CACHE/apt/$1"
	printf '%s\n' -o "Dir::Etc::SourceList=$d/sources.list" -o Dir::Etc::SourceParts=/nonexistent \
		-o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache" -o Dir::State::Status=/dev/null \
		-o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache= \
		-o Acquire::Languages=none -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false \
		-o APT::Sandbox::User=root
}
apt_update() { # SUITE: its lists brought up to date (kept when the mirror cannot be reached)
	local s=$1 d="$CACHE/apt/$1" key=/usr/share/keyrings/debian-archive-keyring.gpg opts
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	# A release is itself, -updates and -security; backports and sid are one suite each.
	{
		echo "deb [signed-by=$key] $MIRROR $s main"
		if [[ $s != *-backports && $s != sid && $s != unstable ]]; then
			echo "deb [signed-by=$key] $MIRROR $s-updates main"
			echo "deb [signed-by=$key] $SECURITY $s-security main"
		fi
	} >"$d/sources.list"
	mapfile -t opts < <(apt_opts "$s")
	(
		flock 9
		apt-get "${opts[@]}" -q update >"$d/update.log" 2>&1
	) 9>"$d/lock" || log "apt-get update of $s failed (using the lists and kernels already cached): $(grep -E '^(E|W):' "$d/update.log" | head -3 | tr '\n' ' ')"
}
newest() { # SUITE PACKAGE RELEASE-REGEX -> the newest PACKAGE-<release> apt knows in SUITE
	local opts
	mapfile -t opts < <(apt_opts "$1")
	apt-cache "${opts[@]}" search --names-only "^$2-" 2>/dev/null | awk -v p="$2-" 'index($1, p) == 1 { print substr($1, length(p) + 1) }' |
		grep -E "$3" | sort -V | tail -1 | sed "s/^/$2-/" || true
}
fetch() { # SUITE PACKAGE -> prints the extracted tree, its kernel at boot/vmlinuz-<release>
	local suite=$1 pkg=$2 dir="$CACHE/$2" opts img
	# A kernel built here (no Debian package has it): tests/kernels/build-<name>.sh builds and caches it.
	if [[ $suite == build:* ]]; then
		bash "$HERE/build-${suite#build:}.sh"
		return
	fi
	mapfile -t opts < <(apt_opts "$suite")
	(
		flock 9
		[ -d "$dir/boot" ] && exit 0
		cd "$CACHE" && rm -f "${pkg}"_*.deb && apt-get "${opts[@]}" download -q "$pkg" >/dev/null 2>"$WORK/$pkg.err" || {
			cat "$WORK/$pkg.err" >&2
			exit 1
		}
		rm -rf "$dir.tmp" && dpkg-deb -x "$CACHE/${pkg}"_*.deb "$dir.tmp" && rm -f "$CACHE/${pkg}"_*.deb || exit 1
		# Where the package keeps the image: boot/vmlinuz-<release> (linux-image-* up to 6.x),
		# usr/lib/modules/<release>/vmlinuz (linux-binary-*, 7.x). Only the image is kept.
		img=$(ls "$dir.tmp"/boot/vmlinuz-* "$dir.tmp"/usr/lib/modules/*/vmlinuz 2>/dev/null | head -1 || true)
		if [ -z "$img" ]; then
			echo "$pkg holds no kernel image (neither boot/vmlinuz-* nor usr/lib/modules/*/vmlinuz): in its release the image is in another package (tests/kernels/kernels.tsv, column package)" >&2
			rm -rf "$dir.tmp"
			exit 1
		fi
		if [[ $img == */usr/lib/modules/*/vmlinuz ]]; then
			local rel=${img%/vmlinuz}
			mkdir -p "$dir.tmp/boot" && mv "$img" "$dir.tmp/boot/vmlinuz-${rel##*/}"
		fi
		rm -rf "$dir.tmp/lib/modules" "$dir.tmp/usr" && mv "$dir.tmp" "$dir"
	) 9>"$CACHE/.locks/$pkg" || return 1
	echo "$dir"
}

# --- the initramfs, one for all kernels ----------------------------------------------
build_initramfs() {
	local root="$WORK/root" bin lib
	mkdir -p "$root"/{bin,etc,proc,sys,dev,run,tmp,usr/sbin}
	cp /bin/busybox "$root/bin/busybox"
	# Without their debug info, as the package ships them (CPACK_STRIP_FILES): fragd and fragctl
	# are 80 MB each with it, 3.5 and 2.6 MB without, and each guest's kernel unpacks the
	# initramfs under TCG before anything runs: the three gzipped 63 MB with it, 3.8 MB without,
	# and Debian's 6.12 reached /init 14 to 21 s sooner (3 boots each, 2026-12-02, host busy).
	for bin in fragd fragctl fragmenter; do strip --strip-debug -o "$root/$bin" "$BUILD/$bin"; done
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
run_kernel() { # ID TREE MEMORY NODES APPEND
	local id=$1 tree=$2 mem=$3 want_nodes=$4 append=${5#-} vmlinuz serial="$OUT/$1.log" numa_args=() t0 line boot="" end="" rc=0
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
	col=$(awk -v id="$id" '$1 == "#" && $2 == "program" { for (i = 1; i <= NF; i++) if ($i == id) print i - 1 }' "$HERE/programs.tsv")
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
	# The same as a row of $OUT/matrix.md: what the checks compared, in figures.
	local absent
	absent=$(awk -v c="$col" '!/^#/ && NF && $c == "-"' "$HERE/programs.tsv" | wc -l)
	ck() { # CHECK [SED-EXPR]: "ok"/"FAIL" and the figures the expression takes from its detail
		awk -v n="$1" '$2 == "FRAGD-CHECK" && $3 == n { s = $4; $1 = $2 = $3 = $4 = ""; print s "\t" substr($0, 5); exit }' "$serial" |
			{ IFS=$'\t' read -r st d && echo "$st${2:+ $(sed -E "$2" <<<"$d")}" || echo "not run"; }
	}
	printf '| %s | %s | %s | %d of %d attached%s | %s | %s | %s | %d, %d failed | %ss | %s |\n' "$id" "${kernel:-?}" "${nodes:-?}" \
		"$(awk '$3 == 1' "$got" | wc -l)" "$(wc -l <"$want")" "$([ "$absent" -gt 0 ] && echo ", $absent absent (no tracepoint)")" \
		"$(ck alloc_counts 's/fragd counted ([0-9]+) .*the pool grew ([0-9]+).*/\1 \/ \2/')" \
		"$(ck stall_entries 's/fragd ([0-9]+) direct .*compact_stall \+([0-9]+).*/\1 \/ \2/')" \
		"compact $(ck compact 's/.*score ([0-9]+ -> [0-9]+).*/(score \1)/;t;s/.*//'), pool $(ck pool_node)$([ "$want_nodes" -gt 1 ] &&
			echo ", node 1 alone compacted $(ck numa_compact), pooled $(ck numa_pool), guard $(ck numa_guard), bound task $(ck numa_guard_bound 's/.*(oom_kill [0-9]+ -> [0-9]+).*/(\1)/')")" \
		"$checks" "${#bad[@]}" "${end:-?}" "$verdict$([ "$verdict" = PASS ] || echo ": ${detail:-${progs_bad[*]:+programs not as listed: ${progs_bad[*]}; }checks failed: $(awk '$2 == "FRAGD-CHECK" && $4 == "FAIL" { printf "%s ", $3 }' "$serial")}")" >"$WORK/$id.md"
	for b in "${progs_bad[@]}"; do log "  program not as in programs.tsv: $b"; done
	for b in "${bad[@]}"; do log "  check failed: $b"; done
	[ "$verdict" = PASS ] || FAILS=$((FAILS + 1))
	return 0
}

# --- the matrix -----------------------------------------------------------------------
declare -A SUITE PKG REL MEM NODES APPEND
IDS=() ALL=()
lineno=0
while read -r id runs suite pkg rel mem nodes append; do
	lineno=$((lineno + 1))
	[[ -z $id || $id == \#* ]] && continue
	where="tests/kernels/kernels.tsv:$lineno: $id"
	[[ $runs == every || $runs == named ]] || die "$where: runs is '${runs}', not every or named"
	[[ $suite == build:* && $runs == every ]] && die "$where: a kernel built here runs only when named (a fresh machine has no cache)"
	[[ $suite =~ ^[a-z]+(-[a-z]+)?$ || $suite == build:* ]] ||
		die "$where: suite is '${suite}', not a Debian suite (bookworm, trixie-backports, sid, ...) or build:NAME"
	if [[ $suite == build:* ]]; then
		[[ $pkg == - && $rel == - ]] || die "$where: a kernel built here (build:NAME) has package and release '-'"
	else
		[[ $pkg == linux-image || $pkg == linux-binary ]] ||
			die "$where: package is '${pkg}', not linux-image or linux-binary (the package that holds the kernel image)"
		[[ $rel == ^*$ ]] || die "$where: release is '${rel}', not an anchored regex (^...$) over the kernel release"
	fi
	[[ $nodes =~ ^[1-9][0-9]*$ ]] || die "$where: nodes is '${nodes}', not a count of NUMA nodes (1, 2, ...)"
	[[ $mem =~ ^[1-9][0-9]*G$ ]] || die "$where: memory is '${mem}', not a size in GiB (2G, 4G, ...)"
	[[ $runs == every ]] && IDS+=("$id")
	[[ $suite == build:* ]] || ALL+=("$id")
	SUITE[$id]=$suite PKG[$id]=$pkg REL[$id]=$rel MEM[$id]=$mem NODES[$id]=$nodes APPEND[$id]=${append:--}
done <"$HERE/kernels.tsv"
# Named kernels instead of the every-run ones; "all": every kernel Debian ships in the table.
if [ $# -gt 0 ]; then
	IDS=()
	for a; do if [ "$a" = all ]; then IDS+=("${ALL[@]}"); else IDS+=("$a"); fi; done
fi
for id in "${IDS[@]}"; do [ -n "${SUITE[$id]:-}" ] || die "no kernel '$id' in tests/kernels/kernels.tsv"; done

# Resolve and fetch first: without a kernel package nothing can be tested. The suites' lists
# are brought up to date side by side (a few seconds; about 30 MB the first time), then each row takes
# the newest package of its suite whose release matches, downloaded once into $CACHE.
T_FETCH=$SECONDS
declare -A UPDATED
for id in "${IDS[@]}"; do
	s=${SUITE[$id]}
	[[ $s == build:* || -n ${UPDATED[$s]:-} ]] && continue
	UPDATED[$s]=1
	apt_update "$s" &
done
wait
declare -A NAME TREE
for id in "${IDS[@]}"; do
	[[ ${SUITE[$id]} == build:* ]] && continue
	NAME[$id]=$(newest "${SUITE[$id]}" "${PKG[$id]}" "${REL[$id]}")
	if [ -z "${NAME[$id]}" ]; then
		# No list (no network): the newest such kernel already cached.
		cached=$(cd "$CACHE" && for d in "${PKG[$id]}"-*/; do d=${d%/}; [ -d "$d/boot" ] && echo "${d#"${PKG[$id]}"-}"; done |
			grep -E "${REL[$id]}" | sort -V | tail -1 || true)
		[ -n "$cached" ] || skip_or_fail "$id: no ${PKG[$id]}-* package of ${SUITE[$id]} matches ${REL[$id]} (see $CACHE/apt/${SUITE[$id]}/update.log) and none is cached in $CACHE"
		NAME[$id]=${PKG[$id]}-$cached
	fi
done
# The downloads side by side (each package once, under its own lock), then each row's tree: a
# download that failed is tried once more there, and its error shown.
declare -A FETCHING
for id in "${IDS[@]}"; do
	[[ ${SUITE[$id]} == build:* || -n ${FETCHING[${NAME[$id]}]:-} ]] && continue
	FETCHING[${NAME[$id]}]=1
	fetch "${SUITE[$id]}" "${NAME[$id]}" >/dev/null 2>&1 &
done
wait
for id in "${IDS[@]}"; do
	if [[ ${SUITE[$id]} == build:* ]]; then
		NAME[$id]=${SUITE[$id]}
		TREE[$id]=$(fetch "${SUITE[$id]}" -) || die "cannot build the kernel of $id (tests/kernels/build-${SUITE[$id]#build:}.sh)"
		continue
	fi
	TREE[$id]=$(fetch "${SUITE[$id]}" "${NAME[$id]}") || skip_or_fail "no kernel image from ${NAME[$id]} (${SUITE[$id]}; why is above) and none cached in $CACHE"
done
log "kernels resolved and fetched in $((SECONDS - T_FETCH)) s: $(for id in "${IDS[@]}"; do printf '%s=%s ' "$id" "${NAME[$id]}"; done)"
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
	run_kernel "$id" "${TREE[$id]}" "${MEM[$id]}" "${NODES[$id]}" "${APPEND[$id]}" >"$WORK/$id.out" 2>&1
	[ ${#RESULTS[@]} -gt 0 ] && printf '%s\n' "${RESULTS[@]}" >"$WORK/$id.result"
	[ "$FAILS" -eq 0 ]
}
# Guests with more nodes first: the 2-node guest runs the most steps, and started last it
# would run alone while the other core idles.
mapfile -t ORDER < <(for id in "${IDS[@]}"; do echo "${NODES[$id]} $id"; done | sort -s -k1,1nr | cut -d' ' -f2)
for id in "${ORDER[@]}"; do
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
# The run as a table for RELIABILITY.md "Kernel matrix": every figure from the guests' lines.
{
	echo "\`${CI:+CI=$CI }bash tests/kernels/matrix.sh${*:+ $*}\` on $(date -u +%F), $(accel | cut -d' ' -f2), $((SECONDS - T0)) s for the guests, $((${#IDS[@]} - FAILS)) of ${#IDS[@]} passed:"
	echo
	echo "| kernel | release | nodes | programs | order-9 allocations: fragd / pool growth | direct compactions: fragd / compact_stall | act mode | checks | suite done | verdict |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for id in "${IDS[@]}"; do cat "$WORK/$id.md" 2>/dev/null || echo "| $id | ${NAME[$id]} | | | | | | | | FAIL (no verdict) |"; done
} >"$OUT/matrix.md"
echo "as a table: $OUT/matrix.md"
[ "$FAILS" -eq 0 ]
