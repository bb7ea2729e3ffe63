#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The fragd container image, from Debian packages only: no Dockerfile, no Docker
# daemon, no registry.
#
#   scripts/build-image.sh BUILD_DIR OUT_DIR
#
# 1. cpack makes the fragd .deb from BUILD_DIR (as `make package` would);
# 2. mmdebstrap extracts it and the packages it depends on (not those it only
#    recommends: libcairo2, for `fragctl map --png`) from the Debian suite this
#    host runs (apt's sources) into one root filesystem: no shell, no dpkg database;
#    manual pages, info, locales and changelogs are left out, copyright files stay;
# 3. buildah makes it the single layer of an OCI image whose entrypoint is fragd,
#    and writes OUT_DIR/fragd-<version>.oci.tar (oci-archive, tagged fragd:<version>).
#
# Two builds of the same tree against the same Debian packages give the same digest
# (SOURCE_DATE_EPOCH, default the last commit's time, bounds every file time and is the image's
# creation time).
#
# 4. writes OUT_DIR/kustomization.yaml: configs/kubernetes/base (named relative to OUT_DIR, as
#    kustomize requires) with the DaemonSet's image pinned by this image's manifest digest
#    (fragd@sha256:...), so `kubectl apply -k OUT_DIR` rolls out exactly this build; the committed
#    base names the tag fragd:<version>, which a node holding an older fragd:<version> would keep
#    running under imagePullPolicy: IfNotPresent.
#
# Prints the image's uncompressed size (its layer as a tar), the archive's size and
# the manifest digest, and writes them to OUT_DIR/image.txt. Needs root (mmdebstrap
# and buildah's chroot); buildah keeps its storage under OUT_DIR and it is removed.
set -euo pipefail
BUILD=$(cd "${1:?usage: build-image.sh BUILD_DIR OUT_DIR}" && pwd)
mkdir -p "${2:?usage: build-image.sh BUILD_DIR OUT_DIR}"
OUT=$(cd "$2" && pwd)
say() { echo "[build-image] $*"; }
die() { echo "[build-image] ERROR: $*" >&2; exit 1; }

for tool in cpack mmdebstrap buildah; do
  command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh installs mmdebstrap and buildah)"
done
[ "$(id -u)" -eq 0 ] || die "needs root (mmdebstrap extracts as root; buildah commits from a chroot)"
[ -f "$BUILD/CPackConfig.cmake" ] || die "$BUILD/CPackConfig.cmake missing: configure and build first (make build)"
. /etc/os-release
SUITE=${FRAGD_IMAGE_SUITE:-${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}}

rm -rf "$OUT/pkg" "$OUT/rootfs.tar" "$OUT/storage" "$OUT/runroot"
cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$OUT/pkg" >"$OUT/cpack.log" 2>&1 ||
  { cat "$OUT/cpack.log" >&2; die "cpack -G DEB failed (above)"; }
DEB=$(ls "$OUT"/pkg/fragd_*.deb 2>/dev/null | head -1)
[ -n "$DEB" ] || die "cpack wrote no fragd_*.deb into $OUT/pkg"
VERSION=$(dpkg-deb -f "$DEB" Version)
say "package $(basename "$DEB")"

# apt reads the .deb at the same path inside the chroot as on the host: a setup hook copies
# it there. The variant runs no customize hook: the tree is trimmed here, then tarred.
t0=$(date +%s.%N)
ROOT="$OUT/rootfs"
rm -rf "$ROOT"
mmdebstrap --variant=extract --quiet \
  --setup-hook="mkdir -p \"\$1$OUT/pkg\" && cp '$DEB' \"\$1$DEB\"" \
  --include="$DEB" \
  "$SUITE" "$ROOT" >"$OUT/mmdebstrap.log" 2>&1 ||
  { cat "$OUT/mmdebstrap.log" >&2; die "mmdebstrap failed (above)"; }
[ -x "$ROOT/usr/bin/fragd" ] || die "the root filesystem has no /usr/bin/fragd"
rm -rf "${ROOT:?}$OUT" "$ROOT"/usr/share/man "$ROOT"/usr/share/info "$ROOT"/usr/share/locale "$ROOT"/usr/share/lintian \
  "$ROOT"/var/cache/apt "$ROOT"/var/lib/apt/lists
# The directories the hook made on the way to OUT/pkg go too: the image would name this build's
# path (mmdebstrap empties /tmp itself, so an OUT under /tmp never showed it).
d=$(dirname "$OUT")
while [ "$d" != / ] && rmdir "$ROOT$d" 2>/dev/null; do d=$(dirname "$d"); done
find "$ROOT/usr/share/doc" -type f ! -name copyright -delete
find "$ROOT/usr/share/doc" -depth -type d -empty -delete
mkdir -p "$ROOT/run/fragd" "$ROOT/tmp"
chmod 1777 "$ROOT/tmp"
# Reproducible: names sorted, owners numeric, no file newer than SOURCE_DATE_EPOCH (default: the
# source tree's last commit), and the image's creation time that epoch too.
EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$(dirname "$0")/.." log -1 --format=%ct 2>/dev/null || echo 0)}
tar --numeric-owner --owner=0 --group=0 --sort=name --mtime="@$EPOCH" --clamp-mtime \
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -C "$ROOT" -cf "$OUT/rootfs.tar" .
rm -rf "$ROOT"

B=(buildah --root "$OUT/storage" --runroot "$OUT/runroot" --storage-driver vfs)
cleanup() { "${B[@]}" rm --all >/dev/null 2>&1 || true; rm -rf "$OUT/storage" "$OUT/runroot"; }
trap cleanup EXIT
ctr=$("${B[@]}" from scratch)
"${B[@]}" add "$ctr" "$OUT/rootfs.tar" / >/dev/null
"${B[@]}" config \
  --entrypoint '["/usr/bin/fragd"]' --cmd '["--config", "/etc/fragd/fragd.yaml"]' \
  --env PATH=/usr/sbin:/usr/bin:/sbin:/bin --workingdir / \
  --label org.opencontainers.image.title=fragd \
  --label org.opencontainers.image.description="memory fragmentation observability and control daemon (eBPF)" \
  --label org.opencontainers.image.version="$VERSION" \
  --label org.opencontainers.image.licenses="Apache-2.0 AND (GPL-2.0-only OR BSD-2-Clause)" \
  --label org.opencontainers.image.base.name="debian:$SUITE (extracted packages)" \
  "$ctr"
"${B[@]}" commit --quiet --rm --timestamp "$EPOCH" --omit-history "$ctr" "fragd:$VERSION" >/dev/null
ARCHIVE="$OUT/fragd-$VERSION.oci.tar"
rm -f "$ARCHIVE"
"${B[@]}" push --quiet --digestfile "$OUT/digest" "fragd:$VERSION" "oci-archive:$ARCHIVE:fragd:$VERSION" >/dev/null
seconds=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

uncompressed=$(stat -c %s "$OUT/rootfs.tar")
archive=$(stat -c %s "$ARCHIVE")
digest=$(cat "$OUT/digest")
[[ "$digest" =~ ^sha256:[0-9a-f]{64}$ ]] || die "buildah push wrote '$digest' to $OUT/digest, not a sha256 digest"

# The deployment of this very image: the base, its image pinned by digest (kustomize's images).
BASE=$(cd "$(dirname "$0")/../configs/kubernetes/base" && pwd)
cat >"$OUT/kustomization.yaml" <<EOF
# Written by scripts/build-image.sh: configs/kubernetes/base running the image built beside this
# file ($(basename "$ARCHIVE")), by digest. Load that archive on each node (or push it), then
#   kubectl apply -k $OUT
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $(realpath --relative-to="$OUT" "$BASE")
images:
  - name: fragd
    digest: $digest
EOF
{
  echo "image fragd:$VERSION"
  echo "archive $ARCHIVE"
  echo "uncompressed_bytes $uncompressed"
  echo "archive_bytes $archive"
  echo "digest $digest"
  echo "kustomization $OUT/kustomization.yaml"
  echo "suite $SUITE"
  echo "seconds $seconds"
} >"$OUT/image.txt"
rm -f "$OUT/rootfs.tar"
say "fragd:$VERSION in $ARCHIVE: $((uncompressed / 1000)) kB uncompressed, $((archive / 1000)) kB archive, $digest (Debian $SUITE, $seconds s)"
say "kubectl apply -k $OUT deploys fragd@$digest (configs/kubernetes/base, image by digest)"
