// SPDX-License-Identifier: Apache-2.0
// Which series fragd exports: the config's `metrics:` section (docs/metrics.md "Series"). By default
// each family carries the label values something decides on (the act engine, the shipped
// alert and recording rules, the dashboard); the section splits them further:
//  - order groups: the per-order families count orders in groups (order="4-8"), each listed
//    order starting one; bpf.min_order and compaction.demand.min_order always start one, so
//    that the demand trigger's stalls are a sum of whole groups;
//  - the classic buckets of the latency histograms (the text exposition): coarse or fine;
//  - detail: dimensions kept apart (zones, stall results, compaction statuses, every mTHP
//    size, the kernel's counters by name, per-program run statistics), summed into one
//    series labelled "all" (as node="all") or left out otherwise.
// Pure data and arithmetic; every concern's metrics read the plan the exporter resolves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fragd_common.h"

namespace fragd {

enum class BucketLayout { Coarse, Fine };

// What a latency histogram's classic buckets must resolve: a quantile some consumer decides on
// (the demand trigger's and the alert's p99, the dashboard's quantiles), or its count and sum
// alone (the rules and panels read only those).
enum class HistogramUse { Quantiles, CountAndSum };

// metrics.detail's words, in the order of their bits.
enum class Detail : unsigned {
  Zones,           // buddy and pagetypeinfo families per zone (otherwise per node, zone="all")
  Results,         // fragd_alloc_stall_seconds by result (otherwise result="all")
  Statuses,        // fragd_compaction_runs_total by status (otherwise status="all")
  ThpSizes,        // the per-size THP families for every mTHP size (otherwise the PMD size)
  KernelCounters,  // fragd_thp_vmstat_total, fragd_compaction_vmstat_total (otherwise absent)
  Programs,        // per-program run counts and time (otherwise absent), recursion misses by program
};
inline constexpr unsigned kDetailWords = 6;
// The word of each Detail, as metrics.detail spells it.
const char* detail_word(Detail d);

struct DetailSet {
  unsigned bits = 0;
  bool has(Detail d) const { return bits & (1u << static_cast<unsigned>(d)); }
  void add(Detail d) { bits |= 1u << static_cast<unsigned>(d); }
  bool operator==(const DetailSet&) const = default;
};

// The config's `metrics:` section as written.
struct SeriesSettings {
  std::vector<unsigned> orders = {1, 4, 9};  // orders that start a group
  BucketLayout buckets = BucketLayout::Coarse;
  DetailSet detail;
  bool operator==(const SeriesSettings&) const = default;
};

// Orders first..last counted as one; `label` is "9" or "4-8".
struct OrderGroup {
  unsigned first = 0, last = 0;
  std::string label;
};

// The groups covering orders from..FRAGD_NR_ORDERS-1: `from` and every order of `starts` above
// it begins one, which runs up to the next.
std::vector<OrderGroup> order_groups(unsigned from, const std::vector<unsigned>& starts);

// What the metrics of one build export, resolved from the settings and the running config.
struct SeriesPlan {
  std::vector<OrderGroup> traced;  // the orders BPF traces: from bpf.min_order
  std::vector<OrderGroup> buddy;   // free lists: from order 0, split at every start above
  BucketLayout buckets = BucketLayout::Fine;
  DetailSet detail;
  bool has(Detail d) const { return detail.has(d); }
};

// `min_order`: bpf.min_order (the running one); `demand_order`: compaction.demand.min_order.
SeriesPlan series_plan(const SeriesSettings& s, unsigned min_order, unsigned demand_order);
// Every order, every bucket, every dimension: the families with nothing summed or left out.
SeriesPlan widest_plan(unsigned min_order);

// The classic buckets' upper bounds as powers of two of ns (the +Inf bucket besides):
// fine: every power from 2^10 (1.024 us) to 2^34 (17.2 s); coarse: 2^14, 2^18, 2^22, 2^26 and
// 2^30 (16.4 us .. 1.07 s, a factor 16 apart, 4.19 ms next to the 5 ms of the default p99
// checks) for quantiles, none for a count and a sum.
std::vector<unsigned> classic_bucket_shifts(BucketLayout layout, HistogramUse use);

}  // namespace fragd
