#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Renders fragd's Grafana dashboard (dashboards/fragd.json) with the data of a real scenario, as one
# PNG (docs/dashboard.png): there is no Grafana here, so every panel's PromQL is evaluated by a real
# Prometheus and drawn by dashboards/render.py. As root after the build:
#
#   bash bench/dashboard.sh            # ~4 min, writes docs/dashboard.png
#
# Scenario (times are logged and drawn on every panel):
#   baseline  fragd (act mode, dry_run, a 2 MB pool target it cannot reach) and
#             Prometheus (scraping every second, with configs/prometheus/fragd-rules.yml) run
#   fragment  fragmenter --percent P splinters memory (1 page of every 4 kept)
#   burst N   BURSTS times: nr_hugepages = (free 2 MiB blocks now) + EXTRA, so that EXTRA
#             pages must be compacted by the allocating task (stalls); held, then back to 0
#   compact   one write of 1 to /proc/sys/vm/compact_memory
#   burst     the last burst's size again, on compacted memory
#   release   pool back to 0, fragmenter stopped; memory heals
# vm.compaction_proactiveness is 0 throughout, so that the kernel does not compact ahead of the
# bursts; it and vm.nr_hugepages are restored on exit. fragd's dry_run decides pool and compaction
# actions and writes nothing. The heavy lock (/tmp/fragd-heavy.lock) is held until the drawing.
#
# Knobs (environment): FRAGD_BUILD_DIR (fragd and fragmenter, default build), DASHBOARD_PNG (output,
# default docs/dashboard.png), DASHBOARD_PERCENT (90), DASHBOARD_BURSTS (3), DASHBOARD_EXTRA (500),
# DASHBOARD_STEP (2, seconds between points), BENCH_KEEP=1 keeps the work directory (its data.json
# re-renders with `dashboards/render.py --load`).
set -euo pipefail

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_start dashboard "it writes sysctls and loads BPF" fragd fragmenter -- prometheus curl flock python3
# shellcheck source=tests/integration/prometheus_env.sh
source tests/integration/prometheus_env.sh
debian_python matplotlib python3-matplotlib

OUT=${DASHBOARD_PNG:-docs/dashboard.png}
PERCENT=${DASHBOARD_PERCENT:-90}
BURSTS=${DASHBOARD_BURSTS:-3}
EXTRA=${DASHBOARD_EXTRA:-500}
STEP=${DASHBOARD_STEP:-2}
require_uint DASHBOARD_ PERCENT BURSTS EXTRA STEP
((PERCENT >= 10 && PERCENT <= 95)) || die "DASHBOARD_PERCENT must be in 10..95, got $PERCENT"
((BURSTS >= 1 && STEP >= 1 && EXTRA >= 1)) || die "DASHBOARD_BURSTS, DASHBOARD_STEP and DASHBOARD_EXTRA must be >= 1"

bench_work dashboard 15
restore_on_exit() { restore_memory_settings; }
# Private copies: others may rebuild the build directory while this runs.
cp "$BUILD_DIR/fragd" "$BUILD_DIR/fragmenter" "$WORK/"

phase() { # LABEL: the scenario's timeline, drawn on every panel
	printf '%s\t%s\n' "$EPOCHREALTIME" "$1" >>"$WORK/phases.tsv"
	log "$1"
}

take_heavy_lock
save_memory_settings
echo 0 >"$PRO"

# fragd: act mode, dry_run, a pool target far above what the bursts ask for, so that its
# pool decisions go on and the action annotations have data.
TARGET=10000
panel_policy "$WORK/fragd.yaml" "$TARGET"
start_fragd_in "$WORK" "$WORK/fragd.yaml"
log "fragd ready on $URL ($FRAGD_PROGRAMS programs attached)"

PROM_PORT=$(free_port)
PROM="http://127.0.0.1:$PROM_PORT"
prometheus_config "$WORK/prometheus.yml" "$PORT" "$ROOT/configs/prometheus/fragd-rules.yml"
spawn PROM_PID prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1
for ((i = 0; i < 300; i++)); do
	curl -sf "$PROM/-/ready" >/dev/null 2>&1 && break
	kill -0 "$PROM_PID" 2>/dev/null || die "prometheus exited at start: $(tail -5 "$WORK/prometheus.log")"
	sleep 0.1
done
curl -sf "$PROM/-/ready" >/dev/null || die "Prometheus not ready on $PROM after 30 s: $(tail -5 "$WORK/prometheus.log")"
log "Prometheus on $PROM scrapes fragd every second"

T_START=$EPOCHREALTIME
phase baseline
sleep 15

phase fragment
start_fragmenter "$WORK/fragmenter" "$WORK" "$PERCENT" 300 || die "$FRAG_ERROR"
log "fragmenter: $(cat "$WORK/frag.out")"
sleep 25

want=0
for ((b = 1; b <= BURSTS; b++)); do
	free2m=$(free_blocks9)
	want=$((free2m + EXTRA))
	phase "burst $b"
	echo "$want" >"$HP"
	log "asked for $want x 2 MiB ($free2m free 2 MiB blocks): the pool holds $(<"$HP")"
	sleep 8
	echo 0 >"$HP"
	sleep 12
done

phase compact
t0=$EPOCHREALTIME
echo 1 >/proc/sys/vm/compact_memory
log "compaction took $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s; $(free_blocks9) free 2 MiB blocks"
sleep 12

phase "burst $((BURSTS + 1))"
echo "$want" >"$HP"
log "asked for $want x 2 MiB on compacted memory: the pool holds $(<"$HP")"
sleep 8

phase release
echo 0 >"$HP"
stop_pid "$FRAG_PID" 60 || true
sleep 30
T_END=$EPOCHREALTIME
printf '%s\tend\n' "$T_END" >>"$WORK/phases.tsv"

# Query every panel over the scenario, then stop everything and draw.
"$PY" dashboards/render.py --prom "$PROM" --dashboard dashboards/fragd.json \
	--instance "127.0.0.1:$PORT" --start "$T_START" --end "$T_END" --step "$STEP" \
	--phases "$WORK/phases.tsv" --save "$WORK/data.json" ||
	die "querying Prometheus for the dashboard's panels failed"
stop_pid "$PROM_PID" 20 || log "prometheus exited with status $? (log: $WORK/prometheus.log)"
stop_pid "$FRAGD_PID" 20 || die "fragd exited with status $? after SIGTERM: $(tail -5 "$WORK/fragd.log")"
restore_memory_settings
[[ -z ${LOCK_FD:-} ]] || flock -u "$LOCK_FD" # drawing is not heavy

NOTE="fragmenter --percent $PERCENT (kept $(awk '/^ready/ { printf "%.1f", $2 / 1048576 }' "$WORK/frag.out") GiB)"
NOTE+=" · bursts: nr_hugepages = free 2 MiB blocks + $EXTRA, then 0 · compaction_proactiveness 0"
NOTE+=" · fragd act mode, dry_run, pool target $TARGET · $(uname -r), $(nproc) CPUs, $(awk '/^MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo) GiB"
"$PY" dashboards/render.py --load "$WORK/data.json" --note "$NOTE" --output "$OUT" || die "drawing $OUT failed"
log "wrote $OUT ($(($(stat -c %s "$OUT") / 1024)) KiB)"
FAILED=0
