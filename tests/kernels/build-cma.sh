#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build (once, cached) a kernel with CMA for `make test-kernels-cma`: Debian's own
# kernels are built without CONFIG_CMA, so hugetlb_cma= and the cma:* tracepoints can
# only be tried on a kernel built here. Source: Debian's linux-source-6.12 package;
# config: x86_64 defconfig plus tests/kernels/cma.config (BPF, BTF, tracepoints, CMA,
# hugetlb, compaction, NUMA). Prints the cached kernel tree (FRAGD_KERNEL_CACHE/<name>,
# with boot/vmlinuz-<release>), the same shape matrix.sh uses for Debian's packages.
#
#   bash tests/kernels/build-cma.sh        (as root; 8-15 min on 2 cores the first time)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${FRAGD_KERNEL_CACHE:-/var/cache/fragd-kernels}
JOBS=${JOBS:-$(nproc)}
log() { echo "[build-cma] $*" >&2; }

need=()
for p in linux-source-6.12 build-essential flex bison bc dwarves libelf-dev libssl-dev xz-utils; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	log "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; }
fi
tarball=$(ls /usr/src/linux-source-6.12.tar.xz)
version=$(dpkg-query -W -f='${Version}' linux-source-6.12)
# The cache key: the source package's version and the config fragment's content.
key=$(cat "$HERE/cma.config" | sha256sum | cut -c1-12)
tree="$CACHE/cma-6.12-${version//[^0-9A-Za-z.]/_}-$key"
if ls "$tree"/boot/vmlinuz-* >/dev/null 2>&1; then
	echo "$tree"
	exit 0
fi

mkdir -p "$CACHE"
src=$(mktemp -d "$CACHE/cma-build.XXXXXX")
trap 'rm -rf "$src"' EXIT
log "unpacking $(basename "$tarball") ($version) into $src"
tar -C "$src" -xf "$tarball"
cd "$src"/linux-source-6.12
t0=$SECONDS
make -s defconfig >/dev/null
scripts/kconfig/merge_config.sh -m .config "$HERE/cma.config" >/dev/null
make -s olddefconfig >/dev/null
# merge_config reports, but does not fail on, values olddefconfig dropped: check them here.
missing=()
while IFS= read -r line; do
	[[ $line =~ ^CONFIG_ ]] || continue
	grep -qx "$line" .config || missing+=("$line")
done <"$HERE/cma.config"
[ ${#missing[@]} -eq 0 ] || { log "the kernel config lost: ${missing[*]} (a dependency is missing from cma.config)"; exit 1; }
log "building bzImage with $JOBS jobs"
make -s -j "$JOBS" bzImage >build.log 2>&1 || { tail -40 build.log >&2; exit 1; }
release=$(make -s kernelrelease)
mkdir -p "$tree.tmp/boot"
cp arch/x86/boot/bzImage "$tree.tmp/boot/vmlinuz-$release"
cp .config "$tree.tmp/boot/config-$release"
mv "$tree.tmp" "$tree"
log "built $release in $((SECONDS - t0)) s"
echo "$tree"
