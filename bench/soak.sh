#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragd soak: SOAK_SECONDS (600) of continuous fragmentation churn and hugepage bursts with fragd
# in act mode, sampling fragd every 5 s. As root after the build:
#
#   flock /tmp/fragd-heavy.lock bash bench/soak.sh   # ~12 min; writes RELIABILITY.md (soak section), docs/soak.png
#   BENCH_QUICK=1 bash bench/soak.sh   # 3 min smoke; writes /tmp/fragd-reliability-quick.md, /tmp/fragd-soak-quick.png
#
# Without an outer flock it takes /tmp/fragd-heavy.lock itself (waiting for it). The policy is
# written below (act mode, method node, thresholds the churn crosses); the workload is
# bench/soak_churn.py, the sampler bench/procmon.py. bench/soak_report.py writes the section:
# the promises (RSS, fds, CPU, every action against the policy's limits) and how each is read.
#
# Knobs (environment): FRAGD_BUILD_DIR (default build), SOAK_SECONDS, SOAK_WARMUP, SOAK_PERCENT,
# SOAK_HOLD, SOAK_BURST_PERIOD, SOAK_BURST_PAGES, SOAK_BURST_HOLD, SOAK_POOL, SOAK_MIN_INTERVAL,
# SOAK_CPU_BUDGET, SOAK_BACKOFF_MAX, BENCH_QUICK (180 s, warm-up 60 s, 50%), BENCH_OUTPUT (file to update),
# BENCH_PLOT (picture to write), BENCH_KEEP=1 keeps the work directory.
# Changes vm.compaction_proactiveness (0 for the run, so that only fragd compacts ahead) and
# vm.nr_hugepages (the bursts and fragd's pool; must be 0 at start); both restored on exit.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start soak "it loads BPF and writes sysctls" fragd fragctl -- gcc python3 curl flock
debian_python "matplotlib, prometheus_client" "python3-matplotlib python3-prometheus-client"

SOAK_SECONDS=${SOAK_SECONDS:-$(q 600 180)}
WARMUP=${SOAK_WARMUP:-$(q 120 60)}
PERCENT=${SOAK_PERCENT:-$(q 70 50)}
HOLD=${SOAK_HOLD:-20}
BURST_PERIOD=${SOAK_BURST_PERIOD:-30}
BURST_PAGES=${SOAK_BURST_PAGES:-512}
BURST_HOLD=${SOAK_BURST_HOLD:-5}
POOL=${SOAK_POOL:-64}
MIN_INTERVAL=${SOAK_MIN_INTERVAL:-10}
CPU_BUDGET=${SOAK_CPU_BUDGET:-4}
BACKOFF_MAX=${SOAK_BACKOFF_MAX:-40}
SAMPLE=5
require_uint "" SOAK_SECONDS WARMUP PERCENT HOLD BURST_PERIOD BURST_PAGES BURST_HOLD POOL MIN_INTERVAL CPU_BUDGET BACKOFF_MAX
((WARMUP + 60 <= SOAK_SECONDS)) || die "SOAK_SECONDS ($SOAK_SECONDS) must leave at least 60 s after the warm-up ($WARMUP s)"
((PERCENT >= 1 && PERCENT <= 90)) || die "SOAK_PERCENT must be in 1..90, got $PERCENT"
((BURST_HOLD < BURST_PERIOD)) || die "SOAK_BURST_HOLD must be shorter than SOAK_BURST_PERIOD"
((MIN_INTERVAL >= 1 && CPU_BUDGET >= 1 && CPU_BUDGET <= 30 && BACKOFF_MAX >= MIN_INTERVAL)) ||
	die "SOAK_MIN_INTERVAL must be >= 1, SOAK_CPU_BUDGET in 1..30, SOAK_BACKOFF_MAX >= SOAK_MIN_INTERVAL"

bench_work soak 30
restore_on_exit() { restore_memory_settings; }
take_heavy_lock
save_memory_settings

cp "$BUILD_DIR/fragd" "$BUILD_DIR/fragctl" "$WORK/"
gcc -O2 -Wall -Wextra -o "$WORK/fragmenter" tests/tools/fragmenter.c || die "cannot compile tests/tools/fragmenter.c"
# The shipped config with act mode and this policy: everything above `compaction:` kept.
awk '/^compaction:/ { exit } { print }' configs/fragd.yaml | sed 's/^mode: observe$/mode: act/' >"$WORK/fragd.yaml"
grep -q '^mode: act$' "$WORK/fragd.yaml" || die "configs/fragd.yaml has no line 'mode: observe' before 'compaction:'"
cat >>"$WORK/fragd.yaml" <<YAML
compaction:
  method: node
  score: {high: 40, low: 20}
  min_interval: ${MIN_INTERVAL}s
  cpu_budget: ${CPU_BUDGET}s
  backoff: {max: ${BACKOFF_MAX}s}
hugepages:
  guard: 2GiB
  pools:
    - {size: 2MB, node: all, count: $POOL}
YAML
"$WORK/fragd" --check-config "$WORK/fragd.yaml" >"$WORK/check.txt" 2>&1 ||
	die "fragd --check-config rejects the soak policy: $(tail -3 "$WORK/check.txt")"
begin_meta "$WORK/fragd"
meta quick "$QUICK"
for v in SOAK_SECONDS WARMUP PERCENT HOLD BURST_PERIOD BURST_PAGES BURST_HOLD POOL MIN_INTERVAL CPU_BUDGET BACKOFF_MAX SAMPLE; do
	meta "${v,,}" "${!v}"
done
meta proactiveness_orig "$PRO_ORIG"
meta scan_interval "$(awk '/^pageblocks:/ { p = 1; next } /^[^ #]/ { p = 0 } p && $1 == "interval:" { print $2 }' "$WORK/fragd.yaml")"
meta tick "$(awk '$1 == "tick_interval:" { print $2 }' "$WORK/fragd.yaml")"
meta clk_tck="$(getconf CLK_TCK)" loadavg_start="$(cut -d' ' -f1-3 /proc/loadavg)"

echo 0 >"$PRO"
wait_no_fragmenter
start_fragd_in "$WORK" "$WORK/fragd.yaml"
meta fragd_programs="$FRAGD_PROGRAMS" start_unix="$(date +%s.%N)"
log "fragd pid $FRAGD_PID in act mode; ${SOAK_SECONDS}s of churn (fragmenter ${PERCENT}%, held ${HOLD}s) and bursts (+$BURST_PAGES pages every ${BURST_PERIOD}s)"
spawn MON_PID "$PY" bench/procmon.py --pid "$FRAGD_PID" --interval "$SAMPLE" --url "$URL" --socket "$SOCK" \
	--out "$WORK/samples.jsonl"
spawn CHURN_PID python3 bench/soak_churn.py --fragmenter "$WORK/fragmenter" --percent "$PERCENT" --hold "$HOLD" \
	--burst-period "$BURST_PERIOD" --burst-pages "$BURST_PAGES" --burst-hold "$BURST_HOLD" \
	--seconds "$SOAK_SECONDS" --events "$WORK/events.jsonl" >"$WORK/churn.out" 2>&1
# fd_list FILE: what each of fragd's open fds names (the report compares the lists: which files
# fragd opened during the soak and kept).
fd_list() { (cd "/proc/$FRAGD_PID/fd" && for f in *; do readlink "$f" || true; done) >"$1" 2>/dev/null || true; }
fd_list "$WORK/fds-start.txt"
# Until the churn ends; fragd must live throughout.
next_log=$((SECONDS + 60))
warm_at=$((SECONDS + WARMUP))
while kill -0 "$CHURN_PID" 2>/dev/null; do
	kill -0 "$FRAGD_PID" 2>/dev/null || die "fragd died during the soak: $(tail -5 "$WORK/fragd.log")"
	kill -0 "$MON_PID" 2>/dev/null || die "the sampler (procmon.py) ended early"
	if ((warm_at > 0 && SECONDS >= warm_at)); then
		fd_list "$WORK/fds-warm.txt"
		warm_at=0
	fi
	if ((SECONDS >= next_log)); then
		log "$(grep -c '"ready"' "$WORK/events.jsonl" || true) fragment cycles, $(grep -c '"burst_up"' "$WORK/events.jsonl" || true) bursts, $(grep -c 'action [0-9]' "$WORK/fragd.log" || true) actions so far; fragd RSS $(awk '$1 == "VmRSS:" { print $2 }' "/proc/$FRAGD_PID/status") KiB"
		next_log=$((SECONDS + 60))
	fi
	sleep 1
done
reap "$CHURN_PID"
((RC == 0)) || die "the churn failed (exit $RC): $(tail -3 "$WORK/churn.out") $(grep fragmenter_failed "$WORK/events.jsonl" | tail -1)"
meta end_unix "$(date +%s.%N)"
sleep "$SAMPLE" # one more sample after the churn
fd_list "$WORK/fds-end.txt"
stop_pid "$MON_PID" 10 || true
curl -sf --max-time 10 "$URL" >"$WORK/end.prom" || log "cannot scrape fragd at the end"
"$WORK/fragctl" --socket "$SOCK" status --json >"$WORK/end-status.json" || log "fragctl status failed at the end"
stop_pid "$FRAGD_PID" 30 && RC=0 || RC=$?
meta fragd_exit="$RC" pool_after_fragd="$(<"$HP")" proactiveness_after_fragd="$(<"$PRO")"
restore_on_exit
meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"

OUT=$(report_output "$QUICK" "$ROOT" RELIABILITY)
PLOT=${BENCH_PLOT:-$(q "$ROOT/docs/soak.png" /tmp/fragd-soak-quick.png)}
"$PY" bench/soak_report.py --work "$WORK" --output "$OUT" --plot "$PLOT"
keep_raw soak -C "$WORK" meta.env samples.jsonl events.jsonl fragd.log end.prom end-status.json \
	$(cd "$WORK" && ls fds-*.txt 2>/dev/null)
# The samples, a scrape each, are 1.4 MB as text and 26 KB compressed (soak_report.py reads either).
[[ $QUICK == 1 ]] || gzip -9 "$ROOT/bench/data/soak/samples.jsonl"
log "section written to $OUT, picture to $PLOT"
FAILED=0
