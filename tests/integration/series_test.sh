#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The series budget (docs/metrics.md "Series"): fragd with the shipped config (configs/fragd.yaml,
# observe mode) exports at most 300 series on a live scrape, counted as Prometheus counts them
# (each sample line of the text exposition is one series); the number found is printed.
#  - the per-order families carry the order groups of metrics.orders, not one series per order;
#  - the stall histogram has the coarse buckets and result="all": what the default leaves of
#    orders x buckets x results;
#  - nothing per zone but the pageblock scan's estimates (zone="all" elsewhere);
#  - the widest metrics: setting (every order, fine buckets, every detail) holds the metrics
#    contract live (tests/contract/metrics.txt) and exports more than 4 times the default.
source "$(dirname "$0")/lib.sh"
require_root
/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null ||
  skip_or_fail "python3-prometheus-client missing (scripts/install-deps.sh installs it)"

BOUND=300

# series FILE: the sample lines of a text exposition (one series each).
series() { grep -vc '^#' "$1"; }

# The shipped config as it is: the budget the issue sets is for it.
FRAGD_CONFIG="$SRC/configs/fragd.yaml" start_fragd
wait_scored || fail "no node score 30 s after the start"
# The pageblock estimates come with the first sample round, the scan's first tick after start.
has_estimates() { scrape | grep -q '^fragd_hugepages_obtainable{'; }
wait_for 30 has_estimates || fail "no fragd_hugepages_obtainable 30 s after the start"
scrape >"$WORK/default.prom"
n=$(series "$WORK/default.prom")
log "default config: $n series (bound $BOUND)"
/usr/bin/python3 - "$WORK/default.prom" <<'PY' | sed 's/^/    /'
import sys
from collections import Counter
from prometheus_client.parser import text_string_to_metric_families
c = Counter()
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    c[fam.name] += len(fam.samples)
for name, k in c.most_common(12):
    print(f"{k:4d} {name}")
PY
[ "$n" -le "$BOUND" ] || fail "the default config exports $n series, more than $BOUND"

# What the default keeps of the per-order, per-bucket, per-result and per-zone dimensions.
/usr/bin/python3 - "$WORK/default.prom" <<'PY' || fail "the default export splits a dimension it should not (above)"
import sys
from prometheus_client.parser import text_string_to_metric_families
bad = []
groups = {"0", "1-3", "4-8", "9-10", "1", "4", "9"}  # free-list groups, traced groups, the index's orders
zone_families = {"fragd_pageblock_class", "fragd_hugepages_obtainable", "fragd_hugepages_obtainable_bound",
                 "fragd_hugepages_polluted", "fragd_hugepages_polluted_bound", "fragd_compaction_cost_pages",
                 "fragd_pageblock_sample_blocks"}  # the scan's estimates, per zone
for fam in text_string_to_metric_families(open(sys.argv[1]).read()):
    for s in fam.samples:
        o = s.labels.get("order")
        if o is not None and o not in groups:
            bad.append(f"{s.name}: order {o!r} is not a default group")
        if "zone" in s.labels and s.labels["zone"] != "all" and fam.name not in zone_families:
            bad.append(f"{s.name}: zone {s.labels['zone']!r} (per node by default)")
        if fam.name == "fragd_alloc_stall_seconds" and s.labels.get("result") != "all":
            bad.append(f"{s.name}: result {s.labels.get('result')!r}")
        if fam.name in ("fragd_thp_vmstat", "fragd_compaction_vmstat"):
            bad.append(f"{s.name}: kernel counters by name are in metrics.detail")
    if fam.name == "fragd_alloc_stall_seconds":
        les = sorted({s.labels["le"] for s in fam.samples if s.name.endswith("_bucket")}, key=float)
        if les != ["1.6384e-05", "0.000262144", "0.004194304", "0.067108864", "1.073741824", "+Inf"]:
            bad.append(f"fragd_alloc_stall_seconds buckets {les}")
for b in bad:
    print("series:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
stop_fragd

# The widest setting: today's every series, and the contract held live.
cat >"$WORK/widest.yaml" <<'YAML'
metrics:
  orders: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  buckets: fine
  detail: [zones, results, statuses, thp_sizes, kernel_counters, programs]
YAML
FRAGD_CONFIG="$WORK/widest.yaml" start_fragd
wait_scored || fail "no node score 30 s after the start (widest config)"
wait_for 30 has_estimates || fail "no fragd_hugepages_obtainable 30 s after the start (widest config)"
scrape >"$WORK/widest.prom"
w=$(series "$WORK/widest.prom")
log "widest metrics: setting: $w series"
[ "$w" -gt $((4 * n)) ] || fail "the widest setting exports $w series, not 4 times the default's $n: a dimension is not widened"
# Absent here by design: write errors (none happen), CMA (a kernel without it), the forecast (it
# needs minutes), the 1 GiB ranges and the longest free run (a whole map), the cgroups' THP, free page
# reporting (a VM guest's balloon), the pages of leases (none lives), the failed allocations by
# order (there while allocation counting is on: bpf.allocations adaptive turns it on at a stall) and
# by consumer (from the first failure fragd sees).
/usr/bin/python3 "$SRC/tests/integration/metrics_contract.py" "$WORK/widest.prom" "$SRC/tests/contract/metrics.txt" \
  --may-be-absent fragd_kernel_write_errors_total $(awk '$1 ~ /^fragd_cma_/ { print $1 }' "$SRC/tests/contract/metrics.txt") \
  fragd_hugepages_exhaustion_seconds fragd_free_hugepage_blocks_rate fragd_free_contiguous_max_bytes \
  fragd_pageblock_map_age_seconds fragd_hugepages_target fragd_actions_total fragd_action_duration_seconds \
  fragd_action_pages_migrated_total fragd_action_score_percent fragd_compaction_pages_per_block \
  fragd_compaction_seconds_per_block fragd_stalls_total fragd_stall_seconds_total \
  fragd_thp_cgroup_anon_bytes fragd_thp_cgroup_anon_huge_bytes fragd_free_page_reporting_order \
  fragd_leased_hugepages fragd_alloc_failures_total fragd_alloc_failures_by_consumer_total ||
  fail "the widest setting's /metrics broke the metrics contract (above)"
stop_fragd
log "PASS"
