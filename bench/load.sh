#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragd under load: 50 concurrent /metrics scrapers and 20 fragctl clients for 60 s on loopback,
# against a fragd run as in production (root, real BPF, the shipped config) on fragmented memory,
# so that /metrics, status and map carry real data. As root after the build:
#
#   flock /tmp/fragd-heavy.lock bash bench/load.sh     # ~5 min; writes RELIABILITY.md (load section)
#   BENCH_QUICK=1 bash bench/load.sh                   # 2 x 10 s smoke run; writes /tmp/fragd-reliability-quick.md
#
# Without an outer flock it takes /tmp/fragd-heavy.lock itself (waiting for it). Each phase
# ("main" with the clients' mix LOAD_FRAGCTL_MIX; "control" with status and hist only, so that
# what a map request costs the main loop is told apart) runs a fresh fragd, ab's scrapers,
# bench/load_clients.py and bench/procmon.py at once; bench/load_report.py writes the section,
# which says what each counts. Goals (issue): no error; scrape p99 <= 100 ms; the collector tick
# never late by more than one tick (late max <= tick_interval, no tick missed).
#
# Knobs (environment): FRAGD_BUILD_DIR (fragd and fragctl, default build), LOAD_SECONDS (60;
# quick 10), LOAD_SCRAPERS (50), LOAD_CLIENTS (20), LOAD_PERCENT (90; quick 30),
# LOAD_SETTLE (10), LOAD_FRAGCTL_MIX (status,hist,map: the fragctl commands the clients run in
# turn; map = map --json), LOAD_CONTROL (0: no control phase; default 1 when the mix has map),
# BENCH_QUICK, BENCH_OUTPUT (file to update), BENCH_KEEP=1 keeps the work directory.
# Changes vm.compaction_proactiveness to 0 for the run (so that kcompactd does not undo the
# fragmentation meanwhile); restored on exit whatever happens. vm.nr_hugepages must be 0 at start.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start load "it loads BPF and writes sysctls" fragd fragctl -- ab gcc python3 curl flock
debian_python prometheus_client python3-prometheus-client

SECONDS_RUN=${LOAD_SECONDS:-$(q 60 10)}
SCRAPERS=${LOAD_SCRAPERS:-50}
CLIENTS=${LOAD_CLIENTS:-20}
PERCENT=${LOAD_PERCENT:-$(q 90 30)}
SETTLE=${LOAD_SETTLE:-10}
MIX=${LOAD_FRAGCTL_MIX:-status,hist,map}
[[ $MIX =~ ^(status|hist|map)(,(status|hist|map))*$ ]] || die "LOAD_FRAGCTL_MIX must be a comma-separated list of status, hist, map; got '$MIX'"
CONTROL=${LOAD_CONTROL:-$([[ ,$MIX, == *,map,* ]] && echo 1 || echo 0)}
[[ $CONTROL =~ ^[01]$ ]] || die "LOAD_CONTROL must be 0 or 1, got '$CONTROL'"
require_uint "" SECONDS_RUN SCRAPERS CLIENTS PERCENT SETTLE
((SECONDS_RUN >= 5)) || die "LOAD_SECONDS must be >= 5"
((SCRAPERS >= 1 && CLIENTS >= 1)) || die "LOAD_SCRAPERS and LOAD_CLIENTS must be >= 1"
((PERCENT >= 1 && PERCENT <= 95)) || die "LOAD_PERCENT must be in 1..95, got $PERCENT"

bench_work load 15
restore_on_exit() { restore_memory_settings; }
take_heavy_lock
save_memory_settings

# Private copies: others may rebuild the build directory while this runs.
cp "$BUILD_DIR/fragd" "$BUILD_DIR/fragctl" "$WORK/"
cp configs/fragd.yaml "$WORK/fragd.yaml"
gcc -O2 -Wall -Wextra -o "$WORK/fragmenter" tests/tools/fragmenter.c || die "cannot compile tests/tools/fragmenter.c"
begin_meta "$WORK/fragd"
meta ab_version "$(dpkg-query -W -f='${Version}' apache2-utils 2>/dev/null || ab -V | head -1)"
meta quick="$QUICK" seconds="$SECONDS_RUN" scrapers="$SCRAPERS" clients="$CLIENTS" percent="$PERCENT"
meta settle="$SETTLE" control="$CONTROL"
meta scan_interval "$(awk '/^pageblocks:/ { p = 1; next } /^[^ #]/ { p = 0 } p && $1 == "interval:" { print $2 }' configs/fragd.yaml)"
meta proactiveness_orig "$PRO_ORIG"
meta loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"

echo 0 >"$PRO"
wait_no_fragmenter
log "fragmenting ${PERCENT}% of MemAvailable ($(($(meminfo MemAvailable) / 1024)) MiB)"
start_fragmenter "$WORK/fragmenter" "$WORK" "$PERCENT" 600 || die "$FRAG_ERROR"
meta fragmenter_kept_kib "$(awk '/^ready/ { print $2 }' "$WORK/frag.out")"
log "fragmented: $(cat "$WORK/frag.out")"

# run_phase NAME MIX: a fresh fragd on the fragmented memory, its first scan, LOAD_SETTLE s,
# then the load with the fragctl commands MIX; everything in $WORK/NAME, facts in its phase.env.
run_phase() {
	local name=$1 mix=$2 P=$WORK/$1
	local META=$P/phase.env # meta() (lib.sh) appends to $META
	mkdir -p "$P"
	: >"$META"
	meta fragctl_mix="$mix" loadavg_start="$(cut -d' ' -f1-3 /proc/loadavg)"
	start_fragd_in "$P" "$WORK/fragd.yaml"
	meta fragd_programs "$FRAGD_PROGRAMS"
	# The first pageblock scan (at start) must be done, so that status and map carry it.
	wait_first_scan 30 "$P/fragd.log"
	# Sizes of one answer each (a map request may scan, on fragd's main loop: before the settling time).
	meta map_bytes "$("$WORK/fragctl" --socket "$SOCK" map --json | wc -c)"
	sleep "$SETTLE"
	"$WORK/fragctl" --socket "$SOCK" status >"$P/status-before.txt" || die "fragctl status failed before the load"
	meta tick_ns "$("$WORK/fragctl" --socket "$SOCK" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["tick_ns"])')"
	meta node_score "$(awk '/^node 0: score/ { sub(",", "", $4); print $4; exit }' "$P/status-before.txt")"
	curl -sf --max-time 10 "$URL" >"$P/before.prom" || die "cannot scrape fragd before the load"
	meta scrape_bytes "$(wc -c <"$P/before.prom")"

	log "[$name] $SCRAPERS scrapers (ab), $CLIENTS fragctl clients ($mix), ${SECONDS_RUN}s; fragd pid $FRAGD_PID, $(grep -m1 '^node 0' "$P/status-before.txt")"
	spawn MON_PID "$PY" bench/procmon.py --pid "$FRAGD_PID" --interval 1 --url "$URL" --out "$P/monitor.jsonl"
	sleep 1
	# ab sizes its result table on -n (given after -t, which would set it to 50000): room for
	# 20000 scrapes a second; -n reached before the time limit would end the run early (reported).
	MAXREQ=$((SECONDS_RUN * 20000))
	meta ab_cmd "ab -l -r -q -s 10 -c $SCRAPERS -t $SECONDS_RUN -n $MAXREQ -e percentiles.csv http://127.0.0.1:PORT/metrics"
	meta ab_max_requests="$MAXREQ" load_start_unix="$(date +%s.%N)"
	spawn AB_PID ab -l -r -q -s 10 -c "$SCRAPERS" -t "$SECONDS_RUN" -n "$MAXREQ" -e "$P/ab.csv" "$URL" \
		>"$P/ab.out" 2>"$P/ab.err"
	spawn CL_PID python3 bench/load_clients.py --fragctl "$WORK/fragctl" --socket "$SOCK" --clients "$CLIENTS" \
		--seconds "$SECONDS_RUN" --commands "$mix" --out "$P/clients.tsv" >"$P/clients.out" 2>&1
	reap "$AB_PID"
	meta ab_exit "$RC"
	reap "$CL_PID"
	meta clients_exit "$RC"
	meta load_end_unix "$(date +%s.%N)"
	sleep 1
	stop_pid "$MON_PID" 5 || true
	curl -sf --max-time 10 "$URL" >"$P/after.prom" || log "[$name] cannot scrape fragd after the load"
	kill -0 "$FRAGD_PID" 2>/dev/null || die "fragd died during the load: $(tail -5 "$P/fragd.log")"
	meta hwm_kib "$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$FRAGD_PID/status")"
	stop_pid "$FRAGD_PID" 15 && RC=0 || RC=$?
	meta fragd_exit="$RC" loadavg_end="$(cut -d' ' -f1-3 /proc/loadavg)"
	# fragd's log: anything that is not an info line is worth reading.
	grep -v '^<6>' "$P/fragd.log" >"$P/fragd.notes" || true
	log "[$name] ab: $(grep -E '^(Complete|Failed) requests' "$P/ab.out" | tr -s ' ' | tr '\n' ' '); clients: $(head -1 "$P/clients.out")"
}

run_phase main "$MIX"
((CONTROL == 0)) || run_phase control status,hist
stop_pid "$FRAG_PID" 60 || true
restore_on_exit
meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"

OUT=$(report_output "$QUICK" "$ROOT" RELIABILITY)
# What the report reads, kept: `python3 bench/load_report.py --work bench/data/load --output OUT`.
keep_found load "$WORK" -name meta.env -o -path './*/*' \( -name phase.env -o -name ab.out -o -name ab.csv \
	-o -name clients.tsv -o -name monitor.jsonl -o -name before.prom -o -name after.prom -o -name fragd.notes \)
"$PY" bench/load_report.py --work "$WORK" --output "$OUT"
log "section written to $OUT"
FAILED=0
