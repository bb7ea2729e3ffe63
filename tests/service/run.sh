#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test-service: fragd as its users run it, a systemd service from its .deb, on each
# supported Debian release booted for real with systemd as PID 1.
#
# For each release (bookworm = Debian 12, trixie = Debian 13): mmdebstrap makes a minbase
# system with systemd-sysv and curl, and apt installs fragd into it (apt resolves its
# Depends): first the previous release (tests/service/previous-release: its version and tagged
# commit; its package built from that commit by the commit's own scripts/build-deb.sh, kept in
# FRAGD_SERVICE_CACHE/previous/<commit>/), which the suite upgrades to the package under test
# ($BUILD/deb/<release>/, made by `make deb` in a clean chroot of that release). The release's own stock kernel (its
# linux-image-cloud-amd64, taken from its archive, never installed here) boots the whole
# system as an initramfs under qemu; tests/service/guest-check.sh runs in it as a unit after
# fragd.service and prints its checks on the serial console. The root file systems are made one
# after the other, then every guest boots at once (one TCG thread each). On the host: every check must
# pass, and the /metrics body the guest printed must pass `promtool check metrics`.
#
#   bash tests/service/run.sh [RELEASE ...]     (as root, after make deb)
#
# Environment: FRAGD_BUILD_DIR (build), FRAGD_SERVICE_CACHE (/var/cache/fragd-service: apt's
# downloads and the kernels), FRAGD_SERVICE_TIMEOUT (seconds per guest, 1500). Serial logs:
# $BUILD/service/<release>.log. Under TCG (no usable KVM) timings mean nothing.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BUILD=${FRAGD_BUILD_DIR:-$SRC/build}
BUILD=$(cd "$BUILD" && pwd)
CACHE=${FRAGD_SERVICE_CACHE:-/var/cache/fragd-service}
TIMEOUT=${FRAGD_SERVICE_TIMEOUT:-1500}
OUT="$BUILD/service"
WORK=$(mktemp -d /tmp/fragd-service.XXXXXX)

log() { echo "[test-service] $*"; }
die() { echo "[test-service] FAIL: $*" >&2; exit 1; }
skip_or_fail() {
	[ "${CI:-}" = true ] && die "$* (CI=true: the service guests must run)"
	echo "[test-service] SKIP: $*"
	exit 0
}
cleanup() {
	local rc=$? pid
	# The guests' qemu processes, each recorded by the background job that started it.
	for pid in $(cat "$WORK"/*/qemu.pid 2>/dev/null); do kill -TERM "$pid" 2>/dev/null; done
	# A previous release's build still under way (build-deb.sh ends its namespaces on SIGTERM).
	for pid in "${pids[@]}"; do pkill -TERM -P "$pid" 2>/dev/null || true; kill -TERM "$pid" 2>/dev/null || true; done
	wait 2>/dev/null
	rm -rf "$WORK"
	exit $rc
}
pids=()
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

[ "$(id -u)" -eq 0 ] || skip_or_fail "needs root (mmdebstrap, qemu)"
[ -x "$BUILD/fragmenter" ] || die "$BUILD/fragmenter missing: run make first"
missing=()
for p in qemu-system-x86 cpio mmdebstrap prometheus; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]}"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
		skip_or_fail "cannot install ${missing[*]}"
fi
mkdir -p "$CACHE" "$OUT"

. "$HERE/../kernels/accel.sh"

# 0. The previous release's package for each release, built from its commit (a clone of this
# repository at it), both releases at once; kept per commit, so a later run builds nothing.
read -r PREV_VERSION PREV_COMMIT < <(grep -v '^#' "$HERE/previous-release")
git -C "$SRC" cat-file -e "$PREV_COMMIT^{commit}" 2>/dev/null ||
	die "the previous release's commit $PREV_COMMIT (v$PREV_VERSION, tests/service/previous-release) is not in $SRC: a shallow clone? (git fetch --unshallow)"
if tagged=$(git -C "$SRC" rev-parse -q --verify "refs/tags/v$PREV_VERSION^{commit}"); then
	[ "$tagged" = "$PREV_COMMIT" ] || die "tag v$PREV_VERSION is $tagged, tests/service/previous-release says $PREV_COMMIT"
fi
PREV_DIR="$CACHE/previous/$PREV_COMMIT"
build_previous() { # RELEASE
	local rel=$1 src="$WORK/previous-src-$1" t0=$SECONDS
	ls "$PREV_DIR/$rel"/fragd_"$PREV_VERSION"+deb*_amd64.deb >/dev/null 2>&1 && return 0
	git clone -q --shared --no-checkout "$SRC" "$src" && git -C "$src" checkout -q --detach "$PREV_COMMIT" || return 1
	bash "$src/scripts/build-deb.sh" "$rel" "$WORK/previous-$rel" >"$WORK/previous-$rel.log" 2>&1 || return 1
	mkdir -p "$PREV_DIR/$rel" && cp "$WORK/previous-$rel"/fragd_*_amd64.deb "$PREV_DIR/$rel/"
	rm -rf "$src"
	log "$rel: fragd $PREV_VERSION built from $PREV_COMMIT in $((SECONDS - t0)) s"
}

# 1. Each release's root file system, one after the other (apt's downloads, the CPU of cpio).
prepare_release() { # RELEASE
	local rel=$1 deb version prev prev_version root t0
	deb=$(ls "$BUILD/deb/$rel"/fragd_*_amd64.deb 2>/dev/null | head -1)
	[ -n "$deb" ] || die "no package for $rel in $BUILD/deb/$rel: run make deb (SUITES=$rel)"
	version=$(dpkg-deb -f "$deb" Version)
	if [ -n "${FRAGD_SERVICE_UNIT:-}" ]; then
		# A fault on purpose: the package under test with another unit (e.g. an older one) in place of its own.
		rm -rf "$WORK/alt" && dpkg-deb -R "$deb" "$WORK/alt"
		[ -f "$WORK/alt/usr/lib/systemd/system/fragd.service" ] || die "$deb has no /usr/lib/systemd/system/fragd.service"
		install -m 0644 "$FRAGD_SERVICE_UNIT" "$WORK/alt/usr/lib/systemd/system/fragd.service"
		(cd "$WORK/alt" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | xargs -0 md5sum >DEBIAN/md5sums)
		mkdir -p "$WORK/alt-deb" && dpkg-deb --root-owner-group -Zxz -b "$WORK/alt" "$WORK/alt-deb/$(basename "$deb")" >/dev/null
		deb="$WORK/alt-deb/$(basename "$deb")"
		rm -rf "$WORK/alt"
		log "$rel: FRAGD_SERVICE_UNIT=$FRAGD_SERVICE_UNIT replaces the package's unit"
	fi
	# The previous release, which the suite upgrades from.
	prev=$(ls "$PREV_DIR/$rel"/fragd_*_amd64.deb | head -1)
	cp "$prev" "$WORK/" && prev="$WORK/$(basename "$prev")"  # mmdebstrap's hook copies it from $WORK
	prev_version=$(dpkg-deb -f "$prev" Version)
	dpkg --compare-versions "$prev_version" lt "$version" ||
		die "$rel: the previous release's $prev_version does not sort before $version: move CMakeLists.txt's version on"

	root="$WORK/$rel/root"
	mkdir -p "$WORK/$rel" "$CACHE/$rel/archives" "$CACHE/kernels"
	t0=$SECONDS
	log "$rel: root file system (mmdebstrap minbase + systemd-sysv, curl, kmod, fragd $prev_version by apt)"
	# apt's downloads are kept in $CACHE/<release>/archives between runs (mmdebstrap's sync-in/out).
	mmdebstrap --variant=minbase --quiet --skip=essential/unlink \
		--include="systemd-sysv,curl,kmod,$prev" \
		--setup-hook="mkdir -p \"\$1$WORK\" && cp '$prev' \"\$1$prev\"" \
		--setup-hook="mkdir -p \"\$1/var/cache/apt/archives\"" \
		--setup-hook="sync-in '$CACHE/$rel/archives' /var/cache/apt/archives" \
		--customize-hook="sync-out /var/cache/apt/archives '$CACHE/$rel/archives'" \
		--customize-hook="rm -rf \"\$1$WORK\" \"\$1\"/var/cache/apt/archives/*.deb" \
		--customize-hook="bash '$HERE/customize.sh' \"\$1\" '$deb' '$BUILD/fragmenter' '$CACHE/kernels'" \
		"$rel" "$root" >"$WORK/$rel/mmdebstrap.log" 2>&1 ||
		{ tail -30 "$WORK/$rel/mmdebstrap.log" >&2; die "$rel: mmdebstrap failed (above)"; }
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$WORK/$rel/initrd.gz"
	rm -rf "$root"
	echo $((SECONDS - t0)) >"$WORK/$rel/rootfs.seconds"
	log "$rel: root file system in $((SECONDS - t0)) s, initramfs $(du -h "$WORK/$rel/initrd.gz" | cut -f1), kernel $(cat "$WORK/$rel/kernel-package")"
}

# 2. The guests, all at once (one TCG thread each); each writes its verdict into $WORK/<release>/.
boot_release() { # RELEASE
	local rel=$1 kpkg t1 t2 serial="$OUT/$1.log" rc=0 line now qemu
	kpkg=$(cat "$WORK/$rel/kernel-package")
	t1=$SECONDS
	log "$rel: booting $kpkg ($(accel | cut -d" " -f2), 2G)"

	# shellcheck disable=SC2046
	timeout "$TIMEOUT" qemu-system-x86_64 -machine q35 $(accel) -smp 2 -m 2G \
		-device virtio-balloon-pci,free-page-reporting=on \
		-nographic -no-reboot -kernel "$CACHE/kernels/$kpkg/vmlinuz" -initrd "$WORK/$rel/initrd.gz" \
		-append "console=ttyS0 rdinit=/sbin/init panic=-1 quiet loglevel=3 systemd.show_status=0" \
		</dev/null >"$WORK/$rel/raw" 2>&1 &
	qemu=$!
	echo "$qemu" >"$WORK/$rel/qemu.pid"
	: >"$serial"
	local q0=${EPOCHREALTIME/./}
	while IFS= read -r line; do
		line=${line%$'\r'}
		[[ $line == *FRAGD-* ]] && line="FRAGD-${line#*FRAGD-}"
		now=${EPOCHREALTIME/./}
		printf '%4d.%02d %s\n' $(((now - q0) / 1000000)) $(((now - q0) / 10000 % 100)) "$line" >>"$serial"
	done < <(tail -n +1 -s 0.2 -F --pid="$qemu" "$WORK/$rel/raw" 2>/dev/null)
	wait "$qemu" || rc=$?
	rm -f "$WORK/$rel/qemu.pid"
	[ "$rc" = 124 ] && echo "qemu killed after ${TIMEOUT}s" >>"$serial"
	t2=$SECONDS

	local system verdict=PASS checks bad=() first end prom
	system=$(awk '$2 == "FRAGD-SYSTEM" { $1 = ""; $2 = ""; print substr($0, 3); exit }' "$serial")
	first=$(awk '$2 == "FRAGD-SYSTEM" { print $1; exit }' "$serial")
	end=$(awk '$2 == "FRAGD-END" { print $1; exit }' "$serial")
	checks=$(awk '$2 == "FRAGD-CHECK"' "$serial" | wc -l)
	mapfile -t bad < <(awk '$2 == "FRAGD-CHECK" && $4 == "FAIL" { $1 = ""; $2 = ""; print substr($0, 3) }' "$serial")
	# Exactly the checks guest-check.sh makes, each once: one that was never printed (the suite
	# took another path, or stopped) fails the run as a failed check does.
	local want got
	want=$(grep -oE '^check [a-z_0-9]+' "$HERE/guest-check.sh" | awk '{ print $2 }' | sort)
	got=$(awk '$2 == "FRAGD-CHECK" { print $3 }' "$serial" | sort)
	if [ "$want" != "$got" ]; then
		bad+=("the checks printed are not guest-check.sh's $(wc -l <<<"$want"): missing $(comm -23 <(echo "$want") <(sort -u <<<"$got") | tr '\n' ' ')extra or repeated $(comm -13 <(echo "$want") <(echo "$got") | tr '\n' ' ')")
	fi
	# The metrics the guest scraped under the unit, checked by the host's promtool.
	awk '$2 == "FRAGD-METRICS" { print $3 }' "$serial" | base64 -d 2>/dev/null | gunzip >"$WORK/$rel/metrics.prom" 2>/dev/null || true
	if [ ! -s "$WORK/$rel/metrics.prom" ]; then
		bad+=("promtool: the guest printed no /metrics body")
	elif ! prom=$(promtool check metrics <"$WORK/$rel/metrics.prom" 2>&1); then
		bad+=("promtool check metrics: $(head -3 <<<"$prom" | tr '\n' ' ')")
	else
		checks=$((checks + 1))
	fi
	if [ -z "$system" ]; then
		verdict=FAIL bad+=("the guest's suite printed nothing (see $serial)")
	elif ! grep -q ' FRAGD-RESULT ' "$serial"; then
		verdict=FAIL bad+=("the suite did not finish (see $serial)")
	elif [ ${#bad[@]} -gt 0 ]; then
		verdict=FAIL
	fi
	printf '%-9s %-40s %s: %d checks, %d failed; root fs %d s, guest %d s (suite began at %ss, ended at %ss)\n' \
		"$rel" "${system:-?}" "$verdict" "$checks" "${#bad[@]}" "$(cat "$WORK/$rel/rootfs.seconds")" $((t2 - t1)) \
		"${first:-?}" "${end:-?}" >"$WORK/$rel/result"
	for b in "${bad[@]}"; do echo "  failed: $b"; done >>"$WORK/$rel/result"
	[ "$verdict" = PASS ] && touch "$WORK/$rel/passed"
	rm -f "$WORK/$rel/initrd.gz"
	return 0
}

RELEASES=("$@")
[ ${#RELEASES[@]} -gt 0 ] || RELEASES=(bookworm trixie)
T0=$SECONDS
for rel in "${RELEASES[@]}"; do build_previous "$rel" & pids+=($!); done
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || { tail -30 "$WORK/previous-${RELEASES[$i]}.log" >&2 2>/dev/null; die "${RELEASES[$i]}: building fragd $PREV_VERSION from $PREV_COMMIT failed (above)"; }
done
for rel in "${RELEASES[@]}"; do prepare_release "$rel"; done
T1=$SECONDS
for rel in "${RELEASES[@]}"; do boot_release "$rel" & done
wait
FAILS=0
echo
echo "service guests ($((SECONDS - T0)) s: root file systems $((T1 - T0)) s, then the guests at once $((SECONDS - T1)) s; $(accel | cut -d' ' -f2)):"
for rel in "${RELEASES[@]}"; do
	sed 's/^/  /' "$WORK/$rel/result" 2>/dev/null || echo "  $rel: no result (the guest's job died)"
	[ -e "$WORK/$rel/passed" ] || FAILS=$((FAILS + 1))
done
echo "service: $((${#RELEASES[@]} - FAILS)) passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
