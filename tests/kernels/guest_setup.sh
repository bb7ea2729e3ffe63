# SPDX-License-Identifier: Apache-2.0
# Sourced first by the /init of every busybox guest (tests/kernels/guest.sh, bench/cost_guest_init.sh),
# copied into the initramfs as /guest_setup.sh: busybox's applets, the kernel file systems fragd
# reads, and loopback up.
# shellcheck shell=sh
/bin/busybox mkdir -p /proc /sys /dev /run /tmp /bin /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
