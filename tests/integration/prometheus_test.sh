#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Grafana dashboard and the Prometheus rules against a real Prometheus:
#  1. promtool check rules / test rules (unit tests of every alert) pass;
#  2. with memory fragmented and huge pages asked for, a Prometheus server on
#     loopback scrapes fragd every second and loads the rules; after the
#     scrapes, every PromQL expression of the dashboard (panel targets,
#     annotations, variables, with Grafana's variables substituted) and of
#     every rule is evaluated through /api/v1/query: each must parse, each
#     dashboard query must return a finite value, every rule must evaluate
#     without error, and no expression may name a metric fragd does not export;
#  3. bad input: a dashboard or a rule naming a metric fragd does not export
#     fails the checker.
# fragd runs in act mode with dry_run (it decides pool and compaction actions
# and writes nothing), so the pool target and the action annotations have data.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/prometheus_env.sh"
require_root
command -v prometheus >/dev/null || skip_or_fail "prometheus missing (Debian package prometheus)"
command -v promtool >/dev/null || skip_or_fail "promtool missing (Debian package prometheus)"

RULES="$SRC/configs/prometheus/fragd-rules.yml"
RULES_TEST="$SRC/configs/prometheus/fragd-rules.test.yml"
DASH="$SRC/dashboards/fragd.json"
CHECK="$SRC/tests/integration/promql_check.py"

# 1. Static checks.
promtool check rules "$RULES" || fail "promtool check rules $RULES"
promtool test rules "$RULES_TEST" || fail "promtool test rules $RULES_TEST"
log "promtool check rules and test rules pass"

heavy_lock
quiet_memory 0   # stalls on demand only: kcompactd must not tidy up before the write

TARGET=10000   # 20 GiB, never allocated (dry_run): more than the test asks for, so fragd's pool decisions go on
panel_policy "$WORK/fragd.yaml" "$TARGET"
# Every allocation counted from the start: under bpf.allocations adaptive only the stalls after
# the first one's tick are timed, and a slow daemon (a sanitizer's build) may attach the counting
# program after the whole pool write has ended.
echo "bpf: {allocations: exact}" >>"$WORK/fragd.yaml"
FRAGD_CONFIG="$WORK/fragd.yaml" start_fragd
fragment 90

# 2. Prometheus on loopback, scraping fragd every second.
prometheus_config "$WORK/prometheus.yml" "$PORT" "$RULES"
start_prometheus "$WORK/prometheus.yml"

# instant VALUE of a query with a one-element answer (empty when none).
instant() {
  curl -sf --get "$PROM/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
scrapes_at_least() { local n; n=$(instant "count_over_time(up{job=\"fragd\"}[5m])"); [ -n "$n" ] && [ "$n" -ge "$1" ]; }
wait_for 30 scrapes_at_least 2 || { cat "$WORK/prometheus.log" >&2; fail "Prometheus did not scrape fragd twice in 30 s"; }
[ "$(instant 'up{job="fragd"}')" = 1 ] || fail "Prometheus scrapes fragd but up is not 1"
log "Prometheus $PROM scraped fragd twice"

# More huge pages than there are free 2 MiB blocks, so that some must be compacted (they stall).
free2m=$(free_blocks9)
WANT=$((free2m + 500))
[ "$WANT" -lt "$TARGET" ] || fail "$free2m free 2 MiB blocks after fragmenting: memory is not fragmented enough to test"
log "asking for $WANT x 2 MiB huge pages ($free2m free blocks; the policy's target of $TARGET stays short)"
stall0=$(vmstat compact_stall)
echo $WANT > $HP
log "pool holds $(cat $HP)"
kstalls=$(($(vmstat compact_stall) - stall0))
[ "$kstalls" -gt 0 ] || fail "the pool write of $WANT pages made no direct compaction (compact_stall unchanged): memory was not fragmented as the test needs"
# Orders 9 and 10 are one group in the shipped metrics.orders. Prometheus holds the stalls
# once fragd has read them (a tick after the write) and a scrape has succeeded since: under a
# sanitizer's build either may take longer than two scrape intervals, and a scrape that times
# out still counts in up's samples. So wait for the count itself.
stalls=
stalls_seen() {
  stalls=$(instant 'sum(fragd_alloc_stall_seconds_count{order="9-10"})')
  [ -n "$stalls" ] && [ "${stalls%.*}" -gt 0 ]
}
wait_for 30 stalls_seen || fail "no order-9 stall in Prometheus 30 s after the pool write (fragd_alloc_stall_seconds_count{order=\"9-10\"} = '$stalls'; fragd itself exports: $(scrape | grep -E '^fragd_alloc_stall_seconds_count\{.*order="9-10"' | tr '\n' ' ')): the scene the dashboard shows did not happen"
log "order-9 stalls seen by Prometheus: $stalls (the kernel's compact_stall rose by $kstalls)"
# A rate needs two samples of a series in its window, and the stall families by consumer
# appear with the first stall fragd reads (a tick after the write, maybe after the scrapes
# above): wait until Prometheus holds two samples of each.
two_samples() {
  local f n
  for f in fragd_stalls_total fragd_stall_seconds_total fragd_cgroup_stalls_total fragd_cgroup_stall_seconds_total \
    fragd_stall_callsite_seconds_total; do
    n=$(instant "min(count_over_time($f[1m]))")
    [ -n "$n" ] && [ "$n" -ge 2 ] || return 1
  done
}
wait_for 30 two_samples || fail "Prometheus holds fewer than two samples of a stall attribution series 30 s after the stalls"

# Every rule evaluated at least once, without error.
curl -sf "$PROM/api/v1/rules" -o "$WORK/rules.json" || fail "GET /api/v1/rules"
rules_evaluated() {
  curl -sf "$PROM/api/v1/rules" -o "$WORK/rules.json" &&
    python3 - "$WORK/rules.json" <<'PY'
import json, sys
rules = [r for g in json.load(open(sys.argv[1]))["data"]["groups"] for r in g["rules"]]
sys.exit(0 if rules and all(not r.get("lastEvaluation", "").startswith("0001") for r in rules) else 1)
PY
}
wait_for 30 rules_evaluated || fail "Prometheus did not evaluate every rule in 30 s"
want_rules=$(grep -cE '^\s*- (alert|record):' "$RULES")
python3 - "$WORK/rules.json" "$want_rules" <<'PY' || fail "rules loaded by Prometheus are not all healthy"
import json, sys
rules = [r for g in json.load(open(sys.argv[1]))["data"]["groups"] for r in g["rules"]]
bad = [f'{r["name"]}: {r.get("lastError")}' for r in rules if r.get("health") != "ok"]
for b in bad:
    print("rule evaluation error:", b, file=sys.stderr)
if len(rules) != int(sys.argv[2]):
    print(f"Prometheus loaded {len(rules)} rules, the file has {sys.argv[2]}", file=sys.stderr)
    sys.exit(1)
sys.exit(1 if bad else 0)
PY

# The forecast exists once fragd has seen half its window (forecast_window 1m) and a node is
# losing free 2 MiB blocks: the fragmenter and the pool write took them within the last minute.
forecast_scraped() { [ -n "$(instant 'fragd_hugepages_exhaustion_seconds')" ]; }
wait_for 60 forecast_scraped || fail "no fragd_hugepages_exhaustion_seconds 60 s after the pool write took every free 2 MiB block"
log "forecast: node runs out in $(instant 'min(fragd_hugepages_exhaustion_seconds)') s, $(instant 'min(fragd_free_hugepage_blocks_rate)') blocks/s"

scrape >"$WORK/scrape.prom"
# The fragd_cma_* families exist only on a kernel with CMA (this host's has none where
# cma_alloc_finish is not attached): absent, not zero, elsewhere. Their panels are then held
# to the contract's names and to Prometheus' parser, not to data.
KERNEL_LACKS=()
if [ "$(metric "$WORK/scrape.prom" fragd_bpf_program_attached 'program="cma_alloc_finish"')" != 1 ]; then
  ! grep -q '^fragd_cma_' "$WORK/scrape.prom" || fail "fragd_cma_* exported while cma_alloc_finish is not attached"
  mapfile -t KERNEL_LACKS < <(awk '$1 ~ /^fragd_cma_/ { print $1 }' "$SRC/tests/contract/metrics.txt")
  log "no CMA on this kernel: the fragd_cma_* families are absent (${#KERNEL_LACKS[@]} of them)"
fi
# Free page reporting: exported exactly when this host has a virtio-balloon bound to its driver
# that negotiated it (bit 5 of its features), with the kernel's page_reporting_order.
REPORTING=""
for d in /sys/bus/virtio/devices/*; do
  [ "$(cat "$d/device" 2>/dev/null)" = 0x0005 ] && [ -e "$d/driver" ] &&
    [ "$(cut -c6 "$d/features" 2>/dev/null)" = 1 ] && REPORTING=$(basename "$(readlink "$d/driver")")
done
if [ -n "$REPORTING" ]; then
  want=$(cat /sys/module/page_reporting/parameters/page_reporting_order)
  got=$(sample "$WORK/scrape.prom" "fragd_free_page_reporting_order{driver=\"$REPORTING\"}")
  [ "$got" = "$want" ] || fail "this host reports free pages ($REPORTING, order $want); fragd_free_page_reporting_order says '${got:-absent}'"
  log "free page reporting: $REPORTING, order $want, as fragd_free_page_reporting_order says"
else
  ! grep -q '^fragd_free_page_reporting_order' "$WORK/scrape.prom" ||
    fail "fragd_free_page_reporting_order exported on a host with no reporting balloon"
  KERNEL_LACKS+=(fragd_free_page_reporting_order)
  log "no free page reporting here: fragd_free_page_reporting_order is absent"
fi
# kswapd's give-up flag of each node, as /proc/zoneinfo says it before and after the scrape
# (a scrape taken while it flipped is taken again).
unreclaimable_matches() {
  local nodes before after node want got compared=0
  rm -f "$WORK/unreclaimable.why"
  nodes=$(awk '/^Node/ { print $2 + 0 }' /proc/zoneinfo | sort -un)
  before=$(for node in $nodes; do echo "$node $(node_unreclaimable "$node")"; done)
  scrape >"$WORK/unreclaimable.prom"
  after=$(for node in $nodes; do echo "$node $(node_unreclaimable "$node")"; done)
  [ -n "$before" ] && [ "$before" = "$after" ] || return 1
  while read -r node want; do
    [ -n "$want" ] || continue   # a node with no populated zone: the kernel prints no flag
    got=$(sample "$WORK/unreclaimable.prom" "fragd_node_unreclaimable{node=\"$node\"}")
    [ "$got" = "$want" ] || { echo "node $node: fragd_node_unreclaimable ${got:-absent}, /proc/zoneinfo $want" >"$WORK/unreclaimable.why"; return 1; }
    compared=$((compared + 1))
  done <<<"$before"
  [ "$compared" -gt 0 ] || { echo "/proc/zoneinfo prints node_unreclaimable for no node (nodes: $(echo $nodes))" >"$WORK/unreclaimable.why"; return 1; }
  log "fragd_node_unreclaimable as /proc/zoneinfo says: $(echo $before)"
}
wait_for 10 unreclaimable_matches || fail "$(cat "$WORK/unreclaimable.why" 2>/dev/null || echo "node_unreclaimable kept changing in /proc/zoneinfo")"
INSTANCE_RE="127\\\\.0\\\\.0\\\\.1:$PORT"   # Grafana's regex escaping of a multi-value variable
if ! /usr/bin/python3 "$CHECK" --dashboard "$DASH" --rules-json "$WORK/rules.json" --scrape "$WORK/scrape.prom" \
  --contract "$SRC/tests/contract/metrics.txt" ${KERNEL_LACKS[@]/#/--kernel-lacks=} \
  --runbooks "$SRC/docs/runbooks.md" --prom "$PROM" --var "job=fragd" --var "instance=$INSTANCE_RE" --var "order=.+" >"$WORK/check.out" 2>&1; then
  sed 's/^/    /' "$WORK/check.out" >&2
  fail "a dashboard or rule expression failed (above)"
fi
sed 's/^/    /' "$WORK/check.out"
log "every dashboard and rule expression parses and names only exported metrics; every panel has data"

# The families, types and label names of the live scrape are the checked-in contract
# (tests/contract/metrics.txt; the unit test MetricsContract holds the code to it).
# Absent here by design: write errors (none happen), the pages of leases (no lease lives), the failed
# allocations by consumer (there from the first failure: none may happen here), and the
# families the policy's metrics: section leaves to metrics.detail (series_test holds them to the
# contract with every detail on).
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
  skip_or_fail "python3-prometheus-client missing (scripts/install-deps.sh installs it)"
/usr/bin/python3 "$SRC/tests/integration/metrics_contract.py" "$WORK/scrape.prom" "$SRC/tests/contract/metrics.txt" \
  --may-be-absent fragd_kernel_write_errors_total fragd_leased_hugepages fragd_alloc_failures_by_consumer_total \
  "${KERNEL_LACKS[@]}" fragd_zone_fragmentation_score_percent \
  fragd_thp_vmstat_total fragd_compaction_vmstat_total ||
  fail "the live /metrics broke the metrics contract (above)"

# 3. Bad input: a metric fragd does not export fails the check, in a panel and in a rule.
# refused KIND NAME DASHBOARD RULES: the checker must fail on them, naming NAME.
refused() {
  if /usr/bin/python3 "$CHECK" --dashboard "$3" --rules-json "$4" --scrape "$WORK/scrape.prom" \
    --names-only --var "job=x" --var "instance=x" --var "order=.+" >"$WORK/bad-$1.out" 2>&1; then
    fail "the checker passed a $1 naming $2"
  fi
  grep -q "does not export: $2" "$WORK/bad-$1.out" ||
    fail "the checker's failure does not name the metric: $(cat "$WORK/bad-$1.out")"
}
sed 's/fragd_node_fragmentation_score_percent{/fragd_node_fragmentation_score_percents{/' "$DASH" >"$WORK/bad-dash.json"
cmp -s "$DASH" "$WORK/bad-dash.json" && fail "could not make the bad dashboard (expression not found)"
refused dashboard fragd_node_fragmentation_score_percents "$WORK/bad-dash.json" "$WORK/rules.json"
sed 's/fragd_bpf_program_attached ==/fragd_bpf_programs_attached ==/' "$WORK/rules.json" >"$WORK/bad-rules.json"
cmp -s "$WORK/rules.json" "$WORK/bad-rules.json" && fail "could not make the bad rules (expression not found)"
refused rule fragd_bpf_programs_attached "$DASH" "$WORK/bad-rules.json"
log "a panel or rule naming an unexported metric fails the check"

stop_prometheus
stop_fragd
log "PASS"
