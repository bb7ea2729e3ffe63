#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The vm.defrag_mode guard's run, counted with the kernel's own record. As root after the build:
#
#   bash bench/defrag_guard.sh      # 5 rounds, about 8 minutes; writes BENCHMARKS.md (defrag_guard section)
#
# Each round, vm.defrag_mode 1 and fragd in act mode with only the guard on: a healthy phase
# (nothing made; want no action), then a storm (two readers thrash a file's page cache in a
# 32 MiB memory cgroup: PSI full) until the guard writes 0 and for its hold. The section
# bench/defrag_guard_report.py writes says what each figure counts, and what it does not show:
# this pressure is the cgroup's limit, not defrag_mode's.
#
# Knobs: BENCH_GUARD_ROUNDS (5), BENCH_GUARD_WINDOW (10), BENCH_GUARD_HOLD (30),
# BENCH_GUARD_HEALTHY (30), BENCH_GUARD_LIMIT (2), BENCH_OUTPUT, FRAGD_BUILD_DIR, BENCH_KEEP=1;
# BENCH_QUICK=1: 2 rounds, /tmp/fragd-bench-quick.md. vm.defrag_mode is put back on exit; the
# cgroup, the file and every process it starts go.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start defrag_guard "fragd acts and writes vm.defrag_mode" fragd -- python3 curl dd
DM=/proc/sys/vm/defrag_mode
[[ -f $DM ]] || die "this kernel has no vm.defrag_mode (Linux 6.15+)"
[[ -f /proc/pressure/memory ]] || die "this kernel has no PSI (/proc/pressure/memory)"

ROUNDS=${BENCH_GUARD_ROUNDS:-$(q 5 2)}
WINDOW=${BENCH_GUARD_WINDOW:-10}
HOLD=${BENCH_GUARD_HOLD:-30}
HEALTHY=${BENCH_GUARD_HEALTHY:-30}
LIMIT=${BENCH_GUARD_LIMIT:-2}
require_positive ROUNDS WINDOW HOLD HEALTHY LIMIT
((QUICK == 1 || ROUNDS >= 5)) || log "note: fewer than 5 rounds: no verdict to quote"
OUT=$(report_output "$QUICK" "$ROOT")

bench_work guard 30
DM_ORIG=$(<"$DM")
CG=fragd-bench-guard-$$
if [[ -f /sys/fs/cgroup/cgroup.controllers ]] && grep -qw memory /sys/fs/cgroup/cgroup.subtree_control; then
	MEMCG=/sys/fs/cgroup/$CG LIMIT_FILE=memory.max
elif [[ -f /sys/fs/cgroup/memory/cgroup.procs ]]; then
	MEMCG=/sys/fs/cgroup/memory/$CG LIMIT_FILE=memory.limit_in_bytes
else
	die "no memory cgroup controller (cgroup v2 with memory enabled at the root, or v1's /sys/fs/cgroup/memory)"
fi
DATA=$(mktemp /var/tmp/fragd-bench-guard.XXXXXX)
thrash_stop() {
	local p
	[[ -d $MEMCG ]] || return 0
	for p in $(cat "$MEMCG/cgroup.procs"); do kill -KILL "$p" 2>/dev/null || true; done
	for ((p = 0; p < 50; p++)); do [[ -z $(cat "$MEMCG/cgroup.procs") ]] && break; sleep 0.1; done
}
restore_on_exit() {
	thrash_stop
	[[ -d $MEMCG ]] && rmdir "$MEMCG"
	rm -f "$DATA"
	[[ $(<"$DM") == "$DM_ORIG" ]] || echo "$DM_ORIG" >"$DM" || log "cannot restore vm.defrag_mode=$DM_ORIG"
}
take_heavy_lock

mkdir "$MEMCG"
echo $((32 << 20)) >"$MEMCG/$LIMIT_FILE"
dd if=/dev/zero of="$DATA" bs=1M count=384 status=none
cp "$BUILD_DIR/fragd" "$WORK/"
cat >"$WORK/guard.yaml" <<YAML
mode: act
compaction:
  score: {enabled: false}
  demand: {enabled: false}
  reserve: {memory_percent: 0}
  defrag_guard: {enabled: true, atomic_failures_per_second: 100000, pressure_full_percent: $LIMIT, window: ${WINDOW}s, hold: ${HOLD}s}
YAML
begin_meta "$WORK/fragd" bpftrace
meta quick="$QUICK" rounds="$ROUNDS" window_s="$WINDOW" hold_s="$HOLD" healthy_s="$HEALTHY" limit_pct="$LIMIT"

full_us() { awk '$1 == "full" { sub("total=", "", $5); print $5 }' /proc/pressure/memory; }
now_ns() { date +%s%N; }
tick() { sleep 1; T[$1]=$(now_ns) F[$1]=$(full_us); } # tick I: a second on, T[I] the time and F[I] PSI full
actions() { curl -sf "$URL" | awk -v a="action=\"defrag_mode_$1\"" 'index($1, "fragd_actions_total{") == 1 && index($1, a) { n += $2 } END { print n + 0 }'; }

for ((r = 1; r <= ROUNDS; r++)); do
	echo 1 >"$DM"
	dir="$WORK/round$r"
	mkdir -p "$dir"
	start_fragd_in "$dir" "$WORK/guard.yaml"
	# healthy: nothing made
	sleep "$HEALTHY"
	healthy_actions=$(actions off)
	healthy_dm=$(<"$DM")
	# the window before the storm, one sample a second
	declare -a T=() F=()
	for ((i = 0; i < WINDOW; i++)); do tick "$i"; done
	dd if="$DATA" iflag=nocache count=0 status=none
	bg_nolock bash -c 'echo $$ >"$0/cgroup.procs"; for i in 1 2; do while :; do cat "$1" >/dev/null; done & done; wait' \
		"$MEMCG" "$DATA"
	THRASH=$!
	off=
	for ((i = WINDOW; i < WINDOW * 6; i++)); do
		tick "$i"
		if [[ $(<"$DM") == 0 ]]; then off=$i; break; fi
	done
	[[ -n $off ]] || die "round $r: the guard did not write 0 within $((WINDOW * 5)) s of the storm (log: $(tail -3 "$dir/fragd.log"))"
	t_off=${T[off]} f_off=${F[off]}
	sleep "$HOLD"
	t_end=$(now_ns) f_end=$(full_us)
	back=0
	for ((i = 0; i < 100; i++)); do [[ $(<"$DM") == 1 ]] && { back=1; break; }; sleep 0.1; done
	# The same storm with defrag_mode 1 again: the guard judges only a whole window after its
	# put-back, so the window's first WINDOW - 2 s are the storm under defrag_mode 1.
	t_b0=$(now_ns) f_b0=$(full_us)
	sleep $((WINDOW - 2))
	t_b1=$(now_ns) f_b1=$(full_us)
	dm_after=$(<"$DM")
	thrash_stop
	wait "$THRASH" 2>/dev/null || true
	w=$((off - WINDOW))
	{
		echo "healthy_actions=$healthy_actions"
		echo "healthy_defrag_mode=$healthy_dm"
		echo "act_s=$(((T[off] - T[WINDOW - 1]) / 1000000000))"
		awk -v f=$((f_off - F[w])) -v t=$((t_off - T[w])) 'BEGIN { printf "full_before_pct=%.3f\n", f * 1000 * 100 / t }'
		awk -v f=$((f_end - f_off)) -v t=$((t_end - t_off)) 'BEGIN { printf "full_hold_pct=%.3f\n", f * 1000 * 100 / t }'
		awk -v f=$((f_b1 - f_b0)) -v t=$((t_b1 - t_b0)) 'BEGIN { printf "full_on_pct=%.3f\n", f * 1000 * 100 / t }'
		echo "on_defrag_mode=$dm_after"
		echo "restored=$back"
		echo "off_actions=$(actions off)"
		echo "restore_actions=$(actions restore)"
	} >"$dir/round.env"
	stop_pid "$FRAGD_PID" 30
	log "round $r: $(tr '\n' ' ' <"$dir/round.env")"
done

# What the report reads, kept: `python3 bench/defrag_guard_report.py bench/data/defrag_guard OUT`.
keep_found defrag_guard "$WORK" -name meta.env -o -name round.env
FAILED=0
/usr/bin/python3 bench/defrag_guard_report.py "$WORK" "$OUT"
