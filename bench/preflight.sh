#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Is `fragctl preflight` honest? What it says a host can supply in 2 MiB pages (free now, and
# makeable by one compaction, with the estimate's 95% interval), against what one node
# compaction and a hugetlb pool write then reach, on memory fragmented three ways (holes, mixed,
# polluted). As root after the build:
#
#   bash bench/preflight.sh          # 5 rounds; writes BENCHMARKS.md (the preflight section)
#
# run_one below is one run; the section bench/preflight_report.py writes describes it with the
# figures (the fragmentations, the grid of counts whose verdicts are checked against preflight's
# rule, the compaction and the pool write).
# Knobs: BENCH_PREFLIGHT_FRAGMENTATIONS ("holes mixed polluted"), BENCH_PREFLIGHT_REPEATS (5),
# BENCH_PREFLIGHT_PERCENT (95), BENCH_PREFLIGHT_SETTLE (30), MIXED_CACHE_MIB (2048),
# MIXED_FILES (200000), MIXED_PGTABLES (131072), POLLUTE_PGTABLES (262144: 1 GiB), BENCH_OUTPUT
# (file to update), FRAGD_BUILD_DIR, BENCH_KEEP=1; BENCH_QUICK=1: one round at --percent 50,
# a 5 s settle, a mixed fill of 64 MiB, 2000 files, 1024 page tables, 4096 more for polluted,
# written to /tmp/fragd-bench-quick.md. Every setting it changes is put back on exit, and every
# process it starts is ended by its pid.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=bench/fragment.sh
source "$(dirname "${BASH_SOURCE[0]}")/fragment.sh"
bench_start preflight "it writes sysctls, compacts memory and loads BPF" fragd fragctl fragmenter physmap -- \
	python3 curl flock

read_subset FRAGMENTATIONS BENCH_PREFLIGHT_FRAGMENTATIONS "holes mixed polluted"
REPEATS=${BENCH_PREFLIGHT_REPEATS:-$(q 5 1)}
PERCENT=${BENCH_PREFLIGHT_PERCENT:-$(q 95 50)}
SETTLE=${BENCH_PREFLIGHT_SETTLE:-$(q 30 5)}
MIXED_CACHE_MIB=${MIXED_CACHE_MIB:-$(q 2048 64)}
MIXED_FILES=${MIXED_FILES:-$(q 200000 2000)}
MIXED_PGTABLES=${MIXED_PGTABLES:-$(q 131072 1024)}
POLLUTE_PGTABLES=${POLLUTE_PGTABLES:-$(q 262144 4096)}
require_uint BENCH_PREFLIGHT_ REPEATS PERCENT SETTLE
require_uint "" MIXED_CACHE_MIB MIXED_FILES MIXED_PGTABLES POLLUTE_PGTABLES
((REPEATS >= 1 && PERCENT >= 1 && PERCENT <= 98)) ||
	die "BENCH_PREFLIGHT_REPEATS must be >= 1, BENCH_PREFLIGHT_PERCENT 1..98"
((QUICK == 1 || REPEATS >= 5)) || log "note: fewer than 5 rounds: no verdict to quote"

bench_work preflight 15
CACHE_FILE=/var/tmp/fragd-bench-preflight-cache.$$
SLAB_DIR=/dev/shm/fragd-bench-preflight-slab.$$
restore_on_exit() { fill_stop; restore_memory_settings; }
take_heavy_lock
save_memory_settings
T_START=$SECONDS

# Private copies: the build directory may be rebuilt while this runs.
cp "$BUILD_DIR/fragd" "$BUILD_DIR/fragctl" "$BUILD_DIR/fragmenter" "$BUILD_DIR/physmap" "$WORK/"
cp configs/fragd.yaml "$WORK/fragd.yaml"
FRAGD="$WORK/fragd"
begin_meta "$FRAGD"
meta quick="$QUICK" repeats="$REPEATS" percent="$PERCENT" settle_s="$SETTLE"
meta mixed "cache_mib=$MIXED_CACHE_MIB files=$MIXED_FILES pgtables=$MIXED_PGTABLES"
meta polluted_extra_pgtables "$POLLUTE_PGTABLES"
meta pageblocks_mode "$(awk '/^pageblocks:/ { p = 1; next } /^[^ #]/ { p = 0 } p && $1 == "mode:" { print $2 }' configs/fragd.yaml)"
BIG=$(($(meminfo MemTotal) / 2048))
meta pool_write "$BIG"

ctl() { "$WORK/fragctl" --socket "$SOCK" "$@"; } # fragctl on this run's fragd
# rule FREE MAKEABLE COUNT: the exit status the verdict's rule gives.
rule() { if (($3 <= $1)); then echo 0; elif (($3 <= $1 + $2)); then echo 3; else echo 4; fi; }

run_one() { # FRAGMENTATION ROUND
	local frag=$1 round=$2 i line t0
	R="$WORK/$frag-$round"
	mkdir -p "$R"
	echo 0 >"$PRO"
	start_fragmenter "$WORK/fragmenter" "$R" "$PERCENT" 600 || die "$FRAG_ERROR"
	case $frag in
	mixed) mixed_start "$R" ;;
	polluted)
		local n=$(($(free_blocks9) * 512 + POLLUTE_PGTABLES))
		pgtables_start "$R" "$n"
		log "polluted: $(head -1 "$R/pt.out")"
		;;
	esac
	line="frag=$frag round=$round pagetables_kib=$(meminfo PageTables) slab_kib=$(meminfo Slab) cached_kib=$(meminfo Cached)"
	start_fragd_in "$R" "$WORK/fragd.yaml"
	t0=$SECONDS
	for ((i = 0; i < 1200; i++)); do
		ctl status --json >"$R/status.json" 2>/dev/null &&
			python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1])).get("scan") is None)' "$R/status.json" && break
		sleep 0.1
	done
	((i < 1200)) || die "fragd showed no pageblock scan in 120 s: $(tail -3 "$R/fragd.log")"
	line+=" scan_wait_s=$((SECONDS - t0))"
	sleep "$SETTLE"
	ctl preflight 2MB 1 --json >"$R/preflight.json" 2>"$R/preflight.err" || true
	local free makeable answer total c rc asked bad m0 m1 m2 t c0 node reached
	[[ -s $R/preflight.json ]] || die "fragctl preflight gave no answer: $(tail -3 "$R/preflight.err" 2>/dev/null)"
	answer=$(python3 - "$R/preflight.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
lo, hi = j["interval"]
basis = j["basis"].replace(" ", "_")
print(j["free"], j["makeable"], f"free={j['free']} makeable={j['makeable']} pages_to_migrate={j['pages_to_migrate']}",
      f"lo={lo} hi={hi} age_s={j['age_seconds']:.1f} basis={basis} verdict1={j['verdict']}")
PY
)
	read -r free makeable _ <<<"$answer"
	line+=" ${answer#* * }"
	# The verdict at every count of a grid and at its edges, each answer's exit status against the
	# rule applied to that answer's own free and makeable (the free lists move from tick to tick).
	total=$((free + makeable))
	local counts=("$free" $((free + 1)) "$total" $((total + 1)))
	for ((i = 1; i <= 30; i++)); do counts+=($((total * i * 5 / 100))); done
	mkdir -p "$R/grid"
	for c in "${counts[@]}"; do
		((c >= 1)) || continue
		rc=0
		ctl preflight 2MB "$c" --json >"$R/grid/$c.json" 2>>"$R/preflight.err" || rc=$?
		echo "$c $rc" >>"$R/grid.txt"
	done
	read -r asked bad < <(python3 - "$R/grid.txt" "$R/grid" 2>"$R/rule.txt" <<'PY'
import json, sys
asked = bad = 0
for line in open(sys.argv[1]):
    c, rc = map(int, line.split())
    j = json.load(open(f"{sys.argv[2]}/{c}.json"))
    want = 0 if c <= j["free"] else 3 if c <= j["free"] + j["makeable"] else 4
    named = {"ready": 0, "makeable": 3, "no": 4}[j["verdict"]]
    asked += 1
    if rc != want or named != want:
        bad += 1
        print(f"count {c}: exit {rc}, verdict {j['verdict']}, free {j['free']} makeable {j['makeable']}: the rule says {want}",
              file=sys.stderr)
print(asked, bad)
PY
)
	line+=" rule_asked=$asked rule_bad=$bad"
	stop_pid "$FRAGD_PID" || true
	# One compaction, then as many huge pages as the kernel will make.
	m0=$(vmstat pgmigrate_success)
	c0=$(meminfo Cached)
	t=$(now_ms)
	for node in /sys/devices/system/node/node[0-9]*; do echo 1 >"$node/compact"; done
	line+=" compact_ms=$(($(now_ms) - t))"
	m1=$(vmstat pgmigrate_success)
	line+=" free_blocks_after_compact=$(free_blocks9)"
	t=$(now_ms)
	echo "$BIG" >"$HP" 2>/dev/null || true
	reached=$(<"$HP")
	line+=" pool_ms=$(($(now_ms) - t)) reached=$reached"
	m2=$(vmstat pgmigrate_success)
	line+=" cached_drop_kib=$((c0 - $(meminfo Cached)))"
	echo 0 >"$HP"
	line+=" migrated_compact=$((m1 - m0)) migrated_pool=$((m2 - m1))"
	line+=" verdict_at_reached=$(rule "$free" "$makeable" "$reached")"
	line+=" verdict_at_1.2x=$(rule "$free" "$makeable" $((reached * 12 / 10)))"
	exec 9>&-
	reap "$FRAG_PID"
	fill_stop
	echo "$line" >>"$WORK/runs.txt"
	log "$line"
}

for ((round = 1; round <= REPEATS; round++)); do
	for frag in $(arm_order "$round" "${FRAGMENTATIONS[@]}"); do run_one "$frag" "$round"; done
done

restore_memory_settings
meta_minutes
OUTPUT=$(report_output "$QUICK" "$ROOT")
python3 bench/preflight_report.py "$WORK/runs.txt" "$WORK/meta.env" "$OUTPUT"
log "wrote $OUTPUT"
# `python3 bench/preflight_report.py bench/data/preflight/runs.txt .../meta.env OUT` again.
keep_raw preflight "$WORK/runs.txt" "$WORK/meta.env"
FAILED=0
