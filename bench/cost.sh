#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fragd's cost on a quiet and on a busy host, and the pageblock scan's cost by memory size.
# Part of `make bench`; run as root after the build:
#
#   bash bench/cost.sh                 # writes BENCHMARKS.md (cost section); about 50 min
#   BENCH_QUICK=1 bash bench/cost.sh   # 2 short runs per arm, short guests; /tmp/fragd-bench-quick.md
#
# Four parts: 1. the quiet and busy arms (bench/cost_churn.py makes the busy host), 2. the full
# scan's cost per GiB, 3. the BPF maps' memory for larger memories (build/bpf_map_memory), 4. the
# guests (bench/cost_guest.sh). bench/cost_report.py writes the section, which describes the
# method, from the work directory; the raw data stay in bench/data/cost, from which the report
# can be written again.
#
# Knobs: FRAGD_BUILD_DIR (build), BENCH_COST_RUNS (5, what a verdict needs; quick 2),
# BENCH_COST_SECONDS (300; quick 45), BENCH_COST_SETTLE (30; quick 10), BENCH_COST_SCRAPE (15),
# BENCH_COST_SCANS (5; quick 2), BENCH_COST_ANON_MIB (2048), BENCH_COST_FILE_MIB (1024),
# BENCH_COST_PERIOD (10), BENCH_COST_GUESTS ("small:3:2:R big:128:2:R cpus:3:64:0", R = 6 rounds,
# quick 2; "" skips them; "kept" reports the guests of the run kept in bench/data/cost),
# BENCH_OUTPUT, BENCH_KEEP=1. Changes no kernel setting (it asks DAMON to refresh its schemes'
# statistics, damon_paged_out); every process it starts is ended by its pid on exit and the churn
# frees its memory and deletes its file.
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start cost "fragd loads BPF and reads kpageflags" fragd fragctl bpf_map_memory -- python3 curl flock
debian_python "prometheus_client" "python3-prometheus-client"

RUNS=${BENCH_COST_RUNS:-$(q 5 2)}
SECS=${BENCH_COST_SECONDS:-$(q 300 45)}
SETTLE=${BENCH_COST_SETTLE:-$(q 30 10)}
SCRAPE=${BENCH_COST_SCRAPE:-15}
SCANS=${BENCH_COST_SCANS:-$(q 5 2)}
ANON=${BENCH_COST_ANON_MIB:-2048}
FILE_MIB=${BENCH_COST_FILE_MIB:-1024}
PERIOD=${BENCH_COST_PERIOD:-10}
GROUNDS=$(q 6 2)
GUESTS=${BENCH_COST_GUESTS-"small:3:2:$GROUNDS big:128:2:$GROUNDS cpus:3:64:0"}
require_positive RUNS SECS SETTLE SCRAPE SCANS ANON FILE_MIB PERIOD
((QUICK == 1 || (RUNS >= 5 && SECS >= 300))) || log "note: fewer than 5 runs of 5 minutes per arm: too few runs for a verdict"
OUT=$(report_output "$QUICK" "$ROOT")

bench_work cost 60 # no kernel setting is changed
T_START=$SECONDS
FRAGD="$BUILD_DIR/fragd"

take_heavy_lock # before the check: another heavy run may hold memory until it lets go
avail_mib=$(($(meminfo MemAvailable) / 1024))
((avail_mib > ANON + FILE_MIB + 2048)) || die "MemAvailable is $avail_mib MiB: the churn needs $ANON + $FILE_MIB MiB and 2 GiB to spare"

begin_meta "$FRAGD"
meta quick="$QUICK" runs="$RUNS" seconds="$SECS" settle="$SETTLE" scrape="$SCRAPE" scans="$SCANS"
meta anon_mib="$ANON" file_mib="$FILE_MIB" period="$PERIOD"
meta load_start "$(cut -d' ' -f1-3 /proc/loadavg)"
meta possible_cpus "$(cat /sys/devices/system/cpu/possible)"

# wait_quiet_host: returns once, over QUIET_WINDOW s, /proc/vmstat nr_free_pages moved by less than
# QUIET_PAGES and DAMON's pageout schemes reclaimed less than QUIET_PAGES pages (damon_paged_out:
# the bytes the running schemes with action pageout reclaimed, their sz_applied refreshed by
# update_schemes_stats; "-" without DAMON's sysfs or such a scheme), or after QUIET_MAX s; prints
# the seconds waited, the last window's move of nr_free_pages and the MiB DAMON paged out in it.
# Why: after a churn the free lists keep growing for minutes while pgfree and /proc/vmstat's
# reclaim counters barely move: a DAMON pageout scheme (kdamond; a platform that hands cold memory
# back to its host may run one) reclaims cold page cache, and fragd's scanner reads what it frees.
QUIET_WINDOW=$(q 30 10)
QUIET_MAX=$(q 600 60)
QUIET_PAGES=$(($(meminfo MemTotal) / 4 / 1000)) # 0.1% of memory
meta quiet_window="$QUIET_WINDOW" quiet_max="$QUIET_MAX" quiet_pages="$QUIET_PAGES" quiet_damon=1
DAMON=/sys/kernel/mm/damon/admin/kdamonds
damon_paged_out() {
	local k s n=0 found=0
	for k in "$DAMON"/[0-9]*; do
		[[ -d $k && $(<"$k/state") == on ]] || continue
		echo update_schemes_stats >"$k/state" 2>/dev/null || continue
		for s in "$k"/contexts/*/schemes/[0-9]*; do
			[[ $(<"$s/action") == pageout ]] || continue
			found=1
			n=$((n + $(<"$s/stats/sz_applied")))
		done
	done
	((found)) && echo "$n" || echo -
}
wait_quiet_host() {
	local t0=$SECONDS a b d pa pb dp still
	a=$(vmstat nr_free_pages) pa=$(damon_paged_out)
	while :; do
		sleep "$QUIET_WINDOW"
		b=$(vmstat nr_free_pages) pb=$(damon_paged_out)
		d=$((b - a)) still=1
		((d < QUIET_PAGES && -d < QUIET_PAGES)) || still=0
		if [[ $pa == - || $pb == - ]]; then
			dp=-
		else
			dp=$(((pb - pa) / 4096))
			((dp < QUIET_PAGES)) || still=0
		fi
		if ((still || SECONDS - t0 >= QUIET_MAX)); then
			echo "$((SECONDS - t0)) $d $([[ $dp == - ]] && echo - || echo $((dp * 4096 / 1048576)))"
			return
		fi
		a=$b pa=$pb
	done
}

# run_arm NAME quiet|busy: one run (see the head of this file) in $WORK/NAME.
run_arm() {
	local name=$1 arm=$2 dir="$WORK/$1" churn_pid="" scraper waited moved paged w=0 rc=0
	mkdir -p "$dir"
	printf 'arm=%s\nload_start=%s\n' "$arm" "$(cut -d' ' -f1-3 /proc/loadavg)" >"$dir/run.env"
	if [[ $arm == quiet ]]; then
		read -r waited moved paged <<<"$(wait_quiet_host)"
		printf 'quiet_wait_s=%s\nquiet_free_pages_moved=%s\nquiet_damon_paged_out_mib=%s\n' "$waited" "$moved" "$paged" >>"$dir/run.env"
		log "$name: host quiet after $waited s (in the last $QUIET_WINDOW s nr_free_pages moved $moved, DAMON paged out $paged MiB)"
	else
		"$PY" bench/cost_churn.py --dir "$dir" --anon-mib "$ANON" --file-mib "$FILE_MIB" --period "$PERIOD" \
			--events "$dir/churn.jsonl" 2>"$dir/churn.err" &
		churn_pid=$!
		PIDS+=("$churn_pid")
	fi
	# At debug level fragd logs each memory change that starts a scan, and nothing else that a
	# run would see: the report counts them by zone.
	start_fragd_in "$dir" configs/fragd.yaml --log-level debug
	printf 'threads_attached=%s\ndamon_paged_out_start=%s\n' "$FRAGD_PROGRAMS" "$(damon_paged_out)" >>"$dir/run.env"
	sleep "$SETTLE"
	# The steady state: after the scanner's start pass (every block read once, about 30 s per 24
	# GiB at pageblocks.full_scan_budget), which a longer-running fragd spends once.
	until curl -s --max-time 10 "$URL" | grep -q '^fragd_pageblock_map_age_seconds '; do
		((w++ < 600)) || die "$name: no whole pageblock map 600 s after the settle"
		sleep 1
	done
	echo "start_pass_wait_s=$w" >>"$dir/run.env"
	[[ -z $churn_pid ]] || kill -0 "$churn_pid" 2>/dev/null || die "$name: the churn ended early: $(tail -3 "$dir/churn.err")"
	# Prometheus' part: one scrape every SCRAPE s for as long as the run lasts.
	while :; do
		curl -s -o /dev/null --max-time 10 -w '%{http_code} %{time_total}\n' "$URL" || echo "000 0"
		sleep "$SCRAPE"
	done >"$dir/scrapes.txt" 2>/dev/null &
	scraper=$!
	PIDS+=("$scraper")
	"$PY" bench/cost_snap.py "$FRAGD_PID" "$URL" "$dir/snaps.jsonl" || die "$name: cannot read fragd at the start"
	sleep "$SECS"
	"$PY" bench/cost_snap.py "$FRAGD_PID" "$URL" "$dir/snaps.jsonl" || die "$name: cannot read fragd at the end"
	echo "damon_paged_out_end=$(damon_paged_out)" >>"$dir/run.env"
	stop_pid "$scraper" 5 || true # its status is the signal's
	stop_pid "$FRAGD_PID" 15 || rc=$?
	echo "fragd_exit=$rc" >>"$dir/run.env"
	if [[ -n $churn_pid ]]; then
		kill -0 "$churn_pid" 2>/dev/null || die "$name: the churn ended during the run: $(tail -3 "$dir/churn.err")"
		stop_pid "$churn_pid" 60 || die "$name: the churn did not exit cleanly: $(tail -3 "$dir/churn.err")"
		[[ -z $(ls "$dir"/cost-churn-* 2>/dev/null) ]] || die "$name: the churn left its file behind"
	fi
	echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$dir/run.env"
	log "$name: $("$PY" -c 'import sys; sys.path.insert(0, "bench"); from cost_report import run_figures as rf
f = rf(sys.argv[1]); print("fragd %.3f%% of a core over %.0f s" % (f["pct"]["process"], f["seconds"]))' "$dir")"
	((rc == 0)) || die "$name: fragd exited $rc after SIGTERM (log $dir/fragd.log)"
	# The next run starts on a host the churn has left.
	sleep "$(q 10 3)"
}

for ((r = 1; r <= RUNS; r++)); do
	run_arm "quiet$r" quiet
	run_arm "busy$r" busy
done

# 2. Full scans: their cost per GiB of page frames read.
mkdir -p "$WORK/full"
start_fragd_in "$WORK/full" configs/fragd.yaml
scan_tid() { local t; for t in /proc/"$FRAGD_PID"/task/*; do [[ $(<"$t/comm") == fragd-scan ]] && { echo "${t##*/}"; return; }; done; }
TID=$(scan_tid)
[[ -n $TID ]] || die "fragd has no thread named fragd-scan"
thread_ticks() { sed 's/.*) //' "/proc/$FRAGD_PID/task/$TID/stat" | awk '{ print $12 + $13 }'; }
scan_cpu() { curl -sf "$URL" | awk '$1 == "fragd_scan_cpu_seconds_total" { print $2 }'; }
# fragd builds its families at most once a tick (1 s): 2 s after a scan a scrape shows it.
sleep 2
for ((i = 0; i < SCANS; i++)); do
	t0=$(thread_ticks)
	c0=$(scan_cpu)
	"$BUILD_DIR/fragctl" --socket "$SOCK" map --max-age 0 --json >"$WORK/full/scan$i.json"
	t1=$(thread_ticks)
	sleep 2
	c1=$(scan_cpu)
	"$PY" -c 'import json, sys; a = sys.argv; s = json.load(open(a[1]))["scan"]
r = {"pages_read": s["pages_read"], "duration_ns": s["duration_ns"], "thread_ticks": int(a[3]) - int(a[2])}
print(json.dumps(r | ({"metric_cpu_s": float(a[5]) - float(a[4])} if a[4] and a[5] else {})))' \
		"$WORK/full/scan$i.json" "$t0" "$t1" "${c0:-}" "${c1:-}" >>"$WORK/full/scans.jsonl"
done
stop_pid "$FRAGD_PID" 15 || die "fragd exited non-zero after the full scans (log $WORK/full/fragd.log)"
log "full scans: $(tr '\n' ' ' <"$WORK/full/scans.jsonl" | cut -c1-300)"

# 3. The BPF maps' memory for larger memories (the ledger sized by the loader's own function):
# here.txt for this host, ramG.txt for G GiB.
mkdir -p "$WORK/mapmem"
for g in "" 64 256 1024 4096; do
	f="$WORK/mapmem/${g:+ram}${g:-here}"
	# shellcheck disable=SC2086
	"$BUILD_DIR/bpf_map_memory" ${g:+--ram $g} >"$f.txt" 2>"$f.err" ||
		die "bpf_map_memory${g:+ --ram $g}: $(tail -2 "$f.err")"
done

# 4. Guests. "kept": not booted again; the console lines of the run kept in bench/data/cost (what
# they measure, the blocks a sampled round reads by memory size and the maps' memory by possible
# CPUs, is the scanner's and the loader's, which a change elsewhere leaves as it was) go into this
# run's directory, and the report names their date.
if [[ $GUESTS == kept ]]; then
	kept="$ROOT/bench/data/cost"
	compgen -G "$kept/guests/guest-*.log" >/dev/null || die "BENCH_COST_GUESTS=kept: no guest log in bench/data/cost/guests"
	mkdir -p "$WORK/guests"
	cp "$kept"/guests/guest-*.log "$WORK/guests/"
	kept_meta() { sed -n "s/^$1=//p" "$kept/meta.env"; }
	for k in guests guests_seconds; do meta "$k" "$(kept_meta "$k")"; done
	from=$(kept_meta guests_kept) # kept twice: still the run that booted them
	meta guests_kept "${from:-$(kept_meta date)}"
elif [[ -n $GUESTS ]]; then
	t0=$SECONDS
	# shellcheck disable=SC2086
	if FRAGD_BUILD_DIR="$BUILD_DIR" bash bench/cost_guest.sh "$WORK/guests" $GUESTS 2>"$WORK/guests.err"; then
		meta guests "$GUESTS"
	else
		meta guests_failed "$(tail -1 "$WORK/guests.err")"
		log "guests did not finish: $(tail -1 "$WORK/guests.err")"
	fi
	meta guests_seconds "$((SECONDS - t0))"
else
	meta guests_failed "not run (BENCH_COST_GUESTS is empty)"
fi

meta load_end "$(cut -d' ' -f1-3 /proc/loadavg)"
meta_minutes
"$PY" bench/cost_report.py "$WORK" "$OUT"
# The raw data, kept in the tree: `python3 bench/cost_report.py bench/data/cost OUT` reads them back.
keep_found cost "$WORK" -name meta.env -o -name run.env -o -name snaps.jsonl -o -name scrapes.txt \
	-o -path './*[0-9]/fragd.log' -o -name churn.jsonl -o -name scans.jsonl -o -path './mapmem/*.txt' -o -path './guests/guest-*.log'
FAILED=0
