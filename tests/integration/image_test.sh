#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The container image (make image: scripts/build-image.sh): it builds from the build
# dir's .deb and Debian's packages; it is at most 30 MB uncompressed (not held on a
# sanitizer build, whose binaries carry the sanitizer); inside it, `fragd --version`
# names the package's version, `fragd --check-config` passes the shipped policy and
# fails a broken one naming its file and line, and fragctl runs; it holds no shell, no
# package manager and no graphics library; its entrypoint is fragd; the DaemonSet
# names this image; a second build of the same tree gives the same digest.
source "$(dirname "$0")/lib.sh"
require_root
for tool in cpack mmdebstrap buildah; do
  command -v "$tool" >/dev/null || skip_or_fail "$tool is not installed (scripts/install-deps.sh installs it)"
done
[ -f "$BUILD/CPackConfig.cmake" ] || fail "$BUILD has no CPackConfig.cmake: configure it again (cmake -S $SRC -B $BUILD)"

bash "$SRC/scripts/build-image.sh" "$BUILD" "$WORK/image" >"$WORK/build.log" 2>&1 ||
  { cat "$WORK/build.log" >&2; fail "scripts/build-image.sh failed (above)"; }
cat "$WORK/build.log"
# field KEY [DIR]: a value of the build's image.txt (DIR: $WORK/image).
field() { awk -v k="$1" '$1 == k { print $2 }' "${2:-$WORK/image}/image.txt"; }
IMAGE=$(field image) ARCHIVE=$(field archive) BYTES=$(field uncompressed_bytes) DIGEST=$(field digest)
VERSION=${IMAGE#fragd:}
[ -s "$ARCHIVE" ] || fail "no image archive at '$ARCHIVE'"
[[ "$DIGEST" =~ ^sha256:[0-9a-f]{64}$ ]] || fail "image digest '$DIGEST' is not a sha256 digest"
# Reproducible: a second build of the same tree gives the same digest.
bash "$SRC/scripts/build-image.sh" "$BUILD" "$WORK/image2" >"$WORK/build2.log" 2>&1 ||
  { cat "$WORK/build2.log" >&2; fail "the second scripts/build-image.sh failed (above)"; }
DIGEST2=$(field digest "$WORK/image2")
[ "$DIGEST2" = "$DIGEST" ] || fail "two builds of the same tree gave digests $DIGEST and $DIGEST2"
rm -rf "$WORK/image2"
log "a second build gives the same digest $DIGEST"
LIMIT=30000000
if sanitized; then
  log "sanitizer build: its image is $BYTES bytes; the $LIMIT-byte bound holds the release build"
else
  [ "$BYTES" -le "$LIMIT" ] || fail "the image is $BYTES bytes uncompressed, over $LIMIT"
  log "the image is $BYTES bytes uncompressed (<= $LIMIT)"
fi

# The image as a container, in buildah's chroot isolation, with storage of its own.
B=(buildah --root "$WORK/storage" --runroot "$WORK/runroot" --storage-driver vfs)
RESTORE+=("${B[*]} rm --all >/dev/null 2>&1")
ctr=$("${B[@]}" from --quiet "oci-archive:$ARCHIVE") || fail "buildah cannot read $ARCHIVE"
run() { "${B[@]}" run --isolation chroot "$ctr" -- "$@"; }

out=$(run /usr/bin/fragd --version 2>&1) || fail "fragd --version failed in the image: $out"
[[ "$out" == *"$VERSION"* ]] || fail "fragd --version says '$out', not version $VERSION"
log "fragd --version in the image: $out"
out=$(run /usr/bin/fragd --check-config /etc/fragd/fragd.yaml 2>&1) ||
  fail "the shipped policy fails --check-config in the image: $out"
printf 'mode: observe\ncompaction:\n  nonsense_key: 1\n' >"$WORK/bad.yaml"
"${B[@]}" copy "$ctr" "$WORK/bad.yaml" /tmp/bad.yaml >/dev/null
if out=$(run /usr/bin/fragd --check-config /tmp/bad.yaml 2>&1); then fail "a broken policy passed --check-config in the image"; fi
[[ "$out" == *"/tmp/bad.yaml:3"* ]] || fail "--check-config's error does not name the file and line: $out"
log "--check-config in the image: the shipped policy passes; a broken one fails: $out"
out=$(run /usr/bin/fragctl -V 2>&1) || fail "fragctl -V failed in the image: $out"
log "fragctl -V in the image: $out"
if out=$(run /usr/bin/fragctl map --png /tmp/map.png 2>&1); then fail "fragctl map --png succeeded in an image without libcairo"; fi
[[ "$out" == *"libcairo.so.2"*"libcairo2"* ]] || fail "fragctl map --png without libcairo does not say what to install: $out"
log "fragctl map --png in the image: $out"

root=$("${B[@]}" mount "$ctr")
for f in bin/sh bin/bash usr/bin/dpkg usr/bin/apt; do
  [ ! -e "$root/$f" ] || fail "the image holds /$f"
done
cairo=$(find "$root" -name 'libcairo*' -o -name 'libX11*' | head -3)
[ -z "$cairo" ] || fail "the image holds graphics libraries fragd does not need: $cairo"
"${B[@]}" umount "$ctr" >/dev/null

entry=$("${B[@]}" inspect "$ctr" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["OCIv1"]["config"]["Entrypoint"]))')
[ "$entry" = '["/usr/bin/fragd"]' ] || fail "the image's entrypoint is $entry, not /usr/bin/fragd"

grep -qE "^\s+image: $IMAGE\$" "$SRC/configs/kubernetes/base/fragd-daemonset.yaml" ||
  fail "configs/kubernetes/base/fragd-daemonset.yaml does not name image $IMAGE"
log "entrypoint $entry; no shell, package manager or graphics library; the DaemonSet runs $IMAGE ($DIGEST)"
log "PASS"
