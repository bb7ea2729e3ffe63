# SPDX-License-Identifier: Apache-2.0
# What tests/integration/prometheus_test.sh, native_histogram_test.sh and bench/dashboard.sh share (sourced):
# the fragd policy that makes every panel have data, Prometheus' config, its start and its stop.
# shellcheck shell=bash

# panel_policy FILE TARGET: act mode with dry_run (nothing is written) and a
# 2 MiB pool target of TARGET pages far above what is asked for, so fragd's
# pool decisions go on and the action and target series exist. The free-block
# forecast is fitted over 1 minute, so that it exists 30 s after fragd starts. Full pageblock
# scans: the 1 GiB and longest-free-run panels need a whole map, which sampled rounds build in
# their start pass (about 30 s here), full scans at once. The programs' run statistics
# (metrics.detail): the cost panel reads them.
panel_policy() {
	cat >"$1" <<YAML
mode: act
dry_run: true
forecast_window: 1m
pageblocks: {scan: true, mode: full, interval: 10s}
metrics: {detail: [programs]}
compaction:
  min_interval: 2s
hugepages:
  pools:
    - {size: 2MB, node: all, count: $2}
YAML
}

# prometheus_config FILE FRAGD_PORT [RULES]: scrape fragd on 127.0.0.1 every
# second and evaluate RULES (when given) every second.
prometheus_config() {
	cat >"$1" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
${3:+rule_files:
  - $3}
scrape_configs:
  - job_name: fragd
    static_configs:
      - targets: ["127.0.0.1:$2"]
YAML
}

# start_prometheus CONFIG [FLAG...]: Prometheus on a free loopback port (PROM_PORT, PROM=its
# URL, PROM_PID, tracked in PIDS) with its data in $WORK/tsdb and its log in
# $WORK/prometheus.log; fails the test when it is not ready in 30 s.
start_prometheus() {
	local config=$1
	shift
	PROM_PORT=$(free_port)
	PROM="http://127.0.0.1:$PROM_PORT"
	prometheus --config.file="$config" --storage.tsdb.path="$WORK/tsdb" "$@" \
		--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
	PROM_PID=$!
	PIDS+=("$PROM_PID")
	wait_for 30 curl -sf "$PROM/-/ready" -o /dev/null ||
		{ cat "$WORK/prometheus.log" >&2; fail "Prometheus did not get ready on $PROM in 30 s"; }
}

# stop_prometheus: SIGTERM to the Prometheus start_prometheus started, which must exit 0 (else
# its log, and the test fails: stop_clean of tests/integration/lib.sh).
stop_prometheus() { stop_clean "$PROM_PID" Prometheus "$WORK/prometheus.log"; }
