#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# mmdebstrap's customize hook for the service guests (tests/service/run.sh): puts the suite and
# the package under test into the root file system, and takes the release's own stock kernel out
# of its archive (apt-get download inside the new system, never installed, cached on the host).
#
#   customize.sh ROOT NEW_DEB FRAGMENTER KERNEL_CACHE
set -euo pipefail
ROOT=$1 NEW=$2 FRAGMENTER=$3 KCACHE=$4
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

install -D -m 0755 "$HERE/guest-check.sh" "$ROOT/usr/local/sbin/fragd-guest-check"
# The helpers the suite sources, shared with the kernel matrix's guests and the integration tests.
install -D -m 0644 "$HERE/../tools/suite_lib.sh" "$ROOT/usr/local/lib/fragd-check/suite_lib.sh"
install -D -m 0755 "$FRAGMENTER" "$ROOT/usr/local/bin/fragmenter"
install -D -m 0644 "$NEW" "$ROOT/root/new/$(basename "$NEW")"
cat >"$ROOT/etc/systemd/system/fragd-check.service" <<'EOF'
[Unit]
Description=fragd service checks (tests/service)
After=fragd.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/fragd-guest-check
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/fragd-check.service "$ROOT/etc/systemd/system/multi-user.target.wants/fragd-check.service"
# The console is the suite's: no login prompt on it.
ln -sf /dev/null "$ROOT/etc/systemd/system/serial-getty@ttyS0.service"
echo fragd-guest >"$ROOT/etc/hostname"

# The release's kernel: the package linux-image-cloud-amd64 points to.
pkg=$(chroot "$ROOT" apt-cache depends linux-image-cloud-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -1)
[ -n "$pkg" ] || { echo "customize: no linux-image-*-cloud-amd64 in this suite's archive" >&2; exit 1; }
# Its virtio modules too: the guest's balloon (free page reporting) is virtio_balloon, a module
# in Debian's kernels, which the suite loads as a VM's udev would.
if [ ! -s "$KCACHE/$pkg/vmlinuz" ] || [ ! -d "$KCACHE/$pkg/lib/modules" ]; then
	mkdir -p "$ROOT/tmp/kernel"
	chroot "$ROOT" sh -c "cd /tmp/kernel && apt-get download -q '$pkg'" >/dev/null
	rm -rf "$KCACHE/$pkg.tmp" "$KCACHE/$pkg.x" && mkdir -p "$KCACHE/$pkg.tmp"
	dpkg-deb -x "$ROOT"/tmp/kernel/"$pkg"_*.deb "$KCACHE/$pkg.x"
	mv "$KCACHE/$pkg.x"/boot/vmlinuz-* "$KCACHE/$pkg.tmp/vmlinuz"
	# /lib/modules (Debian 12) or /usr/lib/modules (Debian 13)
	moddir=
	for d in "$KCACHE/$pkg.x"/lib/modules/* "$KCACHE/$pkg.x"/usr/lib/modules/*; do [ -d "$d" ] && moddir=$d; done
	[ -d "$moddir/kernel/drivers/virtio" ] || { echo "customize: no virtio modules in $pkg" >&2; exit 1; }
	keep="$KCACHE/$pkg.tmp/lib/modules/$(basename "$moddir")"
	mkdir -p "$keep/kernel/drivers"
	cp -a "$moddir/kernel/drivers/virtio" "$keep/kernel/drivers/"
	cp -a "$moddir"/modules.builtin* "$moddir"/modules.order "$keep/" 2>/dev/null || true
	rm -rf "$KCACHE/$pkg.x" "$KCACHE/$pkg" && mv "$KCACHE/$pkg.tmp" "$KCACHE/$pkg"
	rm -rf "$ROOT/tmp/kernel"
fi
cp -a "$KCACHE/$pkg/lib/modules" "$ROOT/lib/"
chroot "$ROOT" depmod -a "${pkg#linux-image-}"
echo "$pkg" >"$ROOT/../kernel-package"

# A smaller initramfs: what the checks never read.
rm -rf "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man "$ROOT"/usr/share/info "$ROOT"/usr/share/locale \
	"$ROOT"/var/lib/apt/lists/* "$ROOT"/usr/share/zoneinfo
