#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# How soon fragd sees a stall and acts on it, this build against an earlier one, counted from the
# kernel's own record. As root after the build:
#
#   bash bench/reaction.sh      # 5 rounds, about 25 minutes; writes BENCHMARKS.md (reaction section)
#
# Two arms, this build's fragd and that of commit BASE (built once from `git archive BASE` into
# /var/cache/fragd-bench/base-BASE), the order alternating by round. run_arm below is one run;
# bench/reaction.py probes it (seen: the stall in /metrics; acted: fragd's first demand action)
# and writes the section, which describes the method. Goals: seen at the next tick, this build -
# BASE within half a tick either way. The runs' raw data stay in bench/data/reaction:
# `python3 bench/reaction.py report --work bench/data/reaction --output BENCHMARKS.md` writes
# the section again.
#
# Knobs: BENCH_REACTION_BASE (c5e4deb: the tree before the concerns read their own maps),
# BENCH_REACTION_ROUNDS (5), BENCH_REACTION_PAGES (1200), BENCH_REACTION_PERCENT (90),
# BENCH_REACTION_SETTLE (8), BENCH_OUTPUT, FRAGD_BUILD_DIR, BENCH_KEEP=1; BENCH_QUICK=1: 1 round,
# /tmp/fragd-bench-quick.md. The pool is emptied and vm.compaction_proactiveness put back on exit;
# every process it starts is ended by its pid.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start reaction "fragd loads BPF and writes sysctls" fragd fragmenter -- python3 curl git cmake flock

BASE=${BENCH_REACTION_BASE:-c5e4deb}
ROUNDS=${BENCH_REACTION_ROUNDS:-$(q 5 1)}
PAGES=${BENCH_REACTION_PAGES:-1200}
PERCENT=${BENCH_REACTION_PERCENT:-90}
SETTLE=${BENCH_REACTION_SETTLE:-8}
TICK=1 # s: the tick both builds run with (tick_interval), which the goals are counted in
require_positive ROUNDS PAGES PERCENT SETTLE
((QUICK == 1 || ROUNDS >= 5)) || log "note: fewer than 5 rounds: no verdict to quote"
OUT=$(report_output "$QUICK" "$ROOT")
BASE_SHA=$(git -C "$ROOT" rev-parse --verify "$BASE^{commit}") || die "BENCH_REACTION_BASE=$BASE is no commit of $ROOT"

bench_work reaction 30
save_memory_settings
restore_on_exit() { restore_memory_settings; }
take_heavy_lock

# The base arm's binaries, built once per commit.
BASE_DIR=/var/cache/fragd-bench/base-${BASE_SHA:0:12}
if [[ ! -x $BASE_DIR/fragd ]]; then
	log "building fragd at $BASE (${BASE_SHA:0:12}) into $BASE_DIR"
	src="$WORK/base-src"
	mkdir -p "$src" "$BASE_DIR"
	git -C "$ROOT" archive "$BASE_SHA" | tar -x -C "$src"
	{ cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
		cmake --build "$src/build" -j "$(nproc)" --target fragd; } >"$WORK/base-build.log" 2>&1 ||
		die "building $BASE failed: $(tail -5 "$WORK/base-build.log")"
	cp "$src/build/fragd" "$BASE_DIR/"
	rm -rf "$src"
fi
mkdir -p "$WORK/head" "$WORK/base"
cp "$BUILD_DIR/fragd" "$WORK/head/"
cp "$BASE_DIR/fragd" "$WORK/base/"
cp "$BUILD_DIR/fragmenter" "$WORK/"
cat >"$WORK/reaction.yaml" <<YAML
mode: act
tick_interval: ${TICK}s
compaction:
  method: node
  score: {enabled: false}
  reserve: {memory_percent: 0}
  demand: {enabled: true, min_order: 9, stalls_per_second: 1, stall_p99: 0s, window: 5s}
YAML
begin_meta "$WORK/head/fragd"
meta quick="$QUICK" rounds="$ROUNDS" pages="$PAGES" percent="$PERCENT" settle_s="$SETTLE"
meta base="$BASE" base_sha="${BASE_SHA:0:12}" base_fragd_sha="$(sha256sum "$WORK/base/fragd" | cut -c1-12)" tick_s="$TICK"

# run_arm ARM ROUND: one run; returns 3 when the burst did not stall enough for the trigger.
run_arm() {
	local arm=$1 dir="$WORK/r$2-$1" rc=0
	rm -rf "$dir"
	mkdir -p "$dir"
	echo 0 >"$PRO"
	start_fragmenter "$WORK/fragmenter" "$dir" "$PERCENT" 600 || die "$FRAG_ERROR"
	# The last burst's failures leave order-9 compaction deferred: a burst would then stall a few
	# times and fail. End the deferral first (tests/tools/fragmenter.sh).
	undefer_order9 "$HP" 200 60 >/dev/null || log "round $2 $arm: order-9 compaction may still be deferred"
	FRAGD="$WORK/$arm/fragd" start_fragd_in "$dir" "$WORK/reaction.yaml"
	sleep "$SETTLE"
	/usr/bin/python3 bench/reaction.py probe --url "$URL" --socket "$SOCK" \
		--pages "$PAGES" --out "$dir/run.json" || rc=$?
	stop_pid "$FRAGD_PID" 30
	exec 9>&-
	stop_pid "$FRAG_PID" 60
	echo 0 >"$HP"
	((rc == 0 || rc == 3)) || die "$arm round $2: the probe failed (log: $(tail -3 "$dir/fragd.log"))"
	log "round $2 $arm: $(cat "$dir/run.json")"
	return "$rc"
}

redone=0
for ((r = 1; r <= ROUNDS; r++)); do
	for a in $(arm_order "$r" base head); do
		for ((try = 1; ; try++)); do
			run_arm "$a" "$r" && break
			((try < 3)) || die "$a round $r: $try bursts in a row stalled too little for the demand trigger"
			redone=$((redone + 1))
		done
	done
done
meta redone "$redone"

FAILED=0
keep_found reaction "$WORK" -name meta.env -o -name run.json
/usr/bin/python3 bench/reaction.py report --work "$WORK" --output "$OUT"
