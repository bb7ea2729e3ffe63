# SPDX-License-Identifier: Apache-2.0
# What tests/integration/prometheus_test.sh and bench/dashboard.sh share (sourced):
# the fragd policy that makes every panel have data, and Prometheus' config.
# shellcheck shell=bash

# panel_policy FILE TARGET: act mode with dry_run (nothing is written) and a
# 2 MiB pool target of TARGET pages far above what is asked for, so fragd's
# pool decisions go on and the action and target series exist. The free-block
# forecast is fitted over 1 minute, so that it exists 30 s after fragd starts. Full pageblock
# scans: the 1 GiB and longest-free-run panels need a whole map, which sampled rounds build
# over many minutes.
panel_policy() {
	cat >"$1" <<YAML
mode: act
dry_run: true
forecast_window: 1m
pageblocks: {scan: true, mode: full, interval: 10s}
compaction:
  min_interval: 2s
hugepages:
  pools:
    - {size: 2MB, node: all, count: $2}
YAML
}

# prometheus_config FILE FRAGD_PORT RULES: scrape fragd on 127.0.0.1 every
# second and evaluate RULES every second.
prometheus_config() {
	cat >"$1" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $3
scrape_configs:
  - job_name: fragd
    static_configs:
      - targets: ["127.0.0.1:$2"]
YAML
}
