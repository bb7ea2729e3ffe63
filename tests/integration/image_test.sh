#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The container image (make image: scripts/build-image.sh): it builds from the build
# dir's .deb and Debian's packages; it is at most 30 MB uncompressed (not held on a
# sanitizer build, whose binaries carry the sanitizer); inside it, `fragd --version`
# names the package's version, `fragd --check-config` passes the shipped policy and
# fails a broken one naming its file and line, and fragctl runs; it holds no shell, no
# package manager and no graphics library; its entrypoint is fragd; the DaemonSet
# names this image, and the kustomization `make image` writes beside it (OUT/kustomization.yaml),
# rendered by tests/contract/render_overlay.py, runs exactly fragd@<its digest>.
# Reproducible wherever the tree lies and however it is compiled: the tree as it is (HEAD and what is
# not committed) is cloned to a longer path (outside /tmp), configured ($BUILD's build type, no
# tests), compiled without ccache (CCACHE_DISABLE), built and imaged into its own build dir (as make
# image does); its digest must equal $BUILD's image's, compiled in SRC/build through make's ccache.
# Where $BUILD is a sanitizer build (or CCACHE_BASEDIR was set by hand), a first clone compiled
# through ccache stands in for it. The BPF objects fragd embeds carry DWARF and BTF and the C++ code
# -g: CMakeLists.txt maps both directories' paths away. Without ccache on one side, two builds that
# shared a cache could agree through it where the compiler's output differs (with CCACHE_BASEDIR,
# ccache hands the compiler relative paths, which the debug info keeps: the Makefile unexports it).
WORK_BASE=/tmp  # the clones, their builds and images: on disk, not tmpfs (lib.sh)
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

# The deployment by digest: the kustomization beside the archive, rendered as kustomize would.
KUST=$(field kustomization)
[ "$KUST" = "$WORK/image/kustomization.yaml" ] && [ -s "$KUST" ] ||
  fail "scripts/build-image.sh wrote no kustomization beside the image (image.txt names '$KUST')"
/usr/bin/python3 "$SRC/tests/contract/render_overlay.py" "$WORK/image" >"$WORK/deploy.yaml" ||
  fail "tests/contract/render_overlay.py cannot render $KUST"
# ds_image FILE: the image of the DaemonSet fragd's container fragd in a rendered FILE.
ds_image() {
  /usr/bin/python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "DaemonSet" and d["metadata"]["name"] == "fragd":
        print(*[c["image"] for c in d["spec"]["template"]["spec"]["containers"] if c["name"] == "fragd"])' "$1"
}
got=$(ds_image "$WORK/deploy.yaml")
[ "$got" = "fragd@$DIGEST" ] ||
  fail "$KUST renders the DaemonSet's image as '$got', not fragd@$DIGEST (the image just built)"
log "the kustomization beside the image deploys the DaemonSet with image fragd@$DIGEST"

# Reproducible wherever the tree lies (see the header).
git -C "$SRC" rev-parse --verify -q HEAD >/dev/null || skip_or_fail "$SRC is not a git checkout to clone"
T1=$SECONDS
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$SRC" log -1 --format=%ct)}
# The tree as it is, as a commit: HEAD's index plus every change and untracked file (not ignored),
# through an index of its own (the checkout's index and refs are not touched).
cp "$(git -C "$SRC" rev-parse --path-format=absolute --git-path index)" "$WORK/index"
GIT_INDEX_FILE=$WORK/index git -C "$SRC" add -A
TREE=$(GIT_INDEX_FILE=$WORK/index git -C "$SRC" write-tree)
if [ "$TREE" = "$(git -C "$SRC" rev-parse 'HEAD^{tree}')" ]; then
  REV=$(git -C "$SRC" rev-parse HEAD)
else
  REV=$(GIT_AUTHOR_NAME=image_test GIT_AUTHOR_EMAIL=image_test@localhost GIT_COMMITTER_NAME=image_test \
    GIT_COMMITTER_EMAIL=image_test@localhost GIT_AUTHOR_DATE="@$SOURCE_DATE_EPOCH +0000" \
    GIT_COMMITTER_DATE="@$SOURCE_DATE_EPOCH +0000" git -C "$SRC" commit-tree -p HEAD -m "the tree as image_test found it" "$TREE")
  log "the clones hold HEAD with this tree's changes (commit $REV)"
fi
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
BTYPE=$(cache CMAKE_BUILD_TYPE) HARDENING=$(cache FRAGD_HARDENING)
LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# clone_build DIR OUT [nocache]: clones REV into DIR and builds what the package holds in
# DIR/build (nocache: without ccache).
clone_build() {
  local dir=$1 out=$2 nocache=${3:-} t=$SECONDS
  mkdir -p "$(dirname "$dir")"
  { git clone --quiet --shared --no-checkout "$SRC" "$dir" && git -C "$dir" checkout --quiet --detach "$REV"; } ||
    fail "cannot clone $SRC at $REV into $dir"
  (
    export CCACHE_HASHDIR=1 CCACHE_STATSLOG=$out.ccache
    unset CCACHE_NOHASHDIR CCACHE_BASEDIR
    [ -z "$nocache" ] || export CCACHE_DISABLE=1
    cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE="$BTYPE" -DFRAGD_HARDENING="${HARDENING:-ON}" \
      -DFRAGD_BUILD_TESTS=OFF "${LAUNCHER[@]}" && cmake --build "$dir/build" -j "$(nproc)"
  ) >"$out.cmake.log" 2>&1 || { tail -30 "$out.cmake.log" >&2; fail "building the clone in $dir failed (above; $out.cmake.log)"; }
  log "clone $dir: built in $((SECONDS - t)) s$([ -n "$nocache" ] && echo ", without ccache" || ccache_summary "$out.ccache")"
}
# clone_image DIR OUT: images the clone in DIR into its own build/image, as make image does (no two
# paths alike), then moves that to OUT.
clone_image() {
  local dir=$1 out=$2 t=$SECONDS
  bash "$dir/scripts/build-image.sh" "$dir/build" "$dir/build/image" >"$out.log" 2>&1 ||
    { cat "$out.log" >&2; fail "scripts/build-image.sh of the clone in $dir failed (above)"; }
  mv "$dir/build/image" "$out"
  log "clone $dir: imaged in $((SECONDS - t)) s"
}
# ccache_summary STATSLOG: ", ccache N hits of M" from a stats log (empty without one).
ccache_summary() {
  [ -s "$1" ] || return 0
  awk '/^# / { n++ } /^(direct|preprocessed)_cache_hit$/ { h++ } END { printf ", ccache hits %d of %d compiles", h, n }' "$1"
}
# Not under /tmp, which mmdebstrap empties in the image: a path that reaches the image's tree
# would stay hidden there.
CLONES=$(mktemp -d "$BUILD/image_test-clones.XXXXXX")
on_exit "rm -rf '$CLONES'"
CA=$CLONES/a/src CB=$CLONES/bb/clone-at-a-longer-path/src
# The pair compared: $BUILD's image (this tree in SRC/build, compiled through make's ccache) and a
# clone's at a longer path compiled without ccache. Where $BUILD was not built so (a sanitizer
# build, or CCACHE_BASEDIR set by hand outside CI), a first clone built through ccache stands in
# for it.
if sanitized || { [ -n "${CCACHE_BASEDIR:-}" ] && [ "${CI:-}" != true ]; }; then
  log "$BUILD is $(sanitized && echo "a sanitizer build" || echo "built with CCACHE_BASEDIR=$CCACHE_BASEDIR"): a clone built through ccache stands in for it"
  # The second clone builds while the first is imaged (mmdebstrap and buildah mostly wait on the
  # disk).
  clone_build "$CA" "$WORK/image-a"
  clone_image "$CA" "$WORK/image-a" &
  imaging=$!
  PIDS+=("$imaging")
  clone_build "$CB" "$WORK/image-b" nocache
  wait "$imaging" || fail "imaging the clone in $CA failed (above)"
  A=image-a
else
  CA=$SRC A=image
  clone_build "$CB" "$WORK/image-b" nocache
fi
clone_image "$CB" "$WORK/image-b"
DA=$(field digest "$WORK/$A") DB=$(field digest "$WORK/image-b")
# deb_diff X Y: the files that differ between the packages of image dirs WORK/X and WORK/Y, each
# with the source or clone path it holds and, for a program, its two build IDs (which cover the
# debug info that the package strips).
deb_diff() {
  local x f p
  for x in "$1" "$2"; do mkdir -p "$WORK/deb-$x" && dpkg-deb -x "$WORK/$x"/pkg/fragd_*.deb "$WORK/deb-$x"; done
  (cd "$WORK/deb-$1" && find . -type f | sort | while read -r f; do
    cmp -s "$f" "$WORK/deb-$2/$f" && continue
    printf '%s' "$f"
    for p in "$SRC" "$CA" "$CB"; do grep -qaF "$p" "$f" "$WORK/deb-$2/$f" && printf ' (holds %s)' "$p"; done
    if readelf -n "$f" >/dev/null 2>&1; then
      printf ' (build IDs %s)' "$(for x in "$f" "$WORK/deb-$2/$f"; do readelf -n "$x" | awk '/Build ID/ { print $3 }'; done | paste -sd/)"
    fi
    printf '; '
  done) | grep . || echo none
}
# layer_diff X Y: the entries that differ between the layers of the images in WORK/X and WORK/Y.
layer_diff() {
  /usr/bin/python3 - "$WORK/$1"/fragd-*.oci.tar "$WORK/$2"/fragd-*.oci.tar <<'EOF'
import json, sys, tarfile
def entries(archive):
    with tarfile.open(archive) as oci:
        blob = lambda d: oci.extractfile("blobs/" + d.replace(":", "/"))
        desc = json.load(oci.extractfile("index.json"))["manifests"][0]
        layer = json.load(blob(desc["digest"]))["layers"][0]["digest"]
        with tarfile.open(fileobj=blob(layer)) as t:
            return {m.name: (m.type, m.mode, m.size, m.mtime) for m in t}
a, b = entries(sys.argv[1]), entries(sys.argv[2])
print("; ".join(f"{n} ({'only in one' if n not in a or n not in b else 'differs'})"
                for n in sorted(set(a) | set(b)) if a.get(n) != b.get(n))[:2000] or "none")
EOF
}
[ "$DA" = "$DB" ] || fail "the tree at $CA and its clone at $CB gave images $DA and $DB; files that differ in their packages: $(deb_diff "$A" image-b); entries that differ in their layers: $(layer_diff "$A" image-b)"
log "the tree at $CA (through ccache) and its clone at $CB (without ccache) give the same digest $DA ($((SECONDS - T1)) s)"
rm -rf "$CLONES" "$WORK/image-a" "$WORK/image-b" "$WORK"/deb-*
LIMIT=30000000
if sanitized; then
  log "sanitizer build: its image is $BYTES bytes; the $LIMIT-byte bound holds the release build"
else
  [ "$BYTES" -le "$LIMIT" ] || fail "the image is $BYTES bytes uncompressed, over $LIMIT"
  log "the image is $BYTES bytes uncompressed (<= $LIMIT)"
fi

# The image as a container, in buildah's chroot isolation, with storage of its own.
B=(buildah --root "$WORK/storage" --runroot "$WORK/runroot" --storage-driver vfs)
on_exit "${B[*]} rm --all >/dev/null 2>&1"
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
