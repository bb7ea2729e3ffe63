#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragd's .deb for one supported Debian release, built in a clean chroot of that release and
# checked by that release's lintian (make deb runs it for each of SUITES).
#
#   scripts/build-deb.sh SUITE OUT_DIR        SUITE: bookworm (Debian 12) or trixie (Debian 13)
#
# 1. chroot: mmdebstrap makes a buildd chroot of SUITE with fragd's build dependencies, dpkg-dev,
#    file (cpack's dpkg-shlibdeps) and lintian, installed by apt from Debian's mirror. It is kept
#    as a tarball, FRAGD_DEB_CACHE/SUITE-<hash>.tar (default /var/cache/fragd-build), the hash
#    that of the mmdebstrap command that makes it (suite, variant, package list, hooks): a later
#    run unpacks it and downloads nothing. A changed recipe, FRAGD_DEB_REFRESH=1 or a tarball older
#    than FRAGD_DEB_CACHE_DAYS (30) days (a point release's toolchain and lintian) makes it anew.
# 2. source: the files `git ls-files` lists, as they are in the work tree (uncommitted edits
#    included, untracked files not), are copied into the chroot.
# 3. configure, build, cpack: cmake with FRAGD_BUILD_TESTS=OFF (no tests, no test tools, no
#    GoogleTest) and FRAGD_DEB_VERSION_SUFFIX=+debN (cmake/Install.cmake: 0.1.1+deb12 on
#    bookworm, 0.1.1+deb13 on trixie), then `cpack -G DEB`: fragd_<version>_<arch>.deb. The
#    compilers run under ccache, whose cache, FRAGD_DEB_CACHE/ccache-SUITE, is moved into the
#    chroot for the build and back out after: a rebuild compiles only what changed.
# 4. lintian: that release's lintian on the .deb, as an unprivileged user; any error or warning
#    fails the build (--fail-on error,warning); its output goes to OUT_DIR/lintian.txt.
# The .deb is copied to OUT_DIR, with build.log (cmake, the compiler, cpack) and build-deb.txt
# (version, size, Depends, each phase's seconds). Prints how long each phase took.
#
# Needs root (mmdebstrap's root mode, chroot) and mmdebstrap (scripts/install-deps.sh installs it).
# Every command in the chroot runs in namespaces of its own (mount, PID, network, UTS, IPC:
# unshare) as the user builder: /proc is mounted in the chroot inside that mount namespace only,
# nothing there reaches the network, and when the command ends, or this script exits or is
# stopped (SIGINT, SIGTERM: it kills the PID namespace's init), the namespaces go, with every
# process and mount in them. The unpacked chroot is removed on exit, whatever the outcome.
set -euo pipefail
usage="usage: build-deb.sh SUITE OUT_DIR (SUITE: bookworm or trixie)"
SUITE=${1:?$usage}
OUT_ARG=${2:?$usage}
say() { echo "[build-deb $SUITE] $*"; }
die() { echo "[build-deb $SUITE] ERROR: $*" >&2; exit 1; }

# The release's number gives the version suffix (cmake/Install.cmake says why +debN).
case $SUITE in
  bookworm) RELEASE=12 ;;
  trixie) RELEASE=13 ;;
  *) die "unsupported suite '$SUITE'; $usage" ;;
esac
[ "$(id -u)" -eq 0 ] || die "needs root (mmdebstrap's root mode, chroot, unshare)"
for tool in mmdebstrap git unshare tar sha256sum flock; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh installs what make deb needs)"
done
SRC=$(cd "$(dirname "$0")/.." && pwd)
git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1 || die "$SRC is not a git work tree (the source is what git ls-files lists)"
mkdir -p "$OUT_ARG"
OUT=$(cd "$OUT_ARG" && pwd)
CACHE=${FRAGD_DEB_CACHE:-/var/cache/fragd-build}
CACHE_DAYS=${FRAGD_DEB_CACHE_DAYS:-30}
JOBS=${JOBS:-$(nproc)}
SUFFIX="+deb$RELEASE"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
T_START=$(now)
PHASES=()  # "name seconds"
phase_done() { PHASES+=("$1 $2"); say "$1: $2 s${3:+ ($3)}"; }

# --- the chroot's recipe -----------------------------------------------------------------------
# The same package names on bookworm and trixie (prometheus-cpp-dev on both; trixie has no
# libprometheus-cpp-dev). The buildd variant brings build-essential (gcc, g++, make, dpkg-dev)
# and apt. clang and bpftool build the BPF objects (cmake/BpfObject.cmake; no other LLVM tool
# is used); libcairo2-dev for fragctl's cairo headers; libprotobuf-dev, protobuf-compiler and
# golang-github-prometheus-client-model-dev (its metrics.proto) for the protobuf exposition of
# /metrics; file, which cpack's DEB generator needs to
# find the ELF files it gives dpkg-shlibdeps; util-linux for setpriv.
PACKAGES=(
  cmake pkg-config clang bpftool libbpf-dev libelf-dev zlib1g-dev
  prometheus-cpp-dev libcivetweb-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libsystemd-dev libcap-dev libcairo2-dev
  libprotobuf-dev protobuf-compiler golang-github-prometheus-client-model-dev
  dpkg-dev file lintian util-linux ccache
)
# The unprivileged user that builds and runs lintian (no passwd package in the buildd variant:
# the entries are written directly). Manual pages, info, documentation (but the copyright files)
# and translations are left out of the chroot: a smaller tarball, unpacked faster.
USER_HOOK='echo "builder:x:1000:1000:fragd build:/build:/bin/sh" >>"$1/etc/passwd" && echo "builder:x:1000:" >>"$1/etc/group"'
MM_ARGS=(
  --variant=buildd --mode=root --format=tar
  --include="$(IFS=,; echo "${PACKAGES[*]}")"
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  --customize-hook="$USER_HOOK"
  "$SUITE"
)
HASH=$(printf '%s\n' "${MM_ARGS[@]}" | sha256sum | cut -c1-16)
TARBALL="$CACHE/$SUITE-$HASH.tar"

WORK=""
CHILD=""
# Ends the command running in the chroot, if one is, and every process in its PID namespace:
# SIGKILL to the namespace's init (unshare's child) kills them all, and unshare then exits.
# (unshare ignores SIGTERM while it waits, and the parent-death signal of --kill-child does not
# outlive setpriv's change of user.)
stop_child() {
  [ -n "$CHILD" ] || return 0
  local init
  init=$(cat /proc/"$CHILD"/task/"$CHILD"/children 2>/dev/null || true)
  if [ -n "$init" ]; then
    kill -KILL $init 2>/dev/null || true
  else
    kill -KILL "$CHILD" 2>/dev/null || true  # not forked yet: --kill-child takes its child too
  fi
  wait "$CHILD" 2>/dev/null || true
  CHILD=""
}
cleanup() {
  local rc=$?
  set +e
  stop_child
  rm -f "$CACHE/.$SUITE-$HASH.tar.tmp.$$"
  if [ -n "$WORK" ] && [ -d "$WORK/root/build/.ccache" ] && [ ! -e "$CACHE/ccache-$SUITE" ]; then
    mv "$WORK/root/build/.ccache" "$CACHE/ccache-$SUITE"
  fi
  # Nothing is mounted under WORK in this mount namespace (/proc was in the command's own).
  if [ -n "$WORK" ] && [ -d "$WORK" ]; then
    if grep -q " $WORK/" /proc/self/mounts; then
      echo "[build-deb $SUITE] ERROR: something is mounted under $WORK; left in place" >&2
    else
      rm -rf --one-file-system "$WORK" || echo "[build-deb $SUITE] ERROR: could not remove $WORK" >&2
    fi
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- phase 1: the chroot, from the cache or made anew ------------------------------------------
mkdir -p "$CACHE"
rm -f "$OUT/mmdebstrap.log"
exec 9>"$CACHE/$SUITE.lock"
flock 9  # two builds of one suite make its tarball once
t=$(now)
if [ "${FRAGD_DEB_REFRESH:-0}" = 1 ] || [ ! -s "$TARBALL" ] || [ -n "$(find "$TARBALL" -mtime +"$CACHE_DAYS")" ]; then
  say "making the $SUITE chroot with mmdebstrap (cache $TARBALL)"
  tmp="$CACHE/.$SUITE-$HASH.tar.tmp.$$"
  mmdebstrap --quiet "${MM_ARGS[@]}" "$tmp" >"$OUT/mmdebstrap.log" 2>&1 ||
    { tail -n 40 "$OUT/mmdebstrap.log" >&2; die "mmdebstrap failed (above; all of it in $OUT/mmdebstrap.log)"; }
  [ -s "$OUT/mmdebstrap.log" ] || rm -f "$OUT/mmdebstrap.log"
  mv "$tmp" "$TARBALL"
  # Only the tarball of the current recipe is kept.
  find "$CACHE" -maxdepth 1 -name "$SUITE-*.tar" ! -name "$(basename "$TARBALL")" -delete
  how="made, $(( $(stat -c %s "$TARBALL") / 1000000 )) MB cached"
else
  how="cached, $(( ($(date +%s) - $(stat -c %Y "$TARBALL")) / 86400 )) days old"
fi
T_CHROOT_MAKE=$(secs "$t")
t=$(now)
WORK=$(mktemp -d /var/tmp/fragd-deb-"$SUITE".XXXXXX)
ROOT="$WORK/root"
mkdir "$ROOT"
tar -xf "$TARBALL" -C "$ROOT"
flock -u 9
exec 9>&-
T_UNPACK=$(secs "$t")
[ -c "$ROOT/dev/null" ] || die "the chroot has no /dev/null (mmdebstrap's tarball should carry the device nodes)"
phase_done chroot "$(awk -v a="$T_CHROOT_MAKE" -v b="$T_UNPACK" 'BEGIN { printf "%.1f", a + b }')" \
  "$how; unpacked in $T_UNPACK s"

# Runs "$@" in the chroot as builder, in a mount, PID, network, UTS and IPC namespace of its own.
in_chroot() {
  unshare --mount --pid --net --uts --ipc --fork --kill-child --mount-proc="$ROOT/proc" \
    chroot "$ROOT" /usr/bin/setpriv --reuid=builder --regid=builder --clear-groups \
    /usr/bin/env -i HOME=/build PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 TMPDIR=/tmp \
    SOURCE_DATE_EPOCH="$EPOCH" CCACHE_DIR=/build/.ccache CCACHE_MAXSIZE=2G \
    CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache "$@" &
  CHILD=$!
  local rc=0
  wait "$CHILD" || rc=$?
  CHILD=""
  return "$rc"
}

# --- phase 2: the source -----------------------------------------------------------------------
t=$(now)
mkdir -p "$ROOT/build/src"
# Tracked files as they are in the work tree; one deleted but not yet committed is left out.
git -C "$SRC" ls-files -z | while IFS= read -r -d '' f; do
  if [ -e "$SRC/$f" ] || [ -L "$SRC/$f" ]; then printf '%s\0' "$f"; fi
done | tar -C "$SRC" --null -T - -cf - | tar -C "$ROOT/build/src" -xf -
# The release's compiler cache (ccache, kept beside the chroot tarball) moves into the chroot for
# the build and back out after, whatever the outcome: a rebuild compiles only what changed.
CCACHE_HOST="$CACHE/ccache-$SUITE"
mkdir -p "$CCACHE_HOST"
mv "$CCACHE_HOST" "$ROOT/build/.ccache"
chown -R 1000:1000 "$ROOT/build"
# The package's files are dated no later than the last commit (CPack and gzip -n honour it).
EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$SRC" log -1 --format=%ct)}
phase_done source "$(secs "$t")" "$(git -C "$SRC" ls-files | wc -l) files; $(git -C "$SRC" status --porcelain --untracked-files=no | wc -l) with uncommitted changes"

LOG="$OUT/build.log"
: >"$LOG"
step() {  # step NAME COMMAND...: runs it in the chroot, its output in build.log
  local name=$1 t rc=0
  shift
  t=$(now)
  echo "### $name: $*" >>"$LOG"
  in_chroot "$@" >>"$LOG" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    tail -n 60 "$LOG" >&2
    die "$name failed (exit $rc; above, all of it in $LOG)"
  fi
  phase_done "$name" "$(secs "$t")"
}

# --- phase 3: configure, build, package --------------------------------------------------------
step configure cmake -S /build/src -B /build/obj -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFRAGD_BUILD_TESTS=OFF -DFRAGD_DEB_VERSION_SUFFIX="$SUFFIX"
step build cmake --build /build/obj -j "$JOBS"
step cpack cpack -G DEB --config /build/obj/CPackConfig.cmake -B /build/pkg
debs=("$ROOT"/build/pkg/fragd_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || die "cpack wrote no single fragd_*.deb into /build/pkg: ${debs[*]}"
DEB=${debs[0]}
NAME=$(basename "$DEB")

# --- phase 4: lintian --------------------------------------------------------------------------
t=$(now)
rc=0
in_chroot lintian --fail-on error,warning --display-info --tag-display-limit 0 "/build/pkg/$NAME" >"$OUT/lintian.txt" 2>&1 || rc=$?
LINTIAN_VERSION=$(in_chroot lintian --version 2>/dev/null || echo "lintian ?")
if [ "$rc" -ne 0 ]; then
  cat "$OUT/lintian.txt" >&2
  die "$LINTIAN_VERSION found errors or warnings in $NAME (above; exit $rc)"
fi
phase_done lintian "$(secs "$t")" "$LINTIAN_VERSION: no error, no warning$(grep -q . "$OUT/lintian.txt" && echo "; $(wc -l <"$OUT/lintian.txt") info lines in lintian.txt")"

# --- the result --------------------------------------------------------------------------------
rm -f "$OUT"/fragd_*.deb
cp "$DEB" "$OUT/"
VERSION=$(dpkg-deb -f "$OUT/$NAME" Version)
DEPENDS=$(dpkg-deb -f "$OUT/$NAME" Depends)
SIZE=$(stat -c %s "$OUT/$NAME")
TOTAL=$(secs "$T_START")
{
  echo "suite $SUITE"
  echo "package $OUT/$NAME"
  echo "version $VERSION"
  echo "size_bytes $SIZE"
  echo "depends $DEPENDS"
  echo "chroot_cache $TARBALL"
  echo "lintian $LINTIAN_VERSION"
  for p in "${PHASES[@]}"; do echo "seconds_${p% *} ${p#* }"; done
  echo "seconds_total $TOTAL"
} >"$OUT/build-deb.txt"
say "$NAME ($SIZE bytes), version $VERSION"
say "Depends: $DEPENDS"
say "phases: $(printf '%s s, ' "${PHASES[@]}")total $TOTAL s"
