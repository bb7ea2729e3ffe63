#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What `fragctl preflight` costs: its latency while bench/load.sh's load runs, and what it adds to
# fragd's CPU on a quiet host. As root after the build:
#
#   bash bench/preflight_latency.sh        # about 45 min; writes BENCHMARKS.md (preflight-latency section)
#
# Parts: 1. quiet host: a burst of requests and pairs of windows with and without one request a
# second (bench/preflight_timer.py); 2. under bench/load.sh's load on fragmented memory;
# 3. (baseline) this build against BENCH_PFL_BASELINE, a fragd built from the commit before
# preflight, nobody asking. bench/preflight_latency_report.py writes the section, which says how
# each is measured. Goals (issue): preflight p99 < 50 ms under load; preflight adds nothing to
# fragd's idle CPU (read here as: with - without one request a second at most 0.01 points of a core).
#
# Knobs: BENCH_PFL_PARTS ("quiet load"; any of quiet, load, baseline), BENCH_PFL_BASELINE,
# BENCH_PFL_BASELINE_CONFIG, FRAGD_BUILD_DIR (build), BENCH_PFL_ROUNDS (5; quick 1),
# BENCH_PFL_SECONDS (60; quick 10), BENCH_PFL_PERIOD (0.05), BENCH_PFL_CPU_PAIRS (5; quick 1),
# BENCH_PFL_CPU_SECONDS (120; quick 15), BENCH_PFL_BURST (5000; quick 500), BENCH_PFL_SETTLE (30;
# quick 5), LOAD_SCRAPERS (50), LOAD_CLIENTS (20), LOAD_PERCENT (90; quick 30), BENCH_OUTPUT,
# BENCH_KEEP=1. Changes vm.compaction_proactiveness to 0 while memory is fragmented (restored on
# exit whatever happens); vm.nr_hugepages must be 0 at start.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start preflight-latency "it loads BPF and writes sysctls" fragd fragctl fragmenter -- ab python3 curl flock

ROUNDS=${BENCH_PFL_ROUNDS:-$(q 5 1)}
SECS=${BENCH_PFL_SECONDS:-$(q 60 10)}
PERIOD=${BENCH_PFL_PERIOD:-0.05}
PAIRS=${BENCH_PFL_CPU_PAIRS:-$(q 5 1)}
CPU_SECS=${BENCH_PFL_CPU_SECONDS:-$(q 120 15)}
BURST=${BENCH_PFL_BURST:-$(q 5000 500)}
SETTLE=${BENCH_PFL_SETTLE:-$(q 30 5)}
SCRAPERS=${LOAD_SCRAPERS:-50}
CLIENTS=${LOAD_CLIENTS:-20}
PERCENT=${LOAD_PERCENT:-$(q 90 30)}
read -r -a PARTS <<<"${BENCH_PFL_PARTS:-quiet load}"
for p in "${PARTS[@]}"; do [[ $p =~ ^(quiet|load|baseline)$ ]] || die "unknown part '$p' (known: quiet load baseline)"; done
part() { [[ " ${PARTS[*]} " == *" $1 "* ]]; }
BASELINE=${BENCH_PFL_BASELINE:-}
BASELINE_CONFIG=${BENCH_PFL_BASELINE_CONFIG:-}
! part baseline || [[ -x $BASELINE && -f $BASELINE_CONFIG ]] ||
	die "the baseline part needs BENCH_PFL_BASELINE (a fragd binary) and BENCH_PFL_BASELINE_CONFIG (its configs/fragd.yaml)"
require_positive ROUNDS SECS PAIRS CPU_SECS BURST SETTLE SCRAPERS CLIENTS PERCENT
[[ $PERIOD =~ ^[0-9]*\.?[0-9]+$ ]] || die "BENCH_PFL_PERIOD must be a number of seconds, got '$PERIOD'"
((QUICK == 1 || (ROUNDS >= 5 && PAIRS >= 5))) || log "note: fewer than 5 rounds or pairs: no verdict to quote"
OUT=$(report_output "$QUICK" "$ROOT")

bench_work pfl 15
restore_on_exit() { restore_memory_settings; }
take_heavy_lock
save_memory_settings
T_START=$SECONDS # the run, not the wait for the lock

cp "$BUILD_DIR/fragd" "$BUILD_DIR/fragctl" "$BUILD_DIR/fragmenter" "$WORK/"
cp configs/fragd.yaml "$WORK/fragd.yaml"
[[ -z $BASELINE ]] || cp "$BASELINE" "$WORK/fragd-baseline"
FRAGD="$WORK/fragd"
begin_meta "$FRAGD"
meta parts "${PARTS[*]}"
[[ -z $BASELINE ]] || meta baseline_sha="$(sha256sum "$BASELINE" | cut -c1-12)" \
	baseline_version="$("$BASELINE" --version 2>&1 | head -1)"
meta quick="$QUICK" rounds="$ROUNDS" seconds="$SECS" period="$PERIOD" cpu_pairs="$PAIRS"
meta cpu_seconds="$CPU_SECS" burst="$BURST" settle="$SETTLE" scrapers="$SCRAPERS" clients="$CLIENTS" percent="$PERCENT"
meta ab_version "$(dpkg-query -W -f='${Version}' apache2-utils 2>/dev/null || ab -V | head -1)"

# cpu_ns: "MAIN TOTAL", ns fragd's main thread and all its threads have run (schedstat).
cpu_ns() {
	local t main=0 total=0 v
	for t in /proc/"$FRAGD_PID"/task/*; do
		read -r v _ <"$t/schedstat"
		total=$((total + v))
		[[ ${t##*/} == "$FRAGD_PID" ]] && main=$v
	done
	echo "$main $total"
}
# cpu_mark, then cpu_since: "wall_ms=W main_ns=M total_ns=T" from the mark to now.
cpu_mark() { read -r M0 P0 < <(cpu_ns); S0=$(now_ms); }
cpu_since() {
	local m p
	read -r m p < <(cpu_ns)
	echo "wall_ms=$(($(now_ms) - S0)) main_ns=$((m - M0)) total_ns=$((p - P0))"
}

# fragd_with_scan DIR CONFIG: fragd (FRAGD) with CONFIG started, its first pageblock scan ended, SETTLE s.
fragd_with_scan() {
	start_fragd_in "$1" "$2"
	wait_first_scan 120 "$1/fragd.log"
	sleep "$SETTLE"
}

if part quiet; then
# --- 1. quiet host ------------------------------------------------------------------
mkdir -p "$WORK/quiet"
fragd_with_scan "$WORK/quiet" "$WORK/fragd.yaml"
meta load_quiet_start "$(cut -d' ' -f1-3 /proc/loadavg)"
cpu_mark
python3 - "$SOCK" "$BURST" >"$WORK/quiet/burst.txt" <<'PY'
import json, sys
sys.path.insert(0, "bench")
from benchlib import control_request
path, n = sys.argv[1], int(sys.argv[2])
bad = 0
for _ in range(n):
    try:
        bad += json.loads(control_request(path, b'{"cmd":"preflight","size_kib":2048,"count":1}\n')).get("ok") is not True
    except EOFError:
        bad += 1
print(bad)
PY
echo "requests=$BURST bad=$(cat "$WORK/quiet/burst.txt") $(cpu_since)" >"$WORK/quiet/burst.env"
log "burst: $(cat "$WORK/quiet/burst.env")"
sleep 5
for ((p = 1; p <= PAIRS; p++)); do
	for arm in $(arm_order "$p" without with); do
		tsv=$WORK/quiet/pair$p-with.tsv n=0
		cpu_mark
		[[ $arm == without ]] || spawn TP python3 bench/preflight_timer.py --fragctl "$WORK/fragctl" --socket "$SOCK" \
			--seconds "$CPU_SECS" --period 1 --socket-too 0 --out "$tsv"
		sleep "$CPU_SECS"
		d=$(cpu_since)
		if [[ $arm == with ]]; then
			reap "$TP"
			((RC == 0)) || die "pair $p: a preflight request failed: $(grep -v $'\tok$' "$tsv" | head -2)"
			n=$(wc -l <"$tsv")
		fi
		echo "pair=$p arm=$arm $d requests=$n" >>"$WORK/quiet/pairs.txt"
		log "$(tail -1 "$WORK/quiet/pairs.txt")"
	done
done
meta load_quiet_end "$(cut -d' ' -f1-3 /proc/loadavg)"
stop_pid "$FRAGD_PID" 15 || die "fragd exited non-zero after the quiet part (log $WORK/quiet/fragd.log)"
fi

if part load; then
# --- 2. under load --------------------------------------------------------------------
echo 0 >"$PRO"
start_fragmenter "$WORK/fragmenter" "$WORK" "$PERCENT" 600 || die "$FRAG_ERROR"
log "fragmented: $(cat "$WORK/frag.out")"
mkdir -p "$WORK/load"
fragd_with_scan "$WORK/load" "$WORK/fragd.yaml"
MAXREQ=$((SECS * 20000))
for phase in main control; do
	mix=status,hist,map
	[[ $phase == control ]] && mix=status,hist
	for ((r = 1; r <= ROUNDS; r++)); do
		P="$WORK/load/$phase$r"
		mkdir -p "$P"
		spawn AB_PID ab -l -r -q -s 10 -c "$SCRAPERS" -t "$SECS" -n "$MAXREQ" "$URL" >"$P/ab.out" 2>"$P/ab.err"
		spawn CL_PID python3 bench/load_clients.py --fragctl "$WORK/fragctl" --socket "$SOCK" --clients "$CLIENTS" \
			--seconds "$SECS" --commands "$mix" --out "$P/clients.tsv" >"$P/clients.out" 2>&1
		python3 bench/preflight_timer.py --fragctl "$WORK/fragctl" --socket "$SOCK" --seconds "$SECS" \
			--period "$PERIOD" --socket-too 1 --out "$P/preflight.tsv" && RC=0 || RC=$?
		echo "timer_exit=$RC" >"$P/phase.env"
		reap "$AB_PID"
		echo "ab_exit=$RC" >>"$P/phase.env"
		reap "$CL_PID"
		echo "clients_exit=$RC" >>"$P/phase.env"
		kill -0 "$FRAGD_PID" 2>/dev/null || die "fragd died during the load: $(tail -5 "$WORK/load/fragd.log")"
		log "[$phase $r] ab: $(grep -E '^(Complete|Failed) requests' "$P/ab.out" | tr -s ' ' | tr '\n' ' '); clients: $(head -1 "$P/clients.out"); preflight: $(wc -l <"$P/preflight.tsv") requests"
		sleep 3
	done
done
stop_pid "$FRAGD_PID" 15 || die "fragd exited non-zero after the load (log $WORK/load/fragd.log)"
exec 9>&-
stop_pid "$FRAG_PID" 60 || true
fi

# --- 3. against a fragd without preflight -----------------------------------------------
# PAIRS pairs of a fresh fragd of this build and of BASELINE (a build of the commit before
# preflight, ensure and the labels, with that commit's configs/fragd.yaml: BASELINE_CONFIG), their
# order alternating; each SETTLE s after its first scan, then CPU_SECS s without any request.
if part baseline; then
	mkdir -p "$WORK/baseline"
	for ((p = 1; p <= PAIRS; p++)); do
		for arm in $(arm_order "$p" baseline this); do
			dir="$WORK/baseline/$arm$p"
			mkdir -p "$dir"
			cfg=$WORK/fragd.yaml FRAGD=$WORK/fragd
			[[ $arm == this ]] || cfg=$BASELINE_CONFIG FRAGD=$WORK/fragd-baseline
			cp "$cfg" "$dir/fragd.yaml"
			fragd_with_scan "$dir" "$dir/fragd.yaml"
			cpu_mark
			sleep "$CPU_SECS"
			d=$(cpu_since)
			stop_pid "$FRAGD_PID" 15 || die "fragd ($arm) exited non-zero (log $dir/fragd.log)"
			echo "pair=$p arm=$arm $d" >>"$WORK/baseline/pairs.txt"
			log "$(tail -1 "$WORK/baseline/pairs.txt")"
		done
	done
fi

restore_memory_settings

meta_minutes
# What the report reads, kept: `python3 bench/preflight_latency_report.py bench/data/preflight_latency OUT`.
keep_found preflight_latency "$WORK" -name meta.env -o -name preflight.tsv -o -name ab.out -o -name clients.tsv \
	-o -name burst.env -o -name pairs.txt
python3 bench/preflight_latency_report.py "$WORK" "$OUT"
log "wrote $OUT"
FAILED=0
