#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make test-fresh: README's two commands on a fresh Debian machine of a release.
#
# mmdebstrap makes a minbase root file system of SUITE (bookworm = Debian 12, trixie = Debian 13)
# with nothing added but git and make (and this host's resolv.conf and local CA certificates);
# the project is cloned into it from this checkout's HEAD (what is committed, as CI clones it);
# then, in a mount namespace of its own whose root it is (pivot_root, not chroot), with the host's
# /proc, /sys and /dev, `make test` runs there under CI=true (it installs what it needs from the
# release's archive and must pass), and `make run` must start fragd and answer /metrics. The integration tests drive this host's kernel as they do on the host, and take the
# host's heavy-test lock (/tmp/fragd-heavy.lock), so a run here and one on the host never
# fragment memory at once.
#
#   bash tests/fresh/run.sh [SUITE]     (root; SUITE default trixie)
#
# Environment: FRAGD_FRESH_MIRROR (http://deb.debian.org/debian), FRAGD_FRESH_KEEP=1 keeps the
# root file system (its path is printed), FRAGD_FRESH_TESTS=REGEX runs `make deps build` and then
# only the tests ctest -R REGEX selects (to reproduce one test's failure on a fresh machine; the
# run then says it was partial and skips `make run`). Output: one line per phase with its time, ctest's
# summary, and the result; the whole make test log is kept in $BUILD/fresh/<suite>.log.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BUILD=${FRAGD_BUILD_DIR:-$SRC/build}
SUITE=${1:-trixie}
MIRROR=${FRAGD_FRESH_MIRROR:-http://deb.debian.org/debian}
OUT="$BUILD/fresh"
LOCK=/tmp/fragd-heavy.lock

log() { echo "[test-fresh] $*"; }
die() { echo "[test-fresh] FAIL: $*" >&2; exit 1; }
case "$SUITE" in
	bookworm | trixie) ;;
	*) die "unknown suite '$SUITE': bookworm (Debian 12) or trixie (Debian 13)" ;;
esac
[ "$(id -u)" -eq 0 ] || die "needs root (mmdebstrap, chroot, and make test's integration tests)"
command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (Debian package mmdebstrap; make deps installs it)"
git -C "$SRC" rev-parse HEAD >/dev/null || die "$SRC is not a git checkout"

mkdir -p "$OUT"
ROOT=$(mktemp -d /var/tmp/fragd-fresh-"$SUITE".XXXXXX)
RUN_PID=
# in_root_pids: every process of the run's mount namespace (what the run started there, at any
# depth; a container's processes have namespaces of their own and go with podman).
NS=
in_root_pids() {
	local p
	[ -n "$NS" ] || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$NS" ] && echo "${p#/proc/}"
	done
	return 0
}
cleanup() {
	local rc=$? i
	if [ -n "$(in_root_pids)" ]; then
		kill -TERM $(in_root_pids) 2>/dev/null
		for i in $(seq 1 100); do [ -z "$(in_root_pids)" ] && break; sleep 0.1; done
		[ -z "$(in_root_pids)" ] || kill -KILL $(in_root_pids) 2>/dev/null
		sleep 0.5
	fi
	[ -n "$RUN_PID" ] && wait "$RUN_PID" 2>/dev/null
	# Every mount was made in the namespace of the unshare below and went with it; a lazy
	# unmount covers a mount that outlived it.
	grep -q " $ROOT/" /proc/mounts && umount -R -l "$ROOT"/* 2>/dev/null
	if [ "${FRAGD_FRESH_KEEP:-0}" = 1 ]; then
		log "kept $ROOT"
	else
		rm -rf --one-file-system "$ROOT"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

T0=$SECONDS
log "mmdebstrap $SUITE (minbase, git and make) into $ROOT"
mmdebstrap --quiet --variant=minbase --include=git,make "$SUITE" "$ROOT" "$MIRROR" >"$OUT/$SUITE-mmdebstrap.log" 2>&1 ||
	{ tail -n 30 "$OUT/$SUITE-mmdebstrap.log" >&2; die "mmdebstrap $SUITE failed"; }
log "root file system: $((SECONDS - T0)) s, $(chroot "$ROOT" dpkg-query -W -f '.\n' | wc -l) packages"

git clone --quiet --no-hardlinks "$SRC" "$ROOT/root/fragd"
log "cloned $(git -C "$ROOT/root/fragd" rev-parse --short HEAD) into /root/fragd"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# The site's own trust anchors, as its machines carry them (a TLS-inspecting egress proxy's CA):
# ca-certificates, when make deps installs it, adds them to the bundle.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
	mkdir -p "$ROOT/usr/local/share/ca-certificates"
	cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
	log "copied the host's local CA certificates: $(cd /usr/local/share/ca-certificates && ls ./*.crt | tr '\n' ' ')"
fi
touch "$LOCK"

# In the root: make test under CI=true, then make run for 40 s with /metrics read from it.
TESTS=${FRAGD_FRESH_TESTS:-}
cat >"$ROOT/root/fresh.sh" <<'EOF'
set -u
cd /root/fragd
t=$SECONDS
if [ -n "$TESTS" ]; then
	make deps build >/root/build.log 2>&1 || { tail -n 30 /root/build.log; echo "[test-fresh] make deps build failed"; exit 1; }
	echo "[test-fresh] make deps build: $((SECONDS - t)) s"
	CI=true ctest --test-dir build --output-on-failure -R "$TESTS"
	rc=$?
	echo "[test-fresh] ctest -R '$TESTS' (partial run): exit $rc after $((SECONDS - t)) s"
	exit "$rc"
fi
CI=true make test
rc=$?
echo "[test-fresh] make test: exit $rc after $((SECONDS - t)) s"
[ "$rc" -eq 0 ] || exit "$rc"
make run >/root/run.log 2>&1 &
pid=$!
ok=1
for _ in $(seq 1 60); do
	if python3 -c 'import urllib.request,sys; b=urllib.request.urlopen("http://127.0.0.1:9717/metrics", timeout=2).read().decode(); sys.exit(0 if "fragd_build_info" in b else 1)' 2>/dev/null; then
		ok=0
		break
	fi
	sleep 1
done
pkill -TERM -P "$pid" 2>/dev/null
kill -TERM "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ "$ok" -ne 0 ]; then
	tail -n 20 /root/run.log
	echo "[test-fresh] make run: no /metrics with fragd_build_info on 127.0.0.1:9717 within 60 s"
	exit 1
fi
echo "[test-fresh] make run: fragd answered /metrics"
EOF

T1=$SECONDS
log "make test and make run in the $SUITE root (log: $OUT/$SUITE.log)"
unshare --mount --propagation=private bash -c '
	set -e
	R=$1
	# The root a mount of its own, as a machine'"'"'s / is: tests that unshare a mount
	# namespace change the propagation of /, which needs a mount point there.
	mount --bind "$R" "$R"
	mount -t proc proc "$R/proc"
	mount --rbind /sys "$R/sys"
	mount --rbind /dev "$R/dev"
	mount -t tmpfs -o mode=0755 tmpfs "$R/run"
	mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
	touch "$R/tmp/fragd-heavy.lock"
	mount --bind /tmp/fragd-heavy.lock "$R/tmp/fragd-heavy.lock"
	# The root becomes the mount namespace'"'"'s own root (pivot_root), as a machine'"'"'s / is, not a
	# chroot inside the host'"'"'s: a process that joins a mount namespace made here (runc exec into a
	# container) lands in that namespace'"'"'s root, which under chroot is the host'"'"'s /.
	cd "$R"
	mkdir -p .fresh-oldroot
	pivot_root . .fresh-oldroot
	cd /
	umount -l /.fresh-oldroot
	rmdir /.fresh-oldroot
	exec /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb TESTS="$2" \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin bash /root/fresh.sh
' fresh "$ROOT" "$TESTS" >"$OUT/$SUITE.log" 2>&1 &
RUN_PID=$!
# The run's mount namespace, once unshare made it (for in_root_pids).
for _ in $(seq 1 100); do
	n=$(readlink "/proc/$RUN_PID/ns/mnt" 2>/dev/null) || break
	if [ "$n" != "$(readlink /proc/$$/ns/mnt)" ]; then
		NS=$n
		break
	fi
	sleep 0.1
done
rc=0
wait "$RUN_PID" || rc=$?
RUN_PID=
grep -E '^\[test-fresh\]|tests passed|Total Test time|^[[:space:]]+[0-9]+ - ' "$OUT/$SUITE.log" || true
[ "$rc" -eq 0 ] || die "$SUITE: exit $rc after $((SECONDS - T1)) s in the root (the log: $OUT/$SUITE.log)"
[ -z "$TESTS" ] || { log "PASS (partial: only ctest -R '$TESTS'): $SUITE in $((SECONDS - T0)) s"; exit 0; }
log "PASS: $SUITE, fresh root to make test and make run in $((SECONDS - T0)) s (in the root $((SECONDS - T1)) s)"
