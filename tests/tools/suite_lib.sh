# SPDX-License-Identifier: Apache-2.0
# What fragd's test suites share on the host and inside their guests (sourced, not run): reading
# a /metrics scrape and /proc, and the act policy that holds vm.compaction_proactiveness.
# Sourced by tests/integration/lib.sh (bash, on the host), by tests/kernels/guest.sh (busybox sh,
# the /init of the kernel matrix's guests: tests/kernels/matrix.sh copies this file into their
# initramfs as /suite_lib.sh) and by tests/service/guest-check.sh (bash, in the service guests:
# tests/service/customize.sh installs it as /usr/local/lib/fragd-check/suite_lib.sh). Hence plain POSIX
# sh that busybox's ash parses, and only commands the busybox guests have (awk, cat, printf).
# shellcheck shell=sh

# metric FILE NAME [LABEL-REGEX]: sum of the samples of NAME whose labels match (all when no regex).
metric() {
	awk -v name="$2" -v re="${3:-}" '
		$1 !~ /^#/ {
			n = $1; sub(/\{.*/, "", n)
			if (n != name) next
			lab = $1; if (lab ~ /\{/) { sub(/^[^{]*\{/, "", lab); sub(/\}$/, "", lab) } else lab = ""
			if (re == "" || lab ~ re) s += $2
		}
		END { printf "%.0f\n", s + 0 }' "$1"
}

# sample FILE SERIES: the value of the one sample whose name and labels are SERIES exactly
# (fragd_free_blocks{node="0",zone="Normal"}); prints nothing when the scrape lacks it.
sample() { awk -v k="$2" '$1 == k { print $2; exit }' "$1"; }

vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
# Free blocks able to hold a 2 MiB page now: order 9, and order 10 counted twice (x86-64).
free_blocks9() { awk '{ n += $(5 + 9) + 2 * $(5 + 10) } END { print n + 0 }' /proc/buddyinfo; }

# node_unreclaimable [NODE]: node NODE's node_unreclaimable as /proc/zoneinfo prints it in each
# of its populated zones (1 when kswapd has given up on it: 16 reclaim passes that freed nothing;
# nothing when the kernel does not print it); with no NODE, 1 when any node says 1, else 0.
node_unreclaimable() {
	if [ $# -eq 0 ]; then
		awk '$1 == "node_unreclaimable:" { if ($2 > n) n = $2 } END { print n + 0 }' /proc/zoneinfo
	else
		awk -v n="$1" '/^Node/ { cur = ($2 + 0 == n) } cur && $1 == "node_unreclaimable:" { print $2; exit }' /proc/zoneinfo
	fi
}

# proactiveness_policy HIGH LOW VALUE [LINE...]: prints an act policy whose compaction (method
# proactiveness) writes VALUE to vm.compaction_proactiveness once a node's score is above HIGH and
# holds it until the score is below LOW, for at most 10 minutes; no demand trigger and no reserve
# goal, so that the score alone acts; 2 s at least between two actions on a node. Each LINE is
# appended as it is (the caller's other sections).
proactiveness_policy() {
	cat <<YAML
mode: act
compaction:
  method: proactiveness
  score: {high: $1, low: $2}
  demand: {enabled: false}
  reserve: {memory_percent: 0}
  min_interval: 2s
  proactiveness: {value: $3, hold: 10m}
YAML
	shift 3
	[ $# -eq 0 ] || printf '%s\n' "$@"
}
