#!/bin/busybox sh
# SPDX-License-Identifier: Apache-2.0
# /init of bench/defrag_atomic.sh's guest: the rounds (/defrag_atomic_rounds.sh), their knobs from the kernel
# command line (fragd_rounds, _rate, _seconds, _guard_seconds, _free_mib, _guard_free_mib, _limit), then power off.
. /guest_setup.sh
arg() { sed -n "s/.*fragd_$1=\([0-9]*\).*/\1/p" /proc/cmdline; }
ROUNDS=$(arg rounds) RATE=$(arg rate) SECONDS_=$(arg seconds) GUARD_SECONDS=$(arg guard_seconds)
FREE_MIB=$(arg free_mib) GUARD_FREE_MIB=$(arg guard_free_mib) LIMIT=$(arg limit) BIN=/ RUN=/tmp PORT=9717
export ROUNDS RATE SECONDS_ GUARD_SECONDS FREE_MIB GUARD_FREE_MIB LIMIT BIN RUN PORT
sh /defrag_atomic_rounds.sh
sync
poweroff -f
