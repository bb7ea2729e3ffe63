#!/bin/busybox sh
# SPDX-License-Identifier: Apache-2.0
# /init of bench/cost_guest.sh's guests: what fragd's BPF maps take and what its sampled
# pageblock rounds read on a guest of a given memory size, printed on the serial console as
#   FRAGD-COST <key> <value>                  facts: memory, CPUs, zones' pageblocks
#   FRAGD-MAPMEM <object> <map> <bytes>       bpf_map_memory's lines (the kernel's memlock)
#   FRAGD-ROUND <seconds> <rounds ok> <blocks read by samples> <scan CPU seconds>
#                                            one scrape per round interval, once the start
#                                            pass has read every block (the steady state)
#   FRAGD-FULL <pages read> <duration ns>     one full scan asked with fragctl map --max-age 0
#   FRAGD-END
# The number of rounds to watch is on the kernel command line: fragd_rounds=N (0: maps only).
. /guest_setup.sh

ROUNDS=$(sed -n 's/.*fragd_rounds=\([0-9]*\).*/\1/p' /proc/cmdline)
ROUNDS=${ROUNDS:-0}
URL=http://127.0.0.1:9717/metrics
SOCK=/run/fragd.sock
FRAGD_PID=
finish() {
	[ -n "$FRAGD_PID" ] && kill -TERM "$FRAGD_PID" 2>/dev/null && wait "$FRAGD_PID"
	echo "FRAGD-END"
	sync
	poweroff -f
}
# value FILE NAME LABEL-REGEX: sum of the samples of NAME whose labels match (empty: none)
value() {
	awk -v name="$2" -v re="$3" '$1 !~ /^#/ {
		n = $1; sub(/\{.*/, "", n); if (n != name) next
		lab = $1; if (lab ~ /\{/) { sub(/^[^{]*\{/, "", lab); sub(/\}$/, "", lab) } else lab = ""
		if (re == "" || lab ~ re) { s += $2; seen = 1 } } END { if (seen) printf "%.6f\n", s }' "$1"
}

printf 'FRAGD-COST %s\n' "kernel $(uname -r)" "mem_total_kib $(awk '/^MemTotal/ { print $2 }' /proc/meminfo)" \
	"possible_cpus $(cat /sys/devices/system/cpu/possible)" "online_cpus $(cat /sys/devices/system/cpu/online)"
# Pageblocks of each populated zone's span (2 MiB blocks of 4 KiB pages).
awk '$1 == "Node" { z = $4 } $1 == "spanned" && $2 > 0 { printf "FRAGD-COST zone_blocks_%s %d\n", z, ($2 + 511) / 512 }' /proc/zoneinfo

/bpf_map_memory 2>/tmp/mapmem.err | sed 's/^/FRAGD-MAPMEM /'
[ -s /tmp/mapmem.err ] && echo "FRAGD-COST mapmem_log $(grep -v '^<6>' /tmp/mapmem.err | head -3 | tr '\n' '|')"
[ "$ROUNDS" -gt 0 ] || finish

/fragd --config /etc/fragd.yaml --listen 127.0.0.1:9717 --socket "$SOCK" >/tmp/fragd.log 2>&1 &
FRAGD_PID=$!
INTERVAL=$(awk '$1 == "interval:" && in_pb { print $2 } /^pageblocks:/ { in_pb = 1 } /^[a-z]/ && !/^pageblocks:/ { in_pb = 0 }' /etc/fragd.yaml)
echo "FRAGD-COST interval ${INTERVAL}"
SECS=${INTERVAL%s}
T0=$(cut -d' ' -f1 /proc/uptime)
i=0
# One scrape per interval, from the first round after the start pass (fragd_pageblock_map_age_seconds
# appears once every block was read: a larger guest's pass takes longer) until ROUNDS more rounds are seen.
first= whole=
while [ $i -lt $((ROUNDS * 3 + 30)) ]; do
	kill -0 "$FRAGD_PID" 2>/dev/null || { echo "FRAGD-COST fragd_log $(tail -c 2000 /tmp/fragd.log | tr '\n' '|')"; finish; }
	if curl -sf --max-time 20 "$URL" >/tmp/m.prom; then
		ok=$(value /tmp/m.prom fragd_scans_total 'result="ok"')
		blocks=$(value /tmp/m.prom fragd_scan_pageblocks_read_total 'how="sample"')
		cpu=$(value /tmp/m.prom fragd_scan_cpu_seconds_total '')
		now=$(cut -d' ' -f1 /proc/uptime)
		if [ -z "$whole" ] && grep -q '^fragd_pageblock_map_age_seconds ' /tmp/m.prom; then
			whole=1
			echo "FRAGD-COST start_pass_s $(awk -v a="$now" -v b="$T0" 'BEGIN { printf "%.0f", a - b }') rounds ${ok%.*}"
		fi
		if [ -n "$whole" ] && [ -n "$ok" ] && [ "${ok%.*}" -ge 1 ]; then
			echo "FRAGD-ROUND $(awk -v a="$now" -v b="$T0" 'BEGIN { printf "%.1f", a - b }') ${ok%.*} ${blocks%.*} ${cpu:-nan}"
			[ -n "$first" ] || first=${ok%.*}
			[ $((${ok%.*} - first)) -ge "$ROUNDS" ] && break
		fi
	fi
	sleep "$SECS"
	i=$((i + 1))
done
/fragctl --socket "$SOCK" map --max-age 0 --json >/tmp/full.json 2>/tmp/full.err &&
	echo "FRAGD-FULL $(grep -o '"pages_read":[0-9]*' /tmp/full.json | head -1 | cut -d: -f2) $(grep -o '"duration_ns":[0-9]*' /tmp/full.json | head -1 | cut -d: -f2)" ||
	echo "FRAGD-COST full_error $(head -c 300 /tmp/full.err | tr '\n' '|')"
finish
