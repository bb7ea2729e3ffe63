#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# How often fragd's Node Feature Discovery labels change while memory churns. As root after the
# build:
#
#   bash bench/labels.sh    # 5 rounds of 2 x 10 minutes (about 110 min); writes BENCHMARKS.md (labels section)
#
# bench/cost_churn.py churns memory (as bench/cost.sh's busy arm) from SETTLE s before the first
# round to the end. Each round: a fresh fragd with the shipped configs/fragd.yaml and
# `nfd.features_file` set; bench/labels_poll.py reads the file (and the raw values the labels are
# bucketed from) every POLL s for SECONDS s. Arms: steady (the churn alone) and edge (a ballast
# sized so that the raw value crosses the 2 MiB label's bucket edge every churn period, which is
# what the hold is for). bench/labels_report.py writes the section, which says what it counts.
# Goal (issue): at most one change per label per 10 minutes at steady churn.
#
# Knobs: BENCH_LABELS_ARMS ("steady edge"), BENCH_LABELS_ROUNDS (5), BENCH_LABELS_SECONDS (600),
# BENCH_LABELS_POLL (5), BENCH_LABELS_SETTLE (30), BENCH_COST_ANON_MIB (2048), BENCH_COST_FILE_MIB (1024),
# BENCH_COST_PERIOD (10), BENCH_OUTPUT, FRAGD_BUILD_DIR, BENCH_KEEP=1; BENCH_QUICK=1: 2 rounds of 60 s
# per arm, 10 s settle, /tmp/fragd-bench-quick.md. Changes no kernel setting; every process it starts
# is ended by its pid, and the churn frees its memory and deletes its file.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start labels "fragd loads BPF and reads kpageflags" fragd fragctl -- python3 curl flock

ROUNDS=${BENCH_LABELS_ROUNDS:-$(q 5 2)}
SECS=${BENCH_LABELS_SECONDS:-$(q 600 60)}
POLL=${BENCH_LABELS_POLL:-5}
SETTLE=${BENCH_LABELS_SETTLE:-$(q 30 10)}
ANON=${BENCH_COST_ANON_MIB:-2048}
FILE_MIB=${BENCH_COST_FILE_MIB:-1024}
PERIOD=${BENCH_COST_PERIOD:-10}
read_subset ARMS BENCH_LABELS_ARMS "steady edge"
require_positive ROUNDS SECS POLL SETTLE ANON FILE_MIB PERIOD
((QUICK == 1 || ROUNDS >= 5)) || log "note: fewer than 5 rounds: no verdict to quote"
OUT=$(report_output "$QUICK" "$ROOT")

bench_work labels 60 # no kernel setting is changed

take_heavy_lock # before the check: another heavy run may hold memory until it lets go
avail_mib=$(($(meminfo MemAvailable) / 1024))
((avail_mib > ANON + FILE_MIB + 2048)) || die "MemAvailable is $avail_mib MiB: the churn needs $ANON + $FILE_MIB MiB and 2 GiB to spare"
T_START=$SECONDS # the run, not the wait for the lock

cp "$BUILD_DIR/fragd" "$BUILD_DIR/fragctl" "$WORK/"
FRAGD="$WORK/fragd"
mkdir -p "$WORK/features.d"
FEATURES="$WORK/features.d/fragd"
sed "s|^  features_file: \"\"\$|  features_file: \"$FEATURES\"|" configs/fragd.yaml >"$WORK/fragd.yaml"
grep -q "^  features_file: \"$FEATURES\"\$" "$WORK/fragd.yaml" || die "configs/fragd.yaml has no 'features_file: \"\"' line under nfd"
HOLD=$(awk '/^nfd:/ { p = 1; next } /^[^ #]/ { p = 0 } p && $1 == "hold:" { print $2 }' configs/fragd.yaml)

begin_meta "$FRAGD"
meta quick="$QUICK" rounds="$ROUNDS" arms="${ARMS[*]}" seconds="$SECS" poll="$POLL" settle="$SETTLE"
meta nfd_hold="$HOLD"
meta churn "anon_mib=$ANON file_mib=$FILE_MIB period_s=$PERIOD"

spawn CHURN_PID python3 bench/cost_churn.py --dir "$WORK" --anon-mib "$ANON" --file-mib "$FILE_MIB" \
	--period "$PERIOD" --events "$WORK/churn.jsonl" 2>"$WORK/churn.err"
sleep "$SETTLE"

# edge_ballast: MiB of anonymous memory to hold so that the 2 MiB label's bucket edge below the
# middle of the churn's swing of MemFree (over two churn periods) falls in that middle: the edge
# 2^k GiB just below it. Prints "MIB EDGE_GIB".
edge_ballast() {
	local i f lo=0 hi=0 mid edge=1
	for ((i = 0; i < PERIOD * 8; i++)); do
		f=$(($(meminfo MemFree) / 1024))
		((lo == 0 || f < lo)) && lo=$f
		((f > hi)) && hi=$f
		sleep 0.25
	done
	mid=$(((lo + hi) / 2))
	while ((edge * 2 * 1024 <= mid)); do edge=$((edge * 2)); done
	echo "$((mid - edge * 1024)) $edge"
}

for ((r = 1; r <= ROUNDS; r++)); do
	for arm in $(arm_order "$r" "${ARMS[@]}"); do
	dir="$WORK/$arm$r"
	mkdir -p "$dir"
	kill -0 "$CHURN_PID" 2>/dev/null || die "the churn ended early: $(tail -3 "$WORK/churn.err")"
	BALLAST_PID=
	if [[ $arm == edge ]]; then
		read -r mib edge < <(edge_ballast)
		printf "ballast_mib=%s\nedge_gib=%s\n" "$mib" "$edge" >"$dir/arm.env"
		spawn BALLAST_PID python3 -c '
import mmap, signal, sys
n = int(sys.argv[1]) << 20
m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for off in range(0, n, 4096):
    m[off] = 1
print("ready", flush=True)
signal.pause()' "$mib" >"$dir/ballast.out" 2>&1
		for ((i = 0; i < 1200; i++)); do
			grep -q ready "$dir/ballast.out" 2>/dev/null && break
			kill -0 "$BALLAST_PID" 2>/dev/null || die "the ballast exited: $(cat "$dir/ballast.out")"
			sleep 0.1
		done
		log "$arm $r: holding $mib MiB so that the 2 MiB label's edge at $edge GiB is mid-swing"
	fi
	start_fragd_in "$dir" "$WORK/fragd.yaml"
	for ((i = 0; i < 1200; i++)); do [[ -s $FEATURES ]] && break; sleep 0.1; done
	[[ -s $FEATURES ]] || die "$arm $r: fragd wrote no feature file in 120 s: $(tail -3 "$dir/fragd.log")"
	log "$arm $r: $(grep -v '^#' "$FEATURES" | tr '\n' ' ')"
	python3 bench/labels_poll.py --fragctl "$WORK/fragctl" --socket "$SOCK" --file "$FEATURES" --seconds "$SECS" \
		--interval "$POLL" --out "$dir/polls.jsonl"
	stop_pid "$FRAGD_PID" 15 || die "$arm $r: fragd exited $? after SIGTERM (log $dir/fragd.log)"
	# A stopped fragd labels nothing: it removes its file.
	echo "left=$([[ -e $FEATURES ]] && echo 1 || echo 0)" >>"$dir/arm.env"
	rm -f "$FEATURES"
	[[ -z $BALLAST_PID ]] || stop_pid "$BALLAST_PID" 10 || true
	log "$arm $r: $(python3 bench/labels_report.py --changes "$dir/polls.jsonl")"
	done
done
kill -0 "$CHURN_PID" 2>/dev/null || die "the churn ended during the run: $(tail -3 "$WORK/churn.err")"
stop_pid "$CHURN_PID" 60 || die "the churn did not exit cleanly: $(tail -3 "$WORK/churn.err")"
meta_minutes
# What the report reads, kept: `python3 bench/labels_report.py bench/data/labels OUT`.
keep_found labels "$WORK" -name meta.env -o -name polls.jsonl -o -name arm.env
python3 bench/labels_report.py "$WORK" "$OUT"
log "wrote $OUT"
FAILED=0
